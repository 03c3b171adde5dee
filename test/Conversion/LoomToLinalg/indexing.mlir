// The gather, embedding, scatter, top_k and MoE routing lowerings: gathers
// are generics over the result that extract from the source; scatters and
// routing are scf.for nests carrying tensors.
// RUN: loom-opt %s --loom-to-linalg --split-input-file | FileCheck %s

// Indices of any width widen to i64, wrap once when negative, then clamp.
// CHECK-LABEL: func.func @gather_axis1
// CHECK-SAME: (%[[D:.+]]: tensor<3x4xf32>, %[[I:.+]]: tensor<2x2xi32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<3x2x2xf32>
// CHECK: %[[G:.+]] = linalg.generic {indexing_maps = [#[[IMAP:.+]], #[[OMAP:.+]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[I]] : tensor<2x2xi32>) outs(%[[E]] : tensor<3x2x2xf32>)
// CHECK: ^bb0(%[[IN:.+]]: i32, %{{.+}}: f32):
// CHECK:   %[[D0:.+]] = linalg.index 0 : index
// CHECK:   %[[W:.+]] = arith.extsi %[[IN]] : i32 to i64
// CHECK:   %[[NEG:.+]] = arith.cmpi slt, %[[W]], %[[ZERO:.+]] : i64
// CHECK:   %[[ADD:.+]] = arith.addi %[[W]], %{{.+}} : i64
// CHECK:   %[[SEL:.+]] = arith.select %[[NEG]], %[[ADD]], %[[W]] : i64
// CHECK:   %[[LO:.+]] = arith.maxsi %[[SEL]], %[[ZERO]] : i64
// CHECK:   %[[HI:.+]] = arith.minsi %[[LO]], %{{.+}} : i64
// CHECK:   %[[IX:.+]] = arith.index_cast %[[HI]] : i64 to index
// CHECK:   %[[X:.+]] = tensor.extract %[[D]][%[[D0]], %[[IX]]] : tensor<3x4xf32>
// CHECK:   linalg.yield %[[X]] : f32
// CHECK: return %[[G]]
func.func @gather_axis1(%d: tensor<3x4xf32>, %i: tensor<2x2xi32>) -> tensor<3x2x2xf32> {
  %0 = loom.gather %d, %i {axis = 1 : i64} : tensor<3x4xf32>, tensor<2x2xi32>
  return %0 : tensor<3x2x2xf32>
}

// -----

// A 0-d index; i1 indices read as 0/1. Signed data keeps its bits.
// CHECK-DAG: #[[SCALAR:.+]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @gather_scalar_i1
// CHECK-SAME: (%[[D:.+]]: tensor<3x4xi32>, %[[I:.+]]: tensor<i1>) -> tensor<4xi32>
// CHECK: linalg.generic {indexing_maps = [#[[SCALAR]], #{{.+}}], iterator_types = ["parallel"]} ins(%[[I]] : tensor<i1>)
// CHECK:   arith.extui %{{.+}} : i1 to i64
// CHECK:   %[[D1:.+]] = linalg.index 0 : index
// CHECK:   tensor.extract %[[D]][%{{.+}}, %[[D1]]] : tensor<3x4xi32>
func.func @gather_scalar_i1(%d: tensor<3x4xsi32>, %i: tensor<i1>) -> tensor<4xsi32> {
  %0 = loom.gather %d, %i {axis = 0 : i64} : tensor<3x4xsi32>, tensor<i1>
  return %0 : tensor<4xsi32>
}

// -----

// CHECK-DAG: #[[IDS:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[T:.+]]: tensor<10x4xf32>, %[[I:.+]]: tensor<2x3xi64>)
// CHECK: linalg.generic {indexing_maps = [#[[IDS]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[I]] : tensor<2x3xi64>)
// CHECK:   arith.minsi
// CHECK:   %[[ROW:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK:   %[[H:.+]] = linalg.index 2 : index
// CHECK:   tensor.extract %[[T]][%[[ROW]], %[[H]]] : tensor<10x4xf32>
func.func @embedding(%t: tensor<10x4xf32>, %i: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %0 = loom.embedding %t, %i : tensor<10x4xf32>, tensor<2x3xi64>
  return %0 : tensor<2x3x4xf32>
}

// -----

