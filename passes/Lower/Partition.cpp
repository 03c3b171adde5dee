//===- Partition.cpp - TODO ---===//

#include "loom/Passes/Lower.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMPARTITION
#include "passes/Lower/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {
struct LoomPartitionPass : mlir::loom::impl::LoomPartitionBase<LoomPartitionPass> {
  using LoomPartitionBase::LoomPartitionBase;
  void runOnOperation() override {}
};
} // namespace
