// A division whose gradient reads its result (place-memory-train-step.test).
func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %w1 = loom.weight parameter "w1" from "w.bin"[0] : tensor<64x64xf32>
  %w2 = loom.weight parameter "w2" from "w.bin"[16384] : tensor<64x64xf32>
  %w3 = loom.weight parameter "w3" from "w.bin"[32768] : tensor<64x64xf32>
  %w4 = loom.weight parameter "w4" from "w.bin"[49152] : tensor<64x64xf32>
  %h = loom.matmul %x, %w1 : tensor<64x64xf32>, tensor<64x64xf32>
  %m = loom.matmul %x, %w2 : tensor<64x64xf32>, tensor<64x64xf32>
  %s = loom.unary exp %m : tensor<64x64xf32>
  %d = loom.binary div %h, %s : tensor<64x64xf32>, tensor<64x64xf32>
  %e = loom.binary add %d, %x : tensor<64x64xf32>, tensor<64x64xf32>
  %f = loom.matmul %e, %w3 : tensor<64x64xf32>, tensor<64x64xf32>
  %g = loom.unary relu %f : tensor<64x64xf32>
  %k = loom.matmul %g, %w4 : tensor<64x64xf32>, tensor<64x64xf32>
  return %k : tensor<64x64xf32>
}
