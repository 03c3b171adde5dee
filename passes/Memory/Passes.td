//===- Passes.td - memory placement passes -----------------*- tablegen -*-===//

#ifndef LOOM_PASSES_MEMORY_PASSES_TD
#define LOOM_PASSES_MEMORY_PASSES_TD

include "mlir/Pass/PassBase.td"

def LoomPlaceMemory : Pass<"loom-place-memory", "::mlir::ModuleOp"> {
  let summary = "Place parameters, gradients and optimizer state across device, host and NVMe";
  let description = [{
    Plans where a program's model state lives on each device of its plan
    (`shard.grid`, `shard.shard`, `loom.stage`; unplanned IR is one device),
    statically. The choices: which ZeRO stage shards the state over the
    data-parallel replicas (each weight over the axes its gradient is
    reduced over, so expert weights split over an expert axis are not
    sharded again); everything on the device; the optimizer state and its
    step on the host (CPU Adam) or on NVMe, with gradients copied down as
    they are produced and updated parameters copied back; or (one-device
    programs, and data-parallel ones under ZeRO-3 in their shards)
    parameters streamed from host memory or NVMe in chunks as well, fetched
    ahead of use and dropped by furthest next use, with part of the
    optimizer kept on the device where that is faster. Each placement is
    priced from the cost model's per-op times and memory breakdown and the
    cluster's host link, CPU Adam rate and NVMe bandwidth, with the
    offloaded optimizer step replayed as a pipeline (gradients reduced over
    the replicas, down, CPU Adam, up, all-gathered) beside each device's
    steps; the fastest that fits on every device is kept. For streamed
    parameters the chunk size is chosen by planning and timing every
    power-of-two size, and the chosen chunk schedule is replayed by a
    simulator that checks, event by event, that no chunk is missing when
    read and the device never holds more than its budget.

    Each weight gets `loom.placement = {tier, chunk, optimizer, zero_shards}`
    and the module `loom.memory_plan`; under ZeRO-3 each sharded weight is
    annotated as stored split over its replicas and gathered for its readers
    (`loom.zero_shard`), which `loom-partition` turns into all-gathers; the table (placements tried, the
    chosen one, bytes moved per step against their lower bound, the chunk
    schedule) goes to stderr or `table=FILE`. docs/memory-placement.md.

    ```
    loom-opt gpt.mlir --loom-place-memory="cluster=dgx-a100-80g mode=train \
        memory-fraction=0.25"
    ```
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", "\"dgx-a100-80g\"",
           "Cluster preset (NAME or NAME:nodes=N) or a cluster JSON file">,
    Option<"mode", "mode", "std::string", "\"train\"", "train or infer">,
    Option<"globalBatch", "global-batch", "int64_t", "0",
           "Samples per step (default: the function's loom.micro_batches times the IR's batch, or one micro-batch)">,
    Option<"precision", "precision", "std::string", "\"ir\"",
           "ir (element types as written) or fp32, tf32, bf16, fp16, fp8 for all floats">,
    Option<"memoryFraction", "memory-fraction", "double", "1.0",
           "Fraction of the device's memory the placement may use">,
    Option<"chunkBytes", "chunk-bytes", "int64_t", "0",
           "Chunk size for streamed parameters (0 = chosen by simulation)">,
    Option<"delayedUpdate", "delayed-update", "bool", "false",
           "Let the forward read parameters one update behind (ZeRO-Offload's "
           "delayed parameter update), so the CPU optimizer step overlaps a "
           "whole iteration; changes the training semantics">,
    Option<"streamSharded", "stream-sharded", "bool", "true",
           "Also price streaming the parameters of a data-parallel program "
           "in ZeRO-3 shards (PatrickStar, ZeRO-Infinity): each device's "
           "shard of a chunk lives in host memory, and a fetch uploads it "
           "and all-gathers the chunk">,
    Option<"zero", "zero", "std::string", "\"0,1,2,3\"",
           "ZeRO stages to consider over the data-parallel replicas">,
    Option<"schedule", "schedule", "std::string", "\"1f1b\"",
           "Pipeline schedule of a pipelined plan: gpipe, 1f1b, interleaved, kfkb">,
    Option<"kfkbGroup", "kfkb-group", "int64_t", "2", "k of the kFkB schedule">,
    Option<"activations", "activations", "std::string", "\"device,host\"",
           "Where training's kept activations may wait for their backward: "
           "device, host (offloaded), or both to let the pass choose">,
    Option<"parameters", "parameters", "std::string", "\"device,host,nvme\"",
           "Where parameters may live between their uses: device "
           "(resident), host or nvme (streamed in chunks, in programs that "
           "can stream); the pass chooses among those listed">,
    Option<"recompute", "recompute", "std::string", "\"none,selective,full\"",
           "Activation recomputation policies to consider in training: none, "
           "selective, full">,
    Option<"partialRecompute", "partial-recompute", "bool", "true",
           "Where only full recomputation keeps the model state on the "
           "device, also try recomputing just enough segments on top of "
           "selective recomputation">,
    Option<"partialOffload", "partial-offload", "bool", "true",
           "Where offloading every kept activation is what makes a "
           "placement fit, also try offloading only the first segments'">,
    Option<"optimizerSplit", "optimizer-split", "bool", "true",
           "In training, also price splitting the optimizer between the "
           "device and the host: the first weights keep their gradients and "
           "state on the device and are updated there, the others' are "
           "offloaded (parameters resident or streamed)">,
    Option<"refuseOverflow", "refuse-overflow", "bool", "true",
           "Refuse a placement whose static memory plan, replayed against "
           "the tiers' capacities, overflows one, and choose again without "
           "it (false: keep it and report the overflow in the table)">,
    Option<"timeline", "timeline", "std::string", "\"\"",
           "Write the chosen placement's steady-state iteration to this file "
           "as a Chrome trace (trace-event JSON for chrome://tracing or "
           "Perfetto): the device's steps, each link, the CPU optimizer and "
           "the network, one lane each">,
    Option<"table", "table", "std::string", "\"-\"",
           "Write the readable table here ('-' = stderr, 'none' = nowhere)">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect", "::mlir::func::FuncDialect"];
}

def LoomVerifyMovement : Pass<"loom-verify-movement", "::mlir::ModuleOp"> {
  let summary = "Check a placed program's movement (fetch/release, host updates) against its memory plan";
  let description = [{
    Replays the streamed parameters' movement written by
    `--loom-place-memory` in program order, from the IR alone: every read of
    a weight placed off the device goes through a live `loom.fetch`, no
    weight is fetched while its copy is live or released twice, and the
    chunks with a live fetch (sizes and budget from `loom.memory_plan`'s
    `chunk_sizes` and `chunk_budget_bytes`) never exceed the budget. The
    placement runs the same check on what it writes; this pass checks IR
    edited or written by other tools. A module without streamed parameters
    passes unchanged.

    It also checks the two sides of an optimizer step that runs partly on
    the host (ops marked `loom.on_host` by `--loom-optimizer-step` where
    placement puts a weight's optimizer off the device): host ops read only
    host values (the gradient's `loom.spill` copy, state and parameters held
    off the device, other host results) or scalars, and the device reads
    host results only through `loom.reload`.
  }];
}

#endif // LOOM_PASSES_MEMORY_PASSES_TD
