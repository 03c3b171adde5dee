//===- Calibration.cpp - measured timings that override the model ---------===//
//
// Reads calibration files (docs/calibration.md) and answers lookups. Kernel
// timings match exactly by key; collective timings form one curve per (kind,
// group layout), interpolated linearly in log(bytes) because measured sizes
// are usually powers of two spread over many decades. Every parse error names
// the JSON path of the offending field so a hand-edited file is easy to fix.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/Calibration.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

using namespace loom;
namespace json = llvm::json;

namespace {

/// Builds errors of the form "<origin>: <json path>: <message>".
struct ErrorSink {
  llvm::StringRef origin;
  llvm::Error at(const llvm::Twine &path, const llvm::Twine &message) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   origin + ": " + path + ": " + message);
  }
};

} // namespace

/// Rejects fields the format does not define: a typo (`time_ms`) would
/// otherwise be silently ignored.
static llvm::Error checkFields(const json::Object &object,
                               llvm::ArrayRef<llvm::StringRef> allowed,
                               const ErrorSink &errors,
                               const llvm::Twine &path) {
  for (const auto &entry : object) {
    llvm::StringRef key = entry.first;
    if (!llvm::is_contained(allowed, key))
      return errors.at(
          path.isTriviallyEmpty() ? llvm::Twine(key) : path + "." + key,
          "unknown field (expected one of: " + llvm::join(allowed, ", ") + ")");
  }
  return llvm::Error::success();
}

static llvm::Expected<double> positiveNumber(const json::Object &object,
                                             llvm::StringRef key,
                                             const ErrorSink &errors,
                                             const llvm::Twine &path) {
  const json::Value *value = object.get(key);
  if (!value)
    return errors.at(path + "." + key, "missing");
  std::optional<double> number = value->getAsNumber();
  if (!number)
    return errors.at(path + "." + key, "must be a number");
  if (!(*number > 0) || !std::isfinite(*number))
    return errors.at(path + "." + key, "must be > 0");
  return *number;
}

static llvm::Expected<llvm::StringRef> string(const json::Object &object,
                                              llvm::StringRef key,
                                              const ErrorSink &errors,
                                              const llvm::Twine &path) {
  const json::Value *value = object.get(key);
  if (!value)
    return errors.at(path + "." + key, "missing");
  std::optional<llvm::StringRef> text = value->getAsString();
  if (!text)
    return errors.at(path + "." + key, "must be a string");
  if (text->empty())
    return errors.at(path + "." + key, "must not be empty");
  return *text;
}

/// A JSON array of integers, each at least `minimum`.
static llvm::Expected<llvm::SmallVector<int64_t>>
integers(const json::Value &value, int64_t minimum, const ErrorSink &errors,
         const llvm::Twine &path) {
  const json::Array *array = value.getAsArray();
  if (!array)
    return errors.at(path, "must be an array of integers");
  llvm::SmallVector<int64_t> result;
  for (size_t i = 0; i < array->size(); ++i) {
    std::optional<int64_t> n = (*array)[i].getAsInteger();
    if (!n)
      return errors.at(path + "[" + llvm::Twine(i) + "]", "must be an integer");
    if (*n < minimum)
      return errors.at(path + "[" + llvm::Twine(i) + "]",
                       "must be >= " + llvm::Twine(minimum));
    result.push_back(*n);
  }
  return result;
}

/// Layouts compare with trailing 1s dropped: a group inside one node is the
/// same group whether or not the file lists the network level.
static std::vector<int64_t> layoutKey(llvm::ArrayRef<int64_t> membersPerLevel) {
  std::vector<int64_t> key(membersPerLevel.begin(), membersPerLevel.end());
  while (!key.empty() && key.back() == 1)
    key.pop_back();
  return key;
}

std::string
Calibration::kernelKey(llvm::StringRef opName, Precision precision,
                       llvm::ArrayRef<llvm::SmallVector<int64_t>> shapes) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << opName << '|' << stringifyPrecision(precision) << '|';
  llvm::ListSeparator comma(",");
  for (const llvm::SmallVector<int64_t> &shape : shapes) {
    os << comma;
    if (shape.empty()) {
      os << "scalar";
      continue;
    }
    llvm::ListSeparator times("x");
    for (int64_t dim : shape) {
      os << times;
      if (dim < 0)
        os << '?'; // dynamic; never measured, so never matches
      else
        os << dim;
    }
  }
  return key;
}

