//===- cost_spec_fuzzer.cpp - libFuzzer target for the cost model's JSON --===//
//
// Cluster specs (`cluster=<file>`) and calibration files (`calibration=`) are
// hand-written, untrusted JSON. Every input goes to both parsers,
// parseClusterSpec and Calibration::parse (a file is at most one of the two,
// so running both costs little and keeps the corpus plain JSON); errors are
// consumed. Whatever a parser accepts is then used as a pass would use it:
//
//  * a cluster spec: numDevices/devicesPerNode, clusterSpecToJSON whose output
//    must parse again to the same shape of machine, mapGridOntoCluster on a
//    few small grids (the grid with one axis per level must map), and
//    collectiveCost of every kind and algorithm over the mapped spans;
//  * a calibration: kernelSeconds of every kernel the file lists (must be
//    found, with the file's time), collectiveSeconds at, between and beyond
//    the measured sizes of every curve, and collectiveCost over a fixed
//    preset with the calibration applied.
//
// A crash, sanitizer report or hang is a bug; so is a broken promise above
// (an accepted spec whose serialization does not parse, a listed kernel that
// is not found, a NaN or negative time), which is turned into a trap.
//
// Built as loom-cost-fuzzer (libFuzzer, LOOM_BUILD_FUZZERS with clang) and as
// loom-cost-fuzz-replay (replay_main.cpp), which runs saved inputs.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/Calibration.h"
#include "loom/Cost/Cluster.h"
#include "loom/Cost/Collectives.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>

using namespace loom;
namespace json = llvm::json;

static constexpr CollectiveKind kKinds[] = {
    CollectiveKind::AllReduce,     CollectiveKind::AllGather,
    CollectiveKind::ReduceScatter, CollectiveKind::AllToAll,
    CollectiveKind::Broadcast,     CollectiveKind::SendRecv};
static constexpr CollectiveAlgorithm kAlgorithms[] = {
    CollectiveAlgorithm::Auto, CollectiveAlgorithm::Ring,
    CollectiveAlgorithm::Tree, CollectiveAlgorithm::Hierarchical,
    CollectiveAlgorithm::Direct};

/// A time the cost model hands to the estimator: never NaN or negative
/// (infinity is allowed: a zero-bandwidth level makes a transfer endless).
static void checkTime(double seconds) {
  if (std::isnan(seconds) || seconds < 0)
    __builtin_trap();
}

/// The cluster calibration lookups are tried against (two levels, 8 x 4).
static const ClusterSpec &fixedCluster() {
  static const ClusterSpec spec = [] {
    llvm::Expected<ClusterSpec> s = loadCluster("h100-cluster:nodes=4");
    if (!s) {
      llvm::consumeError(s.takeError());
      std::abort();
    }
    return std::move(*s);
  }();
  return spec;
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  (void)fixedCluster();
  return 0;
}

static void exerciseSpans(const ClusterSpec &spec,
                          llvm::ArrayRef<int64_t> grid) {
  llvm::Expected<llvm::SmallVector<AxisSpan>> spans =
      mapGridOntoCluster(spec, grid);
  if (!spans) {
    llvm::consumeError(spans.takeError());
    return;
  }
  if (spans->size() != grid.size())
    __builtin_trap();
  for (auto [axis, span] : llvm::enumerate(*spans)) {
    if (span.size() != grid[axis])
      __builtin_trap();
    (void)span.outermostLevel();
    for (CollectiveKind kind : kKinds)
      for (CollectiveAlgorithm algorithm : kAlgorithms)
        for (double bytes : {1.0, 1e6, 1e12})
          checkTime(collectiveCost(spec, kind, bytes, span, algorithm).seconds);
  }
  AxisSpan all = combineSpans(*spans);
  for (CollectiveKind kind : kKinds)
    checkTime(collectiveCost(spec, kind, 1e9, all).seconds);
}

static void exerciseCluster(const ClusterSpec &spec) {
  int64_t n = spec.numDevices();
  int64_t perNode = spec.devicesPerNode();
  if (spec.levels.empty() || n < 1 || perNode < 1 || n % perNode != 0)
    __builtin_trap();

  // What `loom-estimate --print-cluster` shows must be a valid spec itself.
  std::string text = clusterSpecToJSON(spec);
  llvm::Expected<ClusterSpec> again = parseClusterSpec(text, "round-trip");
  if (!again) {
    llvm::consumeError(again.takeError());
    __builtin_trap();
  }
  if (again->numDevices() != n || again->levels.size() != spec.levels.size() ||
      again->name != spec.name)
    __builtin_trap();

  // One grid axis per level (outermost first) always maps, one member per
  // level on each axis.
  llvm::SmallVector<int64_t> perLevel;
  for (const LevelSpec &l : llvm::reverse(spec.levels))
    perLevel.push_back(l.fanout);
  llvm::Expected<llvm::SmallVector<AxisSpan>> spans =
      mapGridOntoCluster(spec, perLevel);
  if (!spans) {
    llvm::consumeError(spans.takeError());
    __builtin_trap();
  }
  exerciseSpans(spec, perLevel);
  exerciseSpans(spec, {n});
  exerciseSpans(spec, {1});
  exerciseSpans(spec, {n / perNode, perNode});
  if (n % 2 == 0)
    exerciseSpans(spec, {2, n / 2});
  exerciseSpans(spec, {2, 3, 4});
  exerciseSpans(spec, {n + 1}); // too many devices: an error
  // A non-default axis order, and a bad one.
  llvm::Expected<llvm::SmallVector<AxisSpan>> swapped =
      mapGridOntoCluster(spec, {perNode, n / perNode}, {0, 1});
  if (!swapped)
    llvm::consumeError(swapped.takeError());
  llvm::Expected<llvm::SmallVector<AxisSpan>> bad =
      mapGridOntoCluster(spec, {n}, {1});
  if (bad)
    __builtin_trap();
  llvm::consumeError(bad.takeError());
}

