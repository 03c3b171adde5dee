//===- Lower.h - lowering the planned program to native code ----*- C++ -*-===//
//
// Passes and the `loom-lower-to-cpu` pipeline that take partitioned (or
// single-device) loom IR to the LLVM dialect, ready to be compiled into an
// artifact that `loom-run` executes on N MPI ranks.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_PASSES_LOWER_H
#define LOOM_PASSES_LOWER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::loom {
#define GEN_PASS_DECL
#include "passes/Lower/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Lower/Passes.h.inc"

struct LowerToCPUOptions : public PassPipelineOptions<LowerToCPUOptions> {
  PassOptions::Option<std::string> entry{*this, "entry",
                                         llvm::cl::desc("The entry function"),
                                         llvm::cl::init("main")};
  PassOptions::Option<bool> allowExcessPrecision{
      *this, "allow-excess-precision",
      llvm::cl::desc("loom-fold-into-contractions' option: read a 16-bit "
                     "contraction's float32 accumulator where its rounded "
                     "result is only widened again"),
      llvm::cl::init(false)};
};

/// The functions the runtime calls for each micro-batch: `entry` itself
/// or, once loom-split-stages has run, its stage functions in stage order.
SmallVector<func::FuncOp> entryFunctions(ModuleOp module, StringRef entry);

/// The functions the runtime calls once a step, after its micro-batches: a
/// micro-batched or pipelined step's optimizer update
/// (updateFunctionName(entry), or one per pipeline device); none without.
SmallVector<func::FuncOp> updateFunctions(ModuleOp module, StringRef entry);

/// entryFunctions, then updateFunctions: every function the lowering
/// turns into an entry of the program.
SmallVector<func::FuncOp> programFunctions(ModuleOp module, StringRef entry);

/// The pipeline device a stage function or a pipelined step's update
/// function runs on (its kPipelineStageAttr); none for a whole program.
std::optional<int64_t> pipelineStageOf(func::FuncOp func);

/// Whether a transpose's `permutation` swaps its last two dims and keeps
/// the others: a matmul reads such a transpose's operand through its
/// indexing maps (loom-fold-into-contractions), so loom-arena-buffers
/// counts its reads there.
bool swapsLastTwoDims(llvm::ArrayRef<int64_t> permutation);

/// For each result of `func` marked `loom.updates` (a weight's update,
/// --loom-optimizer-step), by result number, the argument
/// loom-weights-to-arguments made of that weight. An error on `func`,
/// naming the result, where one names no weight argument or a weight an
/// earlier result updates.
FailureOr<DenseMap<unsigned, BlockArgument>> updatedArguments(func::FuncOp func);

/// The grid that carries `loom.pipeline_axis`, and that axis; an error on
/// `where` if there is none.
FailureOr<std::pair<shard::GridOp, int64_t>> pipelineGrid(ModuleOp module,
                                                          Operation *where);

/// Stage splitting, weights to arguments, then partitioning (a no-op without a grid). The
/// entry's signature after it is what the artifact manifest describes.
void buildPartitionPipeline(OpPassManager &pm, const LowerToCPUOptions &options);

/// The per-device program (loom ops + shard collectives) -> LLVM dialect.
void buildPartitionedToLLVMPipeline(OpPassManager &pm,
                                    const LowerToCPUOptions &options);

/// Both of the above: loom IR (planned or not) -> LLVM dialect: weights to arguments; if the
/// module has a grid, sharding propagation, boundary shardings and
/// partitioning; loom-to-linalg; collectives to MPI/loomrt; bufferization;
/// loops; LLVM; the entry ABI.
void buildLowerToCPUPipeline(OpPassManager &pm, const LowerToCPUOptions &options);

/// Registers `loom-lower-to-cpu` (the passes register with
/// registerLoomLowerPasses()).
void registerLoomLowerPipelines();

} // namespace mlir::loom

#endif // LOOM_PASSES_LOWER_H
