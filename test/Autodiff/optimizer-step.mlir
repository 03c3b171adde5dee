// RUN: loom-opt %s --loom-autodiff --loom-optimizer-step="kind=adamw lr=0.01 weight-decay=0.1" | FileCheck %s --check-prefix=ADAMW
// RUN: loom-opt %s --loom-autodiff --loom-optimizer-step="kind=sgd lr=0.5 momentum=0.9 keep-gradients=true" | FileCheck %s --check-prefix=SGD
// RUN: loom-opt %s --loom-autodiff --loom-optimizer-step="kind=sgd lr=0.5" | FileCheck %s --check-prefix=PLAIN

// The update of each trainable weight replaces its gradient among the
// results. AdamW: the shared step count (float64) and each weight's two
// moments are state weights that start at zero; every new value is a result
// marked loom.updates. The buffer is not trained.

// ADAMW-LABEL: func.func @main(
// ADAMW-SAME: -> (tensor<2x4xf32> {loom.name = "y"}, tensor<f64> {loom.name = "optimizer.step", loom.updates = "optimizer.step"}, tensor<4x4xf32> {loom.name = "w.exp_avg", loom.updates = "w.exp_avg"}, tensor<4x4xf32> {loom.name = "w.exp_avg_sq", loom.updates = "w.exp_avg_sq"}, tensor<4x4xf32> {loom.name = "w", loom.updates = "w"})
// ADAMW-SAME: loom.optimizer = {beta1 = 9.000000e-01 : f64, beta2 = 0.99899999999999999 : f64, eps = 1.000000e-08 : f64, kind = "adamw", lr = 1.000000e-02 : f64, weight_decay = 1.000000e-01 : f64}
// ADAMW: %[[T:.+]] = loom.weight state "optimizer.step" from ""[0] : tensor<f64>
// ADAMW-NEXT: %[[M:.+]] = loom.weight state "w.exp_avg" from ""[0] : tensor<4x4xf32>
// ADAMW-NEXT: %[[V:.+]] = loom.weight state "w.exp_avg_sq" from ""[0] : tensor<4x4xf32>
// ADAMW-NEXT: %[[W:.+]] = loom.weight parameter "w"
// ADAMW: %[[G:.+]] = loom.matmul %{{.+}}, %arg1 : tensor<4x2xf32>, tensor<2x4xf32>
// t + 1, and the bias corrections 1 - b1^t and sqrt(1 - b2^t).
// ADAMW: %[[T1:.+]] = loom.binary add %[[T]], %{{.+}} : tensor<f64>, tensor<f64>
// ADAMW: %[[B1T:.+]] = loom.binary pow %{{.+}}, %[[T1]] : tensor<f64>, tensor<f64>
// ADAMW-NEXT: loom.constant dense<1.000000e+00> : tensor<f64>
// ADAMW-NEXT: %[[C1:.+]] = loom.binary sub %{{.+}}, %[[B1T]]
// ADAMW: %[[C2:.+]] = loom.unary sqrt %{{.+}} : tensor<f64>
// m + (1 - b1)(g - m), as torch's lerp; b2 v + (1 - b2) g^2.
// ADAMW-NEXT: %[[D:.+]] = loom.binary sub %[[G]], %[[M]]
// ADAMW-NEXT: %[[B1C:.+]] = loom.constant dense<1.000000e-01> : tensor<f32>
// ADAMW-NEXT: %[[DS:.+]] = loom.binary mul %[[D]], %[[B1C]]
// ADAMW-NEXT: %[[M1:.+]] = loom.binary add %[[M]], %[[DS]]
// ADAMW-NEXT: %[[GG:.+]] = loom.binary mul %[[G]], %[[G]]
// ADAMW: %[[V1:.+]] = loom.binary add %{{.+}}, %{{.+}} : tensor<4x4xf32>, tensor<4x4xf32>
// lr / (1 - b1^t), rounded to the weight's type once.
// ADAMW: %[[LR:.+]] = loom.binary div %{{.+}}, %[[C1]] : tensor<f64>, tensor<f64>
// ADAMW-NEXT: %[[STEP:.+]] = loom.cast %[[LR]] : tensor<f64> to tensor<f32>
// ADAMW-NEXT: %[[ROOT:.+]] = loom.cast %[[C2]] : tensor<f64> to tensor<f32>
// ADAMW: loom.unary sqrt %[[V1]]
// Decoupled decay: w (1 - lr wd), then the step.
// ADAMW: loom.constant dense<9.990000e-01> : tensor<f32>
// ADAMW-NEXT: %[[DECAYED:.+]] = loom.binary mul %[[W]]
// ADAMW: %[[W1:.+]] = loom.binary sub %[[DECAYED]], %{{.+}} : tensor<4x4xf32>, tensor<4x4xf32>
// ADAMW-NEXT: return %{{.+}}, %[[T1]], %[[M1]], %[[V1]], %[[W1]] :

// SGD with momentum: b = 0.9 b + g; w - 0.5 b. The gradient is kept.
// SGD-LABEL: func.func @main(
// SGD-SAME: -> (tensor<2x4xf32> {loom.name = "y"}, tensor<4x4xf32> {loom.gradient_of = "w", loom.name = "w.grad"}, tensor<4x4xf32> {loom.name = "w.momentum_buffer", loom.updates = "w.momentum_buffer"}, tensor<4x4xf32> {loom.name = "w", loom.updates = "w"})
// SGD: %[[B:.+]] = loom.weight state "w.momentum_buffer" from ""[0] : tensor<4x4xf32>
// SGD-NEXT: %[[W:.+]] = loom.weight parameter "w"
// SGD: %[[G:.+]] = loom.matmul %{{.+}}, %arg1 : tensor<4x2xf32>, tensor<2x4xf32>
// SGD-NEXT: %[[MU:.+]] = loom.constant dense<0.899999976> : tensor<f32>
// SGD-NEXT: %[[BM:.+]] = loom.binary mul %[[B]], %[[MU]]
// SGD-NEXT: %[[B1:.+]] = loom.binary add %[[BM]], %[[G]]
// SGD-NEXT: %[[LR:.+]] = loom.constant dense<5.000000e-01> : tensor<f32>
// SGD-NEXT: %[[S:.+]] = loom.binary mul %[[B1]], %[[LR]]
// SGD-NEXT: %[[W1:.+]] = loom.binary sub %[[W]], %[[S]]
// SGD-NEXT: return %{{.+}}, %[[G]], %[[B1]], %[[W1]] :

// Plain SGD has no state.
// PLAIN-LABEL: func.func @main(
// PLAIN-SAME: -> (tensor<2x4xf32> {loom.name = "y"}, tensor<4x4xf32> {loom.name = "w", loom.updates = "w"})
// PLAIN-NOT: loom.weight state
func.func @main(%x: tensor<2x4xf32>) -> (tensor<2x4xf32> {loom.name = "y"}) {
  %w = loom.weight parameter "w" from "w.bin"[0] : tensor<4x4xf32>
  %s = loom.weight buffer "s" from "w.bin"[64] : tensor<4xf32>
  %y = loom.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32>
  %z = loom.binary add %y, %s : tensor<2x4xf32>, tensor<4xf32>
  return %z : tensor<2x4xf32>
}