// No reduction: the update overwrites, in a loop nest over the indices.
// CHECK-LABEL: func.func @scatter_none
// CHECK-SAME: (%[[D:.+]]: tensor<3x4xf32>, %[[I:.+]]: tensor<3x2xi64>, %[[U:.+]]: tensor<3x2xf32>)
// CHECK: %[[R:.+]] = scf.for %[[A:arg[0-9]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC0:arg[0-9]+]] = %[[D]]) -> (tensor<3x4xf32>)
// CHECK:   %[[IN:.+]] = scf.for %[[B:arg[0-9]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:arg[0-9]+]] = %[[ACC0]]) -> (tensor<3x4xf32>)
// CHECK:     %[[IDX:.+]] = tensor.extract %[[I]][%[[A]], %[[B]]] : tensor<3x2xi64>
// CHECK:     %[[UPD:.+]] = tensor.extract %[[U]][%[[A]], %[[B]]] : tensor<3x2xf32>
// CHECK:     arith.minsi
// CHECK:     %[[COL:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK-NOT: tensor.extract
// CHECK:     %[[INS:.+]] = tensor.insert %[[UPD]] into %[[ACC]][%[[A]], %[[COL]]] : tensor<3x4xf32>
// CHECK:     scf.yield %[[INS]] : tensor<3x4xf32>
// CHECK:   scf.yield %[[IN]]
// CHECK: return %[[R]]
func.func @scatter_none(%d: tensor<3x4xf32>, %i: tensor<3x2xi64>, %u: tensor<3x2xf32>) -> tensor<3x4xf32> {
  %0 = loom.scatter %d, %i, %u {axis = 1 : i64} : tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x2xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Reductions read the current value, combine it with the update, write back.
// CHECK-LABEL: func.func @scatter_add_f32
// CHECK: %[[CUR:.+]] = tensor.extract %[[ACC:.+]][%[[ROW:.+]], %{{.+}}] : tensor<4x3xf32>
// CHECK: %[[NEW:.+]] = arith.addf %[[CUR]], %{{.+}} : f32
// CHECK: tensor.insert %[[NEW]] into %[[ACC]][%[[ROW]], %{{.+}}] : tensor<4x3xf32>
func.func @scatter_add_f32(%d: tensor<4x3xf32>, %i: tensor<2x3xi32>, %u: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %0 = loom.scatter %d, %i, %u reduction add {axis = 0 : i64} : tensor<4x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>
  return %0 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @scatter_mul_i32
// CHECK: arith.muli %{{.+}}, %{{.+}} : i32
func.func @scatter_mul_i32(%d: tensor<4xi32>, %i: tensor<2xi64>, %u: tensor<2xi32>) -> tensor<4xi32> {
  %0 = loom.scatter %d, %i, %u reduction mul {axis = 0 : i64} : tensor<4xi32>, tensor<2xi64>, tensor<2xi32>
  return %0 : tensor<4xi32>
}

// CHECK-LABEL: func.func @scatter_max_f32
// CHECK: arith.maximumf %{{.+}}, %{{.+}} : f32
func.func @scatter_max_f32(%d: tensor<4xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) -> tensor<4xf32> {
  %0 = loom.scatter %d, %i, %u reduction max {axis = 0 : i64} : tensor<4xf32>, tensor<2xi64>, tensor<2xf32>
  return %0 : tensor<4xf32>
}

// CHECK-LABEL: func.func @scatter_min_f32
// CHECK: arith.minimumf %{{.+}}, %{{.+}} : f32
func.func @scatter_min_f32(%d: tensor<4xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) -> tensor<4xf32> {
  %0 = loom.scatter %d, %i, %u reduction min {axis = 0 : i64} : tensor<4xf32>, tensor<2xi64>, tensor<2xf32>
  return %0 : tensor<4xf32>
}

// Signedness comes from the loom types.
// CHECK-LABEL: func.func @scatter_max_ui8
// CHECK-SAME: tensor<4xi8>
// CHECK: arith.maxui %{{.+}}, %{{.+}} : i8
func.func @scatter_max_ui8(%d: tensor<4xui8>, %i: tensor<2xi64>, %u: tensor<2xui8>) -> tensor<4xui8> {
  %0 = loom.scatter %d, %i, %u reduction max {axis = 0 : i64} : tensor<4xui8>, tensor<2xi64>, tensor<2xui8>
  return %0 : tensor<4xui8>
}

// CHECK-LABEL: func.func @scatter_min_si32
// CHECK: arith.minsi %{{.+}}, %{{.+}} : i32
func.func @scatter_min_si32(%d: tensor<4xsi32>, %i: tensor<2xi64>, %u: tensor<2xsi32>) -> tensor<4xsi32> {
  %0 = loom.scatter %d, %i, %u reduction min {axis = 0 : i64} : tensor<4xsi32>, tensor<2xi64>, tensor<2xsi32>
  return %0 : tensor<4xsi32>
}

// Booleans: add is or (numpy).
// CHECK-LABEL: func.func @scatter_add_i1
// CHECK: arith.ori %{{.+}}, %{{.+}} : i1
func.func @scatter_add_i1(%d: tensor<4xi1>, %i: tensor<2xi64>, %u: tensor<2xi1>) -> tensor<4xi1> {
  %0 = loom.scatter %d, %i, %u reduction add {axis = 0 : i64} : tensor<4xi1>, tensor<2xi64>, tensor<2xi1>
  return %0 : tensor<4xi1>
}

// -----

// Rows (here: 3) x k passes x a scan of the axis (here: 5); each pass picks
// the best element after the previous pick in (value, index) order.
// CHECK-LABEL: func.func @topk_largest
// CHECK-SAME: (%[[X:.+]]: tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
// CHECK-DAG: %[[V0:.+]] = tensor.empty() : tensor<3x2xf32>
// CHECK-DAG: %[[I0:.+]] = tensor.empty() : tensor<3x2xi64>
// CHECK: %[[R:.+]]:2 = scf.for %[[ROW:arg[0-9]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[V:arg[0-9]+]] = %[[V0]], %[[I:arg[0-9]+]] = %[[I0]])
// CHECK:   %[[P:.+]]:4 = scf.for %[[J:arg[0-9]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[PV:arg[0-9]+]] = %[[V]], %[[PI:arg[0-9]+]] = %[[I]], %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<3x2xf32>, tensor<3x2xi64>, f32, index)
// CHECK:     %[[S:.+]]:3 = scf.for %[[K:arg[0-9]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args({{.+}}) -> (f32, index, i1)
// CHECK:       tensor.extract %[[X]][%[[ROW]], %[[K]]] : tensor<3x5xf32>
// CHECK:       arith.cmpf ogt
// CHECK:       arith.cmpf ord
// CHECK:       arith.cmpf uno
// CHECK:     %[[NV:.+]] = tensor.insert %[[S]]#0 into %[[PV]][%[[ROW]], %[[J]]] : tensor<3x2xf32>
// CHECK:     %[[I64:.+]] = arith.index_cast %[[S]]#1 : index to i64
// CHECK:     %[[NI:.+]] = tensor.insert %[[I64]] into %[[PI]][%[[ROW]], %[[J]]] : tensor<3x2xi64>
// CHECK:     scf.yield %[[NV]], %[[NI]], %[[S]]#0, %[[S]]#1
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @topk_largest(%x: tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %v, %i = loom.topk %x {k = 2 : i64, axis = 1 : i64} : tensor<3x5xf32>
  return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}

// CHECK-LABEL: func.func @topk_smallest
// CHECK: arith.cmpf olt
// CHECK-NOT: arith.cmpf ogt
func.func @topk_smallest(%x: tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %v, %i = loom.topk %x {k = 2 : i64, axis = 1 : i64, largest = false} : tensor<3x5xf32>
  return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}

// The outer axis: the scan runs over dim 0.
// CHECK-LABEL: func.func @topk_ui8_axis0
// CHECK-SAME: (%[[X:.+]]: tensor<4x3xi8>)
// CHECK: scf.for %[[COL:arg[0-9]+]] =
// CHECK:   scf.for
// CHECK:     scf.for %[[K:arg[0-9]+]] =
// CHECK:       tensor.extract %[[X]][%[[K]], %[[COL]]] : tensor<4x3xi8>
// CHECK:       arith.cmpi ult, %{{.+}}, %{{.+}} : i8
// CHECK-NOT:   arith.cmpi slt
func.func @topk_ui8_axis0(%x: tensor<4x3xui8>) -> (tensor<2x3xui8>, tensor<2x3xi64>) {
  %v, %i = loom.topk %x {k = 2 : i64, axis = 0 : i64, largest = false} : tensor<4x3xui8>
  return %v, %i : tensor<2x3xui8>, tensor<2x3xi64>
}

// CHECK-LABEL: func.func @topk_si32
// CHECK: arith.cmpi sgt, %{{.+}}, %{{.+}} : i32
func.func @topk_si32(%x: tensor<6xsi32>) -> (tensor<3xsi32>, tensor<3xi64>) {
  %v, %i = loom.topk %x {k = 3 : i64, axis = 0 : i64} : tensor<6xsi32>
  return %v, %i : tensor<3xsi32>, tensor<3xi64>
}

// -----

// Routing over (t, k) fills a slot -> token map (-1: empty), then a generic
// over [E, C, H] gathers the token rows.
// CHECK-DAG: #[[SLOT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @moe_dispatch
// CHECK-SAME: (%[[X:.+]]: tensor<6x4xf32>, %[[EX:.+]]: tensor<6x2xi32>)
// CHECK: %[[COUNTS:.+]] = linalg.fill ins(%{{.+}} : i64) outs(%{{.+}} : tensor<3xi64>)
// CHECK: %[[MAP:.+]] = linalg.fill ins(%{{.+}} : i64) outs(%{{.+}} : tensor<3x2xi64>)
// CHECK: %[[R:.+]]:2 = scf.for %[[T:arg[0-9]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[COUNTS]], %{{.+}} = %[[MAP]])
// CHECK:   scf.for %[[K:arg[0-9]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[C:arg[0-9]+]] = %{{.+}}, %[[M:arg[0-9]+]] = %{{.+}})
// CHECK:     %[[E:.+]] = tensor.extract %[[EX]][%[[T]], %[[K]]] : tensor<6x2xi32>
// CHECK:     arith.extsi %[[E]] : i32 to i64
// CHECK:     %[[N:.+]] = tensor.extract %[[C]][%[[ES:.+]]] : tensor<3xi64>
// CHECK:     tensor.insert %{{.+}} into %[[C]][%[[ES]]] : tensor<3xi64>
// CHECK:     %[[TOK:.+]] = arith.index_cast %[[T]] : index to i64
// CHECK:     tensor.insert %{{.+}} into %[[M]][%[[ES]], %{{.+}}] : tensor<3x2xi64>
// CHECK: %[[G:.+]] = linalg.generic {indexing_maps = [#[[SLOT]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[R]]#1 : tensor<3x2xi64>) outs(%{{.+}} : tensor<3x2x4xf32>)
// CHECK:   %[[H:.+]] = linalg.index 2 : index
// CHECK:   %[[ROW:.+]] = tensor.extract %[[X]][%{{.+}}, %[[H]]] : tensor<6x4xf32>
// CHECK:   arith.select %{{.+}}, %[[ROW]], %{{.+}} : f32
// CHECK: return %[[G]]
func.func @moe_dispatch(%x: tensor<6x4xf32>, %e: tensor<6x2xi32>) -> tensor<3x2x4xf32> {
  %d = loom.moe_dispatch %x, %e {num_experts = 3 : i64, capacity = 2 : i64} : tensor<6x4xf32>, tensor<6x2xi32>
  return %d : tensor<3x2x4xf32>
}

// Grouped: counts and the slot map get a group dim, the gather reads the
// group's tokens.
// CHECK-LABEL: func.func @moe_dispatch_grouped
// CHECK-SAME: (%[[X:.+]]: tensor<2x6x4xf32>, %[[EX:.+]]: tensor<2x6x2xi64>)
// CHECK: linalg.fill ins(%{{.+}} : i64) outs(%{{.+}} : tensor<2x3xi64>)
// CHECK: linalg.fill ins(%{{.+}} : i64) outs(%{{.+}} : tensor<2x3x2xi64>)
// CHECK: scf.for %[[G:arg[0-9]+]] =
// CHECK:   scf.for
// CHECK:     scf.for
// CHECK:       tensor.extract %{{.+}}[%[[G]], %{{.+}}] : tensor<2x3xi64>
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : tensor<2x3x2xi64>) outs(%{{.+}} : tensor<2x3x2x4xf32>)
// CHECK:   %[[GI:.+]] = linalg.index 0 : index
// CHECK:   %[[H:.+]] = linalg.index 3 : index
// CHECK:   tensor.extract %[[X]][%[[GI]], %{{.+}}, %[[H]]] : tensor<2x6x4xf32>
func.func @moe_dispatch_grouped(%x: tensor<2x6x4xf32>, %e: tensor<2x6x2xi64>) -> tensor<2x3x2x4xf32> {
  %d = loom.moe_dispatch %x, %e {num_experts = 3 : i64, capacity = 2 : i64} : tensor<2x6x4xf32>, tensor<2x6x2xi64>
  return %d : tensor<2x3x2x4xf32>
}

// -----

// The same routing records each assignment's slot (-1: dropped); a generic
// over (t, h, k), k a reduction, sums the gated expert outputs.
// CHECK-DAG: #[[TK:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[TH:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @moe_combine
// CHECK-SAME: (%[[EO:.+]]: tensor<3x2x4xf32>, %[[EX:.+]]: tensor<6x2xi64>, %[[GATES:.+]]: tensor<6x2xf32>)
// CHECK: %[[ZERO:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<6x4xf32>)
// CHECK: %[[SLOTS:.+]]:2 = scf.for
// CHECK:   scf.for
// CHECK:     tensor.insert %{{.+}} into %{{.+}}[%{{.+}}, %{{.+}}] : tensor<6x2xi64>
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[TK]], #[[TK]], #[[TK]], #[[TH]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[EX]], %[[GATES]], %[[SLOTS]]#1 : tensor<6x2xi64>, tensor<6x2xf32>, tensor<6x2xi64>) outs(%[[ZERO]] : tensor<6x4xf32>)
// CHECK: ^bb0(%{{.+}}: i64, %[[GATE:.+]]: f32, %[[SLOT:.+]]: i64, %[[ACC:.+]]: f32):
// CHECK:   %[[KEPT:.+]] = arith.cmpi sge, %[[SLOT]], %{{.+}} : i64
// CHECK:   %[[H:.+]] = linalg.index 1 : index
// CHECK:   %[[X:.+]] = tensor.extract %[[EO]][%{{.+}}, %{{.+}}, %[[H]]] : tensor<3x2x4xf32>
// CHECK:   %[[MUL:.+]] = arith.mulf %[[GATE]], %[[X]] : f32
// CHECK:   %[[ADD:.+]] = arith.addf %[[ACC]], %[[MUL]] : f32
// CHECK:   %[[SEL:.+]] = arith.select %[[KEPT]], %[[ADD]], %[[ACC]] : f32
// CHECK:   linalg.yield %[[SEL]] : f32
// CHECK: return %[[R]]
func.func @moe_combine(%eo: tensor<3x2x4xf32>, %e: tensor<6x2xi64>, %g: tensor<6x2xf32>) -> tensor<6x4xf32> {
  %c = loom.moe_combine %eo, %e, %g : tensor<3x2x4xf32>, tensor<6x2xi64>, tensor<6x2xf32>
  return %c : tensor<6x4xf32>
}

