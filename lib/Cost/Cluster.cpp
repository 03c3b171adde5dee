//===- Cluster.cpp - the machine a plan runs on ---------------------------===//
//
// Reads and writes cluster specs (docs/cluster-spec.md) and maps device grids
// onto the interconnect hierarchy. The file format uses the units hardware
// datasheets quote (TFLOP/s, GiB, GB/s, Gb/s, microseconds); the structs hold
// SI units (FLOP/s, bytes, bytes/s, seconds). Every error names the field by
// its JSON path so a typo in a hand-written spec is found at once.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/Cluster.h"

#include "ClusterPresets.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"

#include <cmath>

using namespace llvm;
using namespace loom;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

static constexpr StringRef kPrecisionNames[kNumPrecisions] = {
    "fp32", "tf32", "bf16", "fp16", "fp8", "int8"};
static constexpr StringRef kOpClassNames[kNumOpClasses] = {
    "matmul",    "conv",   "attention",    "elementwise",
    "normalize", "reduce", "data_movement"};
static constexpr StringRef kLevelKinds[] = {
    "nvswitch", "nvlink", "pcie", "infiniband", "roce", "ethernet", "c2c"};

StringRef loom::stringifyPrecision(Precision p) {
  return kPrecisionNames[unsigned(p)];
}

std::optional<Precision> loom::parsePrecision(StringRef s) {
  for (unsigned i = 0; i < kNumPrecisions; ++i)
    if (s == kPrecisionNames[i])
      return Precision(i);
  return std::nullopt;
}

StringRef loom::stringifyOpClass(OpClass c) {
  return kOpClassNames[unsigned(c)];
}

/// Levels that join nodes rather than the devices of one node.
static bool isNetworkKind(StringRef kind) {
  return kind == "infiniband" || kind == "roce" || kind == "ethernet";
}

/// Per-lane PCIe bandwidth, GB/s per direction after line encoding.
static double pcieLaneGBps(int gen) {
  switch (gen) {
  case 3:
    return 0.985;
  case 4:
    return 1.969;
  case 5:
    return 3.938;
  case 6:
    return 7.563;
  default:
    return 0;
  }
}

static constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
static constexpr double kTiB = kGiB * 1024.0;
static constexpr double kGB = 1e9;
static constexpr double kTFLOP = 1e12;
static constexpr double kMicro = 1e-6;

/// A number as a person writes it: at most 12 significant digits, so values
/// converted to SI units and back print as they were written.
static std::string fmtNum(double v) {
  std::string s = formatv("{0}", format("%.12g", v)).str();
  return s;
}

//===----------------------------------------------------------------------===//
// ClusterSpec and AxisSpan
//===----------------------------------------------------------------------===//

int64_t ClusterSpec::numDevices() const {
  int64_t n = 1;
  for (const LevelSpec &l : levels)
    n *= l.fanout;
  return n;
}

int64_t ClusterSpec::devicesPerNode() const {
  int64_t n = 1;
  for (const LevelSpec &l : levels) {
    if (isNetworkKind(l.kind))
      return n;
    n *= l.fanout;
  }
  return n;
}

int64_t AxisSpan::size() const {
  int64_t n = 1;
  for (int64_t m : membersPerLevel)
    n *= m;
  return n;
}

int AxisSpan::outermostLevel() const {
  for (int l = int(membersPerLevel.size()) - 1; l >= 0; --l)
    if (membersPerLevel[l] > 1)
      return l;
  return -1;
}

