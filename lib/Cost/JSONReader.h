//===- JSONReader.h - checked reads of hand-written JSON --------*- C++ -*-===//
//
// Cluster specs and calibration files are JSON that people write by hand, so
// every problem is reported as "<origin>: <json.path>: <message>", naming the
// exact field (`levels[1].bandwidth_GBps`), and unknown keys are errors rather
// than silently ignored typos. This reader is the one place that does those
// checks for both formats. Private to LoomCostModel.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_COST_JSONREADER_H
#define LOOM_LIB_COST_JSONREADER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <limits>
#include <string>

namespace loom::detail {

/// A number as a person writes it: at most 12 significant digits, so values
/// converted to SI units and back print as they were written.
std::string formatNumber(double value);

class JSONReader {
public:
  /// The wording of messages. Cluster specs explain each problem ("expected a
  /// number, got a string", "must be > 0 (got -5)", a did-you-mean for unknown
  /// keys); calibration files keep their shorter documented wording ("must be
  /// a number", "must be > 0", "unknown field (expected one of: ...)").
  enum class Style { Detailed, Terse };
  enum Presence : bool { Optional = false, Required = true };
  enum class Bound { Positive, NonNegative, UnitInterval };
  static constexpr int64_t kNoMax = std::numeric_limits<int64_t>::max();

  JSONReader(llvm::StringRef origin, Style style)
      : origin(origin.str()), style(style) {}

  /// The document's top-level object, or an "invalid JSON" error.
  llvm::Expected<llvm::json::Object> parseObject(llvm::StringRef text) const;

  /// "<origin>: <path>: <message>", or "<origin>: <message>" for no path.
  llvm::Error fail(const llvm::Twine &path, const llvm::Twine &message) const;
  /// `value` is not what the format wants: `expected` reads "an object".
  llvm::Error wrongKind(const llvm::Twine &path, llvm::StringRef expected,
                        const llvm::json::Value &value) const;
  /// `what` ("unknown key") names `name`, which is not one of `allowed`.
  llvm::Error failUnknown(const llvm::Twine &path, const llvm::Twine &what,
                          llvm::StringRef name,
                          llvm::ArrayRef<llvm::StringRef> allowed) const;
  /// `path.key`, or `key` at the top level.
  static std::string join(llvm::StringRef path, llvm::StringRef key);

  /// Rejects keys of `object` outside `allowed`.
  llvm::Error checkKeys(const llvm::json::Object &object, llvm::StringRef path,
                        llvm::ArrayRef<llvm::StringRef> allowed) const;

  /// `value` as an object whose keys are all in `allowedKeys` (empty: any).
  llvm::Error readObject(const llvm::json::Value &value, llvm::StringRef path,
                         llvm::ArrayRef<llvm::StringRef> allowedKeys,
                         const llvm::json::Object *&out) const;
  /// `value` as an integer in [lo, hi].
  llvm::Error readInteger(const llvm::json::Value &value,
                          const llvm::Twine &path, int64_t lo, int64_t hi,
                          int64_t &out) const;
  /// `value` as an array of integers, each at least `lo`.
  llvm::Error readIntegers(const llvm::json::Value &value, llvm::StringRef path,
                           int64_t lo,
                           llvm::SmallVectorImpl<int64_t> &out) const;

  // Getters for `object[key]`. A missing Required key is an error; a missing
  // Optional one leaves `out` alone (and sets `*present` to false).

  llvm::Error getValue(const llvm::json::Object &object, llvm::StringRef path,
                       llvm::StringRef key, Presence presence,
                       const llvm::json::Value *&out,
                       bool *present = nullptr) const;
  /// Null when absent; see readObject for `allowedKeys`.
  llvm::Error getObject(const llvm::json::Object &object, llvm::StringRef path,
                        llvm::StringRef key, Presence presence,
                        const llvm::json::Object *&out,
                        llvm::ArrayRef<llvm::StringRef> allowedKeys = {}) const;
  /// Null when absent; `expected` names the wanted kind in messages.
  llvm::Error getArray(const llvm::json::Object &object, llvm::StringRef path,
                       llvm::StringRef key, Presence presence,
                       const llvm::json::Array *&out,
                       llvm::StringRef expected = "an array") const;
  llvm::Error getString(const llvm::json::Object &object, llvm::StringRef path,
                        llvm::StringRef key, Presence presence,
                        std::string &out, bool allowEmpty = true) const;
  llvm::Error getNumber(const llvm::json::Object &object, llvm::StringRef path,
                        llvm::StringRef key, Presence presence, Bound bound,
                        double &out, bool *present = nullptr) const;
  llvm::Error getInteger(const llvm::json::Object &object, llvm::StringRef path,
                         llvm::StringRef key, Presence presence, int64_t lo,
                         int64_t hi, int64_t &out,
                         bool *present = nullptr) const;

private:
  bool detailed() const { return style == Style::Detailed; }
  /// " (got <actual>)" in the detailed style, nothing in the terse one.
  std::string got(const llvm::Twine &actual) const;

  std::string origin;
  Style style;
};

} // namespace loom::detail

#endif // LOOM_LIB_COST_JSONREADER_H
