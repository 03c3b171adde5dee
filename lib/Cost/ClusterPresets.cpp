//===- ClusterPresets.cpp - cluster specs compiled into Loom --------------===//
//
// Each `clusters/<name>.json` becomes a preset. The build turns the files into
// ClusterPresets.inc (GenClusterPresets.cmake): per preset, a null-terminated
// array of raw string literal chunks, each well below the 64 KiB literal limit
// of MSVC, joined here at lookup time. Editing a JSON file regenerates it.
//
//===----------------------------------------------------------------------===//

#include "ClusterPresets.h"

#include "loom/Cost/Cluster.h"

using namespace llvm;

namespace {
struct PresetEntry {
  const char *name;
  const char *const *chunks; // null-terminated
};
} // namespace

// Defines `kClusterPresets`, sorted by name.
#include "ClusterPresets.inc"

std::optional<std::string> loom::detail::clusterPresetJSON(StringRef name) {
  for (const PresetEntry &p : kClusterPresets) {
    if (name != p.name)
      continue;
    std::string text;
    for (const char *const *c = p.chunks; *c; ++c)
      text += *c;
    return text;
  }
  return std::nullopt;
}

std::vector<std::string> loom::clusterPresetNames() {
  std::vector<std::string> names;
  for (const PresetEntry &p : kClusterPresets)
    names.push_back(p.name);
  return names;
}