// Grouped, and f16 gates on f32 expert outputs.
// CHECK-LABEL: func.func @moe_combine_grouped
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.+}}, %{{.+}}, %{{.+}} : tensor<2x6x2xi64>, tensor<2x6x2xf16>, tensor<2x6x2xi64>) outs(%{{.+}} : tensor<2x6x4xf32>)
// CHECK:   %[[GI:.+]] = linalg.index 0 : index
// CHECK:   %[[H:.+]] = linalg.index 2 : index
// CHECK:   tensor.extract %{{.+}}[%[[GI]], %{{.+}}, %{{.+}}, %[[H]]] : tensor<2x3x2x4xf32>
// CHECK:   arith.extf %{{.+}} : f16 to f32
func.func @moe_combine_grouped(%eo: tensor<2x3x2x4xf32>, %e: tensor<2x6x2xi64>, %g: tensor<2x6x2xf16>) -> tensor<2x6x4xf32> {
  %c = loom.moe_combine %eo, %e, %g : tensor<2x3x2x4xf32>, tensor<2x6x2xi64>, tensor<2x6x2xf16>
  return %c : tensor<2x6x4xf32>
}

// -----

// A bf16 combine sums its K gated expert outputs in float32 and rounds once.
// CHECK-LABEL: func.func @moe_combine_bf16
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<6x4xf32>)
// CHECK: %[[X:.+]] = arith.extf %{{.+}} : bf16 to f32
// CHECK: %[[G:.+]] = arith.extf %{{.+}} : bf16 to f32
// CHECK: %[[P:.+]] = arith.mulf %[[G]], %[[X]] : f32
// CHECK: arith.addf %{{.+}}, %[[P]] : f32
// CHECK: linalg.generic {{.+}} ins(%[[SUM]] : tensor<6x4xf32>) outs(%{{.+}} : tensor<6x4xbf16>)
// CHECK: arith.truncf %{{.+}} : f32 to bf16
func.func @moe_combine_bf16(%o: tensor<3x2x4xbf16>, %e: tensor<6x2xi64>, %g: tensor<6x2xbf16>) -> tensor<6x4xbf16> {
  %0 = loom.moe_combine %o, %e, %g : tensor<3x2x4xbf16>, tensor<6x2xi64>, tensor<6x2xbf16>
  return %0 : tensor<6x4xbf16>
}
