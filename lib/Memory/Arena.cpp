//===- Arena.cpp - static offsets for buffers with known lifetimes --------===//
//
// Greedy by size (TFLite's and XLA's heuristic family): large buffers first,
// since they are the hardest to fit, each at the lowest gap among the
// time-overlapping buffers already placed. The live bound comes from a sweep
// over interval ends.
//
//===----------------------------------------------------------------------===//

#include "loom/Memory/Arena.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <numeric>

using namespace loom::memory;

namespace {

int64_t aligned(int64_t bytes, int64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

bool overlapInTime(const Buffer &a, const Buffer &b) {
  return a.start < b.end && b.start < a.end;
}

int64_t liveBound(const std::vector<Buffer> &buffers, int64_t alignment) {
  std::vector<std::pair<int64_t, int64_t>> events; // (position, +-bytes)
  for (const Buffer &b : buffers) {
    if (b.end <= b.start || b.bytes <= 0)
      continue;
    events.push_back({b.start, aligned(b.bytes, alignment)});
    events.push_back({b.end, -aligned(b.bytes, alignment)});
  }
  // Ends before starts at the same position: [start, end) intervals.
  llvm::sort(events, [](auto &x, auto &y) {
    return x.first != y.first ? x.first < y.first : x.second < y.second;
  });
  int64_t live = 0, peak = 0;
  for (auto [pos, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return peak;
}

} // namespace

ArenaPlan loom::memory::assignOffsets(const std::vector<Buffer> &buffers,
                                      int64_t alignment) {
  ArenaPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  llvm::stable_sort(order, [&](size_t x, size_t y) {
    const Buffer &a = buffers[x], &b = buffers[y];
    if (a.bytes != b.bytes)
      return a.bytes > b.bytes;
    return a.end - a.start > b.end - b.start;
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const Buffer &b = buffers[i];
    int64_t size = aligned(b.bytes, alignment);
    if (size == 0 || b.end <= b.start) {
      continue; // never live: offset 0, takes no room
    }
    // Occupied ranges of buffers live at the same time, by offset.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t j : placed)
      if (overlapInTime(b, buffers[j]))
        busy.push_back({plan.offsets[j],
                        plan.offsets[j] + aligned(buffers[j].bytes, alignment)});
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [lo, hi] : busy) {
      if (lo - offset >= size)
        break;
      offset = std::max(offset, hi);
    }
    plan.offsets[i] = offset;
    plan.arenaBytes = std::max(plan.arenaBytes, offset + size);
    placed.push_back(i);
  }
  plan.liveBound = liveBound(buffers, alignment);
  return plan;
}

llvm::Error loom::memory::checkArena(const std::vector<Buffer> &buffers,
                                     const ArenaPlan &plan, int64_t alignment) {
  auto fail = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  if (plan.offsets.size() != buffers.size())
    return fail(llvm::formatv("the plan has {0} offsets for {1} buffers",
                              plan.offsets.size(), buffers.size()));
  for (auto [i, b] : llvm::enumerate(buffers)) {
    int64_t off = plan.offsets[i];
    if (off % alignment || off < 0 ||
        off + aligned(b.bytes, alignment) > plan.arenaBytes)
      return fail(llvm::formatv("buffer '{0}' at offset {1} ({2} bytes) is "
                                "misaligned or outside the {3}-byte arena",
                                b.name, off, b.bytes, plan.arenaBytes));
  }
  for (size_t i = 0; i < buffers.size(); ++i)
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const Buffer &a = buffers[i], &b = buffers[j];
      if (a.bytes <= 0 || b.bytes <= 0 || !overlapInTime(a, b))
        continue;
      int64_t ea = plan.offsets[i] + aligned(a.bytes, alignment),
              eb = plan.offsets[j] + aligned(b.bytes, alignment);
      if (plan.offsets[i] < eb && plan.offsets[j] < ea)
        return fail(llvm::formatv("buffers '{0}' and '{1}' are live together "
                                  "and share bytes",
                                  a.name, b.name));
    }
  if (plan.liveBound != liveBound(buffers, alignment))
    return fail("the plan's live bound is not the buffers' peak");
  return llvm::Error::success();
}
