//===- Passes.td - folding and strategy search -------------*- tablegen -*-===//

#ifndef LOOM_PASSES_PLAN_PASSES_TD
#define LOOM_PASSES_PLAN_PASSES_TD

include "mlir/Pass/PassBase.td"

def LoomFold : Pass<"loom-fold", "::mlir::func::FuncOp"> {
  let summary = "Find repeated structurally identical blocks (TAP folding)";
  let description = [{
    Finds runs of consecutive, structurally identical subgraphs by canonical
    structural hashing and reports each as a remark at its first op: how
    many copies, ops and parameters per copy, and where each copy starts.
    The IR is not changed unless `annotate` is set, which attaches
    `loom.fold = [block, copy, index]` to every op of every run. The
    strategy search (`--loom-plan`) folds the same way internally.
  }];
  let options = [
    Option<"minCopies", "min-copies", "unsigned", "2",
           "Smallest run worth folding">,
    Option<"annotate", "annotate", "bool", "false",
           "Attach loom.fold = [block, copy, index] to ops in runs">,
  ];
}

def LoomSplitFusedProjections
    : Pass<"loom-split-fused-projections", "::mlir::func::FuncOp"> {
  let summary = "Split fused projections (a fused QKV) into one matmul per part";
  let description = [{
    A matmul whose weight stores several projections one after another
    (GPT-2's c_attn: query, key and value) and whose result is only read by
    slices that cut it into equal parts becomes one matmul per part. The
    weight keeps its name, file and offset, retyped with the part as a
    dimension of its own ([P*N, K] as [P, N, K]); each part reads its view
    through a slice and a reshape, so splitting N (the heads) over a grid
    axis is block-local in every part. The bias is retyped the same way. The
    arithmetic is unchanged. `--loom-plan` runs this first unless
    `split-projections=false`.
  }];
}

def LoomPlan : Pass<"loom-plan", "::mlir::ModuleOp"> {
  let summary = "Search the sharding and pipeline plan of a model for a cluster";
  let description = [{
    Folds repeated blocks, searches the grid shape (data x tensor x pipeline
    factorizations mapped onto the cluster hierarchy), every op's sharding
    derived from its iteration space, pipeline stages, micro-batches and
    schedule under the device memory, and writes the chosen plan into the IR:
    a `shard.grid`, `shard.shard` annotations on weights and activations,
    and `loom.stage` attributes, ready for upstream `sharding-propagation`
    and `shard-partition`. With `place-memory=true`, the fastest plans over
    device memory are priced again with the memory placement that makes them
    fit (`--loom-place-memory`'s choices: optimizer offload, parameter
    streaming, ZeRO, recomputation) and compete with the plans that fit as
    they are; the winner's `loom.placement` and `loom.memory_plan` are
    written too. The readable report goes to stderr (or `table=`),
    the JSON report to `report=` or `--loom-report`. docs/strategy-search.md
    describes the space and the search.
  }];
  let options = [
    Option<"cluster", "cluster", "std::string", "\"dgx-a100-80g\"",
           "Cluster preset (NAME or NAME:nodes=N) or a cluster JSON file">,
    Option<"mode", "mode", "std::string", "\"train\"", "train or infer">,
    Option<"globalBatch", "global-batch", "int64_t", "0",
           "Samples per step (default: the IR's batch)">,
    Option<"level", "level", "std::string", "\"thorough\"",
           "fast (heuristics) or thorough (exact per folded block)">,
    Option<"fold", "fold", "bool", "true", "Fold repeated blocks before searching">,
    Option<"splitProjections", "split-projections", "bool", "true",
           "Split fused projections into their parts first "
           "(--loom-split-fused-projections)">,
    Option<"maxTP", "max-tp", "int64_t", "0",
           "Largest product of non-batch axes splitting one op (0 = no cap)">,
    Option<"maxPP", "max-pp", "int64_t", "0", "Largest pipeline size (0 = no cap)">,
    Option<"devices", "devices", "int64_t", "0",
           "Devices to plan for (0 = the whole cluster)">,
    Option<"precision", "precision", "std::string", "\"ir\"",
           "ir or fp32, tf32, bf16, fp16, fp8 for all floats">,
    Option<"schedules", "schedules", "std::string", "\"1f1b,interleaved,gpipe,kfkb\"",
           "Pipeline schedules to consider">,
    Option<"zero", "zero", "std::string", "\"0,1,2,3\"", "ZeRO stages to consider">,
    Option<"recompute", "recompute", "std::string", "\"none,selective,full\"",
           "Recomputation modes to consider">,
    Option<"activations", "activations", "std::string", "\"device,host\"",
           "With place-memory: where kept activations may wait for their "
           "backward (device, host)">,
    Option<"memoryFraction", "memory-fraction", "double", "1.0",
           "Fraction of device memory a plan may use">,
    Option<"runnersUp", "runners-up", "unsigned", "5", "Runner-up plans to report">,
    Option<"verify", "verify", "bool", "true",
           "Re-estimate the chosen plan (and runners-up) with the full estimator">,
    Option<"checkExact", "check-exact", "bool", "false",
           "Testing: check every exact solve of a grid's strategy graph "
           "against brute-force enumeration where it has at most 2^22 "
           "combinations; a difference is an error">,
    Option<"boundPipelines", "bound-pipelines", "bool", "true",
           "Skip simulating pipelines whose step's lower bound already "
           "loses (false: simulate every configuration; the plan is the "
           "same)">,
    Option<"placeMemory", "place-memory", "bool", "false",
           "Price plans over device memory with the memory placement that "
           "makes them fit (offload, streaming) and write the winner's "
           "placement into the IR">,
    Option<"report", "report", "std::string", "\"\"", "Write the JSON report here">,
    Option<"table", "table", "std::string", "\"-\"",
           "Write the readable report here ('-' = stderr, 'none' = nowhere)">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect", "::mlir::func::FuncDialect"];
}

#endif // LOOM_PASSES_PLAN_PASSES_TD