std::optional<double> Calibration::kernelSeconds(llvm::StringRef key) const {
  auto it = kernels.find(key);
  if (it == kernels.end())
    return std::nullopt;
  return it->second;
}

std::optional<double> Calibration::collectiveSeconds(CollectiveKind kind,
                                                     const AxisSpan &span,
                                                     double bytes) const {
  auto it = collectives.find({int(kind), layoutKey(span.membersPerLevel)});
  if (it == collectives.end())
    return std::nullopt;
  const std::vector<std::pair<double, double>> &points = it->second;
  // Below the smallest size the latency floor dominates: keep its time.
  if (bytes <= points.front().first)
    return points.front().second;
  // Beyond the largest, the curve is bandwidth-bound: scale with bytes.
  if (bytes >= points.back().first)
    return points.back().second * (bytes / points.back().first);
  auto upper = std::upper_bound(
      points.begin(), points.end(), bytes,
      [](double b, const std::pair<double, double> &p) { return b < p.first; });
  auto lower = std::prev(upper);
  double f = (std::log(bytes) - std::log(lower->first)) /
             (std::log(upper->first) - std::log(lower->first));
  return lower->second + f * (upper->second - lower->second);
}

llvm::Expected<Calibration> Calibration::parse(llvm::StringRef text,
                                               llvm::StringRef origin) {
  ErrorSink errors{origin};
  llvm::Expected<json::Value> root = json::parse(text);
  if (!root)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        origin + ": invalid JSON: " + llvm::toString(root.takeError()));
  const json::Object *top = root->getAsObject();
  if (!top)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   origin + ": must be a JSON object");
  if (llvm::Error err = checkFields(
          *top, {"device", "source", "kernels", "collectives"}, errors, ""))
    return std::move(err);

  Calibration calibration;
  for (llvm::StringRef key : {"device", "source"}) {
    const json::Value *value = top->get(key);
    if (!value)
      continue;
    std::optional<llvm::StringRef> text = value->getAsString();
    if (!text)
      return errors.at(key, "must be a string");
    (key == "device" ? calibration.deviceName : calibration.sourceText) =
        text->str();
  }

  if (const json::Value *value = top->get("kernels")) {
    const json::Array *kernels = value->getAsArray();
    if (!kernels)
      return errors.at("kernels", "must be an array");
    llvm::StringMap<size_t> firstIndex;
    for (size_t i = 0; i < kernels->size(); ++i) {
      std::string path = llvm::formatv("kernels[{0}]", i).str();
      const json::Object *entry = (*kernels)[i].getAsObject();
      if (!entry)
        return errors.at(path, "must be an object");
      if (llvm::Error err = checkFields(
              *entry, {"op", "precision", "shapes", "time_us"}, errors, path))
        return std::move(err);
      llvm::Expected<llvm::StringRef> op = string(*entry, "op", errors, path);
      if (!op)
        return op.takeError();
      llvm::Expected<llvm::StringRef> precisionName =
          string(*entry, "precision", errors, path);
      if (!precisionName)
        return precisionName.takeError();
      std::optional<Precision> precision = parsePrecision(*precisionName);
      if (!precision)
        return errors.at(path + ".precision",
                         "unknown precision '" + *precisionName + "'");
      const json::Value *shapesValue = entry->get("shapes");
      if (!shapesValue)
        return errors.at(path + ".shapes", "missing");
      const json::Array *shapesArray = shapesValue->getAsArray();
      if (!shapesArray)
        return errors.at(path + ".shapes", "must be an array of shapes");
      llvm::SmallVector<llvm::SmallVector<int64_t>> shapes;
      for (size_t s = 0; s < shapesArray->size(); ++s) {
        auto shape = integers((*shapesArray)[s], 0, errors,
                              path + ".shapes[" + llvm::Twine(s) + "]");
        if (!shape)
          return shape.takeError();
        shapes.push_back(std::move(*shape));
      }
      llvm::Expected<double> micros =
          positiveNumber(*entry, "time_us", errors, path);
      if (!micros)
        return micros.takeError();

      std::string key = kernelKey(*op, *precision, shapes);
      auto [it, inserted] = firstIndex.try_emplace(key, i);
      if (!inserted)
        return errors.at(path, llvm::formatv("duplicates kernels[{0}] ({1})",
                                             it->second, key)
                                   .str());
      calibration.kernels[key] = *micros * 1e-6;
    }
  }

  if (const json::Value *value = top->get("collectives")) {
    const json::Array *curves = value->getAsArray();
    if (!curves)
      return errors.at("collectives", "must be an array");
    std::map<std::pair<int, std::vector<int64_t>>, size_t> firstIndex;
    for (size_t i = 0; i < curves->size(); ++i) {
      std::string path = llvm::formatv("collectives[{0}]", i).str();
      const json::Object *entry = (*curves)[i].getAsObject();
      if (!entry)
        return errors.at(path, "must be an object");
      if (llvm::Error err = checkFields(
              *entry, {"kind", "members_per_level", "points"}, errors, path))
        return std::move(err);
      llvm::Expected<llvm::StringRef> kindName =
          string(*entry, "kind", errors, path);
      if (!kindName)
        return kindName.takeError();
      std::optional<CollectiveKind> kind = parseCollectiveKind(*kindName);
      if (!kind)
        return errors.at(path + ".kind",
                         "unknown collective '" + *kindName +
                             "' (expected all_reduce, all_gather, "
                             "reduce_scatter, all_to_all, broadcast or "
                             "send_recv)");
      const json::Value *membersValue = entry->get("members_per_level");
      if (!membersValue)
        return errors.at(path + ".members_per_level", "missing");
      auto members =
          integers(*membersValue, 1, errors, path + ".members_per_level");
      if (!members)
        return members.takeError();
      std::vector<int64_t> layout = layoutKey(*members);
      if (layout.empty())
        return errors.at(path + ".members_per_level",
                         "must describe a group of at least 2 devices");

      const json::Value *pointsValue = entry->get("points");
      if (!pointsValue)
        return errors.at(path + ".points", "missing");
      const json::Array *pointsArray = pointsValue->getAsArray();
      if (!pointsArray || pointsArray->empty())
        return errors.at(path + ".points", "must be a non-empty array");
      std::vector<std::pair<double, double>> points;
      for (size_t k = 0; k < pointsArray->size(); ++k) {
        std::string pointPath = llvm::formatv("{0}.points[{1}]", path, k).str();
        const json::Object *point = (*pointsArray)[k].getAsObject();
        if (!point)
          return errors.at(pointPath, "must be an object");
        if (llvm::Error err =
                checkFields(*point, {"bytes", "time_us"}, errors, pointPath))
          return std::move(err);
        llvm::Expected<double> bytes =
            positiveNumber(*point, "bytes", errors, pointPath);
        if (!bytes)
          return bytes.takeError();
        llvm::Expected<double> micros =
            positiveNumber(*point, "time_us", errors, pointPath);
        if (!micros)
          return micros.takeError();
        points.push_back({*bytes, *micros * 1e-6});
      }
      llvm::stable_sort(points, [](const auto &a, const auto &b) {
        return a.first < b.first;
      });
      for (size_t k = 1; k < points.size(); ++k)
        if (points[k].first == points[k - 1].first)
          return errors.at(
              path + ".points",
              "two points measure " +
                  llvm::formatv("{0}", llvm::format("%.17g", points[k].first))
                      .str() +
                  " bytes");

      std::pair<int, std::vector<int64_t>> key{int(*kind), layout};
      auto [it, inserted] = firstIndex.try_emplace(key, i);
      if (!inserted)
        return errors.at(path,
                         llvm::formatv("duplicates collectives[{0}] (same "
                                       "kind and members_per_level)",
                                       it->second)
                             .str());
      calibration.collectives[key] = std::move(points);
    }
  }
  return calibration;
}

llvm::Expected<Calibration> Calibration::load(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(
        buffer.getError(),
        path + ": cannot read: " + buffer.getError().message());
  return parse((*buffer)->getBuffer(), path);
}
