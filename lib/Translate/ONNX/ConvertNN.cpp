//===- ConvertNN.cpp - contractions, conv, pooling, norms, reductions -----===//
//
// MatMul (numpy 1-D promotion), Gemm (transpose/matmul/scale/add), Einsum
// (any two-operand contraction without repeated labels, as transposes and
// reshapes around one batched matmul), Conv and pooling with every auto_pad
// mode, batch/instance/layer normalization, softmax, the Reduce family with
// its opset-dependent `axes`, ArgMax/ArgMin and TopK.
//
//===----------------------------------------------------------------------===//

#include "ONNXImporter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::onnx_import;

static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleave(shape, os, "x");
  os << "]";
  return s;
}

static int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

//===----------------------------------------------------------------------===//
// MatMul, Gemm
//===----------------------------------------------------------------------===//

LogicalResult onnx_import::convertMatMul(NodeContext &c) {
  TRY(a, c.value(0));
  TRY(b, c.value(1));
  ArrayRef<int64_t> as = shapeOf(a), bs = shapeOf(b);
  if (as.empty() || bs.empty())
    return c.error("operands must have rank >= 1");
  // numpy: a 1-D lhs gains a leading 1, a 1-D rhs a trailing 1, both
  // removed from the result.
  Value a2 = a, b2 = b;
  if (as.size() == 1) {
    TRY(r, c.reshape(a, {1, as[0]}));
    a2 = r;
  }
  if (bs.size() == 1) {
    TRY(r, c.reshape(b, {bs[0], 1}));
    b2 = r;
  }
  TRY(y, c.create<MatmulOp>(a2, b2));
  if (as.size() == 1 || bs.size() == 1) {
    SmallVector<int64_t> shape(shapeOf(y));
    if (bs.size() == 1)
      shape.pop_back();
    if (as.size() == 1)
      shape.erase(shape.end() - (bs.size() == 1 ? 1 : 2));
    TRY(r, c.reshape(y, shape));
    y = r;
  }
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertGemm(NodeContext &c) {
  FailureOr<double> alpha = c.attrFloat("alpha", 1.0);
  FailureOr<double> beta = c.attrFloat("beta", 1.0);
  FailureOr<int64_t> transA = c.attrInt("transA", 0);
  FailureOr<int64_t> transB = c.attrInt("transB", 0);
  if (failed(alpha) || failed(beta) || failed(transA) || failed(transB))
    return failure();
  TRY(a, c.value(0));
  TRY(b, c.value(1));
  if (shapeOf(a).size() != 2 || shapeOf(b).size() != 2)
    return c.error("A and B must be matrices, got " + shapeStr(shapeOf(a)) +
                   " and " + shapeStr(shapeOf(b)));
  if (*transA) {
    TRY(t, c.transpose(a, {1, 0}));
    a = t;
  }
  if (*transB) {
    TRY(t, c.transpose(b, {1, 0}));
    b = t;
  }
  TRY(y, c.create<MatmulOp>(a, b));
  Type e = elemOf(y);
  if (*alpha != 1.0) {
    TRY(s, c.binary(BinaryKind::mul, y, c.scalar(e, *alpha)));
    y = s;
  }
  if (c.hasInput(2) && *beta != 0.0) {
    Value bias;
    HostTensorRef h = c.host(2);
    if (h && *beta != 1.0 && h->numel() <= kMaxFoldElements) {
      HostTensor scaled = *h;
      for (int64_t i = 0, n = scaled.numel(); i < n; ++i)
        storeElement(scaled, i, h->getDouble(i) * *beta, 0, true);
      bias = c.constant(scaled);
    } else {
      TRY(cv, c.value(2));
      bias = cv;
      if (*beta != 1.0) {
        TRY(s, c.binary(BinaryKind::mul, bias, c.scalar(e, *beta)));
        bias = s;
      }
    }
    TRY(sum, c.binary(BinaryKind::add, y, bias));
    y = sum;
  }
  c.setResult(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

namespace {
/// One operand's labels; ellipsis dims get labels >= 256.
using Labels = SmallVector<int>;
} // namespace

/// Parses one einsum term; `ellipsisRank` dims replace "...".
static FailureOr<Labels> parseTerm(NodeContext &c, StringRef term,
                                   int64_t rank, int64_t &ellipsisRank,
                                   bool isOutput, int64_t maxEllipsis) {
  Labels labels;
  int64_t letters = 0;
  bool ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    char ch = term[i];
    if (ch == ' ')
      continue;
    if (ch == '.') {
      if (ellipsis || term.substr(i, 3) != "...") {
        (void)c.error("malformed ellipsis in einsum term '" + term + "'");
        return failure();
      }
      ellipsis = true;
      labels.push_back(-1);
      i += 2;
      continue;
    }
    if (!llvm::isAlpha(ch)) {
      (void)c.error("invalid character '" + Twine(ch) +
                    "' in einsum equation");
      return failure();
    }
    labels.push_back(int(uint8_t(ch)));
    ++letters;
  }
  int64_t ell = 0;
  if (ellipsis) {
    ell = isOutput ? maxEllipsis : rank - letters;
    if (ell < 0) {
      (void)c.error("einsum term '" + term + "' has more labels than the "
                                             "operand's rank " + Twine(rank));
      return failure();
    }
  } else if (!isOutput && letters != rank) {
    (void)c.error("einsum term '" + term + "' has " + Twine(letters) +
                  " labels for an operand of rank " + Twine(rank));
    return failure();
  }
  ellipsisRank = ell;
  Labels out;
  for (int l : labels) {
    if (l != -1) {
      out.push_back(l);
      continue;
    }
    // Right-aligned ellipsis labels, shared across operands.
    for (int64_t k = 0; k < ell; ++k)
      out.push_back(256 + int(maxEllipsis - ell + k));
  }
  return out;
}

LogicalResult onnx_import::convertEinsum(NodeContext &c) {
  FailureOr<std::string> eqOr = c.attrString("equation", "");
  if (failed(eqOr))
    return failure();
  StringRef eq = *eqOr;
  if (eq.empty())
    return c.error("missing the 'equation' attribute");
  int64_t n = c.numInputs();
  if (n < 1 || n > 2)
    return c.unsupported("einsum with " + Twine(n) +
                         " operands (one or two are supported)");
  auto [lhs, rhs] = eq.split("->");
  bool explicitOut = eq.contains("->");
  SmallVector<StringRef> terms;
  lhs.split(terms, ',');
  if (int64_t(terms.size()) != n)
    return c.error("einsum equation '" + eq + "' has " +
                   Twine(terms.size()) + " operand terms for " + Twine(n) +
                   " inputs");
  SmallVector<Value> ops;
  for (int64_t i = 0; i < n; ++i) {
    TRY(v, c.value(i));
    ops.push_back(v);
  }
  // Count ellipsis dims to give them shared labels.
  int64_t maxEll = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t letters = llvm::count_if(terms[i], llvm::isAlpha);
    if (terms[i].contains("..."))
      maxEll = std::max<int64_t>(maxEll, int64_t(shapeOf(ops[i]).size()) -
                                             letters);
  }
  SmallVector<Labels> in;
  llvm::DenseMap<int, int64_t> size;
  for (int64_t i = 0; i < n; ++i) {
    int64_t ell;
    FailureOr<Labels> l =
        parseTerm(c, terms[i], shapeOf(ops[i]).size(), ell, false, maxEll);
    if (failed(l))
      return failure();
    if (int64_t(l->size()) != int64_t(shapeOf(ops[i]).size()))
      return c.error("einsum term '" + terms[i] +
                     "' does not match the operand's rank");
    for (size_t d = 0; d < l->size(); ++d) {
      int lab = (*l)[d];
      for (size_t e = 0; e < d; ++e)
        if ((*l)[e] == lab)
          return c.unsupported("repeated label in einsum term '" + terms[i] +
                               "' (diagonals)");
      int64_t dim = shapeOf(ops[i])[d];
      auto [it, inserted] = size.try_emplace(lab, dim);
      if (!inserted && it->second != dim) {
        if (lab >= 256 && (it->second == 1 || dim == 1)) {
          it->second = std::max(it->second, dim);
          continue;
        }
        return c.error("einsum label sizes differ (" + Twine(it->second) +
                       " vs " + Twine(dim) + ")");
      }
    }
    in.push_back(*l);
  }
  Labels out;
  if (explicitOut) {
    int64_t ell;
    FailureOr<Labels> l = parseTerm(c, rhs, 0, ell, true, maxEll);
    if (failed(l))
      return failure();
    out = *l;
    for (int lab : out)
      if (!size.count(lab))
        return c.error("einsum output label '" + Twine(char(lab)) +
                       "' does not appear in any input");
  } else {
    for (int64_t k = 0; k < maxEll; ++k)
      out.push_back(256 + int(k));
    SmallVector<int> once;
    for (auto &[lab, sz] : size) {
      (void)sz;
      if (lab >= 256)
        continue;
      int count = 0;
      for (const Labels &l : in)
        count += llvm::count(l, lab);
      if (count == 1)
        once.push_back(lab);
    }
    llvm::sort(once);
    out.append(once.begin(), once.end());
  }
  auto inOut = [&](int lab) { return llvm::is_contained(out, lab); };

  // Sum away labels that only one operand has and the output drops.
  for (int64_t i = 0; i < n; ++i) {
    SmallVector<int64_t> axes;
    Labels kept;
    for (size_t d = 0; d < in[i].size(); ++d) {
      int lab = in[i][d];
      bool other = n == 2 && llvm::is_contained(in[1 - i], lab);
      if (!inOut(lab) && !other)
        axes.push_back(d);
      else
        kept.push_back(lab);
    }
    if (!axes.empty()) {
      TRY(r, c.reduce(ReduceKind::sum, ops[i], axes, false));
      ops[i] = r;
      in[i] = kept;
    }
  }

  auto dimOf = [&](int64_t i, int lab) {
    return shapeOf(ops[i])[llvm::find(in[i], lab) - in[i].begin()];
  };
  auto permFor = [&](int64_t i, ArrayRef<int> order) {
    SmallVector<int64_t> perm;
    for (int lab : order)
      perm.push_back(llvm::find(in[i], lab) - in[i].begin());
    return perm;
  };

  if (n == 1) {
    TRY(t, c.transpose(ops[0], permFor(0, out)));
    c.setResult(0, t);
    return success();
  }

  Labels batch, contract, aFree, bFree;
  for (int lab : in[0]) {
    bool inB = llvm::is_contained(in[1], lab);
    if (inB && inOut(lab))
      batch.push_back(lab);
    else if (inB)
      contract.push_back(lab);
    else
      aFree.push_back(lab);
  }
  for (int lab : in[1])
    if (!llvm::is_contained(in[0], lab))
      bFree.push_back(lab);

  Labels aOrder(batch), bOrder(batch);
  aOrder.append(aFree.begin(), aFree.end());
  aOrder.append(contract.begin(), contract.end());
  bOrder.append(contract.begin(), contract.end());
  bOrder.append(bFree.begin(), bFree.end());
  TRY(at, c.transpose(ops[0], permFor(0, aOrder)));
  TRY(bt, c.transpose(ops[1], permFor(1, bOrder)));

  SmallVector<int64_t> aShape, bShape, aFreeDims, bFreeDims, batchDims;
  int64_t k = 1, m = 1, nn = 1;
  for (int lab : batch) {
    aShape.push_back(dimOf(0, lab));
    bShape.push_back(dimOf(1, lab));
    batchDims.push_back(std::max(dimOf(0, lab), dimOf(1, lab)));
  }
  for (int lab : contract) {
    if (dimOf(0, lab) != dimOf(1, lab))
      return c.error("einsum contracted label sizes differ");
    k *= dimOf(0, lab);
  }
  for (int lab : aFree) {
    aFreeDims.push_back(dimOf(0, lab));
    m *= dimOf(0, lab);
  }
  for (int lab : bFree) {
    bFreeDims.push_back(dimOf(1, lab));
    nn *= dimOf(1, lab);
  }
  aShape.append({m, k});
  bShape.append({k, nn});
  TRY(a2, c.reshape(at, aShape));
  TRY(b2, c.reshape(bt, bShape));
  TRY(y, c.create<MatmulOp>(a2, b2));
  SmallVector<int64_t> yShape(batchDims);
  yShape.append(aFreeDims.begin(), aFreeDims.end());
  yShape.append(bFreeDims.begin(), bFreeDims.end());
  TRY(y2, c.reshape(y, yShape));
  Labels yOrder(batch);
  yOrder.append(aFree.begin(), aFree.end());
  yOrder.append(bFree.begin(), bFree.end());
  SmallVector<int64_t> perm;
  for (int lab : out)
    perm.push_back(llvm::find(yOrder, lab) - yOrder.begin());
  if (perm.size() != yOrder.size())
    return c.error("einsum output labels do not match the contraction");
  TRY(r, c.transpose(y2, perm));
  c.setResult(0, r);
  return success();
}

//===----------------------------------------------------------------------===//
// Conv and pooling
//===----------------------------------------------------------------------===//

namespace {
struct WindowAttrs {
  SmallVector<int64_t> kernel, strides, pads, dilations;
};
} // namespace

/// Reads strides/pads/dilations/auto_pad for `spatial` dims with `kernel`;
/// `inShape` is the full input shape (for SAME padding).
static FailureOr<WindowAttrs> windowAttrs(NodeContext &c,
                                          ArrayRef<int64_t> kernel,
                                          ArrayRef<int64_t> inShape,
                                          bool ceilMode) {
  int64_t spatial = kernel.size();
  WindowAttrs w;
  w.kernel.assign(kernel.begin(), kernel.end());
  auto list = [&](StringRef name, int64_t count,
                  int64_t dflt) -> FailureOr<SmallVector<int64_t>> {
    FailureOr<std::optional<SmallVector<int64_t>>> v = c.attrInts(name);
    if (failed(v))
      return failure();
    if (!*v)
      return SmallVector<int64_t>(count, dflt);
    if (int64_t((*v)->size()) != count) {
      (void)c.error("attribute '" + name + "' needs " + Twine(count) +
                    " values, got " + Twine((*v)->size()));
      return failure();
    }
    return **v;
  };
  FailureOr<SmallVector<int64_t>> strides = list("strides", spatial, 1);
  FailureOr<SmallVector<int64_t>> dil = list("dilations", spatial, 1);
  FailureOr<SmallVector<int64_t>> pads = list("pads", 2 * spatial, 0);
  FailureOr<std::string> autoPad = c.attrString("auto_pad", "NOTSET");
  if (failed(strides) || failed(dil) || failed(pads) || failed(autoPad))
    return failure();
  for (int64_t i = 0; i < spatial; ++i) {
    if ((*strides)[i] <= 0 || (*dil)[i] <= 0 || kernel[i] <= 0)
      return c.error("kernel, strides and dilations must be positive");
    // Bounded so that window arithmetic cannot overflow.
    constexpr int64_t limit = int64_t(1) << 20;
    if ((*strides)[i] > limit || (*dil)[i] > limit || kernel[i] > kMaxDim)
      return c.error("kernel, strides or dilations are too large");
  }
  for (int64_t p : *pads)
    if (p < 0 || p > kMaxDim)
      return c.error("pads must be non-negative");
  w.strides = *strides;
  w.dilations = *dil;
  if (*autoPad == "NOTSET" || autoPad->empty()) {
    w.pads = *pads;
  } else if (*autoPad == "VALID") {
    w.pads.assign(2 * spatial, 0);
  } else if (*autoPad == "SAME_UPPER" || *autoPad == "SAME_LOWER") {
    w.pads.assign(2 * spatial, 0);
    for (int64_t i = 0; i < spatial; ++i) {
      int64_t in = inShape[2 + i], s = w.strides[i];
      int64_t out = (in + s - 1) / s;
      int64_t effective = (kernel[i] - 1) * w.dilations[i] + 1;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + effective - in);
      int64_t small = total / 2, large = total - small;
      bool upper = *autoPad == "SAME_UPPER";
      w.pads[i] = upper ? small : large;
      w.pads[spatial + i] = upper ? large : small;
    }
  } else {
    return c.error("unknown auto_pad '" + *autoPad + "'");
  }
  (void)ceilMode;
  return w;
}

