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

llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
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

/// Buffers placed at one offset: one buffer, or a group's members.
using Unit = std::vector<size_t>;

/// Places `units` in `order` (indices into them), each at the lowest
/// offset free among the buffers already placed that are live at the same
/// time as one of its members; buffers live over the whole schedule first,
/// stacked at the bottom.
ArenaPlan placeInOrder(const std::vector<Buffer> &buffers,
                       const std::vector<Unit> &units,
                       const std::vector<size_t> &order, int64_t alignment) {
  ArenaPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  auto bytesOf = [&](const Unit &u) {
    int64_t bytes = 0;
    for (size_t i : u)
      bytes = std::max(bytes, buffers[i].bytes);
    return bytes;
  };
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
  for (size_t u : order) {
    const Unit &members = units[u];
    const Buffer &b = buffers[members.front()];
    if (members.size() == 1 && b.bytes > 0 && b.start <= first && b.end >= last) {
      permanent[u] = true;
      plan.offsets[members.front()] = floor;
      floor += aligned(b.bytes, alignment);
    }
  }
  plan.arenaBytes = floor;
  for (size_t u : order) {
    const Unit &members = units[u];
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
  return plan;
}

} // namespace

ArenaPlan loom::memory::assignOffsets(const std::vector<Buffer> &buffers,
                                      int64_t alignment) {
  std::vector<Unit> units;
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
  // A unit's largest member, its summed lifetime and its first start.
  struct Key {
    int64_t bytes = 0, lifetime = 0, start = INT64_MAX;
  };
  std::vector<Key> keys(units.size());
  for (auto [u, members] : llvm::enumerate(units))
    for (size_t i : members) {
      const Buffer &b = buffers[i];
      keys[u].bytes = std::max(keys[u].bytes, b.bytes);
      keys[u].lifetime += std::max<int64_t>(0, b.end - b.start);
      if (b.end > b.start)
        keys[u].start = std::min(keys[u].start, b.start);
    }
  auto ordered = [&](auto before) {
    std::vector<size_t> order(units.size());
    for (size_t u = 0; u < order.size(); ++u)
      order[u] = u;
    llvm::stable_sort(order, [&](size_t x, size_t y) { return before(keys[x], keys[y]); });
    return order;
  };
  // Largest first (longer lifetimes first on ties): the hardest to fit.
  ArenaPlan plan = placeInOrder(buffers, units, ordered([](const Key &x, const Key &y) {
                                  if (x.bytes != y.bytes)
                                    return x.bytes > y.bytes;
                                  return x.lifetime > y.lifetime;
                                }),
                                alignment);
  plan.liveBound = liveBound(buffers, alignment);
  // Where that leaves gaps over 1% of the bound, also in order of first
  // start (larger first on ties), which for buffers of one size is
  // interval colouring's optimal greedy. The smaller arena wins.
  if (plan.arenaBytes > plan.liveBound + plan.liveBound / 100) {
    ArenaPlan byStart = placeInOrder(buffers, units, ordered([](const Key &x, const Key &y) {
                                       if (x.start != y.start)
                                         return x.start < y.start;
                                       return x.bytes > y.bytes;
                                     }),
                                     alignment);
    if (byStart.arenaBytes < plan.arenaBytes) {
      byStart.liveBound = plan.liveBound;
      plan = std::move(byStart);
    }
  }
  return plan;
}

llvm::Error loom::memory::checkArena(const std::vector<Buffer> &buffers,
                                     const ArenaPlan &plan, int64_t alignment) {
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

llvm::Expected<TierReplay> loom::memory::replayTier(
    const std::vector<Buffer> &buffers, const ArenaPlan &plan,
    const std::vector<BufferRead> &reads, int64_t reservedBytes,
    int64_t capacityBytes, int64_t alignment) {
  if (plan.offsets.size() != buffers.size())
    return fail(llvm::formatv("the plan has {0} offsets for {1} buffers",
                              plan.offsets.size(), buffers.size()));
  // Events in position order; at one position the frees come first, then
  // the allocations, then the reads (a buffer live over [start, end) serves
  // a read at `start` and not at `end`).
  enum Kind { Free, Allocate, Read };
  struct Event {
    int64_t position;
    Kind kind;
    size_t index; // into buffers, or reads
  };
  std::vector<Event> events;
  for (auto [i, b] : llvm::enumerate(buffers))
    if (b.bytes > 0 && b.end > b.start) {
      events.push_back({b.start, Allocate, i});
      events.push_back({b.end, Free, i});
    }
  for (auto [i, r] : llvm::enumerate(reads)) {
    for (int64_t b : r.buffers)
      if (b < 0 || b >= static_cast<int64_t>(buffers.size()))
        return fail(llvm::formatv("{0} names buffer {1}, but the tier has {2}",
                                  r.what, b, buffers.size()));
    events.push_back({r.position, Read, i});
  }
  llvm::stable_sort(events, [](const Event &x, const Event &y) {
    return x.position != y.position ? x.position < y.position : x.kind < y.kind;
  });

  TierReplay replay;
  replay.peakBytes = reservedBytes;
  if (reservedBytes > capacityBytes)
    replay.overflow = TierOverflow{0, reservedBytes, capacityBytes, ""};
  std::vector<char> live(buffers.size(), 0);
  std::multiset<std::pair<int64_t, size_t>> tops; // (offset + bytes, buffer)
  auto topOf = [&](size_t i) {
    return plan.offsets[i] + aligned(buffers[i].bytes, alignment);
  };
  for (const Event &e : events) {
    switch (e.kind) {
    case Free:
      live[e.index] = 0;
      tops.erase(tops.find({topOf(e.index), e.index}));
      break;
    case Allocate: {
      live[e.index] = 1;
      tops.insert({topOf(e.index), e.index});
      auto [top, highest] = *tops.rbegin();
      int64_t used = top + reservedBytes;
      if (used > replay.peakBytes) {
        replay.peakBytes = used;
        replay.peakPosition = e.position;
      }
      if (used > capacityBytes && !replay.overflow)
        replay.overflow =
            TierOverflow{e.position, used, capacityBytes, buffers[highest].name};
      break;
    }
    case Read: {
      const BufferRead &r = reads[e.index];
      ++replay.reads;
      if (llvm::any_of(r.buffers, [&](int64_t b) { return live[b]; }))
        break;
      std::string where;
      for (int64_t b : r.buffers)
        where += llvm::formatv("{0}'{1}' live over [{2}, {3})",
                               where.empty() ? "" : ", ", buffers[b].name,
                               buffers[b].start, buffers[b].end)
                     .str();
      return fail(llvm::formatv("{0} at position {1}, but {2}", r.what,
                                r.position,
                                where.empty() ? "it has no buffer" : where));
    }
    }
  }
  return replay;
}
