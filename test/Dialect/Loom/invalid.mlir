// RUN: loom-opt %s -split-input-file -verify-diagnostics

func.func @matmul_contracting_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'loom.matmul' op contracting dimensions differ: lhs [2x3] has 3, rhs [4x5] has 4}}
  %0 = loom.matmul %a, %b : tensor<2x3xf32>, tensor<4x5xf32>
  return
}

// -----

func.func @matmul_rank1(%a: tensor<3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{operands must have rank >= 2}}
  %0 = loom.matmul %a, %b : tensor<3xf32>, tensor<3x5xf32>
  return
}

// -----

func.func @binary_no_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{operand shapes [2x3] and [4] do not broadcast}}
  %0 = loom.binary add %a, %b : tensor<2x3xf32>, tensor<4xf32>
  return
}

// -----

func.func @binary_mixed_types(%a: tensor<2xf32>, %b: tensor<2xi64>) {
  // expected-error @+1 {{operand element types differ}}
  %0 = loom.binary mul %a, %b : tensor<2xf32>, tensor<2xi64>
  return
}

// -----

func.func @unary_float_on_int(%a: tensor<2xi64>) {
  // expected-error @+1 {{exp needs a float tensor}}
  %0 = loom.unary exp %a : tensor<2xi64>
  return
}

// -----

func.func @weight_negative_offset() {
  // expected-error @+1 {{byte offset must be non-negative}}
  %0 = loom.weight parameter "w" from "w.bin"[-8] : tensor<4xf32>
  return
}

// -----

func.func @weight_widened_from_wider() {
  // expected-error @+1 {{weight 'w.master' reads its file as 'f32' into 'bf16'; `as` names a float type narrower than the result's, of bytes in a file}}
  %0 = loom.weight state "w.master" from "w.bin"[0] as f32 : tensor<4xbf16>
  return
}

// -----

func.func @weight_widened_without_file() {
  // expected-error @+1 {{weight 'w.master' reads its file as 'bf16' into 'f32'}}
  %0 = loom.weight state "w.master" from ""[0] as bf16 : tensor<4xf32>
  return
}

// -----

func.func @reshape_count(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{changes the element count: [2x3] has 6, [4x2] has 8}}
  %0 = loom.reshape %a : tensor<2x3xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @transpose_not_perm(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{permutation is not a permutation of [0, rank)}}
  %0 = loom.transpose %a {permutation = array<i64: 0, 0>} : tensor<2x3xf32>
  return
}

// -----

func.func @conv_groups(%x: tensor<1x6x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{groups 4 must divide input channels 6 and output channels 4}}
  %0 = loom.conv %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>,
      dilations = array<i64: 1, 1>, groups = 4 : i64} : tensor<1x6x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @conv_missing_attr(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error @+1 {{'loom.conv' op requires attribute 'dilations'}}
  %0 = loom.conv %x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>
  return
}

// -----

func.func @attention_heads(%q: tensor<1x6x4x8xf32>, %kv: tensor<1x4x4x8xf32>) {
  // expected-error @+1 {{query heads 6 are not a multiple of key/value heads 4}}
  %0 = loom.attention %q, %kv, %kv : tensor<1x6x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>
  return
}

// -----

func.func @slice_out_of_bounds(%a: tensor<4xf32>) {
  // expected-error @+1 {{dim 0: slice [2 .. 5] leaves the extent 4}}
  %0 = loom.slice %a {offsets = array<i64: 2>, sizes = array<i64: 4>, strides = array<i64: 1>} : tensor<4xf32>
  return
}

// -----

func.func @reduce_unsorted(%a: tensor<2x3x4xf32>) {
  // expected-error @+1 {{axes must be sorted and unique}}
  %0 = loom.reduce sum %a {axes = array<i64: 2, 1>, keep_dims = false} : tensor<2x3x4xf32>
  return
}

// -----

func.func @layer_norm_scale(%x: tensor<2x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{scale shape [4] must equal the normalized shape [8]}}
  %0 = loom.layer_norm %x scale %g {axis = 1 : i64, epsilon = 1.0e-5 : f64} : tensor<2x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @topk_too_many(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{k = 4 exceeds the axis extent 3}}
  %v, %i = loom.topk %a {k = 4 : i64, axis = 1 : i64} : tensor<4x3xf32>
  return
}

// -----

func.func @expand_bad(%a: tensor<3x2xf32>) {
  // expected-error @+1 {{cannot broadcast [3x2] to [3x4]}}
  %0 = loom.expand %a : tensor<3x2xf32> -> tensor<3x4xf32>
  return
}

// -----

func.func @cast_shape(%a: tensor<3xf32>) {
  // expected-error @+1 {{a cast only changes the element type}}
  %0 = loom.cast %a : tensor<3xf32> to tensor<4xf16>
  return
}