LogicalResult onnx_import::convertConv(NodeContext &c) {
  TRY(x, c.value(0));
  TRY(w, c.value(1));
  ArrayRef<int64_t> xs = shapeOf(x), ws = shapeOf(w);
  if (xs.size() < 3)
    return c.error("input must be [N, C, spatial...], got " + shapeStr(xs));
  if (ws.size() != xs.size())
    return c.error("weight rank " + Twine(ws.size()) +
                   " differs from input rank " + Twine(xs.size()));
  SmallVector<int64_t> kernel(ws.drop_front(2));
  FailureOr<std::optional<SmallVector<int64_t>>> ks =
      c.attrInts("kernel_shape");
  if (failed(ks))
    return failure();
  if (*ks && ArrayRef<int64_t>(**ks) != ArrayRef<int64_t>(kernel))
    return c.error("kernel_shape " + shapeStr(**ks) +
                   " disagrees with the weight " + shapeStr(ws));
  FailureOr<int64_t> group = c.attrInt("group", 1);
  if (failed(group))
    return failure();
  FailureOr<WindowAttrs> wa = windowAttrs(c, kernel, xs, false);
  if (failed(wa))
    return failure();
  Value bias;
  if (c.hasInput(2)) {
    TRY(bv, c.value(2));
    bias = bv;
  }
  TRY(y, c.create<ConvOp>(x, w, bias, c.b.getDenseI64ArrayAttr(wa->strides),
                          c.b.getDenseI64ArrayAttr(wa->pads),
                          c.b.getDenseI64ArrayAttr(wa->dilations),
                          c.b.getI64IntegerAttr(*group)));
  c.setResult(0, y);
  return success();
}

