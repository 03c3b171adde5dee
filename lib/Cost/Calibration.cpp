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

#include "JSONReader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <cmath>

using namespace loom;
using loom::detail::JSONReader;
namespace json = llvm::json;
static constexpr JSONReader::Presence Optional = JSONReader::Optional,
                                      Required = JSONReader::Required;
static constexpr JSONReader::Bound Positive = JSONReader::Bound::Positive;

/// Layouts compare with trailing 1s dropped: a group inside one node is the
/// same group whether or not the file lists the network level.
static std::vector<int64_t> layoutKey(llvm::ArrayRef<int64_t> membersPerLevel) {
  std::vector<int64_t> key(membersPerLevel.begin(), membersPerLevel.end());
  while (!key.empty() && key.back() == 1)
    key.pop_back();
  return key;
}

/// A positive time in microseconds can still underflow to 0 s (5e-324 us),
/// and a zero time scaled past the largest measured size by an infinite
/// ratio is NaN. Found by fuzzing (fuzz/cost).
static llvm::Error checkSeconds(const JSONReader &reader,
                                const std::string &path, double micros) {
  if (!(micros * 1e-6 > 0))
    return reader.fail(path, "too small (underflows to 0 once converted to "
                             "seconds)");
  return llvm::Error::success();
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
  // Two sizes too close for their logarithms to differ in a double (found
  // by the cost fuzzer: 1.69444442444444e94 and ...4543e94) would divide
  // zero by zero; between them the lower point's time stands.
  double logGap = std::log(upper->first) - std::log(lower->first);
  if (!(logGap > 0))
    return lower->second;
  double f = (std::log(bytes) - std::log(lower->first)) / logGap;
  return lower->second + f * (upper->second - lower->second);
}

