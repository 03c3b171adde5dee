//===- Cluster.h - the machine a plan runs on -------------------*- C++ -*-===//
//
// A cluster is a hierarchy of interconnect levels over identical devices:
// level 0 joins the devices of one node (NVLink/NVSwitch, PCIe), level 1 the
// nodes (InfiniBand, RoCE), and so on. Devices are numbered in mixed radix
// over the levels, innermost fastest. Specs come from JSON files or from the
// presets compiled into Loom (docs/cluster-spec.md documents both).
//
// No MLIR dependency: the runtime and the benchmarks use this header too.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_COST_CLUSTER_H
#define LOOM_COST_CLUSTER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom {

/// Arithmetic precisions a device quotes a peak for.
enum class Precision { FP32, TF32, BF16, FP16, FP8, INT8 };
constexpr unsigned kNumPrecisions = 6;
llvm::StringRef stringifyPrecision(Precision p);
std::optional<Precision> parsePrecision(llvm::StringRef s);

/// Classes of ops that reach different fractions of peak. The cost model
/// times an op by roofline: max(flops / (peak * efficiency.compute),
/// bytes / (memBandwidth * efficiency.memory)).
enum class OpClass {
  Matmul,      // dense matmul / batched matmul (cuBLAS-class GEMM)
  Conv,        // convolutions
  Attention,   // fused attention
  Elementwise, // pointwise, broadcasting, casts
  Normalize,   // layer/rms/batch norm, softmax
  Reduce,      // reductions, top-k
  DataMovement // reshape/transpose/concat/slice/gather/scatter/pad/embedding
};
constexpr unsigned kNumOpClasses = 7;
llvm::StringRef stringifyOpClass(OpClass c);

/// Fraction of peak compute and of peak memory bandwidth an op class reaches.
struct Efficiency {
  double compute = 1.0;
  double memory = 1.0;
};

struct DeviceSpec {
  std::string name;
  /// Dense peak FLOP/s per precision; 0 = not supported (the parser fills
  /// TF32 from FP32 and FP16 from BF16 when absent).
  std::array<double, kNumPrecisions> peakFlops{};
  double memoryBytes = 0;
  double memoryBandwidth = 0; // bytes/s
  std::array<Efficiency, kNumOpClasses> efficiency{};
  /// Per-kernel launch/fixed overhead in seconds added to every op.
  double kernelOverhead = 0;

  double peak(Precision p) const { return peakFlops[unsigned(p)]; }
  const Efficiency &eff(OpClass c) const { return efficiency[unsigned(c)]; }
};

/// One level of the interconnect hierarchy.
struct LevelSpec {
  std::string name; // "nvlink", "ib", ... (unique within a cluster)
  std::string kind; // nvswitch | nvlink | pcie | infiniband | roce | ethernet | c2c
  int64_t fanout = 1;      // members joined at this level (devices or groups)
  double bandwidth = 0;    // bytes/s per device per direction across this level
  double latency = 0;      // seconds per message hop
  double busEfficiency = 1; // fraction of `bandwidth` collectives achieve
  int64_t nics = 0;        // network levels: NICs per node (informational)
};

struct HostSpec {
  double memoryBytes = 0;
  std::string linkKind;      // pcie | c2c
  int pcieGen = 0;           // pcie only
  int pcieWidth = 0;         // pcie only
  double linkBandwidth = 0;  // bytes/s per direction, host<->one device
  /// The share of linkBandwidth a large pinned copy reaches.
  double linkEfficiency = 1;
  double linkLatency = 0;    // seconds
  /// Bytes/s one host<->device copy moves in each direction.
  double copyBandwidth() const { return linkBandwidth * linkEfficiency; }
  int64_t cpuCores = 0;      // per node
  double cpuAdamBandwidth = 0; // bytes/s of optimizer state a CPU Adam streams per node
};

struct NvmeSpec {
  double capacityBytes = 0; // per node; 0 = no NVMe tier
  double readBandwidth = 0; // bytes/s per node
  double writeBandwidth = 0;
};

struct ClusterSpec {
  std::string name;
  std::string description;
  DeviceSpec device;
  std::vector<LevelSpec> levels; // innermost first; never empty
  HostSpec host;
  NvmeSpec nvme;

  int64_t numDevices() const;
  /// Devices per node: the product of fanouts of the levels below the first
  /// network level (infiniband/roce/ethernet); all devices if none.
  int64_t devicesPerNode() const;
};

/// Bytes per element of a precision (fp32/tf32 4, bf16/fp16 2, fp8/int8 1).
double precisionBytes(Precision p);

/// Roofline seconds of one kernel on `device`: max(flops / (peak(p) *
/// efficiency.compute), bytes / (memory bandwidth * efficiency.memory)) plus
/// the launch overhead; 0 for no work. The estimator and the planner share it.
double rooflineSeconds(const DeviceSpec &device, OpClass cls, double flops,
                       double bytes, Precision p);

/// Parses a cluster spec from JSON text. Errors name the field by its JSON
/// path; `origin` (a file name or preset name) prefixes every message, e.g.
/// `h100.json: levels[1].bandwidth_GBps: must be > 0 (got -5)`.
llvm::Expected<ClusterSpec> parseClusterSpec(llvm::StringRef json,
                                             llvm::StringRef origin);

/// Resolves `cluster=` option values: a preset name (optionally with
/// `:nodes=N` to resize the outermost level), or a path to a JSON file.
llvm::Expected<ClusterSpec> loadCluster(llvm::StringRef nameOrPath);

/// Names of the presets compiled into Loom, sorted.
std::vector<std::string> clusterPresetNames();

/// Serializes a spec back to JSON (the documented format, SI units of the file).
std::string clusterSpecToJSON(const ClusterSpec &spec);

/// How a group of devices along one grid axis spreads over the hierarchy:
/// `membersPerLevel[l]` of its members are joined at level l (1 where the
/// axis does not cross level l). Their product is the axis size.
struct AxisSpan {
  llvm::SmallVector<int64_t, 4> membersPerLevel;
  int64_t size() const;
  /// Outermost level with more than one member; -1 for a size-1 axis.
  int outermostLevel() const;
};

/// Maps a device grid onto the cluster. `innerToOuter` lists grid axes from
/// the fastest-varying device index to the slowest (default: the last axis
/// is innermost, i.e. row-major device numbering). Fails (naming the axis and
/// level) when the grid has more devices than the cluster or an axis does
/// not align with a level boundary.
llvm::Expected<llvm::SmallVector<AxisSpan>>
mapGridOntoCluster(const ClusterSpec &cluster, llvm::ArrayRef<int64_t> gridShape,
                   llvm::ArrayRef<unsigned> innerToOuter = {});

/// Span of a set of grid axes used together by one collective (the group is
/// their product): level by level, the member counts multiply.
AxisSpan combineSpans(llvm::ArrayRef<AxisSpan> spans);

} // namespace loom

#endif // LOOM_COST_CLUSTER_H
