//===- Reshard.cpp - collectives that move a tensor between shardings -----===//

#include "loom/Cost/Reshard.h"

#include "llvm/ADT/STLExtras.h"

using namespace loom;

static bool contains(llvm::ArrayRef<int16_t> axes, int16_t a) {
  return llvm::is_contained(axes, a);
}

/// Dimension that splits on axis `a`, or -1.
static int dimOf(const TensorLayout &layout, int16_t a) {
  for (auto [d, axes] : llvm::enumerate(layout.splitAxes))
    if (contains(axes, a))
      return static_cast<int>(d);
  return -1;
}

llvm::SmallVector<CollectiveStep>
loom::reshardSteps(double fullBytes, const TensorLayout &from,
                   const TensorLayout &to,
                   llvm::function_ref<int64_t(int16_t)> axisSize) {
  llvm::SmallVector<CollectiveStep> steps;
  // The local size as the layout evolves: full size over the split axes.
  double split = 1;
  for (const GridAxes &axes : from.splitAxes)
    for (int16_t a : axes)
      split *= static_cast<double>(axisSize(a));
  auto local = [&] { return fullBytes / split; };

  // 1. Partial sums: reduce-scatter where the target splits on the axis (the
  //    scatter lands the data split), all-reduce elsewhere.
  GridAxes reduceScatter, allReduce;
  for (int16_t a : from.partialAxes) {
    if (contains(to.partialAxes, a))
      continue;
    if (dimOf(to, a) >= 0 && dimOf(from, a) < 0)
      reduceScatter.push_back(a);
    else
      allReduce.push_back(a);
  }
  if (!allReduce.empty())
    steps.push_back({CollectiveKind::AllReduce, allReduce, local()});
  if (!reduceScatter.empty()) {
    CollectiveStep step{CollectiveKind::ReduceScatter, reduceScatter, local()};
    // The runtime scatters leading blocks: packed first off the leading dim.
    if (llvm::any_of(reduceScatter, [&](int16_t a) { return dimOf(to, a) != 0; }))
      step.rearrangedBytes = local();
    steps.push_back(step);
    for (int16_t a : reduceScatter)
      split *= static_cast<double>(axisSize(a));
  }

  // 2. Axes that change dimension: one all-to-all over all of them.
  GridAxes moved;
  bool pack = false, unpack = false;
  for (const GridAxes &axes : from.splitAxes)
    for (int16_t a : axes) {
      int src = dimOf(from, a), dst = dimOf(to, a);
      if (dst >= 0 && dst != src) {
        moved.push_back(a);
        pack |= dst != 0;
        unpack |= src != 0;
      }
    }
  if (!moved.empty()) {
    CollectiveStep step{CollectiveKind::AllToAll, moved, local()};
    step.rearrangedBytes = (double(pack) + double(unpack)) * local();
    steps.push_back(step);
  }

  // 3. Axes the target no longer splits on: all-gather (bytes = output).
  GridAxes gathered;
  for (const GridAxes &axes : from.splitAxes)
    for (int16_t a : axes)
      if (dimOf(to, a) < 0)
        gathered.push_back(a);
  if (!gathered.empty()) {
    for (int16_t a : gathered)
      split /= static_cast<double>(axisSize(a));
    CollectiveStep step{CollectiveKind::AllGather, gathered, local()};
    // The runtime stacks the gathered blocks leading: unpacked after when
    // they belong to another dimension (the mirror of the scatter's pack).
    if (llvm::any_of(gathered, [&](int16_t a) { return dimOf(from, a) != 0; }))
      step.rearrangedBytes = local();
    steps.push_back(step);
  }
  // 4. Axes only the target splits on: each device slices locally, free.
  return steps;
}

llvm::SmallVector<CollectiveStep, 2>
loom::gradientSyncSteps(const CollectiveStep &step, bool zero) {
  if (!zero || step.kind != CollectiveKind::AllReduce)
    return {step};
  CollectiveStep reduce = step, gather = step;
  reduce.kind = CollectiveKind::ReduceScatter;
  gather.kind = CollectiveKind::AllGather;
  // Each shard is contiguous on its owner: nothing to pack around either.
  reduce.rearrangedBytes = gather.rearrangedBytes = 0;
  return {reduce, gather};
}

int loom::reductionScatterDim(const TensorLayout &from, const TensorLayout &to,
                              llvm::ArrayRef<int16_t> axes) {
  if (axes.empty() || !from.partialAxes.empty() || !to.partialAxes.empty())
    return -1;
  SplitDims f = trimmedDims(from.splitAxes), t = trimmedDims(to.splitAxes);
  int dim = -1;
  for (size_t d = 0; d < t.size(); ++d) {
    llvm::ArrayRef<int16_t> have =
        d < f.size() ? llvm::ArrayRef<int16_t>(f[d]) : llvm::ArrayRef<int16_t>();
    if (llvm::ArrayRef<int16_t>(t[d]) == have)
      continue;
    if (dim >= 0 || t[d].size() != have.size() + axes.size() ||
        llvm::ArrayRef<int16_t>(t[d]).take_front(have.size()) != have ||
        llvm::ArrayRef<int16_t>(t[d]).drop_front(have.size()) != axes)
      return -1;
    dim = static_cast<int>(d);
  }
  // A dimension `to` leaves unsplit that `from` splits is a gather, not this.
  return f.size() > t.size() ? -1 : dim;
}

