//===- StridedCopies.cpp - memref.copy of strided views to linalg.copy ----===//
//
// Upstream lowers a `memref.copy` whose operands are not both contiguous to
// a call of `memrefCopy` (MLIR's C runner utilities), which an artifact
// does not link; loom-run then fails to load the program. Such copies
// become `linalg.copy`, which the loop lowering expands in place. Contiguous
// copies stay `memref.copy` and become `llvm.memcpy`.
//
//===----------------------------------------------------------------------===//

#include "loom/Passes/Lower.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMSTRIDEDCOPIESTOLINALG
#include "passes/Lower/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

static bool isContiguous(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.getLayout().isIdentity();
}

namespace {
struct StridedCopiesPass
    : mlir::loom::impl::LoomStridedCopiesToLinalgBase<StridedCopiesPass> {
  void runOnOperation() override {
    getOperation().walk([](memref::CopyOp copy) {
      if (isContiguous(copy.getSource()) && isContiguous(copy.getTarget()))
        return;
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    });
  }
};
} // namespace
