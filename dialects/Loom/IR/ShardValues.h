//===- ShardValues.h - looking through shard annotations --------*- C++ -*-===//
//
// Planned IR wraps values in chains of `shard.shard` annotations; analyses
// (folding, the estimator, the search) reason about the value underneath.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECTS_LOOM_IR_SHARDVALUES_H
#define LOOM_DIALECTS_LOOM_IR_SHARDVALUES_H

#include "mlir/Dialect/Shard/IR/ShardOps.h"

namespace mlir::loom {

/// The value `v` annotates, through any chain of shard.shard ops.
inline Value lookThroughShards(Value v) {
  while (auto s = v.getDefiningOp<shard::ShardOp>())
    v = s.getSrc();
  return v;
}

/// Calls `fn` on every op that reads `v`, looking through shard.shard ops.
inline void forEachReader(Value v, llvm::function_ref<void(Operation *)> fn) {
  for (Operation *user : v.getUsers()) {
    if (auto s = dyn_cast<shard::ShardOp>(user))
      forEachReader(s.getResult(), fn);
    else
      fn(user);
  }
}

} // namespace mlir::loom

#endif // LOOM_DIALECTS_LOOM_IR_SHARDVALUES_H
