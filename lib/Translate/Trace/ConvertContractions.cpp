//===- ConvertContractions.cpp - trace contractions to loom ---------------===//
//
// linear, matmul, bmm, einsum, conv2d and scaled_dot_product_attention.
//
// `linear` is `matmul(x, transpose(w)) + b` (the weight is [out, in]; its
// transpose is built once per weight). `matmul` follows numpy for 1-D
// operands. `einsum` is lowered exactly for every explicit equation: repeated
// labels take diagonals (a strided slice of the flattened pair), labels used
// by one operand only are summed out, and each pair of operands becomes one
// batched `loom.matmul` between transposes and reshapes. Attention of any rank
// is brought to loom.attention's [B, H, L, E]; causal masking with L != S
// (top-left aligned, as PyTorch) becomes an explicit mask.
//
//===----------------------------------------------------------------------===//

#include "TraceImporter.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::trace_import;

static int64_t product(llvm::ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

//===----------------------------------------------------------------------===//
// linear, matmul, bmm
//===----------------------------------------------------------------------===//

static LogicalResult convertLinear(NodeContext &cx) {
  if (failed(cx.expectOperands(2, 3)))
    return failure();
  Value x = cx.tensor(0, "input"), w = cx.tensor(1, "weight");
  if (!x || !w)
    return failure();
  FailureOr<Value> bias = cx.optionalTensor(2, "bias");
  if (failed(bias))
    return failure();
  if (rankOf(w) != 2)
    return cx.fail("the weight must be [out_features, in_features], got " +
                   shapeString(shapeOf(w)));
  if (rankOf(x) < 1)
    return cx.fail("the input must have rank >= 1");
  int64_t k = shapeOf(x).back(), n = shapeOf(w)[0];
  if (k != shapeOf(w)[1])
    return cx.fail("the input has " + llvm::Twine(k) +
                   " features but the weight " + shapeString(shapeOf(w)) +
                   " expects " + llvm::Twine(shapeOf(w)[1]));
  Value wt = cx.transposedWeight(w);
  Value y;
  if (rankOf(x) == 1)
    y = cx.reshape(cx.matmul(cx.reshape(x, {1, k}), wt), {n});
  else
    y = cx.matmul(x, wt);
  if (*bias)
    y = cx.binary(BinaryKind::add, y, *bias);
  return cx.result(y);
}

static LogicalResult convertMatmul(NodeContext &cx) {
  if (failed(cx.expectOperands(2, 2)))
    return failure();
  Value a = cx.tensor(0, "a"), b = cx.tensor(1, "b");
  if (!a || !b)
    return failure();
  int64_t ra = rankOf(a), rb = rankOf(b);
  if (ra == 0 || rb == 0)
    return cx.fail("matmul operands must have rank >= 1");
  // numpy: a 1-D lhs is a row, a 1-D rhs a column; that dim is then dropped.
  Value a2 = ra == 1 ? cx.reshape(a, {1, shapeOf(a)[0]}) : a;
  Value b2 = rb == 1 ? cx.reshape(b, {shapeOf(b)[0], 1}) : b;
  Value y = cx.matmul(a2, b2);
  if (!y)
    return failure();
  SmallVector<int64_t> shape(shapeOf(y));
  if (rb == 1)
    shape.pop_back();
  if (ra == 1)
    shape.erase(shape.end() - (rb == 1 ? 1 : 2));
  return cx.result(cx.reshape(y, shape));
}

static LogicalResult convertBmm(NodeContext &cx) {
  if (failed(cx.expectOperands(2, 2)))
    return failure();
  Value a = cx.tensor(0, "a"), b = cx.tensor(1, "b");
  if (!a || !b)
    return failure();
  if (rankOf(a) != 3 || rankOf(b) != 3 || shapeOf(a)[0] != shapeOf(b)[0])
    return cx.fail("bmm needs [B, M, K] and [B, K, N] operands, got " +
                   shapeString(shapeOf(a)) + " and " + shapeString(shapeOf(b)));
  return cx.result(cx.matmul(a, b));
}

//===----------------------------------------------------------------------===//
// einsum
//===----------------------------------------------------------------------===//

namespace {
/// An einsum operand: a value and one label per dim.
struct Term {
  Value value;
  std::string labels;
};

class EinsumLowering {
public:
  EinsumLowering(NodeContext &cx, std::string equation)
      : cx(cx), equation(std::move(equation)) {}

  LogicalResult run();

private:
  LogicalResult fail(const llvm::Twine &msg) {
    return cx.fail("einsum '" + equation + "': " + msg);
  }
  LogicalResult takeDiagonals(Term &t);
  LogicalResult sumOut(Term &t, llvm::function_ref<bool(char)> keep);
  LogicalResult combine(Term &a, Term &b, const std::string &keep);
  int64_t sizeOf(const Term &t, char label) const {
    return shapeOf(t.value)[t.labels.find(label)];
  }

  NodeContext &cx;
  std::string equation;
};
} // namespace

LogicalResult EinsumLowering::takeDiagonals(Term &t) {
  for (size_t p = 0; p < t.labels.size(); ++p) {
    size_t q = t.labels.find(t.labels[p], p + 1);
    if (q == std::string::npos)
      continue;
    llvm::ArrayRef<int64_t> shape = shapeOf(t.value);
    int64_t n = shape[p];
    if (shape[q] != n)
      return fail("label '" + llvm::Twine(t.labels[p]) +
                  "' is repeated with sizes " + llvm::Twine(n) + " and " +
                  llvm::Twine(shape[q]));
    // Move the pair last, flatten it and take every (n+1)-th element.
    SmallVector<int64_t> perm, rest;
    std::string labels;
    for (size_t d = 0; d < t.labels.size(); ++d)
      if (d != p && d != q) {
        perm.push_back(d);
        rest.push_back(shape[d]);
        labels += t.labels[d];
      }
    perm.push_back(p);
    perm.push_back(q);
    Value v = cx.transpose(t.value, perm);
    SmallVector<int64_t> flat(rest);
    flat.push_back(n * n);
    v = cx.reshape(v, flat);
    if (!v)
      return failure();
    v = cx.slice(v, rest.size(), 0, n, n + 1);
    if (!v)
      return failure();
    t.value = v;
    t.labels = labels + t.labels[p];
    p = size_t(-1); // rescan: labels moved
  }
  return success();
}

LogicalResult EinsumLowering::sumOut(Term &t,
                                     llvm::function_ref<bool(char)> keep) {
  SmallVector<int64_t> axes;
  std::string labels;
  for (size_t d = 0; d < t.labels.size(); ++d) {
    if (keep(t.labels[d]))
      labels += t.labels[d];
    else
      axes.push_back(d);
  }
  if (axes.empty())
    return success();
  t.value = cx.reduce(ReduceKind::sum, t.value, axes, /*keepDims=*/false);
  t.labels = labels;
  return success(bool(t.value));
}

LogicalResult EinsumLowering::combine(Term &a, Term &b,
                                      const std::string &keep) {
  auto kept = [&](char c) { return keep.find(c) != std::string::npos; };
  auto inA = [&](char c) { return a.labels.find(c) != std::string::npos; };
  auto inB = [&](char c) { return b.labels.find(c) != std::string::npos; };
  if (failed(sumOut(a, [&](char c) { return kept(c) || inB(c); })) ||
      failed(sumOut(b, [&](char c) { return kept(c) || inA(c); })))
    return failure();

  std::string batch, contract, m, n;
  for (char c : a.labels) {
    if (!inB(c))
      m += c;
    else if (kept(c))
      batch += c;
    else
      contract += c;
  }
  for (char c : b.labels)
    if (!inA(c))
      n += c;

  // A contracted label of size 1 on one side broadcasts against the other.
  for (char c : contract) {
    int64_t sa = sizeOf(a, c), sb = sizeOf(b, c);
    if (sa == sb)
      continue;
    if (sa != 1 && sb != 1)
      return fail("label '" + llvm::Twine(c) + "' has sizes " +
                  llvm::Twine(sa) + " and " + llvm::Twine(sb));
    Term &small = sa == 1 ? a : b;
    SmallVector<int64_t> shape(shapeOf(small.value));
    shape[small.labels.find(c)] = std::max(sa, sb);
    small.value = cx.expand(small.value, shape);
    if (!small.value)
      return failure();
  }
  for (char c : batch) {
    int64_t sa = sizeOf(a, c), sb = sizeOf(b, c);
    if (sa != sb && sa != 1 && sb != 1)
      return fail("label '" + llvm::Twine(c) + "' has sizes " +
                  llvm::Twine(sa) + " and " + llvm::Twine(sb));
  }

  auto permFor = [](const Term &t, const std::string &order) {
    SmallVector<int64_t> perm;
    for (char c : order)
      perm.push_back(t.labels.find(c));
    return perm;
  };
  auto sizes = [](const Term &t, const std::string &labels) {
    SmallVector<int64_t> s;
    for (char c : labels)
      s.push_back(shapeOf(t.value)[t.labels.find(c)]);
    return s;
  };
  SmallVector<int64_t> batchA = sizes(a, batch), batchB = sizes(b, batch);
  SmallVector<int64_t> mSizes = sizes(a, m), nSizes = sizes(b, n);
  int64_t k = product(sizes(a, contract));

  Value lhs = cx.transpose(a.value, permFor(a, batch + m + contract));
  SmallVector<int64_t> lhsShape(batchA);
  lhsShape.append({product(mSizes), k});
  lhs = cx.reshape(lhs, lhsShape);
  Value rhs = cx.transpose(b.value, permFor(b, batch + contract + n));
  SmallVector<int64_t> rhsShape(batchB);
  rhsShape.append({k, product(nSizes)});
  rhs = cx.reshape(rhs, rhsShape);
  Value y = cx.matmul(lhs, rhs);
  if (!y)
    return failure();
  SmallVector<int64_t> shape;
  for (auto [sa, sb] : llvm::zip(batchA, batchB))
    shape.push_back(std::max(sa, sb));
  shape.append(mSizes.begin(), mSizes.end());
  shape.append(nSizes.begin(), nSizes.end());
  a.value = cx.reshape(y, shape);
  a.labels = batch + m + n;
  return success(bool(a.value));
}

LogicalResult EinsumLowering::run() {
  size_t arrow = equation.find("->");
  if (arrow == std::string::npos ||
      equation.find("->", arrow + 2) != std::string::npos)
    return fail("the equation must be explicit, with one '->'");
  std::string lhs = equation.substr(0, arrow), out = equation.substr(arrow + 2);
  SmallVector<llvm::StringRef> parts;
  llvm::StringRef(lhs).split(parts, ',');
  SmallVector<std::string> specs;
  for (llvm::StringRef s : parts)
    specs.push_back(s.str());
  if (specs.size() != cx.operands.size())
    return fail("the equation has " + llvm::Twine(specs.size()) +
                " operands but the node has " +
                llvm::Twine(cx.operands.size()) + " inputs");
  auto isLabel = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  };
  for (char c : out) {
    if (!isLabel(c))
      return fail("'" + llvm::Twine(c) +
                  "' is not a label (labels are letters; '...' is not "
                  "supported)");
    if (llvm::count(out, c) > 1)
      return fail("output label '" + llvm::Twine(c) + "' is repeated");
    if (lhs.find(c) == std::string::npos)
      return fail("output label '" + llvm::Twine(c) +
                  "' appears in no operand");
  }

  SmallVector<Term> terms;
  for (auto [i, spec] : llvm::enumerate(specs)) {
    Value v = cx.tensor(i, "operand");
    if (!v)
      return failure();
    for (char c : spec)
      if (!isLabel(c))
        return fail("'" + llvm::Twine(c) +
                    "' is not a label (labels are letters; '...' is not "
                    "supported)");
    if (int64_t(spec.size()) != rankOf(v))
      return fail("operand " + llvm::Twine(i) + " has rank " +
                  llvm::Twine(rankOf(v)) + " but its subscripts '" + spec +
                  "' name " + llvm::Twine(spec.size()) + " dims");
    terms.push_back({v, spec});
  }
  for (Term &t : terms)
    if (failed(takeDiagonals(t)))
      return failure();

  Term acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) {
    std::string keep = out;
    for (size_t j = i + 1; j < terms.size(); ++j)
      keep += terms[j].labels;
    if (failed(combine(acc, terms[i], keep)))
      return failure();
  }
  if (failed(sumOut(acc,
                    [&](char c) { return out.find(c) != std::string::npos; })))
    return failure();
  SmallVector<int64_t> perm;
  for (char c : out)
    perm.push_back(acc.labels.find(c));
  return cx.result(cx.transpose(acc.value, perm));
}

