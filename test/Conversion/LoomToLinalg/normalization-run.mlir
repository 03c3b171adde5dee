// Execution checks of the loom.reduce / softmax / layer_norm / rms_norm /
// batch_norm lowerings: each case lowers through loom-lower-to-cpu, runs and
// prints; expected values come from numpy (the reference interpreter
// test/Conformance/loom_reference.py), printed as %g.
// RUN: loom-opt %s --loom-lower-to-cpu | %mlir_runner | FileCheck %s

func.func private @printMemrefF32(tensor<*xf32>)
func.func private @printMemrefI64(tensor<*xi64>)
func.func private @printMemrefI32(tensor<*xi32>)

func.func @main() {

  // reduce sum axes=[1] keep_dims=False on tensor<2x3x4xf32>
  %v1 = arith.constant dense<[[[2.0, 0.5, 0.75, 1.75], [0.25, 1.25, 1.5, -1.25], [-2.0, -0.75, -1.0, 1.5]], [[1.75, -2.0, 0.0, 1.25], [-1.5, 1.25, -1.5, -0.25], [1.25, -0.75, -0.75, -1.0]]]> : tensor<2x3x4xf32>
  %v2 = loom.reduce sum %v1 {axes = array<i64: 1>, keep_dims = false} : tensor<2x3x4xf32>
  %u3 = tensor.cast %v2 : tensor<2x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
  // CHECK: rank = 2 offset = 0 sizes = [2, 4]
  // CHECK-NEXT: [0.25, 1, 1.25, 2]
  // CHECK-NEXT: [1.5, -1.5, -2.25, 0]

  // reduce mean axes=[0, 2] keep_dims=True on tensor<2x3x4xf32>
  %v4 = loom.reduce mean %v1 {axes = array<i64: 0, 2>, keep_dims = true} : tensor<2x3x4xf32>
  %u5 = tensor.cast %v4 : tensor<1x3x1xf32> to tensor<*xf32>
  call @printMemrefF32(%u5) : (tensor<*xf32>) -> ()
  // CHECK: rank = 3 offset = 0 sizes = [1, 3, 1]
  // CHECK-NEXT: [0.75]
  // CHECK-NEXT: [-0.03125]
  // CHECK-NEXT: [-0.4375]

  // reduce max axes=[2] keep_dims=False on tensor<2x3x4xf32>
  %v6 = loom.reduce max %v1 {axes = array<i64: 2>, keep_dims = false} : tensor<2x3x4xf32>
  %u7 = tensor.cast %v6 : tensor<2x3xf32> to tensor<*xf32>
  call @printMemrefF32(%u7) : (tensor<*xf32>) -> ()
  // CHECK: rank = 2 offset = 0 sizes = [2, 3]
  // CHECK-NEXT: [2, 1.5, 1.5]
  // CHECK-NEXT: [1.75, 1.25, 1.25]

  // reduce min axes=[0] keep_dims=True on tensor<2x3x4xf32>
  %v8 = loom.reduce min %v1 {axes = array<i64: 0>, keep_dims = true} : tensor<2x3x4xf32>
  %u9 = tensor.cast %v8 : tensor<1x3x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u9) : (tensor<*xf32>) -> ()
  // CHECK: rank = 3 offset = 0 sizes = [1, 3, 4]
  // CHECK-NEXT: [1.75, -2, 0, 1.25]
  // CHECK-NEXT: [-1.5, 1.25, -1.5, -1.25]
  // CHECK-NEXT: [-2, -0.75, -1, -1]

  // reduce prod axes=[1] keep_dims=False on tensor<2x3xf32>
  %v10 = arith.constant dense<[[1.5, 1.0, 2.0], [1.0, 1.0, 1.5]]> : tensor<2x3xf32>
  %v11 = loom.reduce prod %v10 {axes = array<i64: 1>, keep_dims = false} : tensor<2x3xf32>
  %u12 = tensor.cast %v11 : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%u12) : (tensor<*xf32>) -> ()
  // CHECK: rank = 1 offset = 0 sizes = [2]
  // CHECK-NEXT: [3, 1.5]

  // reduce l1 axes=[1, 2] keep_dims=False on tensor<2x3x4xf32>
  %v13 = loom.reduce l1 %v1 {axes = array<i64: 1, 2>, keep_dims = false} : tensor<2x3x4xf32>
  %u14 = tensor.cast %v13 : tensor<2xf32> to tensor<*xf32>
  call @printMemrefF32(%u14) : (tensor<*xf32>) -> ()
  // CHECK: rank = 1 offset = 0 sizes = [2]
  // CHECK-NEXT: [14.5, 13.25]

  // reduce l2 axes=[2] keep_dims=True on tensor<2x3x4xf32>
  %v15 = loom.reduce l2 %v1 {axes = array<i64: 2>, keep_dims = true} : tensor<2x3x4xf32>
  %v16 = arith.constant dense<[[[2.8062429428100586], [2.3318448066711426], [2.7950849533081055]], [[2.9368350505828857], [2.4748737812042236], [1.9202864170074463]]]> : tensor<2x3x1xf32>
  %zero17 = arith.constant 0 : i64
  %empty17 = tensor.empty() : tensor<i64>
  %init17 = linalg.fill ins(%zero17 : i64) outs(%empty17 : tensor<i64>) -> tensor<i64>
  %bad17 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%v15, %v16 : tensor<2x3x1xf32>, tensor<2x3x1xf32>) outs(%init17 : tensor<i64>) {
  ^bb0(%got: f32, %want: f32, %acc: i64):
    %diff = arith.subf %got, %want : f32
    %err = math.absf %diff : f32
    %mag = math.absf %want : f32
    %rel = arith.constant 1.0e-5 : f32
    %abs = arith.constant 1.0e-6 : f32
    %scaled = arith.mulf %mag, %rel : f32
    %tol = arith.addf %scaled, %abs : f32
    %off = arith.cmpf ugt, %err, %tol : f32
    %one = arith.extui %off : i1 to i64
    %sum = arith.addi %acc, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %u17 = tensor.cast %bad17 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%u17) : (tensor<*xi64>) -> ()
  // mismatches against numpy's tensor<2x3x1xf32> (the constant %v16):
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [0]

  // reduce sum_square axes=[0, 1, 2] keep_dims=False on tensor<2x3x4xf32>
  %v18 = loom.reduce sum_square %v1 {axes = array<i64: 0, 1, 2>, keep_dims = false} : tensor<2x3x4xf32>
  %u19 = tensor.cast %v18 : tensor<f32> to tensor<*xf32>
  call @printMemrefF32(%u19) : (tensor<*xf32>) -> ()
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [39.5625]

  // reduce sum axes=[] keep_dims=False on tensor<2x3x4xf32>
  %v20 = loom.reduce sum %v1 {axes = array<i64>, keep_dims = false} : tensor<2x3x4xf32>
  %u21 = tensor.cast %v20 : tensor<2x3x4xf32> to tensor<*xf32>
  call @printMemrefF32(%u21) : (tensor<*xf32>) -> ()
  // CHECK: rank = 3 offset = 0 sizes = [2, 3, 4]
  // CHECK-NEXT: [2, 0.5, 0.75, 1.75]
  // CHECK-NEXT: [0.25, 1.25, 1.5, -1.25]
  // CHECK-NEXT: [-2, -0.75, -1, 1.5]
  // CHECK-NEXT: [1.75, -2, 0, 1.25]
  // CHECK-NEXT: [-1.5, 1.25, -1.5, -0.25]
  // CHECK-NEXT: [1.25, -0.75, -0.75, -1]

  // reduce argmax axes=[1] keep_dims=False on tensor<3x4xf32>
  %v22 = arith.constant dense<[[1.0, 3.0, 3.0, -1.0], [-2.0, -2.0, 0.0, -2.0], [5.0, 5.0, 5.0, 5.0]]> : tensor<3x4xf32>
  %v23 = loom.reduce argmax %v22 {axes = array<i64: 1>, keep_dims = false} : tensor<3x4xf32>
  %u24 = tensor.cast %v23 : tensor<3xi64> to tensor<*xi64>
  call @printMemrefI64(%u24) : (tensor<*xi64>) -> ()
  // CHECK: rank = 1 offset = 0 sizes = [3]
  // CHECK-NEXT: [1, 2, 0]

  // reduce argmin axes=[1] keep_dims=True on tensor<3x4xf32>
  %v25 = loom.reduce argmin %v22 {axes = array<i64: 1>, keep_dims = true} : tensor<3x4xf32>
  %u26 = tensor.cast %v25 : tensor<3x1xi64> to tensor<*xi64>
  call @printMemrefI64(%u26) : (tensor<*xi64>) -> ()
  // CHECK: rank = 2 offset = 0 sizes = [3, 1]
  // CHECK-NEXT: [3]
  // CHECK-NEXT: [0]
  // CHECK-NEXT: [0]

  // reduce argmax axes=[0] keep_dims=False on tensor<3x4xf32>
  %v27 = loom.reduce argmax %v22 {axes = array<i64: 0>, keep_dims = false} : tensor<3x4xf32>
  %u28 = tensor.cast %v27 : tensor<4xi64> to tensor<*xi64>
  call @printMemrefI64(%u28) : (tensor<*xi64>) -> ()
  // CHECK: rank = 1 offset = 0 sizes = [4]
  // CHECK-NEXT: [2, 2, 2, 2]

  // reduce sum axes=[1] keep_dims=False on tensor<2x3xsi32>
  %v29 = loom.constant dense<[[-3, -4, 7], [2, -9, 1]]> : tensor<2x3xsi32>
  %v30 = loom.reduce sum %v29 {axes = array<i64: 1>, keep_dims = false} : tensor<2x3xsi32>
  %v31 = loom.cast %v30 : tensor<2xsi32> to tensor<2xi64>
  %u32 = tensor.cast %v31 : tensor<2xi64> to tensor<*xi64>
  call @printMemrefI64(%u32) : (tensor<*xi64>) -> ()
  // CHECK: rank = 1 offset = 0 sizes = [2]
  // CHECK-NEXT: [0, -6]

  // reduce mean axes=[1] keep_dims=False on tensor<2x3xsi32>
  %v33 = loom.reduce mean %v29 {axes = array<i64: 1>, keep_dims = false} : tensor<2x3xsi32>
  %v34 = loom.cast %v33 : tensor<2xsi32> to tensor<2xi64>
  %u35 = tensor.cast %v34 : tensor<2xi64> to tensor<*xi64>
  call @printMemrefI64(%u35) : (tensor<*xi64>) -> ()
  // CHECK: rank = 1 offset = 0 sizes = [2]
  // CHECK-NEXT: [0, -2]

  // reduce max axes=[0] keep_dims=False on tensor<2x3xsi32>
  %v36 = loom.reduce max %v29 {axes = array<i64: 0>, keep_dims = false} : tensor<2x3xsi32>
  %v37 = loom.cast %v36 : tensor<3xsi32> to tensor<3xi64>
  %u38 = tensor.cast %v37 : tensor<3xi64> to tensor<*xi64>
  call @printMemrefI64(%u38) : (tensor<*xi64>) -> ()
  // CHECK: rank = 1 offset = 0 sizes = [3]
  // CHECK-NEXT: [2, -4, 7]

  // reduce argmin axes=[1] keep_dims=False on tensor<2x3xsi32>
  %v39 = loom.reduce argmin %v29 {axes = array<i64: 1>, keep_dims = false} : tensor<2x3xsi32>
  %u40 = tensor.cast %v39 : tensor<2xi64> to tensor<*xi64>
  call @printMemrefI64(%u40) : (tensor<*xi64>) -> ()
  // CHECK: rank = 1 offset = 0 sizes = [2]
  // CHECK-NEXT: [1, 1]

  // reduce max axes=[1] keep_dims=False on tensor<2x3xui8>
  %v41 = loom.constant dense<[[200, 3, 255], [127, 128, 0]]> : tensor<2x3xui8>
  %v42 = loom.reduce max %v41 {axes = array<i64: 1>, keep_dims = false} : tensor<2x3xui8>
  %v43 = loom.cast %v42 : tensor<2xui8> to tensor<2xi64>
  %u44 = tensor.cast %v43 : tensor<2xi64> to tensor<*xi64>
  call @printMemrefI64(%u44) : (tensor<*xi64>) -> ()
  // CHECK: rank = 1 offset = 0 sizes = [2]
  // CHECK-NEXT: [255, 128]

  // reduce min axes=[1] keep_dims=True on tensor<2x3xui8>
  %v45 = loom.reduce min %v41 {axes = array<i64: 1>, keep_dims = true} : tensor<2x3xui8>
  %v46 = loom.cast %v45 : tensor<2x1xui8> to tensor<2x1xi64>
  %u47 = tensor.cast %v46 : tensor<2x1xi64> to tensor<*xi64>
  call @printMemrefI64(%u47) : (tensor<*xi64>) -> ()
  // CHECK: rank = 2 offset = 0 sizes = [2, 1]
  // CHECK-NEXT: [3]
  // CHECK-NEXT: [0]

  // reduce argmax axes=[1] keep_dims=False on tensor<2x3xui8>
  %v48 = loom.reduce argmax %v41 {axes = array<i64: 1>, keep_dims = false} : tensor<2x3xui8>
  %u49 = tensor.cast %v48 : tensor<2xi64> to tensor<*xi64>
  call @printMemrefI64(%u49) : (tensor<*xi64>) -> ()
  // CHECK: rank = 1 offset = 0 sizes = [2]
  // CHECK-NEXT: [2, 1]

  // reduce l2 axes=[1] keep_dims=False on tensor<2x2xi32>
  %v50 = arith.constant dense<[[3, 4], [-5, 12]]> : tensor<2x2xi32>
  %v51 = loom.reduce l2 %v50 {axes = array<i64: 1>, keep_dims = false} : tensor<2x2xi32>
  %v52 = loom.cast %v51 : tensor<2xi32> to tensor<2xi64>
  %u53 = tensor.cast %v52 : tensor<2xi64> to tensor<*xi64>
  call @printMemrefI64(%u53) : (tensor<*xi64>) -> ()
  // CHECK: rank = 1 offset = 0 sizes = [2]
  // CHECK-NEXT: [5, 13]

  // reduce prod axes=[0] keep_dims=False on tensor<2x2xi64>
  %v54 = arith.constant dense<[[3, -4], [-5, 2]]> : tensor<2x2xi64>
  %v55 = loom.reduce prod %v54 {axes = array<i64: 0>, keep_dims = false} : tensor<2x2xi64>
  %u56 = tensor.cast %v55 : tensor<2xi64> to tensor<*xi64>
  call @printMemrefI64(%u56) : (tensor<*xi64>) -> ()
  // CHECK: rank = 1 offset = 0 sizes = [2]
  // CHECK-NEXT: [-15, -8]

  // reduce sum axes=[1] keep_dims=False on tensor<2x3xi1>
  %v57 = arith.constant dense<[[true, false, false], [false, false, false]]> : tensor<2x3xi1>
  %v58 = loom.reduce sum %v57 {axes = array<i64: 1>, keep_dims = false} : tensor<2x3xi1>
  %v59 = loom.cast %v58 : tensor<2xi1> to tensor<2xi32>
  %u60 = tensor.cast %v59 : tensor<2xi32> to tensor<*xi32>
  call @printMemrefI32(%u60) : (tensor<*xi32>) -> ()
  // CHECK: rank = 1 offset = 0 sizes = [2]
  // CHECK-NEXT: [1, 0]

  // reduce min axes=[0] keep_dims=False on tensor<2x3xi1>
  %v61 = loom.reduce min %v57 {axes = array<i64: 0>, keep_dims = false} : tensor<2x3xi1>
  %v62 = loom.cast %v61 : tensor<3xi1> to tensor<3xi32>
  %u63 = tensor.cast %v62 : tensor<3xi32> to tensor<*xi32>
  call @printMemrefI32(%u63) : (tensor<*xi32>) -> ()
  // CHECK: rank = 1 offset = 0 sizes = [3]
  // CHECK-NEXT: [0, 0, 0]

  // softmax axis=2 log=False
  %v64 = arith.constant dense<[[[0.5, 0.5, 0.0, 3.0], [2.0, 2.0, 1.5, 1.0], [-1.0, 3.0, 0.0, -2.0]], [[2.0, -2.0, 2.5, 0.5], [-2.5, -3.0, -0.5, -3.0], [-2.5, 0.0, 3.0, 0.0]]]> : tensor<2x3x4xf32>
  %v65 = loom.softmax %v64 {axis = 2 : i64} : tensor<2x3x4xf32>
  %v66 = arith.constant dense<[[[0.06761771440505981, 0.06761771440505981, 0.04101221635937691, 0.8237523436546326], [0.33620113134384155, 0.33620113134384155, 0.2039162814617157, 0.12368147820234299], [0.017040329053997993, 0.9303704500198364, 0.04632041975855827, 0.006268786732107401]], [[0.3460007607936859, 0.006337224971503019, 0.5704588294029236, 0.07720320671796799], [0.10414369404315948, 0.06316634267568588, 0.7695236206054688, 0.06316634267568588], [0.0037029229570180178, 0.04511083662509918, 0.9060754179954529, 0.04511083662509918]]]> : tensor<2x3x4xf32>
  %zero67 = arith.constant 0 : i64
  %empty67 = tensor.empty() : tensor<i64>
  %init67 = linalg.fill ins(%zero67 : i64) outs(%empty67 : tensor<i64>) -> tensor<i64>
  %bad67 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%v65, %v66 : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%init67 : tensor<i64>) {
  ^bb0(%got: f32, %want: f32, %acc: i64):
    %diff = arith.subf %got, %want : f32
    %err = math.absf %diff : f32
    %mag = math.absf %want : f32
    %rel = arith.constant 1.0e-5 : f32
    %abs = arith.constant 1.0e-6 : f32
    %scaled = arith.mulf %mag, %rel : f32
    %tol = arith.addf %scaled, %abs : f32
    %off = arith.cmpf ugt, %err, %tol : f32
    %one = arith.extui %off : i1 to i64
    %sum = arith.addi %acc, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %u67 = tensor.cast %bad67 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%u67) : (tensor<*xi64>) -> ()
  // mismatches against numpy's tensor<2x3x4xf32> (the constant %v66):
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [0]

  // softmax axis=1 log=True
  %v68 = arith.constant dense<[[[2.0, 2.5, 2.0, 1.0], [-0.5, 0.0, -1.5, 0.0], [-1.0, -1.5, 3.0, -3.0]], [[-2.5, -2.0, 3.0, 1.0], [2.5, -2.0, 1.5, -1.0], [0.0, -3.0, 1.0, 2.0]]]> : tensor<2x3x4xf32>
  %v69 = loom.softmax %v68 {axis = 1 : i64, log} : tensor<2x3x4xf32>
  %v70 = arith.constant dense<[[[-0.12387295812368393, -0.09567432850599289, -1.3213502168655396, -0.32656264305114746], [-2.623872995376587, -2.5956742763519287, -4.82135009765625, -1.3265626430511475], [-3.123872995376587, -4.095674514770508, -0.32135021686553955, -4.326562404632568]], [[-5.085097312927246, -0.8619948029518127, -0.30635571479797363, -1.3490122556686401], [-0.08509724587202072, -0.8619948029518127, -1.8063557147979736, -3.3490121364593506], [-2.585097312927246, -1.8619948625564575, -2.3063557147979736, -0.34901222586631775]]]> : tensor<2x3x4xf32>
  %zero71 = arith.constant 0 : i64
  %empty71 = tensor.empty() : tensor<i64>
  %init71 = linalg.fill ins(%zero71 : i64) outs(%empty71 : tensor<i64>) -> tensor<i64>
  %bad71 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%v69, %v70 : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%init71 : tensor<i64>) {
  ^bb0(%got: f32, %want: f32, %acc: i64):
    %diff = arith.subf %got, %want : f32
    %err = math.absf %diff : f32
    %mag = math.absf %want : f32
    %rel = arith.constant 1.0e-5 : f32
    %abs = arith.constant 1.0e-6 : f32
    %scaled = arith.mulf %mag, %rel : f32
    %tol = arith.addf %scaled, %abs : f32
    %off = arith.cmpf ugt, %err, %tol : f32
    %one = arith.extui %off : i1 to i64
    %sum = arith.addi %acc, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %u71 = tensor.cast %bad71 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%u71) : (tensor<*xi64>) -> ()
  // mismatches against numpy's tensor<2x3x4xf32> (the constant %v70):
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [0]

  // softmax axis=0 log=False
  %v72 = arith.constant dense<[[[1.0, -2.0, 0.0, -1.5], [3.0, 2.5, -2.0, 0.0], [3.0, 2.5, 1.5, 1.0]], [[-3.0, 1.5, 0.0, -2.5], [-1.5, 0.5, 1.5, 0.0], [0.5, 2.5, 1.0, -1.0]]]> : tensor<2x3x4xf32>
  %v73 = loom.softmax %v72 {axis = 0 : i64} : tensor<2x3x4xf32>
  %v74 = arith.constant dense<[[[0.9820137619972229, 0.02931223064661026, 0.5, 0.7310585975646973], [0.9890130758285522, 0.8807970881462097, 0.02931223064661026, 0.5], [0.9241418242454529, 0.5, 0.622459352016449, 0.8807970881462097]], [[0.01798621006309986, 0.970687747001648, 0.5, 0.2689414322376251], [0.010986942797899246, 0.11920291930437088, 0.970687747001648, 0.5], [0.07585818320512772, 0.5, 0.3775406777858734, 0.11920291930437088]]]> : tensor<2x3x4xf32>
  %zero75 = arith.constant 0 : i64
  %empty75 = tensor.empty() : tensor<i64>
  %init75 = linalg.fill ins(%zero75 : i64) outs(%empty75 : tensor<i64>) -> tensor<i64>
  %bad75 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%v73, %v74 : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%init75 : tensor<i64>) {
  ^bb0(%got: f32, %want: f32, %acc: i64):
    %diff = arith.subf %got, %want : f32
    %err = math.absf %diff : f32
    %mag = math.absf %want : f32
    %rel = arith.constant 1.0e-5 : f32
    %abs = arith.constant 1.0e-6 : f32
    %scaled = arith.mulf %mag, %rel : f32
    %tol = arith.addf %scaled, %abs : f32
    %off = arith.cmpf ugt, %err, %tol : f32
    %one = arith.extui %off : i1 to i64
    %sum = arith.addi %acc, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %u75 = tensor.cast %bad75 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%u75) : (tensor<*xi64>) -> ()
  // mismatches against numpy's tensor<2x3x4xf32> (the constant %v74):
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [0]

  // layer_norm axis=2 bias=True
  %v76 = arith.constant dense<[[[0.5, 0.5, -1.75, -1.75], [0.75, -0.5, 0.5, -0.75], [-1.25, -1.5, -0.5, 1.25]], [[-0.5, -0.5, 0.25, 2.0], [-0.5, 0.5, -0.25, 0.5], [-0.25, 0.5, 0.25, 0.75]]]> : tensor<2x3x4xf32>
  %v77 = arith.constant dense<[2.0, 0.75, 1.25, 1.25]> : tensor<4xf32>
  %v78 = arith.constant dense<[-0.5, -1.0, -2.0, -0.5]> : tensor<4xf32>
  %v79 = loom.layer_norm %v76 scale %v77 bias %v78 {axis = 2 : i64, epsilon = 1.0e-5 : f64} : tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>
  %v80 = arith.constant dense<[[[1.4999921321868896, -0.2500029504299164, -3.249994993209839, -1.7499951124191284], [1.8533647060394287, -1.5883411169052124, -1.0194313526153564, -1.9708528518676758], [-1.894965648651123, -1.6974828243255615, -2.0, 1.5343248844146729]], [[-2.0911664962768555, -1.5966874361038208, -2.076498508453369, 1.565456509590149], [-3.0204408168792725, -0.26487141847610474, -2.875153064727783, 0.7252143025398254], [-3.5424439907073975, -0.6196944713592529, -2.2112808227539062, 0.9789658784866333]]]> : tensor<2x3x4xf32>
  %zero81 = arith.constant 0 : i64
  %empty81 = tensor.empty() : tensor<i64>
  %init81 = linalg.fill ins(%zero81 : i64) outs(%empty81 : tensor<i64>) -> tensor<i64>
  %bad81 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%v79, %v80 : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%init81 : tensor<i64>) {
  ^bb0(%got: f32, %want: f32, %acc: i64):
    %diff = arith.subf %got, %want : f32
    %err = math.absf %diff : f32
    %mag = math.absf %want : f32
    %rel = arith.constant 1.0e-5 : f32
    %abs = arith.constant 1.0e-6 : f32
    %scaled = arith.mulf %mag, %rel : f32
    %tol = arith.addf %scaled, %abs : f32
    %off = arith.cmpf ugt, %err, %tol : f32
    %one = arith.extui %off : i1 to i64
    %sum = arith.addi %acc, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %u81 = tensor.cast %bad81 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%u81) : (tensor<*xi64>) -> ()
  // mismatches against numpy's tensor<2x3x4xf32> (the constant %v80):
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [0]

  // layer_norm axis=1 bias=False
  %v82 = arith.constant dense<[[1.75, 0.5, 1.0, 2.0], [2.0, 0.75, 0.5, 1.5], [0.5, 1.0, 1.25, 2.0]]> : tensor<3x4xf32>
  %v83 = loom.layer_norm %v76 scale %v82 {axis = 1 : i64, epsilon = 1.0e-5 : f64} : tensor<2x3x4xf32>, tensor<3x4xf32>
  %v84 = arith.constant dense<[[[1.5194180011749268, 0.43411943316459656, -1.364375352859497, -2.728750705718994], [2.232614278793335, -0.09302559494972229, 0.43411943316459656, -0.5581535696983337], [-0.43411943316459656, -1.1163071393966675, -0.1550426483154297, 3.2248871326446533]], [[-1.8543390035629272, -0.5298111438751221, 0.030274922028183937, 5.1467366218566895], [-2.1192445755004883, 0.2951804995536804, -0.34816160798072815, 0.5903609991073608], [-0.34816160798072815, 0.3935739994049072, 0.037843652069568634, 1.5137461423873901]]]> : tensor<2x3x4xf32>
  %zero85 = arith.constant 0 : i64
  %empty85 = tensor.empty() : tensor<i64>
  %init85 = linalg.fill ins(%zero85 : i64) outs(%empty85 : tensor<i64>) -> tensor<i64>
  %bad85 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%v83, %v84 : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%init85 : tensor<i64>) {
  ^bb0(%got: f32, %want: f32, %acc: i64):
    %diff = arith.subf %got, %want : f32
    %err = math.absf %diff : f32
    %mag = math.absf %want : f32
    %rel = arith.constant 1.0e-5 : f32
    %abs = arith.constant 1.0e-6 : f32
    %scaled = arith.mulf %mag, %rel : f32
    %tol = arith.addf %scaled, %abs : f32
    %off = arith.cmpf ugt, %err, %tol : f32
    %one = arith.extui %off : i1 to i64
    %sum = arith.addi %acc, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %u85 = tensor.cast %bad85 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%u85) : (tensor<*xi64>) -> ()
  // mismatches against numpy's tensor<2x3x4xf32> (the constant %v84):
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [0]

  // rms_norm axis=2 scale=True
  %v86 = arith.constant dense<[0.75, 0.75, 1.25, 0.75]> : tensor<4xf32>
  %v87 = loom.rms_norm %v76 scale %v86 {axis = 2 : i64, epsilon = 1.0e-6 : f64} : tensor<2x3x4xf32>, tensor<4xf32>
  %v88 = arith.constant dense<[[[0.291385680437088, 0.291385680437088, -1.6997497081756592, -1.0198498964309692], [0.8825215101242065, -0.5883476734161377, 0.9805794954299927, -0.8825215101242065], [-0.7905691266059875, -0.948682963848114, -0.5270460844039917, 0.7905691266059875]], [[-0.35112327337265015, -0.35112327337265015, 0.2926027476787567, 1.4044930934906006], [-0.832048237323761, 0.832048237323761, -0.6933735609054565, 0.832048237323761], [-0.38729751110076904, 0.7745950222015381, 0.6454958319664001, 1.1618925333023071]]]> : tensor<2x3x4xf32>
  %zero89 = arith.constant 0 : i64
  %empty89 = tensor.empty() : tensor<i64>
  %init89 = linalg.fill ins(%zero89 : i64) outs(%empty89 : tensor<i64>) -> tensor<i64>
  %bad89 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%v87, %v88 : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%init89 : tensor<i64>) {
  ^bb0(%got: f32, %want: f32, %acc: i64):
    %diff = arith.subf %got, %want : f32
    %err = math.absf %diff : f32
    %mag = math.absf %want : f32
    %rel = arith.constant 1.0e-5 : f32
    %abs = arith.constant 1.0e-6 : f32
    %scaled = arith.mulf %mag, %rel : f32
    %tol = arith.addf %scaled, %abs : f32
    %off = arith.cmpf ugt, %err, %tol : f32
    %one = arith.extui %off : i1 to i64
    %sum = arith.addi %acc, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %u89 = tensor.cast %bad89 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%u89) : (tensor<*xi64>) -> ()
  // mismatches against numpy's tensor<2x3x4xf32> (the constant %v88):
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [0]

  // rms_norm axis=0 scale=False
  %v90 = loom.rms_norm %v76 {axis = 0 : i64, epsilon = 1.0e-6 : f64} : tensor<2x3x4xf32>
  %v91 = arith.constant dense<[[[0.5451726913452148, 0.5451726913452148, -1.908104419708252, -1.908104419708252], [0.8177590370178223, -0.5451726913452148, 0.5451726913452148, -0.8177590370178223], [-1.362931728363037, -1.6355180740356445, -0.5451726913452148, 1.362931728363037]], [[-0.5451726913452148, -0.5451726913452148, 0.2725863456726074, 2.1806907653808594], [-0.5451726913452148, 0.5451726913452148, -0.2725863456726074, 0.5451726913452148], [-0.2725863456726074, 0.5451726913452148, 0.2725863456726074, 0.8177590370178223]]]> : tensor<2x3x4xf32>
  %zero92 = arith.constant 0 : i64
  %empty92 = tensor.empty() : tensor<i64>
  %init92 = linalg.fill ins(%zero92 : i64) outs(%empty92 : tensor<i64>) -> tensor<i64>
  %bad92 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%v90, %v91 : tensor<2x3x4xf32>, tensor<2x3x4xf32>) outs(%init92 : tensor<i64>) {
  ^bb0(%got: f32, %want: f32, %acc: i64):
    %diff = arith.subf %got, %want : f32
    %err = math.absf %diff : f32
    %mag = math.absf %want : f32
    %rel = arith.constant 1.0e-5 : f32
    %abs = arith.constant 1.0e-6 : f32
    %scaled = arith.mulf %mag, %rel : f32
    %tol = arith.addf %scaled, %abs : f32
    %off = arith.cmpf ugt, %err, %tol : f32
    %one = arith.extui %off : i1 to i64
    %sum = arith.addi %acc, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %u92 = tensor.cast %bad92 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%u92) : (tensor<*xi64>) -> ()
  // mismatches against numpy's tensor<2x3x4xf32> (the constant %v91):
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [0]

  // batch_norm
  %v93 = arith.constant dense<[[[[1.0, 0.25], [0.0, -0.75]], [[-0.25, 1.0], [-2.0, -2.0]], [[1.0, -0.5], [1.25, -2.0]]], [[[1.75, -1.5], [-0.25, 2.0]], [[-1.75, 0.75], [1.0, -0.25]], [[-1.75, 0.0], [-0.25, 1.5]]]]> : tensor<2x3x2x2xf32>
  %v94 = arith.constant dense<[1.5, 1.0, 0.5]> : tensor<3xf32>
  %v95 = arith.constant dense<[0.5, -1.0, 0.75]> : tensor<3xf32>
  %v96 = arith.constant dense<[0.75, -0.25, 1.0]> : tensor<3xf32>
  %v97 = arith.constant dense<[1.25, 1.25, 1.75]> : tensor<3xf32>
  %v98 = loom.batch_norm %v93, %v94, %v95, %v96, %v97 {epsilon = 1.0e-5 : f64} : tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  %v99 = arith.constant dense<[[[[0.8354088664054871, -0.17081773281097412], [-0.5062265396118164, -1.5124530792236328]], [[-1.0, 0.11802959442138672], [-2.5652413368225098, -2.5652413368225098]], [[0.75, 0.18305492401123047], [0.8444908261299133, -0.38389015197753906]]], [[[1.8416354656219482, -2.5186800956726074], [-0.8416354656219482, 2.17704439163208]], [[-2.3416354656219482, -0.10557633638381958], [0.11802959442138672, -1.0]], [[-0.2893993854522705, 0.3720366060733795], [0.2775457501411438, 0.9389817118644714]]]]> : tensor<2x3x2x2xf32>
  %zero100 = arith.constant 0 : i64
  %empty100 = tensor.empty() : tensor<i64>
  %init100 = linalg.fill ins(%zero100 : i64) outs(%empty100 : tensor<i64>) -> tensor<i64>
  %bad100 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]} ins(%v98, %v99 : tensor<2x3x2x2xf32>, tensor<2x3x2x2xf32>) outs(%init100 : tensor<i64>) {
  ^bb0(%got: f32, %want: f32, %acc: i64):
    %diff = arith.subf %got, %want : f32
    %err = math.absf %diff : f32
    %mag = math.absf %want : f32
    %rel = arith.constant 1.0e-5 : f32
    %abs = arith.constant 1.0e-6 : f32
    %scaled = arith.mulf %mag, %rel : f32
    %tol = arith.addf %scaled, %abs : f32
    %off = arith.cmpf ugt, %err, %tol : f32
    %one = arith.extui %off : i1 to i64
    %sum = arith.addi %acc, %one : i64
    linalg.yield %sum : i64
  } -> tensor<i64>
  %u100 = tensor.cast %bad100 : tensor<i64> to tensor<*xi64>
  call @printMemrefI64(%u100) : (tensor<*xi64>) -> ()
  // mismatches against numpy's tensor<2x3x2x2xf32> (the constant %v99):
  // CHECK: rank = 0 offset = 0 sizes = []
  // CHECK-NEXT: [0]
  return
}
