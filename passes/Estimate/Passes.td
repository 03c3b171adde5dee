//===- Passes.td - cost estimation passes ------------------*- tablegen -*-===//

#ifndef LOOM_PASSES_ESTIMATE_PASSES_TD
#define LOOM_PASSES_ESTIMATE_PASSES_TD

include "mlir/Pass/PassBase.td"

def LoomEstimate : Pass<"loom-estimate", "::mlir::ModuleOp"> {
  let summary = "Estimate step time and per-device memory of a planned program";
  let description = [{
    Estimates one training or inference step of the module's function under
    the plan written in the IR: a `shard.grid` (with optional
    `loom.axis_names`, `loom.pipeline_axis` and `loom.device_order`
    attributes), `shard.shard` annotations (completed by upstream sharding
    propagation, on a copy) and `loom.stage` attributes. Unannotated IR is one
    device. The model (roofline per op class, alpha-beta collectives over the
    cluster hierarchy, gradients and optimizer, a simulated pipeline schedule,
    liveness-based memory) is described in docs/cost-model.md.

    Attaches a `loom.estimate` dictionary to the module (and `loom.cost` to
    every op with `annotate-ops`), prints a readable table to stderr (or to
    `table=FILE`), and writes the JSON report to `report=FILE` or the
    `--loom-report=FILE` given to the tool.

    ```
    loom-opt model.mlir --loom-estimate="cluster=a100-80g-cluster:nodes=128 \
        mode=train global-batch=1536 schedule=1f1b recompute=full" \
        --loom-report=plan.json
    ```
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", "\"dgx-a100-80g\"",
           "Cluster preset (NAME or NAME:nodes=N) or a cluster JSON file">,
    Option<"mode", "mode", "std::string", "\"train\"", "train or infer">,
    Option<"globalBatch", "global-batch", "int64_t", "0",
           "Samples per step (default: the function's loom.micro_batches times the IR's batch, or one micro-batch)">,
    Option<"microBatch", "micro-batch", "int64_t", "0",
           "Samples per micro-batch per data-parallel replica (checked against the IR)">,
    Option<"schedule", "schedule", "std::string", "\"1f1b\"",
           "Pipeline schedule: gpipe, 1f1b, interleaved, kfkb">,
    Option<"kfkbGroup", "kfkb-group", "int64_t", "2", "k of the kFkB schedule">,
    Option<"precision", "precision", "std::string", "\"ir\"",
           "ir (element types as written) or fp32, tf32, bf16, fp16, fp8 for all floats">,
    Option<"recompute", "recompute", "std::string", "\"none\"",
           "Activation recomputation: none, selective or full">,
    Option<"activations", "activations", "std::string", "\"device\"",
           "Where kept activations wait for their backward: device, or host "
           "(offloaded as produced, fetched back before their backward)">,
    Option<"zero", "zero", "int", "0", "ZeRO stage over data parallelism (0-3)">,
    Option<"overlapGradSync", "overlap-grad-sync", "bool", "true",
           "Overlap gradient synchronisation with the last backward">,
    Option<"tokensPerSample", "tokens-per-sample", "int64_t", "0",
           "Tokens per sample for tokens/s (default: dim 1 of an integer input)">,
    Option<"calibration", "calibration", "std::string", "\"\"",
           "Measured kernel/collective timings (docs/calibration.md)">,
    Option<"annotateOps", "annotate-ops", "bool", "false",
           "Attach loom.cost to every loom op">,
    Option<"report", "report", "std::string", "\"\"", "Write the JSON report here">,
    Option<"table", "table", "std::string", "\"-\"",
           "Write the readable table here ('-' = stderr, 'none' = nowhere)">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect", "::mlir::func::FuncDialect"];
}

#endif // LOOM_PASSES_ESTIMATE_PASSES_TD
