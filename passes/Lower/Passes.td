//===- Passes.td - lowering the planned program to native code -*- tablegen -*-===//

#ifndef LOOM_PASSES_LOWER_PASSES_TD
#define LOOM_PASSES_LOWER_PASSES_TD

include "mlir/Pass/PassBase.td"

def LoomToLinalg : Pass<"loom-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower every loom op to linalg, tensor, arith, math and scf";
  let description = [{
    Rewrites each loom op into upstream value-semantic ops (named or generic
    linalg ops on tensors, tensor reshapes and slices, arith/math bodies), and
    drops the signedness of integer types in function signatures, so that
    upstream `one-shot-bufferize` and the LLVM conversions can compile the
    program. `loom.weight` must have been turned into arguments first
    (`--loom-weights-to-arguments`). Shard ops pass through unchanged.

    Before:
    ```mlir
    %y = loom.unary relu %x : tensor<4xf32>
    ```
    After:
    ```mlir
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.generic {...} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%in: f32, %out: f32):
        %m = arith.maximumf %in, %zero : f32
        linalg.yield %m : f32
    } -> tensor<4xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::bufferization::BufferizationDialect"
  ];
}

def LoomWeightsToArguments : Pass<"loom-weights-to-arguments", "::mlir::ModuleOp"> {
  let summary = "Turn the entry function's loom.weight ops into arguments";
  let description = [{
    A compiled program does not read files: the runtime loads each rank's
    shard of every weight and passes it in. This pass replaces every
    `loom.weight` of the entry function with a new trailing argument (one per
    distinct weight, in first-use order) carrying a `loom.weight` argument
    attribute `{role, name, file, offset}`, so that partitioning shards it like
    any other argument and the artifact's manifest can say where its bytes are.
    Every argument of the entry is also marked `bufferization.writable =
    false`: the runtime owns those buffers and reuses them across steps.
    A step's update functions (`@main_update`, `--loom-optimizer-step` of a
    micro-batched or pipelined step) get theirs the same way.

    Before:
    ```mlir
    func.func @main(%x: tensor<2x4xf32>) -> tensor<2x8xf32> {
      %w = loom.weight parameter "fc.weight" from "m.bin"[0] : tensor<4x8xf32>
      ...
    ```
    After:
    ```mlir
    func.func @main(%x: tensor<2x4xf32>,
                    %w: tensor<4x8xf32> {loom.weight = {file = "m.bin", name = "fc.weight", offset = 0 : i64, role = "parameter"}})
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", "\"main\"", "The entry function">,
  ];
}

def LoomWriteBackUpdates : Pass<"loom-write-back-updates", "::mlir::ModuleOp"> {
  let summary = "Write each updated weight back into its argument's buffer";
  let description = [{
    A result marked `loom.updates = "<name>"` (`--loom-optimizer-step`: a
    new weight, a new optimizer state) replaces the weight argument of that
    name. This pass, on tensors just before bufferization, turns each into
    a `bufferization.materialize_in_destination` of the value into the
    argument (marked writable), just before the return, and drops the
    result: after `eliminate-empty-tensors` the last op of the update writes
    into the weight's buffer itself, and one-shot bufferization refuses the
    program if anything still read the old value after that. The runtime
    keeps weights between calls, so the next call reads the update. A value
    that updates two weights (a host-updated parameter's host copy and its
    device copy, on a CPU where the reload between them is the value itself)
    is copied into the second (`linalg.copy`): one buffer cannot be both.

    Before:
    ```mlir
    func.func @main(%w: tensor<4xf32> {loom.weight = {name = "w", ...}})
        -> (tensor<4xf32> {loom.updates = "w"}) {
      ...
      return %w1 : tensor<4xf32>
    ```
    After:
    ```mlir
    func.func @main(%w: tensor<4xf32> {bufferization.writable = true, loom.weight = ...}) {
      ...
      %0 = bufferization.materialize_in_destination %w1 in %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
  let options = [
    Option<"entry", "entry", "std::string", "\"main\"", "The entry function">,
  ];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

def LoomPartition : Pass<"loom-partition", "::mlir::ModuleOp"> {
  let summary = "Partition a planned program into its per-device SPMD form";
  let description = [{
    A no-op for a module without a `shard.grid`. Otherwise runs upstream
    `sharding-propagation`, makes the entry's results replicated (each rank
    returns the whole output; partitioning inserts the gathers), records how
    every argument and result of the entry is split, and runs upstream
    `shard-partition` and `canonicalize`. The result is still loom ops plus
    `shard` collectives, the form both backends start from.

    A micro-batched step sums its gradients (`--loom-optimizer-step`); the
    data-parallel all-reduce of a gradient that feeds only its sum moves
    into the update function reading the sum, which then reduces it once a
    step (a reduce-scatter where the update reads it in ZeRO-1's shards).
    A collective over grid axes of one device each is dropped.

    The record is a `loom.sharding` argument/result attribute: the global
    shape and, per dimension, the grid axes it is split over (major to
    minor), e.g. `{grid = @g, shape = array<i64: 8, 16>, split = [[0], []]}`.
    The artifact's manifest copies it so the runtime can give each rank its
    slice of every input and weight.
  }];
  let options = [
    Option<"entry", "entry", "std::string", "\"main\"", "The entry function">,
  ];
  // Everything upstream's propagation and partitioning create: a dynamic
  // pipeline cannot load dialects while it runs.
  let dependentDialects = [
    "::mlir::shard::ShardDialect", "::mlir::arith::ArithDialect",
    "::mlir::tensor::TensorDialect", "::mlir::scf::SCFDialect",
    "::mlir::affine::AffineDialect", "::mlir::linalg::LinalgDialect"
  ];
}

def LoomSplitStages : Pass<"loom-split-stages", "::mlir::ModuleOp"> {
  let summary = "Split a pipelined entry into one function per stage";
  let description = [{
    A no-op unless ops of the entry carry `loom.stage` (the plan's pipeline
    stages; the module's `shard.grid` must name its `loom.pipeline_axis`).
    Replaces `@main` by `@main_stage0 ... @main_stage<P-1>`, one function
    per device of the P-device pipeline axis. Stage k runs on device k mod P
    (interleaved schedules have several stages per device, listed in the
    function's `loom.virtual_stages`); device t's function holds its stages'
    ops, stage by stage, plus clones of the weights, constants, sharding
    values and `annotate_for_users` annotations they use. A value computed on
    device s and used on another device t becomes an extra result of s,
    `{loom.send_to = array<i64: t>, loom.tag = k}`, and an extra argument of
    t, `{loom.recv_from = s, loom.tag = k}`, re-annotated with the value's
    own sharding. Every device takes all of the model's inputs; the last
    returns the model's outputs (the stage count is rounded up to whole
    rounds, so the last stage is on the last device), and a weight's update
    (a `loom.updates` result) is returned by the device computing it.
    Run before `loom-partition`;
    `loom-stage-transfers` turns the extra arguments and results into
    `shard.recv` / `shard.send` after it. Upstream `sharding-propagation`
    runs on the entry first, so that every value crossing a boundary has its
    own sharding annotation, which both stages keep.

    Before:
    ```mlir
    func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
      %h = loom.unary relu %x {loom.stage = 0 : i64} : tensor<4x8xf32>
      %y = loom.unary tanh %h {loom.stage = 1 : i64} : tensor<4x8xf32>
      return %y : tensor<4x8xf32>
    }
    ```
    After:
    ```mlir
    func.func @main_stage0(%x: tensor<4x8xf32>)
        -> (tensor<4x8xf32> {loom.send_to = array<i64: 1>, loom.tag = 0 : i64})
        attributes {loom.pipeline_stage = 0 : i64} {
      %h = loom.unary relu %x : tensor<4x8xf32>
      return %h : tensor<4x8xf32>
    }
    func.func @main_stage1(%x: tensor<4x8xf32>,
        %h: tensor<4x8xf32> {loom.recv_from = 0 : i64, loom.tag = 0 : i64})
        -> tensor<4x8xf32> attributes {loom.pipeline_stage = 1 : i64} {
      %y = loom.unary tanh %h : tensor<4x8xf32>
      return %y : tensor<4x8xf32>
    }
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", "\"main\"", "The entry function">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def LoomStageTransfers : Pass<"loom-stage-transfers", "::mlir::ModuleOp"> {
  let summary = "Turn the stage boundary of split, partitioned stages into send/recv";
  let description = [{
    Runs after `loom-partition` on the functions `loom-split-stages` made,
    and on a pipelined step's update functions (which exchange a tied
    weight's gradient sums, `--loom-optimizer-step`). Each
    `loom.recv_from = s` argument becomes a `shard.recv` from device s over
    the pipeline axis just before its first use; each `loom.send_to`
    result becomes one `shard.send` per destination device (by destination,
    then tag) just after the value is computed. The runtime's sends never
    wait for their receiver, so a receive waits only for an earlier stage of
    its micro-batch and no order of stages deadlocks. The tag is kept as a
    `loom.tag` attribute for the lowering.
  }];
  let options = [
    Option<"entry", "entry", "std::string", "\"main\"", "The entry function">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::mlir::tensor::TensorDialect"];
}

def LoomArenaBuffers : Pass<"loom-arena-buffers", "::mlir::ModuleOp"> {
  let summary = "Put the static memory plan's device buffers in one arena";
  let description = [{
    Memory placement gives every buffer of the device an offset in one
    arena (`loom.offsets`, `loom.fetch ... at N`, and the arena's size in
    `loom.memory_plan`; docs/memory-placement.md). This pass makes the
    program use it: the entry gains a trailing `memref<N x i8>` argument
    marked `loom.arena = "device"`, which the runtime allocates once, and
    each planned value is written at its offset:

    - an op result with a forward offset is materialized into a
      `memref.view` of the arena at that offset, and its readers read the
      view (after `eliminate-empty-tensors` the op computes there directly);
    - an entry argument with a forward offset is copied into its place on
      entry;
    - a `loom.fetch ... at N` copies its weight into the arena at N, where
      the plan put the chunk's copy (a carried fetch copies too: a CPU
      process has no previous step that left it there); `loom.release`
      frees nothing and goes.

    A stage function of a pipelined program (`loom.pipeline_stage = d`,
    after loom-split-stages) reads `loom.pipeline_offsets` instead, one
    offset per micro-batch, and allocates from `pipeline_arenas[d]`; where
    its micro-batches' places differ, it also takes the micro-batch the
    call runs (a `memref<1xi64>` after the arenas, marked
    `loom.micro_batch_places = M`, the micro-batches whose places it holds)
    and reads each such place from a constant table by it.

    Values without an offset, weights and the lowering's temporaries stay
    in buffers of their own. A module without a static memory plan is left
    unchanged. Fails, naming the op, when a planned buffer does not lie
    inside the arena, its offset is not a multiple of its element size, or
    it shares a byte with a weight kept at its place in that arena
    (`arena_offset`, loom-weights-to-arguments) by any function of the
    device: weights live throughout.

    Before:
    ```mlir
    %y = loom.unary relu %x {loom.offsets = {forward = array<i64: 256>}} : tensor<4xf32>
    ```
    After:
    ```mlir
    %c = arith.constant 256 : index
    %v = memref.view %arena[%c][] : memref<1024xi8> to memref<4xf32>
    %d = bufferization.to_tensor %v restrict writable : memref<4xf32> to tensor<4xf32>
    %y = loom.unary relu %x {loom.offsets = ...} : tensor<4xf32>
    %p = bufferization.materialize_in_destination %y in %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", "\"main\"", "The entry function">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::bufferization::BufferizationDialect"];
}

def LoomCollectivesToRuntime
    : Pass<"loom-collectives-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lower shard collectives upstream cannot lower to loomrt calls";
  let description = [{
    Upstream `convert-shard-to-mpi` lowers the process index ops (it runs
    after this pass); it has no pattern for `all_gather`, `reduce_scatter` or
    `all_to_all`, and its `all_reduce` lowering produces `mpi.allreduce`, which
    upstream's buffer deallocation rejects (no memory effects declared). This
    pass rewrites all four into calls of the runtime's C ABI
    (`loomrt_all_reduce`, `loomrt_all_gather`, `loomrt_reduce_scatter`,
    `loomrt_all_to_all`) on
    contiguous buffers, with the layout changes around them (moving the
    gathered/scattered dimension to the front and back) done in linalg, and
    lowers `shard.all_slice` with upstream's pattern.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect", "::mlir::tensor::TensorDialect",
    "::mlir::bufferization::BufferizationDialect", "::mlir::func::FuncDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::affine::AffineDialect",
    "::mlir::DLTIDialect"
  ];
}

def LoomFoldIntoContractions
    : Pass<"loom-fold-into-contractions", "::mlir::ModuleOp"> {
  let summary = "Read transposed operands through a contraction's maps, and add into its accumulator";
  let description = [{
    Runs on linalg on tensors, just after loom-to-linalg. Two rewrites keep
    temporaries the static memory plan does not hold out of the step:

    - A `linalg.matmul` or `linalg.batch_matmul` operand that is a
      `linalg.transpose` of the last two dims (or such a transpose
      collapsed over its leading dims, as the lowering batches a matmul) is
      read through the contraction's indexing maps instead (as a GEMM's
      transpose flags would), so the transpose is not materialized. The
      backward's `dX = dY W^T` otherwise copies each weight transposed, and
      `dW = X^T dY` each activation, buffers outside the arena.
    - An elementwise `x + C` where `C` is a contraction into a zero-filled
      init read only there and `x` is a function argument becomes the
      contraction accumulating into `x`, at the contraction's position
      (Megatron's gradient-accumulation fusion): each call's weight
      gradient is added into its sum (`.grad_sum`, an argument the step
      writes back) as it is computed, with no gradient buffer beside the
      sum, as memory placement prices it. The sum is rounded in another
      order (the sum first, then each product, as a GEMM with beta = 1
      does). A value the step computes is left alone: it may be planned,
      and a contraction into it would copy into the add's place rather
      than compute there.

    Under `allow-excess-precision` (off by default), a 16-bit
    contraction's result that is rounded only to be widened back (its
    float32 accumulator truncated, then extended) is read unrounded, as
    XLA's `xla_allow_excess_precision` allows: a 16-bit weight's gradient
    then accumulates into its float32 sum with no 16-bit copy between
    (Megatron's gradient-accumulation fusion into `main_grad`), and a
    float32 normalization of a matmul's output reads it before rounding.
    This changes results (one rounding fewer), which is why it is asked
    for. Without it, contractions whose result types differ from the
    sum's (a 16-bit gradient widened before the add) are left alone.

    Before:
    ```mlir
    %t = linalg.transpose ins(%w : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) permutation = [1, 0]
    %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
    %g = linalg.matmul ins(%dy, %t : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
    %s = linalg.generic {...} ins(%sum, %g : ...) outs(%e3 : ...) { addf }
    ```
    After:
    ```mlir
    %s = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
           ins(%dy, %w : tensor<2x8xf32>, tensor<4x8xf32>) outs(%sum : tensor<2x4xf32>) -> tensor<2x4xf32>
    ```
  }];
  let options = [
    Option<"allowExcessPrecision", "allow-excess-precision", "bool", "false",
           "Read a 16-bit contraction's float32 accumulator where its rounded "
           "result is only widened again">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LoomTileNarrowContractions
    : Pass<"loom-tile-narrow-contractions", "::mlir::ModuleOp"> {
  let summary = "Round a 16-bit contraction's float32 accumulator tile by tile";
  let description = [{
    Runs after loom-fold-into-contractions. loom-to-linalg computes a bf16
    or f16 `linalg.matmul` or `linalg.batch_matmul` into a float32
    accumulator filled with zeros and rounds it once (an elementwise
    `arith.truncf` generic), so the whole accumulator is a buffer, twice
    the result's bytes, beside the result's planned place and outside
    every arena. Where nothing else reads the accumulator or its fill,
    the rounding is tiled over its batch (one at a time) and its rows (as
    many as keep a tile's accumulator within 64 KiB), with the contraction
    and its fill fused into the tile loop (upstream's
    `tileConsumerAndFuseProducersUsingSCF`; no other producer comes in):
    each tile is computed into an accumulator of one tile and rounded into
    the result, which the result's place (an arena view, once
    `eliminate-empty-tensors` has run) receives directly. Each element is
    still the sum of its products in float32, rounded once. The rows of
    a tile divide the result's, so that every tile has one static shape (a
    prime number of rows takes one row a tile).

    Before:
    ```mlir
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<512x512xf32>) -> tensor<512x512xf32>
    %acc = linalg.matmul ins(%a, %b : tensor<512x64xbf16>, tensor<64x512xbf16>) outs(%z : tensor<512x512xf32>) -> tensor<512x512xf32>
    %r = linalg.generic {...} ins(%acc : tensor<512x512xf32>) outs(%e2 : tensor<512x512xbf16>) { truncf }
    ```
    After:
    ```mlir
    %r = scf.for %i = %c0 to %c512 step %c32 iter_args(%out = %e2) -> (tensor<512x512xbf16>) {
      %z = linalg.fill ins(%zero : f32) outs(%tile : tensor<32x512xf32>) -> tensor<32x512xf32>
      %acc = linalg.matmul ins(%a_rows, %b : tensor<32x64xbf16>, tensor<64x512xbf16>) outs(%z : ...) -> tensor<32x512xf32>
      %t = linalg.generic {...} ins(%acc : tensor<32x512xf32>) outs(%out_rows : tensor<32x512xbf16>) { truncf }
      %next = tensor.insert_slice %t into %out[%i, 0] [32, 512] [1, 1]
      scf.yield %next : tensor<512x512xbf16>
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect", "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

def LoomCloneCastsForFusion
    : Pass<"loom-clone-casts-for-fusion", "::mlir::ModuleOp"> {
  let summary = "Give each reader of an elementwise cast its own copy, for fusion to fold in";
  let description = [{
    Runs just before `linalg-fuse-elementwise-ops`, whose default control
    fuses a producer only into its one reader. An elementwise
    `linalg.generic` that only widens its input (`arith.extf`, an integer
    extension or conversion to as many bits or more) and has several
    readers is replaced by a copy just before each reader, where every reader
    is a `linalg.generic` that elementwise fusion accepts for it: fusion
    then folds each copy into its reader's loop, and the cast's result is
    no longer a buffer. Where some reader would not fuse, nothing is
    cloned (the cast stays a buffer for it, and copies beside it would cost
    memory), nor is a narrowing (its copies would keep the wider input
    alive until the last reader). The buffers this removes are outside
    every arena: a 16-bit
    gradient widened for the update of both of Adam's moments (on the
    device, or on the host from its spilled copy), 4 bytes a parameter.

    Before:
    ```mlir
    %w = linalg.generic {...} ins(%g : tensor<4xbf16>) outs(%e : tensor<4xf32>) { extf }
    %m = linalg.generic {...} ins(%m0, %w : ...) { m * b1 + w * (1 - b1) }
    %v = linalg.generic {...} ins(%v0, %w : ...) { v * b2 + w * w * (1 - b2) }
    ```
    After:
    ```mlir
    %w1 = linalg.generic {...} ins(%g : tensor<4xbf16>) outs(%e : tensor<4xf32>) { extf }
    %m = linalg.generic {...} ins(%m0, %w1 : ...) { ... }
    %w2 = linalg.generic {...} ins(%g : tensor<4xbf16>) outs(%e : tensor<4xf32>) { extf }
    %v = linalg.generic {...} ins(%v0, %w2 : ...) { ... }
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LoomStridedCopiesToLinalg
    : Pass<"loom-strided-copies-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Turn memref.copy between non-contiguous buffers into linalg.copy";
  let description = [{
    Upstream's LLVM lowering of `memref.copy` uses `llvm.memcpy` when both
    sides are contiguous and otherwise calls `memrefCopy` from MLIR's C runner
    utilities, a library an artifact does not link. Copies into or out of a
    strided view (a concat writing into a slice of its result, for example)
    become `linalg.copy` instead, which the loop lowering expands in place.

    Before:
    ```mlir
    memref.copy %a, %view : memref<2x3xf32> to memref<2x3xf32, strided<[6, 1], offset: ?>>
    ```
    After:
    ```mlir
    linalg.copy ins(%a : memref<2x3xf32>) outs(%view : memref<2x3xf32, strided<[6, 1], offset: ?>>)
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LoomEntryABI : Pass<"loom-entry-abi", "::mlir::ModuleOp"> {
  let summary = "Give the lowered entry function the runtime's calling convention";
  let description = [{
    Runs on the LLVM dialect. Adds `void loom_entry(void **buffers)`, which
    loads one pointer per argument (inputs, weights, then outputs, as the
    manifest lists them) and calls the entry function, lowered with bare
    pointers and its results turned into out-parameters. The runtime calls
    it through `dlsym` without knowing anything about MLIR's memref ABI.
    Pipeline stages get `loom_entry_stage<k>`, and a step's update
    functions `loom_update` / `loom_update_stage<k>`.
    The module's `shard.grid` ops, fully consumed by then, are erased.
  }];
  let options = [
    Option<"entry", "entry", "std::string", "\"main\"", "The entry function">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // LOOM_PASSES_LOWER_PASSES_TD