AxisSpan loom::combineSpans(ArrayRef<AxisSpan> spans) {
  AxisSpan out;
  for (const AxisSpan &s : spans) {
    if (out.membersPerLevel.size() < s.membersPerLevel.size())
      out.membersPerLevel.resize(s.membersPerLevel.size(), 1);
    for (auto [i, m] : llvm::enumerate(s.membersPerLevel))
      out.membersPerLevel[i] *= m;
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {
/// Reads one spec, tracking `origin` for messages. Each getter returns an
/// Error naming the field by JSON path: `levels[1].bandwidth_GBps`.
class SpecReader {
public:
  explicit SpecReader(StringRef origin) : origin(origin) {}

  Error fail(const Twine &path, const Twine &msg) const {
    return createStringError(inconvertibleErrorCode(),
                             (origin + ": " + path + ": " + msg).str());
  }

  static std::string join(StringRef path, StringRef key) {
    return path.empty() ? key.str() : (path + "." + key).str();
  }

  /// Rejects keys outside `allowed`, suggesting the nearest allowed name.
  Error checkKeys(const json::Object &o, StringRef path,
                  ArrayRef<StringRef> allowed) const;

  /// `key` as an object; nullptr (no error) when absent and not required.
  Error getObject(const json::Object &o, StringRef path, StringRef key,
                  bool required, const json::Object *&out) const;
  Error getString(const json::Object &o, StringRef path, StringRef key,
                  bool required, std::string &out) const;

  enum class Bound { Positive, NonNegative, UnitInterval };
  /// A number with the given bound; `out` is left alone when the key is
  /// absent and not required. Sets `present` when given.
  Error getNumber(const json::Object &o, StringRef path, StringRef key,
                  bool required, Bound bound, double &out,
                  bool *present = nullptr) const;
  Error getInteger(const json::Object &o, StringRef path, StringRef key,
                   bool required, int64_t lo, int64_t hi, int64_t &out,
                   bool *present = nullptr) const;

  Error readDevice(const json::Object &o, DeviceSpec &d) const;
  Error readLevels(const json::Array &a, std::vector<LevelSpec> &levels) const;
  Error readHost(const json::Object &o, HostSpec &h) const;
  Error readNvme(const json::Object &o, NvmeSpec &n) const;

private:
  std::string origin;
};
} // namespace

static StringRef kindName(const json::Value &v) {
  switch (v.kind()) {
  case json::Value::Null:
    return "null";
  case json::Value::Boolean:
    return "a boolean";
  case json::Value::Number:
    return "a number";
  case json::Value::String:
    return "a string";
  case json::Value::Array:
    return "an array";
  case json::Value::Object:
    return "an object";
  }
  return "a value";
}

/// The allowed name closest to `name`, if it is a plausible typo.
static std::optional<StringRef> nearestName(StringRef name,
                                            ArrayRef<StringRef> allowed) {
  if (name.size() > 64)
    return std::nullopt;
  std::optional<StringRef> best;
  unsigned bestDistance = 0;
  std::string lowered = name.lower();
  for (StringRef a : allowed) {
    unsigned d = StringRef(lowered).edit_distance(a.lower(), true, 16);
    if (!best || d < bestDistance) {
      best = a;
      bestDistance = d;
    }
  }
  unsigned limit = std::max<unsigned>(2, name.size() / 3);
  if (best && bestDistance <= limit)
    return best;
  return std::nullopt;
}

Error SpecReader::checkKeys(const json::Object &o, StringRef path,
                            ArrayRef<StringRef> allowed) const {
  SmallVector<StringRef> keys;
  for (const auto &kv : o)
    keys.push_back(kv.first);
  llvm::sort(keys);
  for (StringRef k : keys) {
    if (llvm::is_contained(allowed, k))
      continue;
    std::string msg = "unknown key";
    if (std::optional<StringRef> near = nearestName(k, allowed))
      msg += (" (did you mean '" + *near + "'?)").str();
    msg += "; expected one of: " + llvm::join(allowed, ", ");
    return fail(join(path, k), msg);
  }
  return Error::success();
}

Error SpecReader::getObject(const json::Object &o, StringRef path,
                            StringRef key, bool required,
                            const json::Object *&out) const {
  out = nullptr;
  const json::Value *v = o.get(key);
  if (!v)
    return required ? fail(join(path, key), "missing") : Error::success();
  out = v->getAsObject();
  if (!out)
    return fail(join(path, key), "expected an object, got " + kindName(*v));
  return Error::success();
}

Error SpecReader::getString(const json::Object &o, StringRef path,
                            StringRef key, bool required,
                            std::string &out) const {
  const json::Value *v = o.get(key);
  if (!v)
    return required ? fail(join(path, key), "missing") : Error::success();
  std::optional<StringRef> s = v->getAsString();
  if (!s)
    return fail(join(path, key), "expected a string, got " + kindName(*v));
  out = s->str();
  return Error::success();
}

Error SpecReader::getNumber(const json::Object &o, StringRef path,
                            StringRef key, bool required, Bound bound,
                            double &out, bool *present) const {
  if (present)
    *present = false;
  const json::Value *v = o.get(key);
  if (!v)
    return required ? fail(join(path, key), "missing") : Error::success();
  std::optional<double> d = v->getAsNumber();
  if (!d)
    return fail(join(path, key), "expected a number, got " + kindName(*v));
  if (!std::isfinite(*d))
    return fail(join(path, key), "must be finite");
  switch (bound) {
  case Bound::Positive:
    if (!(*d > 0))
      return fail(join(path, key), "must be > 0 (got " + fmtNum(*d) + ")");
    break;
  case Bound::NonNegative:
    if (!(*d >= 0))
      return fail(join(path, key), "must be >= 0 (got " + fmtNum(*d) + ")");
    break;
  case Bound::UnitInterval:
    if (!(*d > 0 && *d <= 1))
      return fail(join(path, key),
                  "must be in (0, 1] (got " + fmtNum(*d) + ")");
    break;
  }
  out = *d;
  if (present)
    *present = true;
  return Error::success();
}

Error SpecReader::getInteger(const json::Object &o, StringRef path,
                             StringRef key, bool required, int64_t lo,
                             int64_t hi, int64_t &out, bool *present) const {
  if (present)
    *present = false;
  const json::Value *v = o.get(key);
  if (!v)
    return required ? fail(join(path, key), "missing") : Error::success();
  std::optional<double> d = v->getAsNumber();
  if (!d)
    return fail(join(path, key), "expected an integer, got " + kindName(*v));
  std::optional<int64_t> i = v->getAsInteger();
  if (!i)
    return fail(join(path, key), "must be an integer (got " + fmtNum(*d) + ")");
  if (*i < lo || *i > hi) {
    std::string range =
        hi == std::numeric_limits<int64_t>::max()
            ? (">= " + Twine(lo)).str()
            : ("between " + Twine(lo) + " and " + Twine(hi)).str();
    return fail(join(path, key),
                "must be " + range + " (got " + Twine(*i) + ")");
  }
  out = *i;
  if (present)
    *present = true;
  return Error::success();
}

static constexpr int64_t kNoMax = std::numeric_limits<int64_t>::max();

Error SpecReader::readDevice(const json::Object &o, DeviceSpec &d) const {
  StringRef path = "device";
  if (Error e = checkKeys(o, path,
                          {"name", "peak_TFLOPs", "memory_GiB",
                           "memory_bandwidth_GBps", "kernel_overhead_us",
                           "efficiency"}))
    return e;
  if (Error e = getString(o, path, "name", true, d.name))
    return e;

  const json::Object *peak;
  if (Error e = getObject(o, path, "peak_TFLOPs", true, peak))
    return e;
  SmallVector<StringRef> precisions(std::begin(kPrecisionNames),
                                    std::end(kPrecisionNames));
  std::string peakPath = "device.peak_TFLOPs";
  if (Error e = checkKeys(*peak, peakPath, precisions))
    return e;
  std::array<bool, kNumPrecisions> given{};
  for (unsigned i = 0; i < kNumPrecisions; ++i) {
    Precision p = Precision(i);
    bool required = p == Precision::FP32 || p == Precision::BF16;
    double tflops = 0;
    if (Error e = getNumber(*peak, peakPath, kPrecisionNames[i], required,
                            required ? Bound::Positive : Bound::NonNegative,
                            tflops, &given[i]))
      return e;
    d.peakFlops[i] = tflops * kTFLOP;
  }
  if (!given[unsigned(Precision::TF32)])
    d.peakFlops[unsigned(Precision::TF32)] = d.peak(Precision::FP32);
  if (!given[unsigned(Precision::FP16)])
    d.peakFlops[unsigned(Precision::FP16)] = d.peak(Precision::BF16);

  double memGiB = 0, memGBps = 0, overheadUs = 0;
  if (Error e = getNumber(o, path, "memory_GiB", true, Bound::Positive, memGiB))
    return e;
  if (Error e = getNumber(o, path, "memory_bandwidth_GBps", true,
                          Bound::Positive, memGBps))
    return e;
  if (Error e = getNumber(o, path, "kernel_overhead_us", false,
                          Bound::NonNegative, overheadUs))
    return e;
  d.memoryBytes = memGiB * kGiB;
  d.memoryBandwidth = memGBps * kGB;
  d.kernelOverhead = overheadUs * kMicro;

  d.efficiency.fill(Efficiency{});
  const json::Object *eff;
  if (Error e = getObject(o, path, "efficiency", false, eff))
    return e;
  if (!eff)
    return Error::success();
  SmallVector<StringRef> classes(std::begin(kOpClassNames),
                                 std::end(kOpClassNames));
  if (Error e = checkKeys(*eff, "device.efficiency", classes))
    return e;
  for (unsigned i = 0; i < kNumOpClasses; ++i) {
    const json::Object *entry;
    if (Error e = getObject(*eff, "device.efficiency", kOpClassNames[i], false,
                            entry))
      return e;
    if (!entry)
      continue;
    std::string entryPath = ("device.efficiency." + kOpClassNames[i]).str();
    if (Error e = checkKeys(*entry, entryPath, {"compute", "memory"}))
      return e;
    if (Error e = getNumber(*entry, entryPath, "compute", false,
                            Bound::UnitInterval, d.efficiency[i].compute))
      return e;
    if (Error e = getNumber(*entry, entryPath, "memory", false,
                            Bound::UnitInterval, d.efficiency[i].memory))
      return e;
  }
  return Error::success();
}

Error SpecReader::readLevels(const json::Array &a,
                             std::vector<LevelSpec> &levels) const {
  if (a.empty())
    return fail("levels", "must list at least one level");
  int64_t devicesBelow = 1;
  for (auto [index, value] : llvm::enumerate(a)) {
    std::string path = formatv("levels[{0}]", index).str();
    const json::Object *o = value.getAsObject();
    if (!o)
      return fail(path, "expected an object, got " + kindName(value));
    if (Error e = checkKeys(*o, path,
                            {"name", "kind", "fanout", "bandwidth_GBps", "nics",
                             "nic_Gbps", "latency_us", "bus_efficiency"}))
      return e;
    LevelSpec l;
    if (Error e = getString(*o, path, "name", true, l.name))
      return e;
    if (l.name.empty())
      return fail(path + ".name", "must not be empty");
    for (const LevelSpec &prev : levels)
      if (prev.name == l.name)
        return fail(path + ".name", "duplicate level name '" + l.name + "'");
    if (Error e = getString(*o, path, "kind", true, l.kind))
      return e;
    if (!llvm::is_contained(kLevelKinds, l.kind)) {
      std::string msg = "unknown kind '" + l.kind + "'";
      if (std::optional<StringRef> near = nearestName(l.kind, kLevelKinds))
        msg += (" (did you mean '" + *near + "'?)").str();
      msg += "; expected one of: " +
             llvm::join(ArrayRef<StringRef>(kLevelKinds), ", ");
      return fail(path + ".kind", msg);
    }
    if (Error e = getInteger(*o, path, "fanout", true, 1, kNoMax, l.fanout))
      return e;

    double gbps = 0, nicGbps = 0;
    bool hasBandwidth, hasNics, hasNicGbps;
    if (Error e = getNumber(*o, path, "bandwidth_GBps", false, Bound::Positive,
                            gbps, &hasBandwidth))
      return e;
    if (Error e =
            getInteger(*o, path, "nics", false, 1, kNoMax, l.nics, &hasNics))
      return e;
    if (Error e = getNumber(*o, path, "nic_Gbps", false, Bound::Positive,
                            nicGbps, &hasNicGbps))
      return e;
    if (hasBandwidth && (hasNics || hasNicGbps))
      return fail(path + "." + (hasNics ? "nics" : "nic_Gbps"),
                  "give either bandwidth_GBps or nics and nic_Gbps, not both");
    if (hasNics != hasNicGbps)
      return fail(path + "." + (hasNics ? "nic_Gbps" : "nics"),
                  "missing (nics and nic_Gbps go together)");
    if (!hasBandwidth && !hasNics)
      return fail(path + ".bandwidth_GBps",
                  "missing (give bandwidth_GBps, or nics and nic_Gbps)");
    // NICs serve the node: each device gets its share of their line rate.
    l.bandwidth = hasBandwidth ? gbps * kGB
                               : double(l.nics) * nicGbps / 8.0 * kGB /
                                     double(devicesBelow);

    double latencyUs = 0;
    if (Error e = getNumber(*o, path, "latency_us", false, Bound::NonNegative,
                            latencyUs))
      return e;
    l.latency = latencyUs * kMicro;
    if (Error e = getNumber(*o, path, "bus_efficiency", false,
                            Bound::UnitInterval, l.busEfficiency))
      return e;
    if (devicesBelow > (int64_t(1) << 40) / l.fanout)
      return fail(path + ".fanout", "the cluster has more than 2^40 devices");
    devicesBelow *= l.fanout;
    levels.push_back(std::move(l));
  }
  return Error::success();
}

Error SpecReader::readHost(const json::Object &o, HostSpec &h) const {
  StringRef path = "host";
  if (Error e = checkKeys(o, path,
                          {"memory_GiB", "link", "cpu_cores", "cpu_adam_GBps"}))
    return e;
  double memGiB = 0, adamGBps = 0;
  if (Error e = getNumber(o, path, "memory_GiB", true, Bound::Positive, memGiB))
    return e;
  h.memoryBytes = memGiB * kGiB;
  if (Error e = getInteger(o, path, "cpu_cores", false, 1, kNoMax, h.cpuCores))
    return e;
  if (Error e =
          getNumber(o, path, "cpu_adam_GBps", false, Bound::Positive, adamGBps))
    return e;
  h.cpuAdamBandwidth = adamGBps * kGB;

  const json::Object *link;
  if (Error e = getObject(o, path, "link", true, link))
    return e;
  std::string linkPath = "host.link";
  if (Error e = getString(*link, linkPath, "kind", true, h.linkKind))
    return e;
  double gbps = 0, latencyUs = 0;
  bool hasBandwidth;
  if (h.linkKind == "pcie") {
    if (Error e =
            checkKeys(*link, linkPath,
                      {"kind", "gen", "width", "bandwidth_GBps", "latency_us"}))
      return e;
    int64_t gen = 0, width = 0;
    if (Error e = getInteger(*link, linkPath, "gen", true, 3, 6, gen))
      return e;
    if (Error e = getInteger(*link, linkPath, "width", true, 1, 16, width))
      return e;
    h.pcieGen = int(gen);
    h.pcieWidth = int(width);
    gbps = pcieLaneGBps(h.pcieGen) * double(width);
  } else if (h.linkKind == "c2c") {
    if (Error e = checkKeys(*link, linkPath,
                            {"kind", "bandwidth_GBps", "latency_us"}))
      return e;
  } else {
    return fail(linkPath + ".kind",
                "unknown kind '" + h.linkKind + "'; expected pcie or c2c");
  }
  if (Error e =
          getNumber(*link, linkPath, "bandwidth_GBps", h.linkKind == "c2c",
                    Bound::Positive, gbps, &hasBandwidth))
    return e;
  h.linkBandwidth = gbps * kGB;
  if (Error e = getNumber(*link, linkPath, "latency_us", false,
                          Bound::NonNegative, latencyUs))
    return e;
  h.linkLatency = latencyUs * kMicro;
  return Error::success();
}

Error SpecReader::readNvme(const json::Object &o, NvmeSpec &n) const {
  StringRef path = "nvme";
  if (Error e = checkKeys(o, path, {"capacity_TiB", "read_GBps", "write_GBps"}))
    return e;
  double tib = 0, read = 0, write = 0;
  if (Error e = getNumber(o, path, "capacity_TiB", true, Bound::Positive, tib))
    return e;
  if (Error e = getNumber(o, path, "read_GBps", true, Bound::Positive, read))
    return e;
  if (Error e = getNumber(o, path, "write_GBps", true, Bound::Positive, write))
    return e;
  n.capacityBytes = tib * kTiB;
  n.readBandwidth = read * kGB;
  n.writeBandwidth = write * kGB;
  return Error::success();
}

Expected<ClusterSpec> loom::parseClusterSpec(StringRef json, StringRef origin) {
  SpecReader reader(origin);
  Expected<json::Value> root = json::parse(json);
  if (!root) {
    // json::ParseError prints "[line:col, byte=N]: message".
    std::string msg = toString(root.takeError());
    SmallVector<StringRef> m;
    if (Regex("^\\[([0-9]+):([0-9]+), byte=[0-9]+\\]: (.*)$").match(msg, &m))
      return createStringError(
          inconvertibleErrorCode(),
          (origin + ":" + m[1] + ":" + m[2] + ": invalid JSON: " + m[3]).str());
    return createStringError(inconvertibleErrorCode(),
                             (origin + ": invalid JSON: " + msg).str());
  }
  const json::Object *top = root->getAsObject();
  if (!top)
    return createStringError(
        inconvertibleErrorCode(),
        (origin + ": expected a JSON object, got " + kindName(*root)).str());
  if (Error e = reader.checkKeys(*top, "",
                                 {"name", "description", "sources", "device",
                                  "levels", "host", "nvme"}))
    return std::move(e);

  ClusterSpec spec;
  if (Error e = reader.getString(*top, "", "name", true, spec.name))
    return std::move(e);
  if (Error e =
          reader.getString(*top, "", "description", false, spec.description))
    return std::move(e);
  if (const json::Value *sources = top->get("sources")) {
    // Free text citing where the numbers come from; not kept.
    const json::Array *a = sources->getAsArray();
    if (!a)
      return reader.fail("sources", "expected an array of strings, got " +
                                        kindName(*sources));
    for (auto [i, s] : llvm::enumerate(*a))
      if (!s.getAsString())
        return reader.fail(formatv("sources[{0}]", i).str(),
                           "expected a string, got " + kindName(s));
  }

  const json::Object *device;
  if (Error e = reader.getObject(*top, "", "device", true, device))
    return std::move(e);
  if (Error e = reader.readDevice(*device, spec.device))
    return std::move(e);

  const json::Value *levels = top->get("levels");
  if (!levels)
    return reader.fail("levels", "missing");
  const json::Array *levelArray = levels->getAsArray();
  if (!levelArray)
    return reader.fail("levels", "expected an array, got " + kindName(*levels));
  if (Error e = reader.readLevels(*levelArray, spec.levels))
    return std::move(e);

  const json::Object *host;
  if (Error e = reader.getObject(*top, "", "host", true, host))
    return std::move(e);
  if (Error e = reader.readHost(*host, spec.host))
    return std::move(e);

  const json::Object *nvme;
  if (Error e = reader.getObject(*top, "", "nvme", false, nvme))
    return std::move(e);
  if (nvme)
    if (Error e = reader.readNvme(*nvme, spec.nvme))
      return std::move(e);
  return spec;
}

//===----------------------------------------------------------------------===//
// Loading presets and files
//===----------------------------------------------------------------------===//

/// Applies a `nodes=N` suffix: resizes the outermost (network) level.
static Error resizeNodes(ClusterSpec &spec, StringRef what, StringRef suffix) {
  auto fail = [&](const Twine &msg) {
    return createStringError(inconvertibleErrorCode(),
                             (what + ": " + msg).str());
  };
  StringRef value = suffix;
  if (!value.consume_front("nodes="))
    return fail("unknown option '" + suffix + "'; expected nodes=N");
  int64_t nodes = 0;
  if (value.getAsInteger(10, nodes) || nodes < 1)
    return fail("nodes must be an integer >= 1 (got '" + value + "')");
  LevelSpec &outer = spec.levels.back();
  if (!isNetworkKind(outer.kind))
    return fail("outermost level '" + outer.name + "' is a " + outer.kind +
                " level, not a network (infiniband, roce, ethernet); "
                "only multi-node clusters take nodes=N");
  if (nodes > (int64_t(1) << 40) / std::max<int64_t>(1, spec.devicesPerNode()))
    return fail("nodes=" + value + " is too many");
  outer.fanout = nodes;
  return Error::success();
}

static Expected<ClusterSpec> loadPresetOrFile(StringRef name) {
  if (std::optional<std::string> text = loom::detail::clusterPresetJSON(name))
    return parseClusterSpec(*text, name);
  if (sys::fs::is_regular_file(name)) {
    ErrorOr<std::unique_ptr<MemoryBuffer>> buf =
        MemoryBuffer::getFile(name, /*IsText=*/true);
    if (!buf)
      return createStringError(inconvertibleErrorCode(),
                               (name + ": " + buf.getError().message()).str());
    return parseClusterSpec((*buf)->getBuffer(), name);
  }
  std::vector<std::string> names = clusterPresetNames();
  return createStringError(inconvertibleErrorCode(),
                           ("unknown cluster '" + name + "': not a preset (" +
                            llvm::join(names, ", ") + ") and no such file")
                               .str());
}

Expected<ClusterSpec> loom::loadCluster(StringRef nameOrPath) {
  // Presets and files come first as given; then NAME:nodes=N.
  if (loom::detail::clusterPresetJSON(nameOrPath) ||
      sys::fs::is_regular_file(nameOrPath))
    return loadPresetOrFile(nameOrPath);
  auto [base, suffix] = nameOrPath.rsplit(':');
  if (suffix.starts_with("nodes=") && !base.empty()) {
    Expected<ClusterSpec> spec = loadPresetOrFile(base);
    if (!spec)
      return spec.takeError();
    if (Error e = resizeNodes(*spec, nameOrPath, suffix))
      return std::move(e);
    spec->name = nameOrPath.str();
    return spec;
  }
  return loadPresetOrFile(nameOrPath);
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

std::string loom::clusterSpecToJSON(const ClusterSpec &spec) {
  std::string out;
  raw_string_ostream os(out);
  json::OStream j(os, /*IndentSize=*/2);
  auto num = [&](StringRef key, double v) {
    j.attributeBegin(key);
    j.rawValue(fmtNum(v));
    j.attributeEnd();
  };
  j.object([&] {
    j.attribute("name", spec.name);
    if (!spec.description.empty())
      j.attribute("description", spec.description);

    const DeviceSpec &d = spec.device;
    j.attributeObject("device", [&] {
      j.attribute("name", d.name);
      j.attributeObject("peak_TFLOPs", [&] {
        for (unsigned i = 0; i < kNumPrecisions; ++i)
          num(kPrecisionNames[i], d.peakFlops[i] / kTFLOP);
      });
      num("memory_GiB", d.memoryBytes / kGiB);
      num("memory_bandwidth_GBps", d.memoryBandwidth / kGB);
      num("kernel_overhead_us", d.kernelOverhead / kMicro);
      j.attributeObject("efficiency", [&] {
        for (unsigned i = 0; i < kNumOpClasses; ++i)
          j.attributeObject(kOpClassNames[i], [&] {
            num("compute", d.efficiency[i].compute);
            num("memory", d.efficiency[i].memory);
          });
      });
    });

    j.attributeArray("levels", [&] {
      int64_t devicesBelow = 1;
      for (const LevelSpec &l : spec.levels) {
        j.object([&] {
          j.attribute("name", l.name);
          j.attribute("kind", l.kind);
          j.attribute("fanout", l.fanout);
          if (l.nics > 0) {
            j.attribute("nics", l.nics);
            num("nic_Gbps", l.bandwidth * double(devicesBelow) * 8.0 /
                                double(l.nics) / kGB);
          } else {
            num("bandwidth_GBps", l.bandwidth / kGB);
          }
          num("latency_us", l.latency / kMicro);
          num("bus_efficiency", l.busEfficiency);
        });
        devicesBelow *= l.fanout;
      }
    });

    const HostSpec &h = spec.host;
    j.attributeObject("host", [&] {
      num("memory_GiB", h.memoryBytes / kGiB);
      j.attributeObject("link", [&] {
        j.attribute("kind", h.linkKind);
        if (h.linkKind == "pcie") {
          j.attribute("gen", h.pcieGen);
          j.attribute("width", h.pcieWidth);
          double standard = pcieLaneGBps(h.pcieGen) * h.pcieWidth;
          if (fmtNum(standard) != fmtNum(h.linkBandwidth / kGB))
            num("bandwidth_GBps", h.linkBandwidth / kGB);
        } else {
          num("bandwidth_GBps", h.linkBandwidth / kGB);
        }
        num("latency_us", h.linkLatency / kMicro);
      });
      if (h.cpuCores > 0)
        j.attribute("cpu_cores", h.cpuCores);
      if (h.cpuAdamBandwidth > 0)
        num("cpu_adam_GBps", h.cpuAdamBandwidth / kGB);
    });

    const NvmeSpec &n = spec.nvme;
    if (n.capacityBytes > 0)
      j.attributeObject("nvme", [&] {
        num("capacity_TiB", n.capacityBytes / kTiB);
        num("read_GBps", n.readBandwidth / kGB);
        num("write_GBps", n.writeBandwidth / kGB);
      });
  });
  os << "\n";
  return out;
}

//===----------------------------------------------------------------------===//
// Mapping grids onto the hierarchy
//===----------------------------------------------------------------------===//

static std::string shapeString(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "()";
  return llvm::join(
      llvm::map_range(shape, [](int64_t d) { return std::to_string(d); }), "x");
}

Expected<SmallVector<AxisSpan>>
loom::mapGridOntoCluster(const ClusterSpec &cluster,
                         ArrayRef<int64_t> gridShape,
                         ArrayRef<unsigned> innerToOuter) {
  auto fail = [](const Twine &msg) {
    return createStringError(inconvertibleErrorCode(), msg.str());
  };
  size_t rank = gridShape.size();
  SmallVector<unsigned> order;
  if (innerToOuter.empty()) {
    for (size_t i = rank; i > 0; --i)
      order.push_back(unsigned(i - 1));
  } else {
    order.assign(innerToOuter.begin(), innerToOuter.end());
    SmallVector<bool> seen(rank, false);
    bool ok = order.size() == rank;
    for (unsigned a : order) {
      ok = ok && a < rank && !seen[a];
      if (a < rank)
        seen[a] = true;
    }
    if (!ok)
      return fail(
          "axis order [" +
          llvm::join(llvm::map_range(
                         order, [](unsigned a) { return std::to_string(a); }),
                     ", ") +
          "] is not a permutation of the " + Twine(rank) + " grid axes");
  }

  int64_t devices = cluster.numDevices();
  double needed = 1; // as a double: a wild grid must not overflow
  for (auto [i, d] : llvm::enumerate(gridShape)) {
    if (d < 1)
      return fail("grid " + shapeString(gridShape) + ": axis " + Twine(i) +
                  " has size " + Twine(d) + "; sizes must be >= 1");
    needed *= double(d);
  }
  if (needed > double(devices))
    return fail("grid " + shapeString(gridShape) + " needs " + fmtNum(needed) +
                " devices; cluster '" + cluster.name + "' has " +
                Twine(devices));
  int64_t total = int64_t(needed);

  SmallVector<AxisSpan> spans(rank);
  int64_t stride = 1;
  for (unsigned axis : order) {
    int64_t size = gridShape[axis];
    AxisSpan &span = spans[axis];
    span.membersPerLevel.assign(cluster.levels.size(), 1);
    int64_t capacity = 1; // devices in one unit of this level
    int64_t prevMembers = 1;
    for (auto [l, level] : llvm::enumerate(cluster.levels)) {
      capacity *= level.fanout;
      int64_t members = size;
      // The whole grid fits in one unit: every group lies inside it.
      if (capacity < total) {
        bool aligned;
        if (capacity <= stride) {
          aligned = stride % capacity == 0;
          members = 1;
        } else {
          int64_t perUnit = capacity / stride;
          aligned =
              capacity % stride == 0 &&
              (perUnit >= size ? perUnit % size == 0 : size % perUnit == 0);
          members = std::min(perUnit, size);
        }
        if (!aligned)
          return fail("grid axis " + Twine(axis) + " (size " + Twine(size) +
                      ", stride " + Twine(stride) +
                      ") does not align with level '" + level.name +
                      "' (fanout " + Twine(level.fanout) + ", " +
                      Twine(capacity) + " devices per unit)");
      }
      span.membersPerLevel[l] = members / prevMembers;
      prevMembers = members;
    }
    stride *= size;
  }
  return spans;
}