/// Re-reads the accepted calibration file with llvm::json to learn which
/// kernels and curves it lists, and checks the Calibration answers for them.
static void exerciseCalibration(const Calibration &calibration,
                                llvm::StringRef text) {
  (void)calibration.device();
  (void)calibration.source();
  llvm::Expected<json::Value> root = json::parse(text);
  if (!root) {
    llvm::consumeError(root.takeError());
    __builtin_trap(); // Calibration::parse accepted it
  }
  const json::Object *top = root->getAsObject();
  if (!top)
    __builtin_trap();

  size_t kernels = 0;
  if (const json::Array *list = top->getArray("kernels")) {
    for (const json::Value &v : *list) {
      const json::Object *entry = v.getAsObject();
      std::optional<Precision> precision =
          parsePrecision(*entry->getString("precision"));
      llvm::SmallVector<llvm::SmallVector<int64_t>> shapes;
      for (const json::Value &shape : *entry->getArray("shapes")) {
        shapes.emplace_back();
        for (const json::Value &dim : *shape.getAsArray())
          shapes.back().push_back(*dim.getAsInteger());
      }
      std::string key =
          Calibration::kernelKey(*entry->getString("op"), *precision, shapes);
      std::optional<double> seconds = calibration.kernelSeconds(key);
      if (!seconds || *seconds != *entry->getNumber("time_us") * 1e-6)
        __builtin_trap();
      ++kernels;
    }
  }
  if (calibration.numKernels() != kernels)
    __builtin_trap();
  (void)calibration.kernelSeconds("loom.matmul|bf16|2x2,2x2,2x2");

  size_t curves = 0;
  if (const json::Array *list = top->getArray("collectives")) {
    for (const json::Value &v : *list) {
      const json::Object *entry = v.getAsObject();
      std::optional<CollectiveKind> kind =
          parseCollectiveKind(*entry->getString("kind"));
      AxisSpan span;
      for (const json::Value &m : *entry->getArray("members_per_level"))
        span.membersPerLevel.push_back(*m.getAsInteger());
      double smallest = INFINITY, largest = 0;
      for (const json::Value &p : *entry->getArray("points")) {
        const json::Object *point = p.getAsObject();
        double bytes = *point->getNumber("bytes");
        std::optional<double> seconds =
            calibration.collectiveSeconds(*kind, span, bytes);
        if (!seconds || *seconds != *point->getNumber("time_us") * 1e-6)
          __builtin_trap();
        smallest = std::min(smallest, bytes);
        largest = std::max(largest, bytes);
      }
      // Below, between and beyond the measured sizes.
      for (double bytes : {smallest / 2, smallest + (largest - smallest) / 3,
                           largest, largest * 2}) {
        std::optional<double> seconds =
            calibration.collectiveSeconds(*kind, span, bytes);
        if (!seconds)
          __builtin_trap();
        checkTime(*seconds);
      }
      // A trailing 1 names the same layout.
      span.membersPerLevel.push_back(1);
      if (!calibration.collectiveSeconds(*kind, span, smallest))
        __builtin_trap();
      ++curves;
    }
  }
  // Curves are unique per (kind, layout), so the count matches.
  if (calibration.numCollectiveCurves() != curves)
    __builtin_trap();

  // The estimator's view: the fixed cluster with this calibration applied.
  const ClusterSpec &cluster = fixedCluster();
  static const llvm::SmallVector<int64_t> grids[] = {{8}, {4, 8}, {2, 16}};
  for (const llvm::SmallVector<int64_t> &grid : grids) {
    llvm::Expected<llvm::SmallVector<AxisSpan>> spans =
        mapGridOntoCluster(cluster, grid);
    if (!spans) {
      llvm::consumeError(spans.takeError());
      __builtin_trap();
    }
    for (const AxisSpan &span : *spans)
      for (CollectiveKind kind : kKinds)
        for (double bytes : {1.0, 1048576.0, 1e10})
          checkTime(collectiveCost(cluster, kind, bytes, span,
                                   CollectiveAlgorithm::Auto, &calibration)
                        .seconds);
  }
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);

  llvm::Expected<ClusterSpec> spec = parseClusterSpec(text, "fuzz.json");
  if (spec)
    exerciseCluster(*spec);
  else
    llvm::consumeError(spec.takeError());

  llvm::Expected<Calibration> calibration =
      Calibration::parse(text, "fuzz.json");
  if (calibration)
    exerciseCalibration(*calibration, text);
  else
    llvm::consumeError(calibration.takeError());
  return 0;
}
