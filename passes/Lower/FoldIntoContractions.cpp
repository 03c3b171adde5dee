//===- FoldIntoContractions.cpp - transposes and sums into contractions ---===//
//
// Implements --loom-fold-into-contractions (Passes.td). Upstream linalg
// rewrites a transposed matmul into a transpose and a matmul
// (populateTransposeMatmulPatterns), not back; its add-into-accumulator
// rewrite (populateFoldAddIntoDestPatterns) matches `linalg.add` only, not
// the `linalg.generic` our lowering makes of `loom.binary add`. Both
// matter to the static memory plan: the plan holds neither a transposed
// copy of a weight or activation nor a weight gradient beside its sum, so
// each is memory the step would allocate outside its arenas. Under
// allow-excess-precision a 16-bit contraction's accumulator is also read
// where its rounding is only widened again, so that a 16-bit gradient
// folds into its float32 sum too.
//
//===----------------------------------------------------------------------===//

#include "LinalgMatchers.h"
#include "loom/Passes/Lower.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::loom {
#define GEN_PASS_DEF_LOOMFOLDINTOCONTRACTIONS
#include "passes/Lower/Passes.h.inc"
} // namespace mlir::loom

using namespace mlir;
using namespace mlir::loom;

namespace {

/// `map` with its last two results swapped.
AffineMap swapLastTwoResults(AffineMap map) {
  SmallVector<AffineExpr> results(map.getResults());
  std::swap(results[results.size() - 2], results.back());
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(), results,
                        map.getContext());
}

/// Whether `c` merges only dims before its source's last two, which it
/// keeps: it then commutes with a transpose of those two.
bool keepsLastTwo(tensor::CollapseShapeOp c) {
  SmallVector<ReassociationIndices> groups = c.getReassociationIndices();
  int64_t rank = c.getSrcType().getRank();
  return groups.size() >= 2 &&
         groups.back() == ReassociationIndices{rank - 1} &&
         groups[groups.size() - 2] == ReassociationIndices{rank - 2};
}

/// Reads each transposed input of `op` through its indexing map: a
/// transpose of the last two dims, or (a batched operand the lowering
/// collapses to rank 3) such a transpose collapsed over its leading dims,
/// whose operand is then collapsed instead. Returns the ops it stopped
/// reading.
SmallVector<Operation *> foldTransposedInputs(linalg::LinalgOp op) {
  SmallVector<Operation *> folded;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value v = input->get();
    auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>();
    if (collapse && keepsLastTwo(collapse))
      v = collapse.getSrc();
    auto t = v.getDefiningOp<linalg::TransposeOp>();
    if (!t || !swapsLastTwoDims(t.getPermutation()))
      continue;
    Value read = t.getInput();
    if (v != input->get()) {
      OpBuilder b(op);
      read = tensor::CollapseShapeOp::create(
          b, collapse.getLoc(), read, collapse.getReassociationIndices());
      folded.push_back(collapse);
    }
    unsigned i = input->getOperandNumber();
    maps[i] = swapLastTwoResults(maps[i]);
    input->set(read);
    folded.push_back(t);
  }
  if (!folded.empty()) {
    Builder b(op.getContext());
    op->setAttr("indexing_maps", b.getAffineMapArrayAttr(maps));
  }
  return folded;
}

/// Whether `g` is an elementwise add of its two inputs, in either order.
bool isPlainAdd(linalg::GenericOp g) {
  auto add = elementwiseBody<arith::AddFOp>(g, 2);
  if (!add)
    return false;
  Block &body = g.getRegion().front();
  Value a = add.getLhs(), b = add.getRhs();
  return (a == body.getArgument(0) && b == body.getArgument(1)) ||
         (a == body.getArgument(1) && b == body.getArgument(0));
}

/// `reshape` made again of `source` (of another element type).
Value reshapeLike(OpBuilder &b, Operation *reshape, Value source) {
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(reshape))
    return tensor::ExpandShapeOp::create(
        b, expand.getLoc(),
        expand.getResultType().clone(getElementTypeOrSelf(source.getType())),
        source, expand.getReassociationIndices());
  auto collapse = cast<tensor::CollapseShapeOp>(reshape);
  return tensor::CollapseShapeOp::create(b, collapse.getLoc(), source,
                                         collapse.getReassociationIndices());
}

