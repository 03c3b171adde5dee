//===- ClusterTest.cpp - cluster specs, presets and grid mapping ----------===//
//
// Parsing (units, defaults), every validation error naming its field, the
// presets compiled into Loom and `:nodes=N`, JSON round trips, and how device
// grids map onto the interconnect hierarchy.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/Cluster.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <string>

using namespace loom;
using namespace llvm;

namespace {

/// A complete two-level spec; tests replace pieces of it by text.
constexpr const char *kBase = R"({
  "name": "test",
  "description": "two nodes of four",
  "device": {
    "name": "GPU",
    "peak_TFLOPs": {"fp32": 20, "bf16": 300},
    "memory_GiB": 40,
    "memory_bandwidth_GBps": 1500,
    "kernel_overhead_us": 4,
    "efficiency": {"matmul": {"compute": 0.7, "memory": 0.8}}
  },
  "levels": [
    {"name": "nvlink", "kind": "nvswitch", "fanout": 4, "bandwidth_GBps": 300, "latency_us": 2, "bus_efficiency": 0.8},
    {"name": "ib", "kind": "infiniband", "fanout": 2, "nics": 4, "nic_Gbps": 200, "latency_us": 5}
  ],
  "host": {"memory_GiB": 1024, "link": {"kind": "pcie", "gen": 4, "width": 16}, "cpu_cores": 64, "cpu_adam_GBps": 40},
  "nvme": {"capacity_TiB": 15, "read_GBps": 25, "write_GBps": 20}
})";

std::string replaced(StringRef from, StringRef to,
                     std::string s = std::string(kBase)) {
  size_t pos = s.find(from.str());
  EXPECT_NE(pos, std::string::npos) << "kBase lacks: " << from.str();
  if (pos != std::string::npos)
    s.replace(pos, from.size(), to.str());
  return s;
}

/// The error message of parsing `json`, or "" when it parses.
std::string errorOf(StringRef json) {
  Expected<ClusterSpec> spec = parseClusterSpec(json, "t.json");
  if (spec)
    return "";
  return toString(spec.takeError());
}

void expectSameSpec(const ClusterSpec &a, const ClusterSpec &b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.description, b.description);
  EXPECT_EQ(a.device.name, b.device.name);
  for (unsigned i = 0; i < kNumPrecisions; ++i)
    EXPECT_DOUBLE_EQ(a.device.peakFlops[i], b.device.peakFlops[i]) << i;
  EXPECT_DOUBLE_EQ(a.device.memoryBytes, b.device.memoryBytes);
  EXPECT_DOUBLE_EQ(a.device.memoryBandwidth, b.device.memoryBandwidth);
  EXPECT_DOUBLE_EQ(a.device.kernelOverhead, b.device.kernelOverhead);
  for (unsigned i = 0; i < kNumOpClasses; ++i) {
    EXPECT_DOUBLE_EQ(a.device.efficiency[i].compute,
                     b.device.efficiency[i].compute);
    EXPECT_DOUBLE_EQ(a.device.efficiency[i].memory,
                     b.device.efficiency[i].memory);
  }
  ASSERT_EQ(a.levels.size(), b.levels.size());
  for (size_t i = 0; i < a.levels.size(); ++i) {
    const LevelSpec &x = a.levels[i], &y = b.levels[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.fanout, y.fanout);
    EXPECT_DOUBLE_EQ(x.bandwidth, y.bandwidth);
    EXPECT_DOUBLE_EQ(x.latency, y.latency);
    EXPECT_DOUBLE_EQ(x.busEfficiency, y.busEfficiency);
    EXPECT_EQ(x.nics, y.nics);
  }
  EXPECT_DOUBLE_EQ(a.host.memoryBytes, b.host.memoryBytes);
  EXPECT_EQ(a.host.linkKind, b.host.linkKind);
  EXPECT_EQ(a.host.pcieGen, b.host.pcieGen);
  EXPECT_EQ(a.host.pcieWidth, b.host.pcieWidth);
  EXPECT_DOUBLE_EQ(a.host.linkBandwidth, b.host.linkBandwidth);
  EXPECT_DOUBLE_EQ(a.host.linkLatency, b.host.linkLatency);
  EXPECT_DOUBLE_EQ(a.host.linkEfficiency, b.host.linkEfficiency);
  EXPECT_EQ(a.host.cpuCores, b.host.cpuCores);
  EXPECT_DOUBLE_EQ(a.host.cpuAdamBandwidth, b.host.cpuAdamBandwidth);
  EXPECT_DOUBLE_EQ(a.nvme.capacityBytes, b.nvme.capacityBytes);
  EXPECT_DOUBLE_EQ(a.nvme.readBandwidth, b.nvme.readBandwidth);
  EXPECT_DOUBLE_EQ(a.nvme.writeBandwidth, b.nvme.writeBandwidth);
}

