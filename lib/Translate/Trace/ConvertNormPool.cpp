//===- ConvertNormPool.cpp - trace pooling and normalization to loom ------===//
//
// max_pool2d, avg_pool2d, adaptive_avg_pool2d, batch_norm and layer_norm.
//
// Pools take [N, C, H, W] (an unbatched [C, H, W] gets a unit batch dim and
// loses it again). adaptive_avg_pool2d is a keep-dims mean for a 1x1 output,
// a plain average pool when the output divides the input, and otherwise its
// exact separable form: for each output row the mean of its (overlapping) bin
// of rows, concatenated, then the same along columns. Norms without affine
// parameters get splat constants (ones for scale, zeros for a batch-norm
// bias).
//
//===----------------------------------------------------------------------===//

#include "TraceImporter.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::trace_import;

/// Largest number of bins per dim of a non-divisible adaptive pool.
static constexpr int64_t kMaxAdaptiveBins = 4096;

/// Runs `pool` on `x` as [N, C, H, W], adding and removing a unit batch dim
/// for an unbatched [C, H, W] input.
static LogicalResult poolNCHW(NodeContext &cx, Value x,
                              llvm::function_ref<Value(Value)> pool) {
  int64_t rank = rankOf(x);
  if (rank != 3 && rank != 4)
    return cx.fail("expects a [N, C, H, W] or [C, H, W] input, got " +
                   shapeString(shapeOf(x)));
  Value in = x;
  if (rank == 3) {
    SmallVector<int64_t> shape = {1};
    llvm::append_range(shape, shapeOf(x));
    in = cx.reshape(x, shape);
  }
  Value y = in ? pool(in) : Value();
  if (y && rank == 3)
    y = cx.reshape(y, shapeOf(y).drop_front());
  return cx.result(y);
}

static LogicalResult convertMaxPool(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 1)))
    return failure();
  Value x = cx.tensor(0, "input");
  auto kernel = cx.intListAttr("kernel_size", 2, 1, kMaxWindow);
  auto stride = cx.intListAttr("stride", 2, 1, kMaxWindow);
  auto padding = cx.intListAttr("padding", 2, 0, kMaxWindow);
  auto dilation = cx.intListAttr("dilation", 2, 1, kMaxWindow);
  auto ceil = cx.boolAttr("ceil_mode");
  if (!x || failed(kernel) || failed(stride) || failed(padding) ||
      failed(dilation) || failed(ceil))
    return failure();
  int64_t ph = (*padding)[0], pw = (*padding)[1];
  return poolNCHW(cx, x, [&](Value in) {
    SmallVector<NamedAttribute> attrs = {
        cx.namedAttr("kind", PoolKindAttr::get(cx.getContext(), PoolKind::max)),
        cx.arrayAttr("kernel", *kernel), cx.arrayAttr("strides", *stride),
        cx.arrayAttr("padding", {ph, pw, ph, pw}),
        cx.arrayAttr("dilations", *dilation)};
    if (*ceil)
      attrs.push_back(cx.namedAttr("ceil_mode", cx.b.getUnitAttr()));
    return cx.inferred<PoolOp>({in}, attrs);
  });
}

static LogicalResult convertAvgPool(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 1)))
    return failure();
  Value x = cx.tensor(0, "input");
  auto kernel = cx.intListAttr("kernel_size", 2, 1, kMaxWindow);
  auto stride = cx.intListAttr("stride", 2, 1, kMaxWindow);
  auto padding = cx.intListAttr("padding", 2, 0, kMaxWindow);
  auto ceil = cx.boolAttr("ceil_mode");
  auto includePad = cx.boolAttr("count_include_pad");
  if (!x || failed(kernel) || failed(stride) || failed(padding) ||
      failed(ceil) || failed(includePad))
    return failure();
  int64_t ph = (*padding)[0], pw = (*padding)[1];
  return poolNCHW(cx, x, [&](Value in) {
    SmallVector<NamedAttribute> attrs = {
        cx.namedAttr("kind", PoolKindAttr::get(cx.getContext(), PoolKind::avg)),
        cx.arrayAttr("kernel", *kernel), cx.arrayAttr("strides", *stride),
        cx.arrayAttr("padding", {ph, pw, ph, pw}),
        cx.arrayAttr("dilations", {1, 1})};
    if (*ceil)
      attrs.push_back(cx.namedAttr("ceil_mode", cx.b.getUnitAttr()));
    if (*includePad)
      attrs.push_back(cx.namedAttr("count_include_pad", cx.b.getUnitAttr()));
    return cx.inferred<PoolOp>({in}, attrs);
  });
}

/// Adaptive average pooling of dim `d` of `x` to `out` bins: bin i covers
/// [floor(i*n/out), ceil((i+1)*n/out)).
static Value adaptiveBins(NodeContext &cx, Value x, int64_t d, int64_t out) {
  int64_t n = shapeOf(x)[d];
  if (n == out)
    return x;
  SmallVector<Value> bins;
  for (int64_t i = 0; i < out; ++i) {
    int64_t lo = (i * n) / out, hi = ((i + 1) * n + out - 1) / out;
    Value bin =
        cx.reduce(ReduceKind::mean, cx.slice(x, d, lo, hi - lo), {d}, true);
    if (!bin)
      return Value();
    bins.push_back(bin);
  }
  return cx.concat(bins, d);
}

