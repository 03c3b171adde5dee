//===- Sweep.h - peak holdings from acquire/release events ----*- C++ -*-===//
//
// Shared by the chunk simulator (bytes over time) and the arena (bytes over
// schedule positions).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_MEMORY_SWEEP_H
#define LOOM_LIB_MEMORY_SWEEP_H

#include "llvm/ADT/STLExtras.h"

#include <utility>
#include <vector>

namespace loom::memory {

/// The peak of a running total and the first moment it is reached, for
/// events (moment, +amount acquired or -amount released). At equal moments
/// releases come first: holdings are [acquire, release) intervals.
template <typename T>
std::pair<T, T> peakHeld(std::vector<std::pair<T, T>> events) {
  llvm::sort(events, [](const auto &x, const auto &y) {
    return x.first != y.first ? x.first < y.first : x.second < y.second;
  });
  T held = 0, peak = 0, at = 0;
  for (auto [moment, delta] : events) {
    held += delta;
    if (held > peak) {
      peak = held;
      at = moment;
    }
  }
  return {peak, at};
}

} // namespace loom::memory

#endif // LOOM_LIB_MEMORY_SWEEP_H