/// Writes `spec` as JSON, reads it back and checks nothing changed.
void expectRoundTrip(const ClusterSpec &spec) {
  std::string json = clusterSpecToJSON(spec);
  Expected<ClusterSpec> again = parseClusterSpec(json, "round trip");
  ASSERT_TRUE(bool(again)) << toString(again.takeError()) << "\n" << json;
  expectSameSpec(spec, *again);
  EXPECT_EQ(clusterSpecToJSON(*again), json);
}

} // namespace

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

TEST(ClusterParse, UnitsAndDefaults) {
  Expected<ClusterSpec> spec = parseClusterSpec(kBase, "t.json");
  ASSERT_TRUE(bool(spec)) << toString(spec.takeError());
  const DeviceSpec &d = spec->device;
  EXPECT_EQ(spec->name, "test");
  EXPECT_EQ(d.name, "GPU");
  EXPECT_DOUBLE_EQ(d.peak(Precision::FP32), 20e12);
  EXPECT_DOUBLE_EQ(d.peak(Precision::BF16), 300e12);
  EXPECT_DOUBLE_EQ(d.peak(Precision::TF32), 20e12);  // defaults to fp32
  EXPECT_DOUBLE_EQ(d.peak(Precision::FP16), 300e12); // defaults to bf16
  EXPECT_EQ(d.peak(Precision::FP8), 0);
  EXPECT_EQ(d.peak(Precision::INT8), 0);
  EXPECT_DOUBLE_EQ(d.memoryBytes, 40.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(d.memoryBandwidth, 1500e9);
  EXPECT_DOUBLE_EQ(d.kernelOverhead, 4e-6);
  EXPECT_DOUBLE_EQ(d.eff(OpClass::Matmul).compute, 0.7);
  EXPECT_DOUBLE_EQ(d.eff(OpClass::Matmul).memory, 0.8);
  EXPECT_DOUBLE_EQ(d.eff(OpClass::Elementwise).compute, 1.0);
  EXPECT_DOUBLE_EQ(d.eff(OpClass::DataMovement).memory, 1.0);

  ASSERT_EQ(spec->levels.size(), 2u);
  const LevelSpec &nv = spec->levels[0], &ib = spec->levels[1];
  EXPECT_EQ(nv.kind, "nvswitch");
  EXPECT_DOUBLE_EQ(nv.bandwidth, 300e9);
  EXPECT_DOUBLE_EQ(nv.latency, 2e-6);
  EXPECT_DOUBLE_EQ(nv.busEfficiency, 0.8);
  EXPECT_EQ(nv.nics, 0);
  // 4 NICs x 200 Gb/s = 100 GB/s per node, shared by 4 devices.
  EXPECT_DOUBLE_EQ(ib.bandwidth, 25e9);
  EXPECT_EQ(ib.nics, 4);
  EXPECT_DOUBLE_EQ(ib.busEfficiency, 1.0); // default

  EXPECT_EQ(spec->numDevices(), 8);
  EXPECT_EQ(spec->devicesPerNode(), 4);
  EXPECT_EQ(spec->host.linkKind, "pcie");
  EXPECT_DOUBLE_EQ(spec->host.linkBandwidth, 16 * 1.969e9);
  // Pinned copies reach 0.88 of a PCIe link's rate (measured on an H100).
  EXPECT_DOUBLE_EQ(spec->host.linkEfficiency, 0.88);
  EXPECT_DOUBLE_EQ(spec->host.copyBandwidth(), 0.88 * 16 * 1.969e9);
  EXPECT_EQ(spec->host.cpuCores, 64);
  EXPECT_DOUBLE_EQ(spec->host.cpuAdamBandwidth, 40e9);
  EXPECT_DOUBLE_EQ(spec->nvme.capacityBytes, 15.0 * (1ull << 40));
  EXPECT_DOUBLE_EQ(spec->nvme.readBandwidth, 25e9);
  expectRoundTrip(*spec);
}

TEST(ClusterParse, OptionalPieces) {
  std::string json = replaced(
      R"(,
  "nvme": {"capacity_TiB": 15, "read_GBps": 25, "write_GBps": 20})",
      "");
  json = replaced(R"({"kind": "pcie", "gen": 4, "width": 16})",
                  R"({"kind": "c2c", "bandwidth_GBps": 450})", json);
  Expected<ClusterSpec> spec = parseClusterSpec(json, "t.json");
  ASSERT_TRUE(bool(spec)) << toString(spec.takeError());
  EXPECT_EQ(spec->nvme.capacityBytes, 0);
  EXPECT_EQ(spec->host.linkKind, "c2c");
  EXPECT_DOUBLE_EQ(spec->host.linkBandwidth, 450e9);
  EXPECT_DOUBLE_EQ(spec->host.linkEfficiency, 1.0); // not measured: none assumed
  expectRoundTrip(*spec);

  // An explicit PCIe bandwidth overrides the per-lane rate.
  spec = parseClusterSpec(
      replaced(R"("width": 16})", R"("width": 16, "bandwidth_GBps": 26})"),
      "t.json");
  ASSERT_TRUE(bool(spec)) << toString(spec.takeError());
  EXPECT_DOUBLE_EQ(spec->host.linkBandwidth, 26e9);
  expectRoundTrip(*spec);

  // A measured copy efficiency replaces the default, and round-trips.
  spec = parseClusterSpec(
      replaced(R"("width": 16})", R"("width": 16, "efficiency": 0.8})"), "t.json");
  ASSERT_TRUE(bool(spec)) << toString(spec.takeError());
  EXPECT_DOUBLE_EQ(spec->host.copyBandwidth(), 0.8 * 16 * 1.969e9);
  expectRoundTrip(*spec);
}

