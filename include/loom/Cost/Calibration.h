//===- Calibration.h - measured timings that override the model -*- C++ -*-===//
//
// A calibration file (JSON, docs/calibration.md) lists measured kernel and
// collective timings, as the runtime will record them. Kernels match by op
// name, precision and exact operand/result shapes; collectives by kind and
// group layout, interpolated linearly in log(bytes) between measured sizes
// (and extrapolated at the measured bandwidth beyond the largest).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COST_CALIBRATION_H
#define LOOM_COST_CALIBRATION_H

#include "loom/Cost/Collectives.h"

#include "llvm/ADT/StringMap.h"

#include <map>
#include <string>
#include <vector>

namespace loom {

class Calibration {
public:
  static llvm::Expected<Calibration> parse(llvm::StringRef json,
                                           llvm::StringRef origin);
  static llvm::Expected<Calibration> load(llvm::StringRef path);

  /// Kernel key: "<op name>|<precision>|<shape>x<shape>..." as built by
  /// kernelKey(); the estimator builds the same key for each op.
  static std::string kernelKey(llvm::StringRef opName, Precision precision,
                               llvm::ArrayRef<llvm::SmallVector<int64_t>> shapes);
  std::optional<double> kernelSeconds(llvm::StringRef key) const;

  /// Measured time of a collective of `bytes` over a group laid out as
  /// `span`, if the file has points for that kind and layout.
  std::optional<double> collectiveSeconds(CollectiveKind kind, const AxisSpan &span,
                                          double bytes) const;

  size_t numKernels() const { return kernels.size(); }
  size_t numCollectiveCurves() const { return collectives.size(); }
  /// The file's "device" and "source" fields ("" when absent), for reports
  /// and for warning when the file was measured on another device.
  llvm::StringRef device() const { return deviceName; }
  llvm::StringRef source() const { return sourceText; }

private:
  std::string deviceName;
  std::string sourceText;
  llvm::StringMap<double> kernels;
  // (kind, membersPerLevel) -> sorted (bytes, seconds)
  std::map<std::pair<int, std::vector<int64_t>>,
           std::vector<std::pair<double, double>>>
      collectives;
};

} // namespace loom

#endif // LOOM_COST_CALIBRATION_H