static LogicalResult convertPool(NodeContext &c, PoolKind kind) {
  TRY(x, c.value(0));
  ArrayRef<int64_t> xs = shapeOf(x);
  if (xs.size() < 3)
    return c.error("input must be [N, C, spatial...], got " + shapeStr(xs));
  FailureOr<std::optional<SmallVector<int64_t>>> ks =
      c.attrInts("kernel_shape");
  if (failed(ks))
    return failure();
  if (!*ks)
    return c.error("missing required attribute 'kernel_shape'");
  if ((*ks)->size() != xs.size() - 2)
    return c.error("kernel_shape has " + Twine((*ks)->size()) +
                   " dims for " + Twine(xs.size() - 2) + " spatial dims");
  FailureOr<int64_t> ceil = c.attrInt("ceil_mode", 0);
  FailureOr<int64_t> cip = c.attrInt("count_include_pad", 0);
  if (failed(ceil) || failed(cip))
    return failure();
  if (c.outputUsed(1))
    return c.unsupported("the Indices output of MaxPool");
  FailureOr<WindowAttrs> wa = windowAttrs(c, **ks, xs, *ceil);
  if (failed(wa))
    return failure();
  UnitAttr ceilAttr = *ceil ? c.b.getUnitAttr() : UnitAttr();
  UnitAttr cipAttr =
      (*cip && kind == PoolKind::avg) ? c.b.getUnitAttr() : UnitAttr();
  TRY(y, c.create<PoolOp>(PoolKindAttr::get(c.ctx, kind), x,
                          c.b.getDenseI64ArrayAttr(wa->kernel),
                          c.b.getDenseI64ArrayAttr(wa->strides),
                          c.b.getDenseI64ArrayAttr(wa->pads),
                          c.b.getDenseI64ArrayAttr(wa->dilations), ceilAttr,
                          cipAttr));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertMaxPool(NodeContext &c) {
  FailureOr<int64_t> order = c.attrInt("storage_order", 0);
  if (failed(order))
    return failure();
  return convertPool(c, PoolKind::max);
}

LogicalResult onnx_import::convertAveragePool(NodeContext &c) {
  return convertPool(c, PoolKind::avg);
}

LogicalResult onnx_import::convertGlobalPool(NodeContext &c) {
  TRY(x, c.value(0));
  int64_t rank = shapeOf(x).size();
  if (rank < 3)
    return c.error("input must be [N, C, spatial...]");
  SmallVector<int64_t> axes;
  for (int64_t d = 2; d < rank; ++d)
    axes.push_back(d);
  ReduceKind kind = c.opType() == "GlobalMaxPool" ? ReduceKind::max
                                                  : ReduceKind::mean;
  TRY(y, c.reduce(kind, x, axes, true));
  c.setResult(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

LogicalResult onnx_import::convertBatchNormalization(NodeContext &c) {
  FailureOr<double> eps = c.attrFloat("epsilon", 1e-5);
  FailureOr<int64_t> training = c.attrInt("training_mode", 0);
  if (failed(eps) || failed(training))
    return failure();
  if (*training || c.outputUsed(1) || c.outputUsed(2))
    return c.unsupported("training-mode BatchNormalization (running "
                         "statistics outputs)");
  SmallVector<Value> in;
  for (int64_t i = 0; i < 5; ++i) {
    TRY(v, c.value(i));
    in.push_back(v);
  }
  TRY(y, c.create<BatchNormOp>(in[0], in[1], in[2], in[3], in[4],
                               c.b.getF64FloatAttr(*eps)));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertInstanceNormalization(NodeContext &c) {
  FailureOr<double> eps = c.attrFloat("epsilon", 1e-5);
  if (failed(eps))
    return failure();
  TRY(x, c.value(0));
  TRY(scale, c.value(1));
  TRY(bias, c.value(2));
  ArrayRef<int64_t> xs = shapeOf(x);
  if (xs.size() < 3)
    return c.error("input must be [N, C, spatial...]");
  if (shapeOf(scale) != ArrayRef<int64_t>{xs[1]} ||
      shapeOf(bias) != ArrayRef<int64_t>{xs[1]})
    return c.error("scale and B must be [C]");
  if (!isa<FloatType>(elemOf(x)))
    return c.error("expects a float tensor");
  SmallVector<int64_t> axes;
  for (size_t d = 2; d < xs.size(); ++d)
    axes.push_back(d);
  Type e = elemOf(x);
  // (x - mean) / sqrt(var + eps) * scale + bias, per (n, c).
  TRY(mean, c.reduce(ReduceKind::mean, x, axes, true));
  TRY(d, c.binary(BinaryKind::sub, x, mean));
  TRY(d2, c.binary(BinaryKind::mul, d, d));
  TRY(var, c.reduce(ReduceKind::mean, d2, axes, true));
  TRY(ve, c.binary(BinaryKind::add, var, c.scalar(e, *eps)));
  TRY(den, c.unary(UnaryKind::sqrt, ve));
  TRY(norm, c.binary(BinaryKind::div, d, den));
  SmallVector<int64_t> chan(xs.size() - 1, 1);
  chan[0] = xs[1];
  TRY(s, c.reshape(scale, chan));
  TRY(bb, c.reshape(bias, chan));
  TRY(scaled, c.binary(BinaryKind::mul, norm, s));
  TRY(y, c.binary(BinaryKind::add, scaled, bb));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertLayerNormalization(NodeContext &c) {
  FailureOr<int64_t> axisAttr = c.attrInt("axis", -1);
  FailureOr<double> eps = c.attrFloat("epsilon", 1e-5);
  if (failed(axisAttr) || failed(eps))
    return failure();
  FailureOr<int64_t> stash = c.attrInt("stash_type", 1);
  if (failed(stash))
    return failure();
  TRY(x, c.value(0));
  FailureOr<int64_t> axis = normalizeAxis(c, *axisAttr, shapeOf(x).size());
  if (failed(axis))
    return failure();
  ArrayRef<int64_t> normalized = shapeOf(x).drop_front(*axis);
  // Scale and bias broadcast to the normalized shape in ONNX; loom wants it
  // exactly.
  auto param = [&](int64_t i) -> FailureOr<Value> {
    if (!c.hasInput(i))
      return Value();
    FailureOr<Value> v = c.value(i);
    if (failed(v))
      return failure();
    if (shapeOf(*v) == normalized)
      return v;
    if (shapeOf(*v).size() > normalized.size()) {
      (void)c.error("scale/bias " + shapeStr(shapeOf(*v)) +
                    " do not broadcast to the normalized shape " +
                    shapeStr(normalized));
      return failure();
    }
    return c.expand(*v, normalized);
  };
  FailureOr<Value> scale = param(1), bias = param(2);
  if (failed(scale) || failed(bias))
    return failure();
  Value scaleV = *scale;
  if (!scaleV) {
    // loom.layer_norm always scales; no Scale means ones.
    HostTensor ones;
    ones.dtype = typeToDType(elemOf(x));
    ones.shape.assign(normalized.begin(), normalized.end());
    if (!foldable(ones.shape))
      return c.unsupported("LayerNormalization without Scale over more than " +
                           Twine(kMaxFoldElements) + " elements");
    ones.allocate();
    for (int64_t i = 0, e = ones.numel(); i < e; ++i)
      storeElement(ones, i, 1.0, 0, true);
    scaleV = c.constant(ones);
  }
  TRY(y, c.create<LayerNormOp>(x, scaleV, *bias, c.b.getI64IntegerAttr(*axis),
                               c.b.getF64FloatAttr(*eps)));
  c.setResult(0, y);
  if (c.outputUsed(1) || c.outputUsed(2)) {
    // The saved statistics, shaped like x with the normalized dims kept as 1,
    // in the stash type.
    Type stashType = dtypeToType(c.ctx, int32_t(std::clamp<int64_t>(
                                            *stash, 0, 1 << 20)));
    if (!stashType || !isa<FloatType>(stashType))
      return c.error("stash_type must be a float dtype");
    SmallVector<int64_t> axes;
    for (int64_t d = *axis; d < int64_t(shapeOf(x).size()); ++d)
      axes.push_back(d);
    Type e = elemOf(x);
    TRY(mean, c.reduce(ReduceKind::mean, x, axes, true));
    TRY(d, c.binary(BinaryKind::sub, x, mean));
    TRY(d2, c.binary(BinaryKind::mul, d, d));
    TRY(var, c.reduce(ReduceKind::mean, d2, axes, true));
    TRY(ve, c.binary(BinaryKind::add, var, c.scalar(e, *eps)));
    TRY(inv, c.unary(UnaryKind::rsqrt, ve));
    TRY(meanS, c.castElem(mean, stashType));
    TRY(invS, c.castElem(inv, stashType));
    c.setResult(1, meanS);
    c.setResult(2, invS);
  }
  return success();
}

LogicalResult onnx_import::convertSoftmax(NodeContext &c) {
  FailureOr<int64_t> axisAttr = c.attrInt("axis", -1);
  if (failed(axisAttr))
    return failure();
  TRY(x, c.value(0));
  FailureOr<int64_t> axis = normalizeAxis(c, *axisAttr, shapeOf(x).size());
  if (failed(axis))
    return failure();
  UnitAttr log = c.opType() == "LogSoftmax" ? c.b.getUnitAttr() : UnitAttr();
  TRY(y, c.create<SoftmaxOp>(x, c.b.getI64IntegerAttr(*axis), log));
  c.setResult(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

/// Host reduction (sum, mean, max, min, prod, l1, l2, sum_square).
static std::optional<HostTensor> foldReduce(ReduceKind kind,
                                            const HostTensor &x,
                                            ArrayRef<int64_t> axes,
                                            bool keepDims) {
  int64_t rank = x.shape.size();
  SmallVector<int64_t> outShape, keptShape;
  for (int64_t d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, d);
    keptShape.push_back(reduced ? 1 : x.shape[d]);
    if (!reduced)
      outShape.push_back(x.shape[d]);
    else if (keepDims)
      outShape.push_back(1);
  }
  int64_t n = x.numel(), outN = product(keptShape);
  if (n == 0 || outN > kMaxFoldElements)
    return std::nullopt;
  if (!x.isFloat() && (kind == ReduceKind::mean || kind == ReduceKind::l2))
    return std::nullopt;
  std::vector<double> acc(outN, 0.0);
  std::vector<int64_t> iacc(outN, 0);
  std::vector<bool> seen(outN, false);
  SmallVector<int64_t> outStrides = stridesOf(keptShape);
  SmallVector<int64_t> counter(rank, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = 0;
    for (int64_t d = 0; d < rank; ++d)
      if (keptShape[d] != 1)
        o += counter[d] * outStrides[d];
    double v = x.getDouble(i);
    int64_t iv = x.isFloat() ? 0 : x.ints[i];
    switch (kind) {
    case ReduceKind::sum:
    case ReduceKind::mean:
      acc[o] += v;
      iacc[o] = int64_t(uint64_t(iacc[o]) + uint64_t(iv));
      break;
    case ReduceKind::prod:
      acc[o] = seen[o] ? acc[o] * v : v;
      iacc[o] = seen[o] ? int64_t(uint64_t(iacc[o]) * uint64_t(iv)) : iv;
      break;
    case ReduceKind::max:
      acc[o] = seen[o] ? std::max(acc[o], v) : v;
      iacc[o] = seen[o] ? std::max(iacc[o], iv) : iv;
      break;
    case ReduceKind::min:
      acc[o] = seen[o] ? std::min(acc[o], v) : v;
      iacc[o] = seen[o] ? std::min(iacc[o], iv) : iv;
      break;
    case ReduceKind::l1:
      acc[o] += std::fabs(v);
      iacc[o] = int64_t(uint64_t(iacc[o]) +
                        (iv < 0 ? uint64_t(0) - uint64_t(iv) : uint64_t(iv)));
      break;
    case ReduceKind::l2:
    case ReduceKind::sum_square:
      acc[o] += v * v;
      iacc[o] = int64_t(uint64_t(iacc[o]) + uint64_t(iv) * uint64_t(iv));
      break;
    default:
      return std::nullopt;
    }
    seen[o] = true;
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++counter[d] < x.shape[d])
        break;
      counter[d] = 0;
    }
  }
  HostTensor out;
  out.dtype = x.dtype;
  out.shape = outShape;
  out.allocate();
  int64_t count = n / outN;
  for (int64_t o = 0; o < outN; ++o) {
    double v = acc[o];
    if (kind == ReduceKind::mean)
      v /= double(count);
    if (kind == ReduceKind::l2)
      v = std::sqrt(v);
    storeElement(out, o, v, iacc[o], x.isFloat());
  }
  return out;
}

static LogicalResult convertReduce(NodeContext &c,
                                   std::optional<SmallVector<int64_t>> axes,
                                   bool noopWithEmptyAxes) {
  FailureOr<int64_t> keep = c.attrInt("keepdims", 1);
  if (failed(keep))
    return failure();
  FailureOr<RankedTensorType> type = c.type(0);
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  SmallVector<int64_t> norm;
  if (!axes || axes->empty()) {
    if (noopWithEmptyAxes || rank == 0) {
      FailureOr<TensorRef> t = c.tensor(0);
      if (failed(t))
        return failure();
      c.setTensorResult(0, *t);
      return success();
    }
    for (int64_t d = 0; d < rank; ++d)
      norm.push_back(d);
  } else {
    FailureOr<SmallVector<int64_t>> n = normalizeAxes(c, *axes, rank);
    if (failed(n))
      return failure();
    norm = *n;
  }
  StringRef op = c.opType();
  std::optional<ReduceKind> kind =
      llvm::StringSwitch<std::optional<ReduceKind>>(op)
          .Case("ReduceSum", ReduceKind::sum)
          .Case("ReduceMean", ReduceKind::mean)
          .Case("ReduceMax", ReduceKind::max)
          .Case("ReduceMin", ReduceKind::min)
          .Case("ReduceProd", ReduceKind::prod)
          .Case("ReduceL1", ReduceKind::l1)
          .Case("ReduceL2", ReduceKind::l2)
          .Case("ReduceSumSquare", ReduceKind::sum_square)
          .Default(std::nullopt);
  if (kind) {
    if (HostTensorRef h = c.host(0))
      if (auto folded = foldReduce(*kind, *h, norm, *keep)) {
        c.setHostResult(0, std::move(*folded));
        return success();
      }
    TRY(x, c.value(0));
    TRY(y, c.reduce(*kind, x, norm, *keep));
    c.setResult(0, y);
    return success();
  }
  TRY(x, c.value(0));
  if (!isa<FloatType>(elemOf(x)))
    return c.error("expects a float tensor");
  if (op == "ReduceLogSum") {
    TRY(s, c.reduce(ReduceKind::sum, x, norm, *keep));
    TRY(y, c.unary(UnaryKind::log, s));
    c.setResult(0, y);
    return success();
  }
  // ReduceLogSumExp, stabilized: m + log(sum(exp(x - m))).
  TRY(m, c.reduce(ReduceKind::max, x, norm, true));
  TRY(d, c.binary(BinaryKind::sub, x, m));
  TRY(e, c.unary(UnaryKind::exp, d));
  TRY(s, c.reduce(ReduceKind::sum, e, norm, *keep));
  TRY(l, c.unary(UnaryKind::log, s));
  Value mk = m;
  if (!*keep) {
    TRY(r, c.reshape(m, shapeOf(l)));
    mk = r;
  }
  TRY(y, c.binary(BinaryKind::add, l, mk));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertReduceAxesAttr(NodeContext &c) {
  FailureOr<std::optional<SmallVector<int64_t>>> axes = c.attrInts("axes");
  if (failed(axes))
    return failure();
  return convertReduce(c, *axes, false);
}

LogicalResult onnx_import::convertReduceAxesInput(NodeContext &c) {
  FailureOr<int64_t> noop = c.attrInt("noop_with_empty_axes", 0);
  if (failed(noop))
    return failure();
  // A stale attribute from an older opset would silently change the result.
  if (c.hasAttr("axes"))
    return c.error("'axes' is an input of " + c.opType() + " at opset " +
                   Twine(c.opset) + ", not an attribute");
  std::optional<SmallVector<int64_t>> axes;
  if (c.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> a = c.constInts(1, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  }
  return convertReduce(c, axes, *noop);
}

LogicalResult onnx_import::convertArgReduce(NodeContext &c) {
  FailureOr<int64_t> axisAttr = c.attrInt("axis", 0);
  FailureOr<int64_t> keep = c.attrInt("keepdims", 1);
  FailureOr<int64_t> last = c.attrInt("select_last_index", 0);
  if (failed(axisAttr) || failed(keep) || failed(last))
    return failure();
  TRY(x, c.value(0));
  FailureOr<int64_t> axis = normalizeAxis(c, *axisAttr, shapeOf(x).size());
  if (failed(axis))
    return failure();
  ReduceKind kind =
      c.opType() == "ArgMax" ? ReduceKind::argmax : ReduceKind::argmin;
  int64_t n = shapeOf(x)[*axis];
  if (!*last || n <= 1) {
    TRY(y, c.reduce(kind, x, {*axis}, *keep));
    c.setResult(0, y);
    return success();
  }
  // The last extreme is the first one of the reversed axis: n - 1 - index.
  int64_t rank = shapeOf(x).size();
  SmallVector<int64_t> offsets(rank, 0), sizes(shapeOf(x)), strides(rank, 1);
  offsets[*axis] = n - 1;
  strides[*axis] = -1;
  TRY(rev, c.create<SliceOp>(x, c.b.getDenseI64ArrayAttr(offsets),
                             c.b.getDenseI64ArrayAttr(sizes),
                             c.b.getDenseI64ArrayAttr(strides)));
  TRY(idx, c.reduce(kind, rev, {*axis}, *keep));
  TRY(y, c.binary(BinaryKind::sub, c.scalar(elemOf(idx), double(n - 1)),
                  idx));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertTopK(NodeContext &c) {
  FailureOr<int64_t> axisAttr = c.attrInt("axis", -1);
  FailureOr<int64_t> largest = c.attrInt("largest", 1);
  FailureOr<int64_t> sorted = c.attrInt("sorted", 1);
  if (failed(axisAttr) || failed(largest) || failed(sorted))
    return failure();
  FailureOr<SmallVector<int64_t>> k = c.constInts(1, "K");
  if (failed(k))
    return failure();
  if (k->size() != 1)
    return c.error("K must hold one value");
  TRY(x, c.value(0));
  FailureOr<int64_t> axis = normalizeAxis(c, *axisAttr, shapeOf(x).size());
  if (failed(axis))
    return failure();
  FailureOr<TopKOp> op =
      c.createOp<TopKOp>(x, c.b.getI64IntegerAttr((*k)[0]),
                         c.b.getI64IntegerAttr(*axis),
                         c.b.getBoolAttr(*largest != 0));
  if (failed(op))
    return failure();
  c.setResult(0, op->getValues());
  c.setResult(1, op->getIndices());
  return success();
}

//===----------------------------------------------------------------------===//
// Hardmax, LRN, MeanVarianceNormalization
//===----------------------------------------------------------------------===//

/// An integer iota of `n` along `axis` of a rank-`rank` tensor of ones.
static HostTensor iotaAlong(int32_t dtype, int64_t rank, int64_t axis,
                            int64_t n) {
  HostTensor t;
  t.dtype = dtype;
  t.shape.assign(rank, 1);
  t.shape[axis] = n;
  t.allocate();
  for (int64_t i = 0; i < n; ++i)
    storeElement(t, i, double(i), i, isFloatDType(dtype));
  return t;
}

LogicalResult onnx_import::convertHardmax(NodeContext &c) {
  FailureOr<int64_t> axisAttr = c.attrInt("axis", -1);
  if (failed(axisAttr))
    return failure();
  TRY(x, c.value(0));
  int64_t rank = shapeOf(x).size();
  FailureOr<int64_t> axis = normalizeAxis(c, *axisAttr, rank);
  if (failed(axis))
    return failure();
  int64_t n = shapeOf(x)[*axis];
  if (n > kMaxFoldElements)
    return c.unsupported("Hardmax over an axis longer than " +
                         Twine(kMaxFoldElements));
  // one_hot(argmax(x)) along the axis; ties pick the first, as in ONNX.
  TRY(idx, c.reduce(ReduceKind::argmax, x, {*axis}, true));
  TRY(mask, c.compare(ComparePredicate::eq, idx,
                      c.constant(iotaAlong(onnx::TensorProto::INT64, rank,
                                           *axis, n))));
  TRY(y, c.castElem(mask, elemOf(x)));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertLRN(NodeContext &c) {
  FailureOr<double> alpha = c.attrFloat("alpha", 1e-4);
  FailureOr<double> beta = c.attrFloat("beta", 0.75);
  FailureOr<double> bias = c.attrFloat("bias", 1.0);
  FailureOr<int64_t> size = c.requiredAttrInt("size");
  if (failed(alpha) || failed(beta) || failed(bias) || failed(size))
    return failure();
  TRY(x, c.value(0));
  ArrayRef<int64_t> xs = shapeOf(x);
  if (xs.size() < 3)
    return c.error("input must be [N, C, spatial...]");
  if (*size <= 0 || *size > (int64_t(1) << 20))
    return c.error("size must be positive (and sane)");
  Type e = elemOf(x);
  // Sum of squares over a channel window = size * avg-pool (padding
  // counted) over [N, 1, C, H*W].
  int64_t spatial = product(xs.drop_front(2));
  TRY(sq, c.binary(BinaryKind::mul, x, x));
  TRY(sq4, c.reshape(sq, {xs[0], 1, xs[1], spatial}));
  int64_t lo = (*size - 1) / 2, hi = *size - 1 - lo;
  TRY(avg, c.create<PoolOp>(PoolKindAttr::get(c.ctx, PoolKind::avg), sq4,
                            c.b.getDenseI64ArrayAttr({*size, 1}),
                            c.b.getDenseI64ArrayAttr({1, 1}),
                            c.b.getDenseI64ArrayAttr({lo, 0, hi, 0}),
                            c.b.getDenseI64ArrayAttr({1, 1}), UnitAttr(),
                            c.b.getUnitAttr()));
  TRY(avgX, c.reshape(avg, xs));
  // (bias + alpha / size * sum)^beta = (bias + alpha * avg)^beta
  TRY(scaled, c.binary(BinaryKind::mul, avgX, c.scalar(e, *alpha)));
  TRY(base, c.binary(BinaryKind::add, scaled, c.scalar(e, *bias)));
  TRY(den, c.binary(BinaryKind::pow, base, c.scalar(e, *beta)));
  TRY(y, c.binary(BinaryKind::div, x, den));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertMeanVarianceNormalization(NodeContext &c) {
  FailureOr<std::optional<SmallVector<int64_t>>> axesAttr = c.attrInts("axes");
  if (failed(axesAttr))
    return failure();
  TRY(x, c.value(0));
  if (!isa<FloatType>(elemOf(x)))
    return c.error("expects a float tensor");
  SmallVector<int64_t> axes =
      axesAttr->value_or(SmallVector<int64_t>{0, 2, 3});
  FailureOr<SmallVector<int64_t>> norm =
      normalizeAxes(c, axes, shapeOf(x).size());
  if (failed(norm))
    return failure();
  Type e = elemOf(x);
  // (x - mean) / (sqrt(mean((x - mean)^2)) + 1e-9), as the ONNX function.
  TRY(mean, c.reduce(ReduceKind::mean, x, *norm, true));
  TRY(d, c.binary(BinaryKind::sub, x, mean));
  TRY(d2, c.binary(BinaryKind::mul, d, d));
  TRY(var, c.reduce(ReduceKind::mean, d2, *norm, true));
  TRY(sd, c.unary(UnaryKind::sqrt, var));
  TRY(den, c.binary(BinaryKind::add, sd, c.scalar(e, 1e-9)));
  TRY(y, c.binary(BinaryKind::div, d, den));
  c.setResult(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// NegativeLogLikelihoodLoss of log-probabilities `logp` [N, C, d...] and
/// integer `target` [N, d...], with optional class `weight` [C]. The class
/// pick is a one-hot mask (target == iota over C), so no gather is needed.
static FailureOr<Value> nllLoss(NodeContext &c, Value logp, Value target,
                                Value weight) {
  FailureOr<std::string> reduction = c.attrString("reduction", "mean");
  FailureOr<std::optional<int64_t>> ignore = c.attrIntOpt("ignore_index");
  if (failed(reduction) || failed(ignore))
    return failure();
  if (*reduction != "none" && *reduction != "sum" && *reduction != "mean") {
    (void)c.error("unknown reduction '" + *reduction + "'");
    return failure();
  }
  ArrayRef<int64_t> ls = shapeOf(logp), ts = shapeOf(target);
  int64_t rank = ls.size();
  if (rank < 2 || int64_t(ts.size()) != rank - 1 || ts[0] != ls[0] ||
      ts.drop_front() != ls.drop_front(2)) {
    (void)c.error("input must be [N, C, d...] and target [N, d...], got " +
                  shapeStr(ls) + " and " + shapeStr(ts));
    return failure();
  }
  Type te = elemOf(target);
  if (!isa<IntegerType>(te) || te.isInteger(1)) {
    (void)c.error("target must be an integer tensor");
    return failure();
  }
  Type e = elemOf(logp);
  int64_t classes = ls[1];
  if (classes > kMaxFoldElements) {
    (void)c.unsupported("more than " + Twine(kMaxFoldElements) + " classes");
    return failure();
  }
  SmallVector<int64_t> tu(ts);
  tu.insert(tu.begin() + 1, 1);
  TRY(t1, c.reshape(target, tu));
  TRY(mask, c.compare(ComparePredicate::eq, t1,
                      c.constant(iotaAlong(typeToDType(te), rank, 1,
                                           classes))));
  TRY(sel, c.where(mask, logp, c.scalar(e, 0)));
  TRY(picked, c.reduce(ReduceKind::sum, sel, {1}, false));
  Value w;
  if (weight) {
    if (shapeOf(weight) != ArrayRef<int64_t>{classes}) {
      (void)c.error("weight must be [C]");
      return failure();
    }
    SmallVector<int64_t> ws(rank, 1);
    ws[1] = classes;
    TRY(w1, c.reshape(weight, ws));
    TRY(wsel, c.where(mask, w1, c.scalar(e, 0)));
    TRY(wt, c.reduce(ReduceKind::sum, wsel, {1}, false));
    w = wt;
  }
  if (*ignore) {
    TRY(valid, c.compare(ComparePredicate::ne, target,
                         c.scalar(te, double(**ignore))));
    TRY(wv, c.where(valid, w ? w : c.scalar(e, 1), c.scalar(e, 0)));
    w = wv;
  }
  TRY(neg, c.unary(UnaryKind::neg, picked));
  Value loss = neg;
  if (w) {
    TRY(lw, c.binary(BinaryKind::mul, neg, w));
    loss = lw;
  }
  if (*reduction == "none")
    return loss;
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < rank - 1; ++d)
    all.push_back(d);
  if (*reduction == "sum" || !w) {
    return c.reduce(*reduction == "sum" ? ReduceKind::sum : ReduceKind::mean,
                    loss, all, false);
  }
  TRY(num, c.reduce(ReduceKind::sum, loss, all, false));
  TRY(wb, c.expand(w, shapeOf(loss)));
  TRY(den, c.reduce(ReduceKind::sum, wb, all, false));
  return c.binary(BinaryKind::div, num, den);
}

LogicalResult onnx_import::convertNegativeLogLikelihoodLoss(NodeContext &c) {
  TRY(logp, c.value(0));
  TRY(target, c.value(1));
  Value weight;
  if (c.hasInput(2)) {
    TRY(wv, c.value(2));
    weight = wv;
  }
  TRY(y, nllLoss(c, logp, target, weight));
  c.setResult(0, y);
  return success();
}

LogicalResult onnx_import::convertSoftmaxCrossEntropyLoss(NodeContext &c) {
  TRY(scores, c.value(0));
  TRY(labels, c.value(1));
  if (shapeOf(scores).size() < 2)
    return c.error("scores must be [N, C, d...]");
  Value weight;
  if (c.hasInput(2)) {
    TRY(wv, c.value(2));
    weight = wv;
  }
  TRY(logp, c.create<SoftmaxOp>(scores, c.b.getI64IntegerAttr(1),
                                c.b.getUnitAttr()));
  TRY(y, nllLoss(c, logp, labels, weight));
  c.setResult(0, y);
  c.setResult(1, logp);
  return success();
}
