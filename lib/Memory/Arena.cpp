//===- Arena.cpp - static offsets for buffers with known lifetimes --------===//
//
// Greedy by size (TFLite's and XLA's heuristic family): large buffers first,
// since they are the hardest to fit, each at the lowest gap among the
// time-overlapping buffers already placed. The live bound comes from a sweep
// over interval ends.
//
//===----------------------------------------------------------------------===//

#include "loom/Memory/Arena.h"

#include "Sweep.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

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
  return peakHeld(std::move(events)).first;
}

} // namespace

ArenaPlan loom::memory::assignOffsets(const std::vector<Buffer> &buffers,
                                      int64_t alignment) {
  ArenaPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  // Units placed at one offset: a buffer, or a group's members. A unit
  // sorts by its largest member and its summed lifetime.
  std::vector<std::vector<size_t>> units;
  std::map<int, size_t> unitOfGroup;
  for (auto [i, b] : llvm::enumerate(buffers)) {
    if (b.group < 0) {
      units.push_back({i});
      continue;
    }
    auto [it, fresh] = unitOfGroup.try_emplace(b.group, units.size());
    if (fresh)
      units.emplace_back();
    units[it->second].push_back(i);
  }
  auto bytesOf = [&](const std::vector<size_t> &u) {
    int64_t bytes = 0;
    for (size_t i : u)
      bytes = std::max(bytes, buffers[i].bytes);
    return bytes;
  };
  auto lifetimeOf = [&](const std::vector<size_t> &u) {
    int64_t positions = 0;
    for (size_t i : u)
      positions += std::max<int64_t>(0, buffers[i].end - buffers[i].start);
    return positions;
  };
  llvm::stable_sort(units, [&](const auto &x, const auto &y) {
    if (bytesOf(x) != bytesOf(y))
      return bytesOf(x) > bytesOf(y);
    return lifetimeOf(x) > lifetimeOf(y);
  });
  // Placed buffers by blocks of schedule positions, so that finding those
  // live at the same time as a new one does not scan every buffer.
  int64_t first = 0, last = 1;
  for (const Buffer &b : buffers)
    if (b.end > b.start) {
      first = std::min(first, b.start);
      last = std::max(last, b.end);
    }
  int64_t blockSize = std::max<int64_t>(1, (last - first) / 1024 + 1);
  std::vector<std::vector<size_t>> blocks((last - first) / blockSize + 1);
  std::vector<size_t> seenAt(buffers.size(), SIZE_MAX);
  // Buffers spanning many blocks (weights, optimizer state) are kept in one
  // list instead, or every block would hold them all.
  constexpr int64_t kLongBlocks = 8;
  std::vector<size_t> longLived;
  // Buffers live over the whole schedule share with nothing: they stack at
  // the bottom, and the rest is placed above them.
  int64_t floor = 0;
  std::vector<bool> permanent(units.size(), false);
  for (auto [u, members] : llvm::enumerate(units)) {
    const Buffer &b = buffers[members.front()];
    if (members.size() == 1 && b.bytes > 0 && b.start <= first && b.end >= last) {
      permanent[u] = true;
      plan.offsets[members.front()] = floor;
      floor += aligned(b.bytes, alignment);
    }
  }
  plan.arenaBytes = floor;
  for (auto [u, members] : llvm::enumerate(units)) {
    int64_t size = aligned(bytesOf(members), alignment);
    if (size == 0 || permanent[u])
      continue; // never live (offset 0, takes no room), or placed above
    // Occupied ranges of placed buffers live at the same time as a member,
    // by offset. `seenAt` marks those found for this unit.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t i : members) {
      const Buffer &b = buffers[i];
      if (b.end <= b.start)
        continue;
      int64_t lo = (b.start - first) / blockSize, hi = (b.end - 1 - first) / blockSize;
      auto consider = [&](size_t j) {
        if (seenAt[j] != u && overlapInTime(b, buffers[j])) {
          seenAt[j] = u;
          busy.push_back({plan.offsets[j],
                          plan.offsets[j] + aligned(buffers[j].bytes, alignment)});
        }
      };
      for (size_t j : longLived)
        consider(j);
      for (int64_t k = lo; k <= hi; ++k)
        for (size_t j : blocks[k])
          consider(j);
    }
    llvm::sort(busy);
    int64_t offset = floor;
    for (auto [lo, hi] : busy) {
      if (lo - offset >= size)
        break;
      offset = std::max(offset, hi);
    }
    for (size_t i : members) {
      const Buffer &b = buffers[i];
      plan.offsets[i] = offset;
      if (b.end <= b.start || b.bytes <= 0)
        continue;
      plan.arenaBytes =
          std::max(plan.arenaBytes, offset + aligned(b.bytes, alignment));
      int64_t lo = (b.start - first) / blockSize, hi = (b.end - 1 - first) / blockSize;
      if (hi - lo >= kLongBlocks)
        longLived.push_back(i);
      else
        for (int64_t k = lo; k <= hi; ++k)
          blocks[k].push_back(i);
    }
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
  std::map<int, size_t> firstOfGroup;
  for (auto [i, b] : llvm::enumerate(buffers)) {
    if (b.group >= 0) {
      auto [it, fresh] = firstOfGroup.try_emplace(b.group, i);
      if (!fresh && plan.offsets[it->second] != plan.offsets[i])
        return fail(llvm::formatv("buffers '{0}' and '{1}' are one allocation "
                                  "(group {2}) at two offsets, {3} and {4}",
                                  buffers[it->second].name, b.name, b.group,
                                  plan.offsets[it->second], plan.offsets[i]));
    }
    if (b.bytes <= 0 || b.end <= b.start)
      continue; // never live: takes no room
    int64_t off = plan.offsets[i];
    if (off % alignment || off < 0 ||
        off + aligned(b.bytes, alignment) > plan.arenaBytes)
      return fail(llvm::formatv("buffer '{0}' at offset {1} ({2} bytes) is "
                                "misaligned or outside the {3}-byte arena",
                                b.name, off, b.bytes, plan.arenaBytes));
  }
  // Sweep over positions keeping the live buffers ordered by offset: they
  // are pairwise disjoint so far, so a new one overlaps some live buffer iff
  // it overlaps its neighbour on either side.
  std::vector<std::pair<int64_t, int64_t>> events; // (position, +-(index+1))
  for (auto [i, b] : llvm::enumerate(buffers))
    if (b.bytes > 0 && b.end > b.start) {
      events.push_back({b.start, static_cast<int64_t>(i) + 1});
      events.push_back({b.end, -static_cast<int64_t>(i) - 1});
    }
  llvm::sort(events, [](auto &x, auto &y) {
    return x.first != y.first ? x.first < y.first : x.second < y.second;
  });
  std::set<std::pair<int64_t, size_t>> live; // (offset, index)
  for (auto [pos, e] : events) {
    size_t i = static_cast<size_t>(std::abs(e) - 1);
    if (e < 0) {
      live.erase({plan.offsets[i], i});
      continue;
    }
    auto end = [&](size_t j) {
      return plan.offsets[j] + aligned(buffers[j].bytes, alignment);
    };
    auto next = live.lower_bound({plan.offsets[i], 0});
    if (next != live.end() && next->first < end(i))
      return fail(llvm::formatv("buffers '{0}' and '{1}' are live together "
                                "and share bytes",
                                buffers[next->second].name, buffers[i].name));
    if (next != live.begin() && end(std::prev(next)->second) > plan.offsets[i])
      return fail(llvm::formatv("buffers '{0}' and '{1}' are live together "
                                "and share bytes",
                                buffers[std::prev(next)->second].name,
                                buffers[i].name));
    live.insert({plan.offsets[i], i});
  }
  if (plan.liveBound != liveBound(buffers, alignment))
    return fail("the plan's live bound is not the buffers' peak");
  return llvm::Error::success();
}
