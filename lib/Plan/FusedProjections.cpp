//===- FusedProjections.cpp - split fused projections into parts ----------===//

#include "loom/Plan/FusedProjections.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::loom;

namespace {
/// One fused projection as found: the matmul, where its weight comes from,
/// the optional bias add and the slices that read the parts.
struct FusedProjection {
  MatmulOp matmul;
  WeightOp weight;
  TransposeOp transpose;  // null when the matmul reads the weight directly
  BinaryOp biasAdd;       // null without a bias
  WeightOp bias;
  SmallVector<SliceOp> parts; // by offset
  int64_t partSize = 0;
};
} // namespace

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// The weight behind `v` if `v` is a weight (or its 2-D transpose) read
/// nowhere else.
static WeightOp soleWeight(Value v, TransposeOp &transpose) {
  transpose = v.getDefiningOp<TransposeOp>();
  if (transpose) {
    if (!transpose->hasOneUse() ||
        transpose.getPermutation() != ArrayRef<int64_t>{1, 0})
      return {};
    v = transpose.getInput();
  }
  auto weight = v.getDefiningOp<WeightOp>();
  return weight && weight->hasOneUse() ? weight : WeightOp();
}

static std::optional<FusedProjection> match(MatmulOp matmul) {
  FusedProjection f;
  f.matmul = matmul;
  if (shapeOf(matmul.getRhs()).size() != 2)
    return std::nullopt;
  f.weight = soleWeight(matmul.getRhs(), f.transpose);
  if (!f.weight)
    return std::nullopt;
  const int64_t width = shapeOf(matmul.getRhs())[1];
  Value projected = matmul.getResult();
  // A bias: a weight of the projection's width added to it.
  if (projected.hasOneUse())
    if (auto add = dyn_cast<BinaryOp>(*projected.user_begin());
        add && add.getKind() == BinaryKind::add) {
      Value other = add.getLhs() == projected ? add.getRhs() : add.getLhs();
      auto bias = other.getDefiningOp<WeightOp>();
      if (bias && bias->hasOneUse() && shapeOf(other) == ArrayRef<int64_t>{width} &&
          shapeOf(add.getResult()) == shapeOf(projected)) {
        f.biasAdd = add;
        f.bias = bias;
        projected = add.getResult();
      }
    }
  // Readers: slices of the last dimension only, unit stride.
  ArrayRef<int64_t> shape = shapeOf(projected);
  const size_t last = shape.size() - 1;
  for (Operation *user : projected.getUsers()) {
    auto slice = dyn_cast<SliceOp>(user);
    if (!slice)
      return std::nullopt;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (slice.getStrides()[d] != 1)
        return std::nullopt;
      if (d != last && (slice.getOffsets()[d] != 0 || slice.getSizes()[d] != shape[d]))
        return std::nullopt;
    }
    f.parts.push_back(slice);
  }
  if (f.parts.size() < 2)
    return std::nullopt;
  llvm::sort(f.parts, [&](SliceOp a, SliceOp b) {
    return a.getOffsets()[last] < b.getOffsets()[last];
  });
  // The parts tile the width in equal pieces, each read once.
  f.partSize = f.parts.front().getSizes()[last];
  if (f.partSize <= 0 || width != f.partSize * static_cast<int64_t>(f.parts.size()))
    return std::nullopt;
  for (auto [k, slice] : llvm::enumerate(f.parts))
    if (slice.getSizes()[last] != f.partSize ||
        slice.getOffsets()[last] != static_cast<int64_t>(k) * f.partSize)
      return std::nullopt;
  return f;
}

/// Copies `from`'s discardable attributes (a pinned loom.stage, a
/// recomputation mark) onto `to`.
static void copyMarks(Operation *from, Operation *to) {
  for (NamedAttribute attr : from->getDiscardableAttrs())
    to->setAttr(attr.getName(), attr.getValue());
}

/// A weight like `w` (same role, name, file, offset) typed `shape`.
static WeightOp retyped(OpBuilder &b, WeightOp w, ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(w.getType()).getElementType());
  auto view =
      WeightOp::create(b, w.getLoc(), type, w.getRoleAttr(), w.getNameAttr(),
                       w.getFileAttr(), w.getOffsetAttr(), w.getFileTypeAttr());
  copyMarks(w, view);
  return view;
}

/// Part `k` of `w`, whose dimension `partDim` counts the parts, with that
/// dimension dropped.
static Value partOf(OpBuilder &b, Location loc, Value w, int64_t partDim, int64_t k) {
  ArrayRef<int64_t> full = shapeOf(w);
  SmallVector<int64_t> offsets(full.size(), 0), sizes(full), strides(full.size(), 1);
  offsets[partDim] = k;
  sizes[partDim] = 1;
  Value slice = SliceOp::create(b, loc, w, b.getDenseI64ArrayAttr(offsets),
                                b.getDenseI64ArrayAttr(sizes),
                                b.getDenseI64ArrayAttr(strides));
  SmallVector<int64_t> shape(full);
  shape.erase(shape.begin() + partDim);
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(w.getType()).getElementType());
  return ReshapeOp::create(b, loc, type, slice);
}

static void rewrite(FusedProjection &f) {
  const int64_t parts = f.parts.size(), n = f.partSize;
  OpBuilder b(f.weight);
  // The stored [P*N, K] as [P, N, K] (read through its transpose), or
  // [K, P*N] as [K, P, N].
  ArrayRef<int64_t> stored = shapeOf(f.weight.getResult());
  WeightOp weight =
      f.transpose ? retyped(b, f.weight, {parts, n, stored[1]})
                  : retyped(b, f.weight, {stored[0], parts, n});
  WeightOp bias;
  if (f.bias) {
    b.setInsertionPoint(f.bias);
    bias = retyped(b, f.bias, {parts, n});
  }
  b.setInsertionPoint(f.matmul);
  Location loc = f.matmul.getLoc();
  for (auto [k, slice] : llvm::enumerate(f.parts)) {
    Value w;
    if (f.transpose) {
      Value rows = partOf(b, f.transpose.getLoc(), weight, 0, k);
      w = TransposeOp::create(b, f.transpose.getLoc(), rows, f.transpose.getPermutationAttr());
    } else {
      w = partOf(b, f.weight.getLoc(), weight, 1, k);
    }
    auto matmul = MatmulOp::create(b, loc, f.matmul.getLhs(), w);
    copyMarks(f.matmul, matmul);
    Value y = matmul;
    if (f.biasAdd) {
      Value bk = partOf(b, f.bias.getLoc(), bias, 0, k);
      bool biasFirst = f.biasAdd.getLhs() == f.bias.getResult();
      auto add = BinaryOp::create(b, f.biasAdd.getLoc(), f.biasAdd.getKindAttr(),
                                  biasFirst ? bk : y, biasFirst ? y : bk);
      copyMarks(f.biasAdd, add);
      y = add;
    }
    slice.getResult().replaceAllUsesWith(y);
  }
  for (SliceOp slice : f.parts)
    slice.erase();
  if (f.biasAdd) {
    f.biasAdd.erase();
    f.bias.erase();
  }
  f.matmul.erase();
  if (f.transpose)
    f.transpose.erase();
  f.weight.erase();
}

unsigned mlir::loom::splitFusedProjections(func::FuncOp func) {
  SmallVector<FusedProjection> found;
  func.walk([&](MatmulOp matmul) {
    if (auto f = match(matmul))
      found.push_back(std::move(*f));
  });
  for (FusedProjection &f : found)
    rewrite(f);
  return found.size();
}