struct FoldIntoContractionsPass
    : mlir::loom::impl::LoomFoldIntoContractionsBase<FoldIntoContractionsPass> {
  using LoomFoldIntoContractionsBase::LoomFoldIntoContractionsBase;

  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp func) {
      if (allowExcessPrecision)
        readAccumulatorsUnrounded(func);
      foldTransposes(func);
      accumulateIntoInits(func);
    });
  }

  /// `widen(round(C))`, C a contraction's wide accumulator and the widened
  /// type C's, reads C itself: one rounding fewer, and no narrow copy
  /// (and, once nothing else reads it, no rounding) in between. Reshapes
  /// between the two (a batched product is rounded, then expanded) are
  /// made again of C.
  void readAccumulatorsUnrounded(func::FuncOp func) {
    struct RoundTrip {
      linalg::GenericOp widen;
      Operation *round;
      Value wide;
      SmallVector<Operation *> reshapes; // outermost first
    };
    SmallVector<RoundTrip> found;
    func.walk([&](linalg::GenericOp g) {
      if (g->getNumResults() != 1)
        return;
      RoundTrip r{g, nullptr, nullptr, {}};
      Value rounded = floatConversionInput<arith::ExtFOp>(g->getResult(0));
      // Only what the widening alone reads: a rounded value read elsewhere
      // too (a gradient also returned) keeps its rounding, and the
      // accumulator, read twice, would then be left whole beside it.
      while (rounded && rounded.hasOneUse() &&
             isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
                 rounded.getDefiningOp())) {
        r.reshapes.push_back(rounded.getDefiningOp());
        rounded = rounded.getDefiningOp()->getOperand(0);
      }
      r.wide = rounded && rounded.hasOneUse()
                   ? floatConversionInput<arith::TruncFOp>(rounded)
                   : Value();
      // Only a contraction whose operands have the rounded type (a 16-bit
      // matmul): a float32 product rounded on purpose, say to model
      // quantization, keeps its rounding.
      auto c = r.wide ? r.wide.getDefiningOp<linalg::LinalgOp>() : nullptr;
      if (c && isContraction(c) &&
          getElementTypeOrSelf(r.wide.getType()) ==
              getElementTypeOrSelf(g->getResult(0).getType()) &&
          llvm::all_of(c.getDpsInputs(), [&](Value in) {
            return getElementTypeOrSelf(in.getType()) ==
                   getElementTypeOrSelf(rounded.getType());
          })) {
        r.round = rounded.getDefiningOp();
        found.push_back(std::move(r));
      }
    });
    for (RoundTrip &r : found) {
      OpBuilder b(r.widen);
      Value wide = r.wide;
      for (Operation *reshape : llvm::reverse(r.reshapes))
        wide = reshapeLike(b, reshape, wide);
      r.widen->getResult(0).replaceAllUsesWith(wide);
      r.widen->erase();
      for (Operation *op : r.reshapes)
        if (op->use_empty())
          op->erase();
      if (r.round->use_empty())
        r.round->erase();
    }
  }

  void foldTransposes(func::FuncOp func) {
    llvm::SetVector<Operation *> found;
    func.walk([&](Operation *op) {
      if (isContraction(op))
        found.insert_range(foldTransposedInputs(cast<linalg::LinalgOp>(op)));
    });
    SmallVector<Operation *> unread(found.begin(), found.end());
    // (A transpose some other op still reads stays for it. A collapse
    // may come after its transpose in the list: erase until none goes.)
    for (bool erased = true; erased;) {
      erased = false;
      for (Operation *&op : unread)
        if (op && op->use_empty()) {
          op->erase();
          op = nullptr;
          erased = true;
        }
    }
  }

  void accumulateIntoInits(func::FuncOp func) {
    DominanceInfo dominance(func);
    SmallVector<linalg::GenericOp> adds;
    func.walk([&](linalg::GenericOp g) {
      if (isPlainAdd(g))
        adds.push_back(g);
    });
    for (linalg::GenericOp add : adds) {
      for (unsigned k = 0; k < 2; ++k) {
        Value product = add.getDpsInputOperand(k)->get();
        Value into = add.getDpsInputOperand(1 - k)->get();
        linalg::LinalgOp c = zeroInitContraction(product);
        // The contraction stays where it is, where the plan has its
        // operands live. It accumulates only into an argument (a weight's
        // sum, written back into it): a value the step computes may be
        // planned, and a contraction into it then copies into the add's
        // place rather than computing there.
        if (!c || !isa<BlockArgument>(into) ||
            into.getType() != add->getResult(0).getType() ||
            into.getType() != c->getResult(0).getType() ||
            !dominance.properlyDominates(into, c))
          continue;
        Operation *fill = c.getDpsInitOperand(0)->get().getDefiningOp();
        c.getDpsInitOperand(0)->set(into);
        add->getResult(0).replaceAllUsesWith(c->getResult(0));
        add.erase();
        fill->erase();
        break;
      }
    }
  }
};

} // namespace

bool mlir::loom::swapsLastTwoDims(ArrayRef<int64_t> perm) {
  int64_t rank = static_cast<int64_t>(perm.size());
  if (rank < 2 || perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
    return false;
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (perm[d] != d)
      return false;
  return true;
}