TEST(ClusterParse, PrecisionAndOpClassNames) {
  for (unsigned i = 0; i < kNumPrecisions; ++i)
    EXPECT_EQ(parsePrecision(stringifyPrecision(Precision(i))), Precision(i));
  EXPECT_FALSE(parsePrecision("fp64"));
  EXPECT_EQ(stringifyOpClass(OpClass::DataMovement), "data_movement");
}

struct BadSpec {
  const char *from;
  const char *to;
  const char *message; // expected substring, after "t.json: "
};

TEST(ClusterParse, ValidationErrors) {
  const BadSpec cases[] = {
      {R"("bf16": 300)", R"("bf16x": 300)",
       "device.peak_TFLOPs.bf16x: unknown key (did you mean 'bf16'?)"},
      {R"(, "bf16": 300)", "", "device.peak_TFLOPs.bf16: missing"},
      {R"("fp32": 20)", R"("fp32": 0)",
       "device.peak_TFLOPs.fp32: must be > 0 (got 0)"},
      {R"("fp32": 20, )", R"("fp32": 20, "fp8": -1, )",
       "device.peak_TFLOPs.fp8: must be >= 0 (got -1)"},
      {R"("memory_GiB": 40)", R"("memory_GiB": "40")",
       "device.memory_GiB: expected a number, got a string"},
      {R"("memory_bandwidth_GBps": 1500)", R"("memory_bandwidth_GBps": -1)",
       "device.memory_bandwidth_GBps: must be > 0 (got -1)"},
      {R"("kernel_overhead_us": 4)", R"("kernel_overhead_us": -4)",
       "device.kernel_overhead_us: must be >= 0 (got -4)"},
      {R"("compute": 0.7)", R"("compute": 1.5)",
       "device.efficiency.matmul.compute: must be in (0, 1] (got 1.5)"},
      {R"("width": 16})", R"("width": 16, "efficiency": 1.2})",
       "host.link.efficiency: must be in (0, 1] (got 1.2)"},
      {R"("compute": 0.7)", R"("compute": 0)",
       "device.efficiency.matmul.compute: must be in (0, 1] (got 0)"},
      {R"("matmul": {)", R"("matmull": {)",
       "device.efficiency.matmull: unknown key (did you mean 'matmul'?)"},
      {R"("name": "GPU",)", "", "device.name: missing"},
      {R"("fanout": 4)", R"("fanout": 0)",
       "levels[0].fanout: must be >= 1 (got 0)"},
      {R"("fanout": 4)", R"("fanout": 2.5)",
       "levels[0].fanout: must be an integer (got 2.5)"},
      {R"("bandwidth_GBps": 300)", R"("bandwidth_GBps": -5)",
       "levels[0].bandwidth_GBps: must be > 0 (got -5)"},
      {R"("bandwidth_GBps": 300, )", "",
       "levels[0].bandwidth_GBps: missing (give bandwidth_GBps, or nics and "
       "nic_Gbps)"},
      {R"("nics": 4, )", R"("nics": 4, "bandwidth_GBps": 50, )",
       "levels[1].nics: give either bandwidth_GBps or nics and nic_Gbps, not "
       "both"},
      {R"("nics": 4, )", "",
       "levels[1].nics: missing (nics and nic_Gbps go together)"},
      {R"("nic_Gbps": 200)", R"("nic_Gbps": 0)",
       "levels[1].nic_Gbps: must be > 0 (got 0)"},
      {R"("latency_us": 5)", R"("latency_us": -5)",
       "levels[1].latency_us: must be >= 0 (got -5)"},
      {R"("bus_efficiency": 0.8)", R"("bus_efficiency": 1.2)",
       "levels[0].bus_efficiency: must be in (0, 1] (got 1.2)"},
      {R"("kind": "infiniband")", R"("kind": "infinband")",
       "levels[1].kind: unknown kind 'infinband' (did you mean "
       "'infiniband'?)"},
      {R"("name": "ib")", R"("name": "nvlink")",
       "levels[1].name: duplicate level name 'nvlink'"},
      {R"("latency_us": 2,)", R"("latencyus": 2,)",
       "levels[0].latencyus: unknown key (did you mean 'latency_us'?)"},
      {R"("memory_GiB": 1024)", R"("memory_GiB": 0)",
       "host.memory_GiB: must be > 0 (got 0)"},
      {R"("gen": 4)", R"("gen": 2)", "host.link.gen: must be between 3 and 6"},
      {R"("width": 16)", R"("width": 32)",
       "host.link.width: must be between 1 and 16 (got 32)"},
      {R"("kind": "pcie")", R"("kind": "nvlink")",
       "host.link.kind: unknown kind 'nvlink'; expected pcie or c2c"},
      {R"("cpu_cores": 64)", R"("cpu_cores": 0)",
       "host.cpu_cores: must be >= 1 (got 0)"},
      {R"("read_GBps": 25)", R"("read_GBps": -25)",
       "nvme.read_GBps: must be > 0 (got -25)"},
      {R"("capacity_TiB": 15, )", "", "nvme.capacity_TiB: missing"},
      {R"("name": "test",)", R"("name": "test", "nodes": 3,)",
       "nodes: unknown key"},
      {R"("name": "test",)", R"("name": 7,)",
       "name: expected a string, got a number"},
  };
  for (const BadSpec &c : cases) {
    std::string msg = errorOf(replaced(c.from, c.to));
    EXPECT_NE(msg.find(std::string("t.json: ") + c.message), std::string::npos)
        << "replacing " << c.from << " by " << c.to << "\n  got: " << msg;
  }
}

