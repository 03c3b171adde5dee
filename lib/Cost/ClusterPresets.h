//===- ClusterPresets.h - cluster specs compiled into Loom ------*- C++ -*-===//
//
// The JSON texts of `clusters/*.json`, embedded at build time by
// GenClusterPresets.cmake. Private to LoomCostModel: users go through
// loadCluster() and clusterPresetNames() in loom/Cost/Cluster.h.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_COST_CLUSTERPRESETS_H
#define LOOM_LIB_COST_CLUSTERPRESETS_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace loom::detail {

/// The JSON text of preset `name`, or nullopt when there is no such preset.
std::optional<std::string> clusterPresetJSON(llvm::StringRef name);

} // namespace loom::detail

#endif // LOOM_LIB_COST_CLUSTERPRESETS_H
