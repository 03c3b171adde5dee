//===- LowerToCPU.cpp - the loom-lower-to-cpu pipeline --------------------===//
//
// loom IR, planned or not, to the LLVM dialect:
//   1. a pipelined entry splits into one function per stage; weights become
//      entry arguments;
//   2. partition (a no-op without a grid): upstream sharding propagation,
//      boundary shardings recorded for the manifest, upstream
//      shard-partition, now still in loom ops plus shard collectives;
//      stage boundaries become shard.send / shard.recv; a static memory
//      plan's buffers move into one arena the runtime passes in;
//   3. loom -> linalg/tensor/arith/math; transposed operands and sums
//      folded into the contractions that read or make them; a 16-bit
//      contraction computed and rounded a tile of rows at a time;
//   4. collectives: ours (all-gather, reduce-scatter, all-to-all) to loomrt
//      calls, then upstream convert-shard-to-mpi for all-reduce and indices;
//      elementwise fusion, each reader of a cast given a copy to fuse;
//   5. updated weights written back into their arguments; bufferization
//      with identity layouts at function boundaries, results as
//      out-parameters, ownership-based deallocation;
//   6. the entry ABI, loops, and upstream's conversions to LLVM.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Lower.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::loom;

static void addUpstream(OpPassManager &pm, StringRef pipeline) {
  // The strings below are fixed; a parse failure is a bug in this file.
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    llvm::report_fatal_error("loom-lower-to-cpu: bad upstream pipeline");
}

void mlir::loom::buildPartitionPipeline(OpPassManager &pm,
                                        const LowerToCPUOptions &options) {
  pm.addPass(createLoomSplitStages({options.entry}));
  pm.addPass(createLoomWeightsToArguments({options.entry}));
  pm.addPass(createLoomPartition({options.entry}));
  pm.addPass(createLoomStageTransfers({options.entry}));
  pm.addPass(createLoomArenaBuffers({options.entry}));
}

void mlir::loom::buildPartitionedToLLVMPipeline(
    OpPassManager &pm, const LowerToCPUOptions &options) {
  pm.addPass(createLoomToLinalg());
  pm.addPass(createLoomFoldIntoContractions({options.allowExcessPrecision}));
  pm.addPass(createLoomTileNarrowContractions());
  pm.addPass(createLoomCollectivesToRuntime());
  addUpstream(pm, "convert-shard-to-mpi,canonicalize");
  pm.addPass(createLoomCloneCastsForFusion());
  addUpstream(pm, "func.func(linalg-fuse-elementwise-ops)");
  // After the last greedy rewrite, which would erase its unused results.
  pm.addPass(createLoomWriteBackUpdates({options.entry}));
  addUpstream(pm, "eliminate-empty-tensors,"
                  "one-shot-bufferize{bufferize-function-boundaries=1 "
                  "function-boundary-type-conversion=identity-layout-map},"
                  "buffer-results-to-out-params{hoist-static-allocs=1 "
                  "modify-public-functions=1},"
                  "buffer-deallocation-pipeline,convert-bufferization-to-memref");
  pm.addPass(createLoomStridedCopiesToLinalg());
  pm.addPass(createLoomEntryABI({options.entry}));
  addUpstream(pm, "func.func(convert-linalg-to-loops),expand-strided-metadata,"
                  "lower-affine,convert-scf-to-cf,"
                  "func.func(math-expand-ops),convert-math-to-llvm,"
                  "convert-math-to-libm,convert-to-llvm,"
                  "reconcile-unrealized-casts");
}

void mlir::loom::buildLowerToCPUPipeline(OpPassManager &pm,
                                         const LowerToCPUOptions &options) {
  buildPartitionPipeline(pm, options);
  buildPartitionedToLLVMPipeline(pm, options);
}

void mlir::loom::registerLoomLowerPipelines() {
  PassPipelineRegistration<LowerToCPUOptions>(
      "loom-lower-to-cpu",
      "Lower loom IR (planned or not) to the LLVM dialect for loom-run",
      buildLowerToCPUPipeline);
}
