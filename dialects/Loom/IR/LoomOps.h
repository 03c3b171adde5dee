//===- LoomOps.h - loom dialect ops ------------------------------*- C++ -*-===//
//
// The loom ops, their interfaces (upstream ShardingInterface and Loom's
// CostOpInterface) and shape helpers shared by importers and passes.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECTS_LOOM_IR_LOOMOPS_H
#define LOOM_DIALECTS_LOOM_IR_LOOMOPS_H

#include "dialects/Loom/IR/LoomDialect.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

#include "loom/Cost/Cluster.h"

namespace mlir::loom::detail {
// Default CostOpInterface behaviour, one switch over the ops (LoomCost.cpp).
::loom::OpClass defaultCostClass(Operation *op);
double defaultBytesAccessed(Operation *op, llvm::function_ref<double(Value)> bytesOf);
void defaultSavedForBackward(Operation *op, SmallVectorImpl<Value> &saved);
} // namespace mlir::loom::detail

#include "dialects/Loom/IR/LoomInterfaces.h.inc"

namespace mlir::loom {
// The generated ShardingInterface method declarations name these unqualified.
using shard::ReductionKind;
using shard::Sharding;
using shard::ShardingOption;
} // namespace mlir::loom

#define GET_OP_CLASSES
#include "dialects/Loom/IR/LoomOps.h.inc"

namespace mlir::loom {

/// On an op of an optimizer step that runs on the host: the CPU update of a
/// weight whose `loom.placement` puts its optimizer off the device
/// (--loom-optimizer-step writes it). Its operands are host values (a
/// gradient's `loom.spill` copy, state and parameters held off the device,
/// other host ops' results) or scalars; `loom.spill` copies may be read by
/// it, and `loom.reload` may bring its results to the device.
/// verifyHostUpdates (loom/Memory/Movement.h) checks both sides.
inline constexpr llvm::StringLiteral kOnHostAttr = "loom.on_host";

/// What memory placement decided for a weight, on its loom.weight op:
/// `{tier, chunk, optimizer, offsets...}` (docs/memory-placement.md).
inline constexpr llvm::StringLiteral kPlacementAttr = "loom.placement";

/// The entry function attribute a plan writes: how many micro-batches of
/// its (one micro-batch's) batch a step runs. The runtime feeds it that
/// many slices; the estimator and memory placement take the global batch
/// from it when they are given none.
inline constexpr llvm::StringLiteral kMicroBatchesAttr = "loom.micro_batches";

/// The pipeline stage an op runs in (`loom.stage = k`: stage k of the plan,
/// on device k mod P of its pipeline axis), and the mark of an op in that
/// stage's backward (--loom-autodiff): it runs on the same devices, after
/// every forward stage and after the backward of every later stage
/// (loom-split-stages).
inline constexpr llvm::StringLiteral kStageAttr = "loom.stage";
inline constexpr llvm::StringLiteral kBackwardAttr = "loom.backward";

/// The program of one pipeline device is a function of its own (made by
/// loom-split-stages from the step, by --loom-optimizer-step for a
/// pipelined step's update), `<function>_stage<device>`, marked with the
/// device it runs on.
inline std::string stageFunctionName(llvm::StringRef function, int64_t device) {
  return (function + "_stage" + llvm::Twine(device)).str();
}
inline constexpr llvm::StringLiteral kPipelineStageAttr = "loom.pipeline_stage";

/// The op (and function argument) attributes in which a static memory
/// plan places their results (include/loom/Memory/StaticMemoryPlanIR.h
/// documents them): in a program of one device, and in a pipelined
/// program's stage, on its own pipeline device. They are named here because
/// the dialect's canonicalization keeps what they place (hasPlannedBuffer).
inline constexpr llvm::StringLiteral kOffsetsAttr = "loom.offsets";
inline constexpr llvm::StringLiteral kPipelineOffsetsAttr =
    "loom.pipeline_offsets";

/// The static memory plan's offsets of `op`: kOffsetsAttr in a program of
/// one device, kPipelineOffsetsAttr (arrays by micro-batch, then result) in
/// a pipelined one; null where the plan placed none of its results.
DictionaryAttr plannedOffsets(Operation *op);

/// Whether a static memory plan placed `v`: its op, or the function argument
/// it is, carries kOffsetsAttr or kPipelineOffsetsAttr. Canonicalizations
/// that read past a producer (transpose(transpose(x)), reshape(reshape(x)))
/// leave such values alone: the composed op would drop the outer op's place
/// and read x after the plan freed it.
bool hasPlannedBuffer(Value v);

/// Whether `op`'s result may share its operands' bytes after
/// bufferization: views (reshape, slice), movement without a place (its
/// source), and any op of another dialect, which is not looked into. A
/// static memory plan's buffer read through such a result lives as long as
/// the result does (loom-arena-buffers follows them; --loom-autodiff places
/// no gradient that is or feeds one).
bool mayShareOperandBytes(Operation *op);

/// The tier memory placement keeps `v` in when it is a weight ("device",
/// "host" or "nvme"): its op's kPlacementAttr `tier`, or, for an entry
/// argument loom-weights-to-arguments made of one, its `loom.weight`
/// attribute's `tier`. "device" for anything else.
llvm::StringRef placedTier(Value v);

/// Numpy broadcast of two static shapes; failure when they are incompatible.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> lhs,
                                                ArrayRef<int64_t> rhs);

/// Output extent of a window op (conv, pool) along one spatial dim.
int64_t windowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                         int64_t padBegin, int64_t padEnd, int64_t dilation,
                         bool ceilMode);

/// The number of elements each window of an average pool divides by, per
/// output position (row-major over the output's spatial dims): input
/// elements, plus declared padding with count_include_pad (never the
/// ceil-mode overhang).
SmallVector<int64_t> poolWindowCounts(PoolOp op);

/// Per loop of a loom op's iteration space (the ShardingInterface's loops):
/// whether splitting it lets every device compute on its local blocks, the
/// only splits `shard-partition` accepts for loom ops. The planner offers
/// only these.
SmallVector<bool> getLocalLoops(Operation *op);

} // namespace mlir::loom

#endif // LOOM_DIALECTS_LOOM_IR_LOOMOPS_H