static LogicalResult convertEinsum(NodeContext &cx) {
  FailureOr<std::string> equation = cx.stringAttr("equation");
  if (failed(equation))
    return failure();
  if (cx.operands.empty())
    return cx.fail("einsum needs at least one operand");
  std::string eq;
  for (char c : *equation)
    if (c != ' ')
      eq += c;
  return EinsumLowering(cx, eq).run();
}

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

static LogicalResult convertConv2d(NodeContext &cx) {
  if (failed(cx.expectOperands(2, 3)))
    return failure();
  Value x = cx.tensor(0, "input"), w = cx.tensor(1, "weight");
  if (!x || !w)
    return failure();
  FailureOr<Value> bias = cx.optionalTensor(2, "bias");
  auto stride = cx.intListAttr("stride", 2, 1, kMaxWindow);
  auto padding = cx.intListAttr("padding", 2, 0, kMaxWindow);
  auto dilation = cx.intListAttr("dilation", 2, 1, kMaxWindow);
  auto groups = cx.intAttr("groups", 1);
  if (failed(bias) || failed(stride) || failed(padding) || failed(dilation) ||
      failed(groups))
    return failure();
  if (rankOf(x) != 4 || rankOf(w) != 4)
    return cx.fail("conv2d needs a [N, C, H, W] input and a [O, C/groups, "
                   "kh, kw] weight, got " +
                   shapeString(shapeOf(x)) + " and " + shapeString(shapeOf(w)));
  SmallVector<Value> operands = {x, w};
  if (*bias)
    operands.push_back(*bias);
  int64_t ph = (*padding)[0], pw = (*padding)[1];
  return cx.result(
      cx.inferred<ConvOp>(operands, {cx.arrayAttr("strides", *stride),
                                     cx.arrayAttr("padding", {ph, pw, ph, pw}),
                                     cx.arrayAttr("dilations", *dilation),
                                     cx.i64Attr("groups", *groups)}));
}