TEST(ClusterParse, StructuralErrors) {
  std::string noLevels = kBase;
  size_t from = noLevels.find("\"levels\": [");
  size_t to = noLevels.find("\"host\"");
  noLevels.replace(from, to - from, "\"levels\": [],\n  ");
  EXPECT_EQ(errorOf(noLevels), "t.json: levels: must list at least one level");
  EXPECT_EQ(errorOf("[1, 2]"), "t.json: expected a JSON object, got an array");
  std::string json = kBase;
  json.erase(json.find("\"host\""));
  json += "}";
  // The trailing comma before the closing brace is a syntax error.
  std::string msg = errorOf(json);
  EXPECT_EQ(msg.rfind("t.json:", 0), 0u) << msg;
  EXPECT_NE(msg.find("invalid JSON"), std::string::npos) << msg;
  // Line and column of the offending character.
  EXPECT_NE(errorOf("{\n  \"name\": \"x\",\n  oops\n}").find("t.json:3:3: "),
            std::string::npos)
      << errorOf("{\n  \"name\": \"x\",\n  oops\n}");
  EXPECT_NE(errorOf(replaced(R"("host": )", R"("hosts": )"))
                .find("t.json: hosts: unknown key (did you mean 'host'?)"),
            std::string::npos);
  EXPECT_NE(errorOf(replaced(R"("device": {)", R"("device": [], "d": {)"))
                .find("t.json: d: unknown key"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Presets, files and round trips
//===----------------------------------------------------------------------===//

TEST(ClusterPresets, AllLoadAndRoundTrip) {
  std::vector<std::string> names = clusterPresetNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const char *expected :
       {"dgx-h100", "h100-cluster", "dgx-a100-40g", "dgx-a100-80g",
        "a100-40g-cluster", "a100-80g-cluster", "dgx1-v100",
        "dgx2-v100-cluster", "v100-cluster", "pcie-workstation"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end())
        << expected;
  for (const std::string &name : names) {
    SCOPED_TRACE(name);
    Expected<ClusterSpec> spec = loadCluster(name);
    ASSERT_TRUE(bool(spec)) << toString(spec.takeError());
    EXPECT_EQ(spec->name, name);
    EXPECT_FALSE(spec->description.empty());
    expectRoundTrip(*spec);
  }
}

TEST(ClusterPresets, KeyNumbers) {
  Expected<ClusterSpec> h100 = loadCluster("h100-cluster");
  ASSERT_TRUE(bool(h100)) << toString(h100.takeError());
  EXPECT_EQ(h100->numDevices(), 256);
  EXPECT_EQ(h100->devicesPerNode(), 8);
  EXPECT_DOUBLE_EQ(h100->device.peak(Precision::BF16), 989.4e12);
  EXPECT_DOUBLE_EQ(h100->levels[0].bandwidth, 450e9);
  EXPECT_DOUBLE_EQ(h100->levels[1].bandwidth, 50e9); // 8 x 400 Gb/s / 8

  Expected<ClusterSpec> a100 = loadCluster("a100-80g-cluster");
  ASSERT_TRUE(bool(a100)) << toString(a100.takeError());
  EXPECT_EQ(a100->numDevices(), 128);
  EXPECT_DOUBLE_EQ(a100->device.memoryBandwidth, 2039e9);
  EXPECT_DOUBLE_EQ(a100->levels[1].bandwidth, 25e9); // 8 x 200 Gb/s / 8

  Expected<ClusterSpec> dgx2 = loadCluster("dgx2-v100-cluster");
  ASSERT_TRUE(bool(dgx2)) << toString(dgx2.takeError());
  EXPECT_EQ(dgx2->numDevices(), 512);
  EXPECT_EQ(dgx2->devicesPerNode(), 16);
  EXPECT_DOUBLE_EQ(dgx2->levels[1].bandwidth, 6.25e9); // 8 x 100 Gb/s / 16

  Expected<ClusterSpec> ws = loadCluster("pcie-workstation");
  ASSERT_TRUE(bool(ws)) << toString(ws.takeError());
  EXPECT_EQ(ws->numDevices(), 4);
  EXPECT_EQ(ws->devicesPerNode(), 4);
  EXPECT_EQ(ws->levels[0].kind, "pcie");
}

TEST(ClusterPresets, ResizeNodes) {
  Expected<ClusterSpec> spec = loadCluster("a100-80g-cluster:nodes=128");
  ASSERT_TRUE(bool(spec)) << toString(spec.takeError());
  EXPECT_EQ(spec->numDevices(), 1024);
  EXPECT_EQ(spec->levels.back().fanout, 128);
  EXPECT_EQ(spec->name, "a100-80g-cluster:nodes=128");
  // The per-device network bandwidth does not change with the node count.
  EXPECT_DOUBLE_EQ(spec->levels.back().bandwidth, 25e9);
  // And the resized spec round-trips.
  expectRoundTrip(*spec);

  auto error = [](StringRef name) {
    Expected<ClusterSpec> s = loadCluster(name);
    return s ? std::string() : toString(s.takeError());
  };
  EXPECT_NE(error("dgx-h100:nodes=4")
                .find("outermost level 'nvlink' is a "
                      "nvswitch level, not a network"),
            std::string::npos)
      << error("dgx-h100:nodes=4");
  EXPECT_NE(error("h100-cluster:nodes=0").find("nodes must be an integer >= 1"),
            std::string::npos);
  EXPECT_NE(error("h100-cluster:nodes=x").find("nodes must be an integer >= 1"),
            std::string::npos);
  std::string unknown = error("a100-cluster");
  EXPECT_NE(unknown.find("unknown cluster 'a100-cluster': not a preset ("),
            std::string::npos)
      << unknown;
  EXPECT_NE(unknown.find("dgx-h100"), std::string::npos);
  EXPECT_NE(unknown.find(") and no such file"), std::string::npos);
}

TEST(ClusterPresets, LoadFile) {
  SmallString<128> path;
  ASSERT_FALSE(sys::fs::createTemporaryFile("cluster", "json", path));
  {
    std::error_code ec;
    raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << replaced(R"("fanout": 2)", R"("fanout": 3)");
  }
  Expected<ClusterSpec> spec = loadCluster(path);
  ASSERT_TRUE(bool(spec)) << toString(spec.takeError());
  EXPECT_EQ(spec->numDevices(), 12);
  Expected<ClusterSpec> resized = loadCluster((path + ":nodes=5").str());
  ASSERT_TRUE(bool(resized)) << toString(resized.takeError());
  EXPECT_EQ(resized->numDevices(), 20);
  {
    std::error_code ec;
    raw_fd_ostream os(path, ec);
    os << replaced(R"("fanout": 2)", R"("fanout": -2)");
  }
  Expected<ClusterSpec> bad = loadCluster(path);
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(toString(bad.takeError()),
            (path + ": levels[1].fanout: must be >= 1 (got -2)").str());
  sys::fs::remove(path);
}

//===----------------------------------------------------------------------===//
// Grid mapping
//===----------------------------------------------------------------------===//

static SmallVector<int64_t> members(const AxisSpan &s) {
  return SmallVector<int64_t>(s.membersPerLevel.begin(),
                              s.membersPerLevel.end());
}

TEST(ClusterGrid, RowMajorOnTwoLevels) {
  Expected<ClusterSpec> c = loadCluster("a100-80g-cluster:nodes=128");
  ASSERT_TRUE(bool(c)) << toString(c.takeError());
  // The doc's worked example: 8x16x8 on 128 nodes of 8.
  auto spans = mapGridOntoCluster(*c, {8, 16, 8});
  ASSERT_TRUE(bool(spans)) << toString(spans.takeError());
  ASSERT_EQ(spans->size(), 3u);
  EXPECT_EQ(members((*spans)[2]), (SmallVector<int64_t>{8, 1}));
  EXPECT_EQ(members((*spans)[1]), (SmallVector<int64_t>{1, 16}));
  EXPECT_EQ(members((*spans)[0]), (SmallVector<int64_t>{1, 8}));
  EXPECT_EQ((*spans)[2].outermostLevel(), 0);
  EXPECT_EQ((*spans)[1].outermostLevel(), 1);
  EXPECT_EQ((*spans)[0].size(), 8);

  AxisSpan all = combineSpans(*spans);
  EXPECT_EQ(members(all), (SmallVector<int64_t>{8, 128}));
  EXPECT_EQ(all.size(), 1024);
  AxisSpan two = combineSpans({(*spans)[0], (*spans)[2]});
  EXPECT_EQ(members(two), (SmallVector<int64_t>{8, 8}));
  EXPECT_EQ(combineSpans({}).size(), 1);
}

TEST(ClusterGrid, AxisSpanningTwoLevels) {
  Expected<ClusterSpec> c = loadCluster("h100-cluster");
  ASSERT_TRUE(bool(c)) << toString(c.takeError());
  // Inner axis of 4 inside a node; the outer axis of 64 takes 2 devices of
  // each node (stride 4) and spans 32 nodes.
  auto spans = mapGridOntoCluster(*c, {64, 4});
  ASSERT_TRUE(bool(spans)) << toString(spans.takeError());
  EXPECT_EQ(members((*spans)[1]), (SmallVector<int64_t>{4, 1}));
  EXPECT_EQ(members((*spans)[0]), (SmallVector<int64_t>{2, 32}));
  EXPECT_EQ((*spans)[0].outermostLevel(), 1);

  // Column-major order: axis 0 innermost.
  auto cm = mapGridOntoCluster(*c, {16, 16}, {0, 1});
  ASSERT_TRUE(bool(cm)) << toString(cm.takeError());
  EXPECT_EQ(members((*cm)[0]), (SmallVector<int64_t>{8, 2}));
  EXPECT_EQ(members((*cm)[1]), (SmallVector<int64_t>{1, 16}));

  // Size-1 axes join nothing.
  auto ones = mapGridOntoCluster(*c, {1, 8, 1});
  ASSERT_TRUE(bool(ones)) << toString(ones.takeError());
  EXPECT_EQ(members((*ones)[0]), (SmallVector<int64_t>{1, 1}));
  EXPECT_EQ((*ones)[0].outermostLevel(), -1);
  EXPECT_EQ(members((*ones)[1]), (SmallVector<int64_t>{8, 1}));
}

TEST(ClusterGrid, SmallerGridsAndMisalignment) {
  Expected<ClusterSpec> c = loadCluster("h100-cluster");
  ASSERT_TRUE(bool(c)) << toString(c.takeError());
  // Fewer devices than the cluster: fine, even when the grid does not fill a
  // node, since only one group exists.
  auto three = mapGridOntoCluster(*c, {3});
  ASSERT_TRUE(bool(three)) << toString(three.takeError());
  EXPECT_EQ(members((*three)[0]), (SmallVector<int64_t>{3, 1}));
  auto part = mapGridOntoCluster(*c, {4, 8});
  ASSERT_TRUE(bool(part)) << toString(part.takeError());
  EXPECT_EQ(members((*part)[0]), (SmallVector<int64_t>{1, 4}));

  // Inside a grid that fills more than a node, an axis of 3 splits unevenly
  // over nodes of 8.
  auto bad = mapGridOntoCluster(*c, {16, 3});
  ASSERT_FALSE(bool(bad));
  EXPECT_EQ(toString(bad.takeError()),
            "grid axis 1 (size 3, stride 1) does not align with level "
            "'nvlink' (fanout 8, 8 devices per unit)");
  // The whole grid inside one unit of the outer level: no constraint there.
  auto fits = mapGridOntoCluster(*c, {3, 2, 8});
  ASSERT_TRUE(bool(fits)) << toString(fits.takeError());
  EXPECT_EQ(members((*fits)[0]), (SmallVector<int64_t>{1, 3}));
  // A 12-device grid [3, 4]: the axis of 3 takes 2 per node, not dividing 3.
  auto bad3 = mapGridOntoCluster(*c, {3, 4});
  ASSERT_FALSE(bool(bad3));
  EXPECT_NE(toString(bad3.takeError()).find("grid axis 0 (size 3, stride 4)"),
            std::string::npos);

  auto big = mapGridOntoCluster(*c, {8, 16, 16});
  ASSERT_FALSE(bool(big));
  EXPECT_EQ(toString(big.takeError()),
            "grid 8x16x16 needs 2048 devices; cluster 'h100-cluster' has 256");

  auto perm = mapGridOntoCluster(*c, {4, 4}, {0, 0});
  ASSERT_FALSE(bool(perm));
  EXPECT_NE(toString(perm.takeError()).find("not a permutation"),
            std::string::npos);
  auto zero = mapGridOntoCluster(*c, {4, 0});
  ASSERT_FALSE(bool(zero));
  EXPECT_NE(toString(zero.takeError()).find("axis 1 has size 0"),
            std::string::npos);
}