static LogicalResult convertAdaptiveAvgPool(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 1)))
    return failure();
  Value x = cx.tensor(0, "input");
  auto size = cx.intListAttr("output_size", 2, 1);
  if (!x || failed(size))
    return failure();
  int64_t oh = (*size)[0], ow = (*size)[1];
  return poolNCHW(cx, x, [&](Value in) -> Value {
    int64_t h = shapeOf(in)[2], w = shapeOf(in)[3];
    if (h == 0 || w == 0)
      return cx.failValue("adaptive pooling of an empty input");
    if (oh == 1 && ow == 1)
      return cx.reduce(ReduceKind::mean, in, {2, 3}, /*keepDims=*/true);
    if (oh == h && ow == w)
      return in;
    if (h % oh == 0 && w % ow == 0) {
      int64_t kh = h / oh, kw = w / ow;
      return cx.inferred<PoolOp>(
          {in},
          {cx.namedAttr("kind",
                        PoolKindAttr::get(cx.getContext(), PoolKind::avg)),
           cx.arrayAttr("kernel", {kh, kw}), cx.arrayAttr("strides", {kh, kw}),
           cx.arrayAttr("padding", {0, 0, 0, 0}),
           cx.arrayAttr("dilations", {1, 1})});
    }
    if (oh > kMaxAdaptiveBins || ow > kMaxAdaptiveBins)
      return cx.failValue("an output size " + shapeString(*size) +
                          " that does not divide the input has more than " +
                          llvm::Twine(kMaxAdaptiveBins) + " bins per dim");
    // Each bin's mean of row-means is its mean: the bins are rectangles.
    Value rows = adaptiveBins(cx, in, 2, oh);
    return rows ? adaptiveBins(cx, rows, 3, ow) : Value();
  });
}

static LogicalResult convertBatchNorm(NodeContext &cx) {
  if (failed(cx.expectOperands(3, 5)))
    return failure();
  Value x = cx.tensor(0, "input"), mean = cx.tensor(1, "running_mean"),
        var = cx.tensor(2, "running_var");
  FailureOr<Value> weight = cx.optionalTensor(3, "weight");
  FailureOr<Value> bias = cx.optionalTensor(4, "bias");
  FailureOr<double> eps = cx.floatAttr("eps");
  if (!x || !mean || !var || failed(weight) || failed(bias) || failed(eps))
    return failure();
  if (rankOf(x) < 2)
    return cx.fail("the input must be [N, C, ...], got " +
                   shapeString(shapeOf(x)));
  auto channels = RankedTensorType::get({shapeOf(x)[1]}, elemOf(x));
  Value scale =
      *weight ? *weight : cx.splatConstant(Scalar::ofFloat(1.0), channels);
  Value shift =
      *bias ? *bias : cx.splatConstant(Scalar::ofFloat(0.0), channels);
  if (!scale || !shift)
    return failure();
  return cx.result(cx.inferred<BatchNormOp>({x, scale, shift, mean, var},
                                            {cx.f64Attr("epsilon", *eps)}));
}

static LogicalResult convertLayerNorm(NodeContext &cx) {
  if (failed(cx.expectOperands(1, 3)))
    return failure();
  Value x = cx.tensor(0, "input");
  FailureOr<Value> weight = cx.optionalTensor(1, "weight");
  FailureOr<Value> bias = cx.optionalTensor(2, "bias");
  auto normalized =
      cx.intListAttr("normalized_shape", std::nullopt, 0, kMaxDim);
  FailureOr<double> eps = cx.floatAttr("eps");
  if (!x || failed(weight) || failed(bias) || failed(normalized) || failed(eps))
    return failure();
  int64_t rank = rankOf(x), k = normalized->size();
  if (k == 0 || k > rank ||
      shapeOf(x).take_back(k) != llvm::ArrayRef<int64_t>(*normalized))
    return cx.fail("normalized_shape " + shapeString(*normalized) +
                   " is not a non-empty suffix of the input shape " +
                   shapeString(shapeOf(x)));
  Value scale = *weight;
  if (!scale)
    scale = cx.splatConstant(Scalar::ofFloat(1.0),
                             RankedTensorType::get(*normalized, elemOf(x)));
  if (!scale)
    return failure();
  SmallVector<Value> operands = {x, scale};
  if (*bias)
    operands.push_back(*bias);
  return cx.result(cx.inferred<LayerNormOp>(
      operands, {cx.i64Attr("axis", rank - k), cx.f64Attr("epsilon", *eps)}));
}

void trace_import::addNormPoolConversions(ConvertTable &table) {
  table["max_pool2d"] = convertMaxPool;
  table["avg_pool2d"] = convertAvgPool;
  table["adaptive_avg_pool2d"] = convertAdaptiveAvgPool;
  table["batch_norm"] = convertBatchNorm;
  table["layer_norm"] = convertLayerNorm;
}
