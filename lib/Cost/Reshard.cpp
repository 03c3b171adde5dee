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
    steps.push_back({CollectiveKind::ReduceScatter, reduceScatter, local()});
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
    steps.push_back({CollectiveKind::AllGather, gathered, local()});
  }
  // 4. Axes only the target splits on: each device slices locally, free.
  return steps;
}

double loom::rearrangeSeconds(const DeviceSpec &device, double bytes) {
  if (bytes <= 0)
    return 0;
  return 2 * bytes / (device.memoryBandwidth * device.eff(OpClass::DataMovement).memory);
}
