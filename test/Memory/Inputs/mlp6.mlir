// A 6-layer MLP, 512x512 f32 weights (1 MiB each), batch 4.
func.func @main(%x: tensor<4x512xf32>) -> tensor<4x512xf32> {
  %w0 = loom.weight parameter "layers.0.weight" from "mlp.bin"[0] : tensor<512x512xf32>
  %m0 = loom.matmul %x, %w0 : tensor<4x512xf32>, tensor<512x512xf32>
  %r0 = loom.unary relu %m0 : tensor<4x512xf32>
  %w1 = loom.weight parameter "layers.1.weight" from "mlp.bin"[1048576] : tensor<512x512xf32>
  %m1 = loom.matmul %r0, %w1 : tensor<4x512xf32>, tensor<512x512xf32>
  %r1 = loom.unary relu %m1 : tensor<4x512xf32>
  %w2 = loom.weight parameter "layers.2.weight" from "mlp.bin"[2097152] : tensor<512x512xf32>
  %m2 = loom.matmul %r1, %w2 : tensor<4x512xf32>, tensor<512x512xf32>
  %r2 = loom.unary relu %m2 : tensor<4x512xf32>
  %w3 = loom.weight parameter "layers.3.weight" from "mlp.bin"[3145728] : tensor<512x512xf32>
  %m3 = loom.matmul %r2, %w3 : tensor<4x512xf32>, tensor<512x512xf32>
  %r3 = loom.unary relu %m3 : tensor<4x512xf32>
  %w4 = loom.weight parameter "layers.4.weight" from "mlp.bin"[4194304] : tensor<512x512xf32>
  %m4 = loom.matmul %r3, %w4 : tensor<4x512xf32>, tensor<512x512xf32>
  %r4 = loom.unary relu %m4 : tensor<4x512xf32>
  %w5 = loom.weight parameter "layers.5.weight" from "mlp.bin"[5242880] : tensor<512x512xf32>
  %m5 = loom.matmul %r4, %w5 : tensor<4x512xf32>, tensor<512x512xf32>
  %r5 = loom.unary relu %m5 : tensor<4x512xf32>
  return %r5 : tensor<4x512xf32>
}