llvm::Expected<Calibration> Calibration::parse(llvm::StringRef text,
                                               llvm::StringRef origin) {
  JSONReader reader(origin, JSONReader::Style::Terse);
  llvm::Expected<json::Object> top = reader.parseObject(text);
  if (!top)
    return top.takeError();
  if (llvm::Error err = reader.checkKeys(
          *top, "", {"device", "source", "kernels", "collectives"}))
    return std::move(err);

  Calibration calibration;
  if (llvm::Error err = reader.getString(*top, "", "device", Optional,
                                         calibration.deviceName))
    return std::move(err);
  if (llvm::Error err = reader.getString(*top, "", "source", Optional,
                                         calibration.sourceText))
    return std::move(err);

  const json::Array *kernels;
  if (llvm::Error err = reader.getArray(*top, "", "kernels", Optional, kernels))
    return std::move(err);
  llvm::StringMap<size_t> firstKernel;
  for (size_t i = 0; kernels && i < kernels->size(); ++i) {
    std::string path = llvm::formatv("kernels[{0}]", i).str();
    const json::Object *entry;
    std::string op, precisionName;
    const json::Array *shapesArray;
    if (llvm::Error err =
            reader.readObject((*kernels)[i], path,
                              {"op", "precision", "shapes", "time_us"}, entry))
      return std::move(err);
    if (llvm::Error err = reader.getString(*entry, path, "op", Required, op,
                                           /*allowEmpty=*/false))
      return std::move(err);
    if (llvm::Error err = reader.getString(*entry, path, "precision", Required,
                                           precisionName, /*allowEmpty=*/false))
      return std::move(err);
    std::optional<Precision> precision = parsePrecision(precisionName);
    if (!precision)
      return reader.fail(path + ".precision",
                         "unknown precision '" + precisionName + "'");
    if (llvm::Error err = reader.getArray(*entry, path, "shapes", Required,
                                          shapesArray, "an array of shapes"))
      return std::move(err);
    llvm::SmallVector<llvm::SmallVector<int64_t>> shapes(shapesArray->size());
    for (size_t s = 0; s < shapesArray->size(); ++s)
      if (llvm::Error err = reader.readIntegers(
              (*shapesArray)[s], path + ".shapes[" + std::to_string(s) + "]", 0,
              shapes[s]))
        return std::move(err);
    double micros = 0;
    if (llvm::Error err = reader.getNumber(*entry, path, "time_us", Required,
                                           Positive, micros))
      return std::move(err);

    if (llvm::Error err = checkSeconds(reader, path + ".time_us", micros))
      return std::move(err);

    std::string key = kernelKey(op, *precision, shapes);
    auto [it, inserted] = firstKernel.try_emplace(key, i);
    if (!inserted)
      return reader.fail(
          path, llvm::formatv("duplicates kernels[{0}] ({1})", it->second, key)
                    .str());
    calibration.kernels[key] = micros * 1e-6;
  }

  const json::Array *curves;
  if (llvm::Error err =
          reader.getArray(*top, "", "collectives", Optional, curves))
    return std::move(err);
  std::map<std::pair<int, std::vector<int64_t>>, size_t> firstCurve;
  for (size_t i = 0; curves && i < curves->size(); ++i) {
    std::string path = llvm::formatv("collectives[{0}]", i).str();
    const json::Object *entry;
    std::string kindName;
    const json::Value *membersValue;
    const json::Array *pointsArray;
    if (llvm::Error err = reader.readObject(
            (*curves)[i], path, {"kind", "members_per_level", "points"}, entry))
      return std::move(err);
    if (llvm::Error err = reader.getString(*entry, path, "kind", Required,
                                           kindName, /*allowEmpty=*/false))
      return std::move(err);
    std::optional<CollectiveKind> kind = parseCollectiveKind(kindName);
    if (!kind)
      return reader.fail(path + ".kind",
                         "unknown collective '" + kindName +
                             "' (expected all_reduce, all_gather, "
                             "reduce_scatter, all_to_all, broadcast or "
                             "send_recv)");
    llvm::SmallVector<int64_t> members;
    std::string membersPath = path + ".members_per_level";
    if (llvm::Error err = reader.getValue(*entry, path, "members_per_level",
                                          Required, membersValue))
      return std::move(err);
    if (llvm::Error err =
            reader.readIntegers(*membersValue, membersPath, 1, members))
      return std::move(err);
    std::vector<int64_t> layout = layoutKey(members);
    if (layout.empty())
      return reader.fail(membersPath,
                         "must describe a group of at least 2 devices");

    if (llvm::Error err = reader.getArray(*entry, path, "points", Required,
                                          pointsArray, "a non-empty array"))
      return std::move(err);
    if (pointsArray->empty())
      return reader.fail(path + ".points", "must be a non-empty array");
    std::vector<std::pair<double, double>> points;
    for (size_t k = 0; k < pointsArray->size(); ++k) {
      std::string pointPath = llvm::formatv("{0}.points[{1}]", path, k).str();
      const json::Object *point;
      double bytes = 0, micros = 0;
      if (llvm::Error err = reader.readObject((*pointsArray)[k], pointPath,
                                              {"bytes", "time_us"}, point))
        return std::move(err);
      if (llvm::Error err = reader.getNumber(*point, pointPath, "bytes",
                                             Required, Positive, bytes))
        return std::move(err);
      if (bytes < 1)
        return reader.fail(pointPath + ".bytes",
                           "must be >= 1 (a measured message size in bytes)");
      if (llvm::Error err = reader.getNumber(*point, pointPath, "time_us",
                                             Required, Positive, micros))
        return std::move(err);
      if (llvm::Error err =
              checkSeconds(reader, pointPath + ".time_us", micros))
        return std::move(err);
      points.push_back({bytes, micros * 1e-6});
    }
    llvm::stable_sort(
        points, [](const auto &a, const auto &b) { return a.first < b.first; });
    for (size_t k = 1; k < points.size(); ++k)
      if (points[k].first == points[k - 1].first)
        return reader.fail(
            path + ".points",
            "two points measure " +
                llvm::formatv("{0}", llvm::format("%.17g", points[k].first))
                    .str() +
                " bytes");

    std::pair<int, std::vector<int64_t>> key{int(*kind), layout};
    auto [it, inserted] = firstCurve.try_emplace(key, i);
    if (!inserted)
      return reader.fail(path,
                         llvm::formatv("duplicates collectives[{0}] "
                                       "(same kind and members_per_level)",
                                       it->second)
                             .str());
    calibration.collectives[key] = std::move(points);
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
