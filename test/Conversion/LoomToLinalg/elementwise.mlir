// IR checks of the elementwise lowering: one parallel linalg.generic per op,
// numpy broadcasting in the indexing maps, signedness from the loom types.
// RUN: loom-opt %s --loom-to-linalg --split-input-file | FileCheck %s

// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @binary_broadcast
// CHECK-SAME: (%[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<3xf32>)
// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x3xf32>
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[A]], %[[B]] : tensor<2x3xf32>, tensor<3xf32>) outs(%[[E]] : tensor<2x3xf32>)
// CHECK: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[S:.+]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK: linalg.yield %[[S]] : f32
// CHECK: return %[[R]]
func.func @binary_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = loom.binary add %a, %b : tensor<2x3xf32>, tensor<3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Both operands broadcast: unit dims read index 0.
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @binary_both_broadcast
// CHECK: linalg.generic {indexing_maps = [#[[COL]], #[[ROW]], #{{.+}}]
// CHECK: arith.maximumf
func.func @binary_both_broadcast(%a: tensor<2x1xf32>, %b: tensor<1x3xf32>) -> tensor<2x3xf32> {
  %0 = loom.binary max %a, %b : tensor<2x1xf32>, tensor<1x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// Signed integers: guarded divsi, remsi moved to the divisor's sign, maxsi.
// CHECK-LABEL: func.func @binary_signed
// CHECK-SAME: tensor<4xi32>
// CHECK: arith.divsi
// CHECK: arith.remsi
// CHECK: arith.maxsi
// CHECK: arith.cmpi slt
func.func @binary_signed(%a: tensor<4xsi32>, %b: tensor<4xsi32>) -> (tensor<4xsi32>, tensor<4xsi32>, tensor<4xsi32>, tensor<4xi1>) {
  %0 = loom.binary div %a, %b : tensor<4xsi32>, tensor<4xsi32>
  %1 = loom.binary mod %a, %b : tensor<4xsi32>, tensor<4xsi32>
  %2 = loom.binary max %a, %b : tensor<4xsi32>, tensor<4xsi32>
  %3 = loom.compare lt %a, %b : tensor<4xsi32>, tensor<4xsi32>
  return %0, %1, %2, %3 : tensor<4xsi32>, tensor<4xsi32>, tensor<4xsi32>, tensor<4xi1>
}

// -----

// Unsigned integers: divui, remui, maxui, ult.
// CHECK-LABEL: func.func @binary_unsigned
// CHECK-SAME: (%{{.+}}: tensor<4xi8>, %{{.+}}: tensor<4xi8>)
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK: arith.maxui
// CHECK: arith.cmpi ult
func.func @binary_unsigned(%a: tensor<4xui8>, %b: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xi1>) {
  %0 = loom.binary div %a, %b : tensor<4xui8>, tensor<4xui8>
  %1 = loom.binary mod %a, %b : tensor<4xui8>, tensor<4xui8>
  %2 = loom.binary max %a, %b : tensor<4xui8>, tensor<4xui8>
  %3 = loom.compare lt %a, %b : tensor<4xui8>, tensor<4xui8>
  return %0, %1, %2, %3 : tensor<4xui8>, tensor<4xui8>, tensor<4xui8>, tensor<4xi1>
}

// -----

// Float mod is fmod with the divisor's sign. Pow is C's pow: math.powf of
// |a| (math-expand-ops turns a non-constant power into exp(b * log(a))), its
// sign and NaN set from the base's sign and the exponent's parity, 1 for x^0.
// CHECK-LABEL: func.func @binary_float_mod_pow
// CHECK: arith.remf
// CHECK: math.copysign
// CHECK: ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[ABS:.+]] = math.absf %[[A]]
// CHECK: %[[MAG:.+]] = math.powf %[[ABS]], %[[B]]
// CHECK: math.floor %[[B]]
// CHECK: %[[NEG:.+]] = arith.negf %[[MAG]]
// CHECK: arith.select %{{.+}}, %[[NEG]], %[[MAG]]
// CHECK: arith.constant 0x7FC00000
// CHECK: arith.cmpf oeq, %[[B]], %{{.+}}
// CHECK: linalg.yield
func.func @binary_float_mod_pow(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = loom.binary mod %a, %b : tensor<4xf32>, tensor<4xf32>
  %1 = loom.binary pow %a, %b : tensor<4xf32>, tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @binary_logical
// CHECK: arith.andi
// CHECK: arith.ori
// CHECK: arith.xori
func.func @binary_logical(%a: tensor<4xi1>, %b: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
  %0 = loom.binary logical_and %a, %b : tensor<4xi1>, tensor<4xi1>
  %1 = loom.binary logical_or %a, %b : tensor<4xi1>, tensor<4xi1>
  %2 = loom.binary logical_xor %a, %b : tensor<4xi1>, tensor<4xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @unary_kinds
// CHECK: math.erf
// CHECK: math.tanh
// CHECK: math.roundeven
// CHECK: math.rsqrt
// CHECK: arith.maximumf
// CHECK: arith.minimumf
func.func @unary_kinds(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = loom.unary gelu %x : tensor<4xf32>
  %1 = loom.unary gelu_tanh %x : tensor<4xf32>
  %2 = loom.unary round %x : tensor<4xf32>
  %3 = loom.unary rsqrt %x : tensor<4xf32>
  %4 = loom.unary hard_sigmoid %x : tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// identity folds away; integer abs is math.absi, unsigned abs is a no-op.
// CHECK-LABEL: func.func @unary_int
// CHECK-SAME: (%[[X:.+]]: tensor<4xi32>, %[[U:.+]]: tensor<4xi8>)
// CHECK: %[[ABS:.+]] = linalg.generic
// CHECK: math.absi
// CHECK: %[[UABS:.+]] = linalg.generic
// CHECK-NEXT: ^bb0(%[[IN:.+]]: i8, %{{.+}}: i8):
// CHECK-NEXT: linalg.yield %[[IN]] : i8
// CHECK: return %[[X]], %[[ABS]], %[[UABS]]
func.func @unary_int(%x: tensor<4xsi32>, %u: tensor<4xui8>) -> (tensor<4xsi32>, tensor<4xsi32>, tensor<4xui8>) {
  %0 = loom.unary identity %x : tensor<4xsi32>
  %1 = loom.unary abs %x : tensor<4xsi32>
  %2 = loom.unary abs %u : tensor<4xui8>
  return %0, %1, %2 : tensor<4xsi32>, tensor<4xsi32>, tensor<4xui8>
}

// -----

// Floats: ordered compares, `ne` unordered.
// CHECK-LABEL: func.func @compare_float
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf une
func.func @compare_float(%a: tensor<4xf32>, %b: tensor<f32>) -> (tensor<4xi1>, tensor<4xi1>) {
  %0 = loom.compare lt %a, %b : tensor<4xf32>, tensor<f32>
  %1 = loom.compare ne %a, %b : tensor<4xf32>, tensor<f32>
  return %0, %1 : tensor<4xi1>, tensor<4xi1>
}

// -----

// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[T:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[F:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @where_broadcast
// CHECK-SAME: (%[[C0:.+]]: tensor<2x1xi1>, %[[T0:.+]]: tensor<3xf32>, %[[F0:.+]]: tensor<f32>)
// CHECK: linalg.generic {indexing_maps = [#[[C]], #[[T]], #[[F]], #{{.+}}]
// CHECK-SAME: ins(%[[C0]], %[[T0]], %[[F0]] : tensor<2x1xi1>, tensor<3xf32>, tensor<f32>)
// CHECK: ^bb0(%[[P:.+]]: i1, %[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: f32):
// CHECK: arith.select %[[P]], %[[X]], %[[Y]] : f32
func.func @where_broadcast(%c: tensor<2x1xi1>, %t: tensor<3xf32>, %f: tensor<f32>) -> tensor<2x3xf32> {
  %0 = loom.where %c, %t, %f : tensor<2x1xi1>, tensor<3xf32>, tensor<f32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @clamp
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[LO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[M:.+]] = arith.maximumf %[[X]], %[[LO]] : f32
// CHECK: %[[HI:.+]] = arith.constant 6.000000e+00 : f32
// CHECK: arith.minimumf %[[M]], %[[HI]] : f32
// Integers: np.maximum(x, -2.5) -> elements below -2 become -2.
// CHECK: ^bb0(%[[I:.+]]: i32, %{{.+}}: i32):
// CHECK: %[[B:.+]] = arith.constant -2 : i32
// CHECK: %[[LT:.+]] = arith.cmpi slt, %[[I]], %[[B]] : i32
// CHECK: arith.select %[[LT]], %{{.+}}, %[[I]] : i32
func.func @clamp(%x: tensor<4xf32>, %i: tensor<4xsi32>) -> (tensor<4xf32>, tensor<4xsi32>) {
  %0 = loom.clamp %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<4xf32>
  %1 = loom.clamp %i {min = -2.5 : f64} : tensor<4xsi32>
  return %0, %1 : tensor<4xf32>, tensor<4xsi32>
}

// -----

// CHECK-LABEL: func.func @casts
// CHECK: arith.extui %{{.+}} : i8 to i32
// CHECK: arith.extsi %{{.+}} : i8 to i32
// CHECK: arith.fptosi %{{.+}} : f32 to i32
// CHECK: arith.cmpf une
// CHECK: arith.uitofp %{{.+}} : i1 to f32
// CHECK: arith.truncf %{{.+}} : f32 to bf16
func.func @casts(%u: tensor<4xui8>, %s: tensor<4xsi8>, %f: tensor<4xf32>, %b: tensor<4xi1>)
    -> (tensor<4xsi32>, tensor<4xsi32>, tensor<4xsi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xbf16>, tensor<4xi8>) {
  %0 = loom.cast %u : tensor<4xui8> to tensor<4xsi32>
  %1 = loom.cast %s : tensor<4xsi8> to tensor<4xsi32>
  %2 = loom.cast %f : tensor<4xf32> to tensor<4xsi32>
  %3 = loom.cast %f : tensor<4xf32> to tensor<4xi1>
  %4 = loom.cast %b : tensor<4xi1> to tensor<4xf32>
  %5 = loom.cast %f : tensor<4xf32> to tensor<4xbf16>
  %6 = loom.cast %u : tensor<4xui8> to tensor<4xi8>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4xsi32>, tensor<4xsi32>, tensor<4xsi32>, tensor<4xi1>, tensor<4xf32>, tensor<4xbf16>, tensor<4xi8>
}

// -----

// CHECK-LABEL: func.func @constants
// CHECK-DAG: arith.constant dense<[0, -128, -1]> : tensor<3xi8>
// CHECK-DAG: arith.constant dense<7> : tensor<2x2xi64>
// CHECK-DAG: arith.constant dense<[1.000000e+00, 2.500000e+00]> : tensor<2xf32>
func.func @constants() -> (tensor<3xui8>, tensor<2x2xsi64>, tensor<2xf32>) {
  %0 = loom.constant dense<[0, 128, 255]> : tensor<3xui8>
  %1 = loom.constant dense<7> : tensor<2x2xsi64>
  %2 = loom.constant dense<[1.0, 2.5]> : tensor<2xf32>
  return %0, %1, %2 : tensor<3xui8>, tensor<2x2xsi64>, tensor<2xf32>
}

// -----

// A narrow float's function is computed in float32 and rounded once, and
// so is a binary op (for add, sub, mul and div the same as rounding the
// exact result).
// CHECK-LABEL: func.func @narrow_float
// CHECK: ^bb0(%[[IN:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: %[[W:.+]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT: %[[T:.+]] = math.tanh %[[W]] : f32
// CHECK-NEXT: %[[N:.+]] = arith.truncf %[[T]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[N]] : f16
// CHECK: ^bb0(%[[L:.+]]: f16, %[[R:.+]]: f16, %{{.+}}: f16):
// CHECK-NEXT: %[[LW:.+]] = arith.extf %[[L]] : f16 to f32
// CHECK-NEXT: %[[RW:.+]] = arith.extf %[[R]] : f16 to f32
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[LW]], %[[RW]] : f32
// CHECK-NEXT: %[[SN:.+]] = arith.truncf %[[S]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[SN]] : f16
func.func @narrow_float(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = loom.unary tanh %x : tensor<4xf16>
  %1 = loom.binary add %0, %x : tensor<4xf16>, tensor<4xf16>
  return %1 : tensor<4xf16>
}
