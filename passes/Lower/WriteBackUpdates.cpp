//===- WriteBackUpdates.cpp - updated weights into their own buffers ------===//
//
// Implements --loom-write-back-updates (Passes.td). Runs on tensors after
// the partitioned program is in linalg and its elementwise ops are fused:
// a materialize whose result nothing reads would be erased as dead by any
// greedy rewrite before one-shot bufferization sees it.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Lower.h"

#include "loom/Autodiff/OptimizerStep.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMWRITEBACKUPDATES
#include "passes/Lower/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

FailureOr<DenseMap<unsigned, BlockArgument>> mlir::loom::updatedArguments(func::FuncOp func) {
  llvm::StringMap<BlockArgument> byName;
  for (BlockArgument arg : func.getArguments())
    if (auto weight = func.getArgAttrOfType<DictionaryAttr>(arg.getArgNumber(), "loom.weight"))
      if (auto name = weight.getAs<StringAttr>("name"))
        byName[name.getValue()] = arg;
  DenseMap<unsigned, BlockArgument> updated;
  DenseSet<BlockArgument> written;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto name = func.getResultAttrOfType<StringAttr>(i, kUpdatesAttr);
    if (!name)
      continue;
    BlockArgument arg = byName.lookup(name.getValue());
    if (!arg)
      return func.emitOpError("result #")
             << i << " updates weight '" << name.getValue()
             << "', which is no weight argument of the entry";
    if (!written.insert(arg).second)
      return func.emitOpError("result #")
             << i << " updates weight '" << name.getValue()
             << "', which an earlier result updates too";
    updated[i] = arg;
  }
  return updated;
}

namespace {
struct WriteBackUpdatesPass
    : mlir::loom::impl::LoomWriteBackUpdatesBase<WriteBackUpdatesPass> {
  using LoomWriteBackUpdatesBase::LoomWriteBackUpdatesBase;

  void runOnOperation() override {
    for (func::FuncOp func : programFunctions(getOperation(), entry))
      if (!func.isExternal() && failed(writeBack(func)))
        return signalPassFailure();
  }

  LogicalResult writeBack(func::FuncOp func) {
    FailureOr<DenseMap<unsigned, BlockArgument>> updated = updatedArguments(func);
    if (failed(updated))
      return failure();
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    llvm::BitVector dropped(func.getNumResults());
    OpBuilder builder(ret);
    DenseMap<Value, Value> materialized; // an update -> its first write
    // In result order, so that the rewrite is deterministic.
    for (unsigned i = 0; i < func.getNumResults(); ++i) {
      BlockArgument arg = updated->lookup(i);
      if (!arg)
        continue;
      Value update = ret.getOperand(i);
      if (update.getType() != arg.getType())
        return func.emitOpError("result #")
               << i << " updates weight '"
               << func.getResultAttrOfType<StringAttr>(i, kUpdatesAttr).getValue()
               << "' of type " << arg.getType() << " with a value of type "
               << update.getType() << "; a rank must write back the slice it holds";
      // A value already written into another weight is copied from there
      // (reading the value itself after that write would be a conflict).
      if (Value written = materialized.lookup(update))
        update = linalg::CopyOp::create(builder, ret.getLoc(), written, arg).getResult(0);
      auto write =
          bufferization::MaterializeInDestinationOp::create(builder, ret.getLoc(), update, arg);
      materialized.try_emplace(ret.getOperand(i), write.getResult());
      func.setArgAttr(arg.getArgNumber(), "bufferization.writable", builder.getBoolAttr(true));
      dropped.set(i);
    }
    SmallVector<Value> kept;
    for (unsigned i = 0; i < ret.getNumOperands(); ++i)
      if (!dropped.test(i))
        kept.push_back(ret.getOperand(i));
    ret->setOperands(kept);
    return func.eraseResults(dropped);
  }
};
} // namespace
