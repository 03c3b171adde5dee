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
#include "JSONReader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

using namespace llvm;
using namespace loom;
using loom::detail::formatNumber;
using loom::detail::JSONReader;

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

/// The share of a PCIe link's rate a large pinned cudaMemcpyAsync reaches
/// (protocol overhead beyond line encoding): 55.3 of 63.0 GB/s each way on
/// an H100 at gen5 x16, and the same 0.88 from 4 MiB up, with the preset's
/// 5 us latency accounting for smaller copies (docs/benchmarks.md,
/// bench/gpu_host_link.py).
constexpr double kPcieCopyEfficiency = 0.88;

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
/// Reads one spec. Each error names the field by JSON path:
/// `levels[1].bandwidth_GBps`.
class SpecReader : public JSONReader {
public:
  explicit SpecReader(StringRef origin) : JSONReader(origin, Style::Detailed) {}

  Error readDevice(const json::Object &o, DeviceSpec &d) const;
  Error readLevels(const json::Array &a, std::vector<LevelSpec> &levels) const;
  Error readHost(const json::Object &o, HostSpec &h) const;
  Error readNvme(const json::Object &o, NvmeSpec &n) const;
};
} // namespace

Error SpecReader::readDevice(const json::Object &o, DeviceSpec &d) const {
  StringRef path = "device";
  if (Error e = getString(o, path, "name", Required, d.name))
    return e;

  const json::Object *peak;
  if (Error e =
          getObject(o, path, "peak_TFLOPs", Required, peak, kPrecisionNames))
    return e;
  std::array<bool, kNumPrecisions> given{};
  for (unsigned i = 0; i < kNumPrecisions; ++i) {
    Precision p = Precision(i);
    bool required = p == Precision::FP32 || p == Precision::BF16;
    double tflops = 0;
    if (Error e = getNumber(
            *peak, "device.peak_TFLOPs", kPrecisionNames[i], Presence(required),
            required ? Bound::Positive : Bound::NonNegative, tflops, &given[i]))
      return e;
    d.peakFlops[i] = tflops * kTFLOP;
  }
  if (!given[unsigned(Precision::TF32)])
    d.peakFlops[unsigned(Precision::TF32)] = d.peak(Precision::FP32);
  if (!given[unsigned(Precision::FP16)])
    d.peakFlops[unsigned(Precision::FP16)] = d.peak(Precision::BF16);

  double memGiB = 0, memGBps = 0, overheadUs = 0;
  if (Error e =
          getNumber(o, path, "memory_GiB", Required, Bound::Positive, memGiB))
    return e;
  if (Error e = getNumber(o, path, "memory_bandwidth_GBps", Required,
                          Bound::Positive, memGBps))
    return e;
  if (Error e = getNumber(o, path, "kernel_overhead_us", Optional,
                          Bound::NonNegative, overheadUs))
    return e;
  d.memoryBytes = memGiB * kGiB;
  d.memoryBandwidth = memGBps * kGB;
  d.kernelOverhead = overheadUs * kMicro;

  d.efficiency.fill(Efficiency{});
  const json::Object *eff;
  if (Error e = getObject(o, path, "efficiency", Optional, eff, kOpClassNames))
    return e;
  for (unsigned i = 0; eff && i < kNumOpClasses; ++i) {
    const json::Object *entry;
    if (Error e = getObject(*eff, "device.efficiency", kOpClassNames[i],
                            Optional, entry, {"compute", "memory"}))
      return e;
    if (!entry)
      continue;
    std::string entryPath = ("device.efficiency." + kOpClassNames[i]).str();
    if (Error e = getNumber(*entry, entryPath, "compute", Optional,
                            Bound::UnitInterval, d.efficiency[i].compute))
      return e;
    if (Error e = getNumber(*entry, entryPath, "memory", Optional,
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
    const json::Object *o;
    if (Error e =
            readObject(value, path,
                       {"name", "kind", "fanout", "bandwidth_GBps", "nics",
                        "nic_Gbps", "latency_us", "bus_efficiency"},
                       o))
      return e;
    LevelSpec l;
    if (Error e = getString(*o, path, "name", Required, l.name,
                            /*allowEmpty=*/false))
      return e;
    for (const LevelSpec &prev : levels)
      if (prev.name == l.name)
        return fail(path + ".name", "duplicate level name '" + l.name + "'");
    if (Error e = getString(*o, path, "kind", Required, l.kind))
      return e;
    if (!llvm::is_contained(kLevelKinds, l.kind))
      return failUnknown(path + ".kind", "unknown kind '" + l.kind + "'",
                         l.kind, kLevelKinds);
    if (Error e = getInteger(*o, path, "fanout", Required, 1, kNoMax, l.fanout))
      return e;

    double gbps = 0, nicGbps = 0;
    bool hasBandwidth, hasNics, hasNicGbps;
    if (Error e = getNumber(*o, path, "bandwidth_GBps", Optional,
                            Bound::Positive, gbps, &hasBandwidth))
      return e;
    if (Error e =
            getInteger(*o, path, "nics", Optional, 1, kNoMax, l.nics, &hasNics))
      return e;
    if (Error e = getNumber(*o, path, "nic_Gbps", Optional, Bound::Positive,
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
    if (Error e = getNumber(*o, path, "latency_us", Optional,
                            Bound::NonNegative, latencyUs))
      return e;
    l.latency = latencyUs * kMicro;
    if (Error e = getNumber(*o, path, "bus_efficiency", Optional,
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
  double memGiB = 0, adamGBps = 0;
  if (Error e =
          getNumber(o, path, "memory_GiB", Required, Bound::Positive, memGiB))
    return e;
  h.memoryBytes = memGiB * kGiB;
  if (Error e =
          getInteger(o, path, "cpu_cores", Optional, 1, kNoMax, h.cpuCores))
    return e;
  if (Error e = getNumber(o, path, "cpu_adam_GBps", Optional, Bound::Positive,
                          adamGBps))
    return e;
  h.cpuAdamBandwidth = adamGBps * kGB;

  const json::Object *link;
  if (Error e = getObject(o, path, "link", Required, link))
    return e;
  std::string linkPath = "host.link";
  if (Error e = getString(*link, linkPath, "kind", Required, h.linkKind))
    return e;
  double gbps = 0, latencyUs = 0;
  if (h.linkKind == "pcie") {
    if (Error e =
            checkKeys(*link, linkPath,
                      {"kind", "gen", "width", "bandwidth_GBps", "latency_us",
                       "efficiency"}))
      return e;
    int64_t gen = 0, width = 0;
    if (Error e = getInteger(*link, linkPath, "gen", Required, 3, 6, gen))
      return e;
    if (Error e = getInteger(*link, linkPath, "width", Required, 1, 16, width))
      return e;
    h.pcieGen = int(gen);
    h.pcieWidth = int(width);
    gbps = pcieLaneGBps(h.pcieGen) * double(width);
    h.linkEfficiency = kPcieCopyEfficiency;
  } else if (h.linkKind == "c2c") {
    if (Error e = checkKeys(*link, linkPath,
                            {"kind", "bandwidth_GBps", "latency_us", "efficiency"}))
      return e;
  } else {
    return fail(linkPath + ".kind",
                "unknown kind '" + h.linkKind + "'; expected pcie or c2c");
  }
  if (Error e = getNumber(*link, linkPath, "bandwidth_GBps",
                          Presence(h.linkKind == "c2c"), Bound::Positive, gbps))
    return e;
  h.linkBandwidth = gbps * kGB;
  if (Error e = getNumber(*link, linkPath, "latency_us", Optional,
                          Bound::NonNegative, latencyUs))
    return e;
  h.linkLatency = latencyUs * kMicro;
  if (Error e = getNumber(*link, linkPath, "efficiency", Optional,
                          Bound::UnitInterval, h.linkEfficiency))
    return e;
  return Error::success();
}

Error SpecReader::readNvme(const json::Object &o, NvmeSpec &n) const {
  StringRef path = "nvme";
  double tib = 0, read = 0, write = 0;
  if (Error e =
          getNumber(o, path, "capacity_TiB", Required, Bound::Positive, tib))
    return e;
  if (Error e =
          getNumber(o, path, "read_GBps", Required, Bound::Positive, read))
    return e;
  if (Error e =
          getNumber(o, path, "write_GBps", Required, Bound::Positive, write))
    return e;
  n.capacityBytes = tib * kTiB;
  n.readBandwidth = read * kGB;
  n.writeBandwidth = write * kGB;
  return Error::success();
}

/// The file's values passed their bounds in the file's units; converted to
/// SI (bytes, bytes/s, FLOP/s) a huge one can overflow to infinity and a tiny
/// one underflow to 0, which would make the spec unprintable or a link
/// infinitely slow. Found by fuzzing (fuzz/cost).
static Error checkConvertedRanges(const ClusterSpec &spec, const SpecReader &reader) {
  struct Field {
    double value;
    std::string name;
    bool positive;
  };
  const DeviceSpec &d = spec.device;
  const HostSpec &h = spec.host;
  const NvmeSpec &n = spec.nvme;
  std::vector<Field> fields = {
      {d.memoryBytes, "device.memory_GiB", true},
      {d.memoryBandwidth, "device.memory_bandwidth_GBps", true},
      {d.kernelOverhead, "device.kernel_overhead_us", false},
      {h.memoryBytes, "host.memory_GiB", true},
      {h.linkBandwidth, "host.link.bandwidth_GBps", true},
      {h.linkLatency, "host.link.latency_us", false},
      {h.cpuAdamBandwidth, "host.cpu_adam_GBps", false},
      {n.capacityBytes, "nvme.capacity_TiB", false},
      {n.readBandwidth, "nvme.read_GBps", false},
      {n.writeBandwidth, "nvme.write_GBps", false}};
  for (unsigned p = 0; p < kNumPrecisions; ++p)
    fields.push_back({d.peakFlops[p],
                      ("device.peak_TFLOPs." + stringifyPrecision(Precision(p))).str(),
                      Precision(p) == Precision::FP32 || Precision(p) == Precision::BF16});
  for (auto [i, l] : llvm::enumerate(spec.levels)) {
    fields.push_back({l.bandwidth,
                      formatv("levels[{0}] bandwidth (bandwidth_GBps or nics x nic_Gbps)", i),
                      true});
    fields.push_back({l.latency, formatv("levels[{0}].latency_us", i), false});
  }
  for (const Field &f : fields) {
    if (!std::isfinite(f.value))
      return reader.fail(f.name, "too large (overflows once converted to SI units)");
    if (f.positive && !(f.value > 0))
      return reader.fail(f.name, "too small (underflows to 0 once converted to SI units)");
  }
  return Error::success();
}

Expected<ClusterSpec> loom::parseClusterSpec(StringRef json, StringRef origin) {
  SpecReader reader(origin);
  Expected<json::Object> top = reader.parseObject(json);
  if (!top)
    return top.takeError();
  if (Error e = reader.checkKeys(*top, "",
                                 {"name", "description", "sources", "device",
                                  "levels", "host", "nvme"}))
    return std::move(e);

  ClusterSpec spec;
  if (Error e =
          reader.getString(*top, "", "name", JSONReader::Required, spec.name))
    return std::move(e);
  if (Error e = reader.getString(*top, "", "description", JSONReader::Optional,
                                 spec.description))
    return std::move(e);
  // Free text citing where the numbers come from; checked, not kept.
  const json::Array *sources;
  if (Error e = reader.getArray(*top, "", "sources", JSONReader::Optional,
                                sources, "an array of strings"))
    return std::move(e);
  for (size_t i = 0; sources && i < sources->size(); ++i)
    if (!(*sources)[i].getAsString())
      return reader.wrongKind(formatv("sources[{0}]", i).str(), "a string",
                              (*sources)[i]);

  const json::Object *device;
  if (Error e = reader.getObject(
          *top, "", "device", JSONReader::Required, device,
          {"name", "peak_TFLOPs", "memory_GiB", "memory_bandwidth_GBps",
           "kernel_overhead_us", "efficiency"}))
    return std::move(e);
  if (Error e = reader.readDevice(*device, spec.device))
    return std::move(e);

  const json::Array *levels;
  if (Error e =
          reader.getArray(*top, "", "levels", JSONReader::Required, levels))
    return std::move(e);
  if (Error e = reader.readLevels(*levels, spec.levels))
    return std::move(e);

  const json::Object *host;
  if (Error e = reader.getObject(
          *top, "", "host", JSONReader::Required, host,
          {"memory_GiB", "link", "cpu_cores", "cpu_adam_GBps"}))
    return std::move(e);
  if (Error e = reader.readHost(*host, spec.host))
    return std::move(e);

  const json::Object *nvme;
  if (Error e = reader.getObject(*top, "", "nvme", JSONReader::Optional, nvme,
                                 {"capacity_TiB", "read_GBps", "write_GBps"}))
    return std::move(e);
  if (nvme)
    if (Error e = reader.readNvme(*nvme, spec.nvme))
      return std::move(e);
  if (Error e = checkConvertedRanges(spec, reader))
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
    j.rawValue(formatNumber(v));
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
          if (formatNumber(standard) != formatNumber(h.linkBandwidth / kGB))
            num("bandwidth_GBps", h.linkBandwidth / kGB);
        } else {
          num("bandwidth_GBps", h.linkBandwidth / kGB);
        }
        num("latency_us", h.linkLatency / kMicro);
        if (formatNumber(h.linkEfficiency) !=
            formatNumber(h.linkKind == "pcie" ? kPcieCopyEfficiency : 1.0))
          num("efficiency", h.linkEfficiency);
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
    return fail("grid " + shapeString(gridShape) + " needs " +
                formatNumber(needed) + " devices; cluster '" + cluster.name +
                "' has " + Twine(devices));
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

double loom::precisionBytes(Precision p) {
  switch (p) {
  case Precision::FP32:
  case Precision::TF32:
    return 4;
  case Precision::BF16:
  case Precision::FP16:
    return 2;
  case Precision::FP8:
  case Precision::INT8:
    return 1;
  }
  return 4;
}

double loom::rooflineSeconds(const DeviceSpec &dev, OpClass cls, double flops,
                             double bytes, Precision p) {
  if (flops <= 0 && bytes <= 0)
    return 0;
  const Efficiency &eff = dev.eff(cls);
  double peak = dev.peak(p) > 0 ? dev.peak(p) : dev.peak(Precision::FP32);
  double compute = flops / (peak * eff.compute);
  double memory = bytes / (dev.memoryBandwidth * eff.memory);
  return std::max(compute, memory) + dev.kernelOverhead;
}