//===----------------------------------------------------------------------===//
// scaled_dot_product_attention
//===----------------------------------------------------------------------===//

static LogicalResult convertAttention(NodeContext &cx) {
  if (failed(cx.expectOperands(3, 4)))
    return failure();
  Value q = cx.tensor(0, "query"), k = cx.tensor(1, "key"),
        v = cx.tensor(2, "value");
  if (!q || !k || !v)
    return failure();
  FailureOr<Value> mask = cx.optionalTensor(3, "attn_mask");
  FailureOr<bool> causal = cx.boolAttr("is_causal");
  FailureOr<double> scale = cx.floatAttr("scale");
  if (failed(mask) || failed(causal) || failed(scale))
    return failure();
  int64_t rank = rankOf(q);
  if (rank < 2 || rankOf(k) != rank || rankOf(v) != rank)
    return cx.fail("query, key and value must have the same rank >= 2, got " +
                   shapeString(shapeOf(q)) + ", " + shapeString(shapeOf(k)) +
                   " and " + shapeString(shapeOf(v)));
  llvm::ArrayRef<int64_t> lead = shapeOf(q).drop_back(2);
  if (shapeOf(k).drop_back(2) != lead || shapeOf(v).drop_back(2) != lead)
    return cx.fail("query, key and value must have equal leading dims, got " +
                   shapeString(shapeOf(q)) + ", " + shapeString(shapeOf(k)) +
                   " and " + shapeString(shapeOf(v)));
  if (!std::isfinite(*scale))
    return cx.fail("the scale must be finite");
  int64_t L = shapeOf(q)[rank - 2], S = shapeOf(k)[rank - 2];

  // loom.attention is [B, H, L, E]: fold any other leading dims into B, H.
  int64_t B = 1, H = 1;
  if (rank == 3)
    B = lead[0];
  if (rank >= 4) {
    B = product(lead.drop_back());
    H = lead.back();
  }
  auto to4d = [&](Value t) {
    llvm::ArrayRef<int64_t> s = shapeOf(t);
    return cx.reshape(t, {B, H, s[rank - 2], s[rank - 1]});
  };
  Value q4 = to4d(q), k4 = to4d(k), v4 = to4d(v);
  Value m = *mask;
  if (m && rank != 4) {
    SmallVector<int64_t> scores(lead);
    scores.append({L, S});
    auto full = broadcastShapes(scores, shapeOf(m));
    if (failed(full) ||
        llvm::ArrayRef<int64_t>(*full) != llvm::ArrayRef<int64_t>(scores))
      return cx.fail("the mask " + shapeString(shapeOf(m)) +
                     " does not broadcast to the scores " +
                     shapeString(scores));
    m = cx.reshape(cx.expand(m, scores), {B, H, L, S});
  }

  bool causalAttr = *causal;
  if (*causal && L != S) {
    // PyTorch's is_causal keeps key j for query i when j <= i (top-left).
    Type i64 = cx.b.getI64Type();
    Value keep = cx.compare(ComparePredicate::ge, cx.iota(L, 2, 0, i64),
                            cx.iota(S, 2, 1, i64));
    if (!keep)
      return failure();
    if (!m) {
      m = keep;
    } else if (elemOf(m).isInteger(1)) {
      m = cx.binary(BinaryKind::logical_and, m, keep);
    } else {
      Value ninf = cx.scalarConstant(Scalar::ofFloat(-INFINITY), elemOf(m));
      m = cx.where(keep, m, ninf);
    }
    if (!m)
      return failure();
    causalAttr = false;
  }

  SmallVector<Value> operands = {q4, k4, v4};
  if (m)
    operands.push_back(m);
  for (Value o : operands)
    if (!o)
      return failure();
  SmallVector<NamedAttribute> attrs = {cx.f64Attr("scale", *scale)};
  if (causalAttr)
    attrs.push_back(cx.namedAttr("causal", cx.b.getUnitAttr()));
  Value out = cx.inferred<AttentionOp>(operands, attrs);
  if (!out)
    return failure();
  SmallVector<int64_t> shape(lead);
  shape.append({L, shapeOf(v)[rank - 1]});
  return cx.result(cx.reshape(out, shape));
}

void trace_import::addContractionConversions(ConvertTable &table) {
  table["linear"] = convertLinear;
  table["matmul"] = convertMatmul;
  table["bmm"] = convertBmm;
  table["einsum"] = convertEinsum;
  table["conv2d"] = convertConv2d;
  table["scaled_dot_product_attention"] = convertAttention;
}
