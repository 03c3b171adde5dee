//===- NearestNames.h - "did you mean" suggestions for importers -*- C++ -*-===//
//
// Both importers name the closest known ops or values when a name is unknown.
// Edit distance is quadratic, and the names come from untrusted files, so long
// names get no suggestions and each comparison is capped.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_TRANSLATE_NEARESTNAMES_H
#define LOOM_LIB_TRANSLATE_NEARESTNAMES_H

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <utility>

namespace mlir::loom {

/// Up to `n` distinct names of `candidates` closest to `name` (case-insensitive
/// edit distance), nearest first, ties by name. With a non-zero
/// `maxDistance`, only names at most that far away.
template <typename Range>
llvm::SmallVector<llvm::StringRef> nearestNames(llvm::StringRef name,
                                                const Range &candidates,
                                                size_t n,
                                                unsigned maxDistance = 0) {
  constexpr size_t kMaxLength = 256;
  constexpr unsigned kMaxCost = 64;
  if (name.size() > kMaxLength)
    return {};
  std::string lowered = name.lower();
  llvm::SmallVector<std::pair<unsigned, llvm::StringRef>> scored;
  for (llvm::StringRef c : candidates) {
    size_t gap = c.size() > name.size() ? c.size() - name.size()
                                        : name.size() - c.size();
    if (c.size() > kMaxLength || (maxDistance != 0 && gap > maxDistance))
      continue;
    unsigned d = llvm::StringRef(lowered).edit_distance(
        c.lower(), /*AllowReplacements=*/true, kMaxCost);
    if (maxDistance == 0 || d <= maxDistance)
      scored.push_back({d, c});
  }
  // A name listed twice scores the same twice, so duplicates are adjacent.
  llvm::sort(scored);
  scored.erase(std::unique(scored.begin(), scored.end()), scored.end());
  llvm::SmallVector<llvm::StringRef> out;
  for (size_t i = 0; i < scored.size() && i < n; ++i)
    out.push_back(scored[i].second);
  return out;
}

} // namespace mlir::loom

#endif // LOOM_LIB_TRANSLATE_NEARESTNAMES_H