// -----

func.func @dynamic_shape(%a: tensor<?x3xf32>) {
  // expected-error @+1 {{must be statically shaped tensor}}
  %0 = loom.unary relu %a : tensor<?x3xf32>
  return
}

// -----

func.func @moe_combine_gates(%e: tensor<4x2x8xf32>, %i: tensor<6x2xi64>, %g: tensor<6x1xf32>) {
  // expected-error @+1 {{gates and experts shapes differ}}
  %0 = loom.moe_combine %e, %i, %g : tensor<4x2x8xf32>, tensor<6x2xi64>, tensor<6x1xf32>
  return
}

// -----

func.func @moe_dispatch_rank_mix(%x: tensor<2x6x8xf32>, %i: tensor<12x2xi64>) {
  // expected-error @+1 {{tokens must be [T, H] with experts [T, K], or grouped [G, S, H] with experts [G, S, K]}}
  %0 = loom.moe_dispatch %x, %i {num_experts = 4 : i64, capacity = 2 : i64} : tensor<2x6x8xf32>, tensor<12x2xi64>
  return
}

// -----

func.func @moe_dispatch_groups(%x: tensor<2x6x8xf32>, %i: tensor<3x6x2xi64>) {
  // expected-error @+1 {{tokens and experts differ in group count}}
  %0 = loom.moe_dispatch %x, %i {num_experts = 4 : i64, capacity = 2 : i64} : tensor<2x6x8xf32>, tensor<3x6x2xi64>
  return
}

// -----

func.func @moe_combine_groups(%e: tensor<3x4x2x8xf32>, %i: tensor<2x6x2xi64>, %g: tensor<2x6x2xf32>) {
  // expected-error @+1 {{expert_outputs and experts differ in group count}}
  %0 = loom.moe_combine %e, %i, %g : tensor<3x4x2x8xf32>, tensor<2x6x2xi64>, tensor<2x6x2xf32>
  return
}

// -----

// An attribute of the wrong kind is a diagnostic, not a misread (found while
// reviewing the cost model: inference used to read `[0]` as an i64 array).
func.func @reduce_axes_kind(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{'axes' failed to satisfy constraint}}
  %0 = loom.reduce sum %a {axes = [0], keep_dims = false} : tensor<4x3xf32>
  return
}

// -----

func.func @embedding_offset_without_rows(%t: tensor<4x3xf32>, %i: tensor<2xi64>, %o: index) {
  // expected-error @+1 {{'loom.embedding' op takes a row offset and `rows` together}}
  %0 = loom.embedding %t, %i offset %o : tensor<4x3xf32>, tensor<2xi64>
  return
}

// -----

func.func @embedding_rows_smaller_than_block(%t: tensor<4x3xf32>, %i: tensor<2xi64>, %o: index) {
  // expected-error @+1 {{'loom.embedding' op holds 4 rows of a table said to have only 3}}
  %0 = loom.embedding %t, %i offset %o {rows = 3 : i64} : tensor<4x3xf32>, tensor<2xi64>
  return
}

// -----

func.func @release_not_fetched(%w: tensor<8x8xf32>) {
  // expected-error @+1 {{'loom.release' op releases a value no loom.fetch produced}}
  loom.release %w : tensor<8x8xf32>
  return
}

// -----

func.func @fetch_negative_chunk(%w: tensor<8x8xf32>) {
  // expected-error @+1 {{'loom.fetch' op chunk must be non-negative, got -1}}
  %d = loom.fetch %w chunk -1 : tensor<8x8xf32>
  return
}

// -----

func.func @fetch_negative_offset(%w: tensor<8x8xf32>) {
  // expected-error @+1 {{'loom.fetch' op offset must be non-negative, got -256}}
  %d = loom.fetch %w chunk 0 at -256 : tensor<8x8xf32>
  return
}

// -----

func.func @spill_negative_offset(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{'loom.spill' op offset must be non-negative, got -8}}
  %h = loom.spill %x at -8 : tensor<8x8xf32>
  return
}

// -----

func.func @spill_read_by_compute(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'loom.spill' op host copy is read by 'loom.unary'; only loom.reload and host ops (loom.on_host) read a spilled value}}
  %h = loom.spill %x : tensor<8x8xf32>
  %y = loom.unary relu %h : tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

func.func @reload_not_spilled(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'loom.reload' op reloads a value that neither a loom.spill nor a host op (loom.on_host) produced, nor a weight placed off the device}}
  %y = loom.reload %x : tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

func.func @reload_negative_offset(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %h = loom.spill %x : tensor<8x8xf32>
  // expected-error @+1 {{'loom.reload' op offset must be non-negative, got -1}}
  %y = loom.reload %h at -1 : tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}