CollectiveStep loom::reductionStep(llvm::ArrayRef<int16_t> axes,
                                   double localBytes, int scatterDim) {
  CollectiveStep step{scatterDim < 0 ? CollectiveKind::AllReduce
                                     : CollectiveKind::ReduceScatter,
                      GridAxes(axes.begin(), axes.end()), localBytes};
  if (scatterDim > 0)
    step.rearrangedBytes = localBytes;
  return step;
}

double loom::rearrangeSeconds(const DeviceSpec &device, double bytes) {
  if (bytes <= 0)
    return 0;
  return 2 * bytes / (device.memoryBandwidth * device.eff(OpClass::DataMovement).memory);
}

loom::SplitDims loom::trimmedDims(const SplitDims &dims) {
  SplitDims d(dims);
  while (!d.empty() && d.back().empty())
    d.pop_back();
  return d;
}

/// Whether upstream `shard-partition` can turn a value laid out as `from`
/// into `to` (split axes only; partial sums are reduced by the producing op).
/// Upstream reshards in exactly one step, chosen by the first pattern that
/// matches: move the last axis of one dimension to the end of another (an
/// all-to-all), append one axis to a dimension (a local slice), or drop the
/// last axis of a dimension (an all-gather); trailing axes are accepted here
/// too, one all-gather each (loom-partition chains them). Any other change, or a
/// pattern that matches but does not land on `to`, is a resharding it cannot
/// express (and, built without assertions, crashes on),
bool loom::upstreamReshardable(const TensorLayout &from, const TensorLayout &to) {
  using Dims = SplitDims;
  Dims src = trimmedDims(from.splitAxes), dst = trimmedDims(to.splitAxes);
  if (src == dst)
    return true;
  auto at = [](const Dims &d, size_t i) { return i < d.size() ? d[i] : GridAxes(); };
  auto lands = [&](const Dims &result) { return trimmedDims(result) == dst; };
  auto prefixEqual = [](llvm::ArrayRef<int16_t> a, llvm::ArrayRef<int16_t> b) {
    return a.drop_back() == b.drop_back();
  };
  // Move the last axis of dimension s to the end of dimension t.
  for (size_t s = 0; s < src.size(); ++s)
    for (size_t t = 0; t < dst.size(); ++t) {
      if (s == t || src[s].empty() || dst[t].empty() ||
          src[s].back() != dst[t].back() || !prefixEqual(src[s], dst[t]))
        continue;
      Dims r = src;
      r.resize(std::max(r.size(), t + 1));
      r[t].push_back(r[s].back());
      r[s].pop_back();
      return lands(r);
    }
  // Append one axis to a dimension.
  for (size_t d = 0; d < dst.size(); ++d) {
    GridAxes a = at(src, d);
    if (a.size() + 1 != dst[d].size() || !llvm::equal(a, llvm::ArrayRef(dst[d]).drop_back()))
      continue;
    Dims r = src;
    r.resize(std::max(r.size(), d + 1));
    r[d].push_back(dst[d].back());
    return lands(r);
  }
  // Drop trailing axes of a dimension.
  for (size_t d = 0; d < src.size(); ++d) {
    GridAxes b = at(dst, d);
    if (src[d].size() <= b.size() || !llvm::equal(b, llvm::ArrayRef(src[d]).take_front(b.size())))
      continue;
    Dims r = src;
    r[d].resize(b.size());
    return lands(r);
  }
  return false;
}

static size_t axisCount(const SplitDims &dims) {
  size_t n = 0;
  for (const GridAxes &axes : dims)
    n += axes.size();
  return n;
}

bool loom::upstreamOneStep(const TensorLayout &from, const TensorLayout &to) {
  return upstreamReshardable(from, to) &&
         axisCount(from.splitAxes) <= axisCount(to.splitAxes) + 1;
}

bool loom::isAxisMove(const TensorLayout &from, const TensorLayout &to) {
  SplitDims src = trimmedDims(from.splitAxes), dst = trimmedDims(to.splitAxes);
  size_t rank = std::max(src.size(), dst.size());
  src.resize(rank);
  dst.resize(rank);
  llvm::SmallVector<size_t, 2> changed;
  for (size_t d = 0; d < rank; ++d)
    if (src[d] != dst[d])
      changed.push_back(d);
  if (changed.size() != 2)
    return false;
  for (auto [s, t] : {std::make_pair(changed[0], changed[1]),
                      std::make_pair(changed[1], changed[0])}) {
    if (src[s].empty() || dst[t].empty() || src[s].back() != dst[t].back())
      continue;
    GridAxes shorter(src[s].begin(), src[s].end() - 1);
    GridAxes longer(src[t]);
    longer.push_back(src[s].back());
    if (shorter == dst[s] && longer == dst[t])
      return true;
  }
  return false;
}

llvm::SmallVector<SplitDims> loom::reshardPath(SplitDims cur, SplitDims to) {
  size_t rank = std::max(cur.size(), to.size());
  cur.resize(rank);
  to.resize(rank);
  llvm::SmallVector<SplitDims> path;
  for (size_t d = 0; d < rank; ++d) {
    size_t common = 0;
    while (common < cur[d].size() && common < to[d].size() &&
           cur[d][common] == to[d][common])
      ++common;
    while (cur[d].size() > common) {
      cur[d].pop_back();
      path.push_back(trimmedDims(cur));
    }
  }
  for (size_t d = 0; d < rank; ++d)
    while (cur[d].size() < to[d].size()) {
      cur[d].push_back(to[d][cur[d].size()]);
      path.push_back(trimmedDims(cur));
    }
  return path;
}
