//===- CalibrationTest.cpp - calibration files and lookups ----------------===//
//
// Parses the documented example (test/Cost/Inputs/calibration-example.json),
// checks kernel keys, the log-bytes interpolation of collective curves at
// hand-computed points, and that each malformed field is reported by path.
//
//===----------------------------------------------------------------------===//

#include "loom/Cost/Calibration.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

using namespace loom;

namespace {

constexpr double MiB = 1024.0 * 1024.0;

/// The example lives in the source tree; __FILE__ is absolute under CMake.
std::string examplePath() {
  llvm::SmallString<256> path(__FILE__);
  llvm::sys::path::remove_filename(path); // unittests/Cost
  llvm::sys::path::remove_filename(path); // unittests
  llvm::sys::path::remove_filename(path); // the source root
  llvm::sys::path::append(path, "test", "Cost", "Inputs",
                          "calibration-example.json");
  return std::string(path);
}

Calibration loadExample() {
  llvm::Expected<Calibration> c = Calibration::load(examplePath());
  if (!c) {
    ADD_FAILURE() << llvm::toString(c.takeError());
    return Calibration();
  }
  return std::move(*c);
}

AxisSpan span(std::initializer_list<int64_t> members) {
  AxisSpan s;
  s.membersPerLevel.assign(members.begin(), members.end());
  return s;
}

std::string parseError(llvm::StringRef json) {
  llvm::Expected<Calibration> c = Calibration::parse(json, "calib.json");
  if (c)
    return "(parsed)";
  return llvm::toString(c.takeError());
}

} // namespace

TEST(Calibration, KernelKey) {
  EXPECT_EQ(
      Calibration::kernelKey("loom.matmul", Precision::BF16,
                             {{2048, 12288}, {12288, 4608}, {2048, 4608}}),
      "loom.matmul|bf16|2048x12288,12288x4608,2048x4608");
  EXPECT_EQ(Calibration::kernelKey("loom.add", Precision::FP32, {{4}, {}, {4}}),
            "loom.add|fp32|4,scalar,4");
  EXPECT_EQ(Calibration::kernelKey("loom.relu", Precision::FP16, {{-1, 8}}),
            "loom.relu|fp16|?x8");
}

TEST(Calibration, Example) {
  Calibration c = loadExample();
  EXPECT_EQ(c.device(), "A100-SXM4-80GB");
  EXPECT_FALSE(c.source().empty());
  EXPECT_EQ(c.numKernels(), 2u);
  EXPECT_EQ(c.numCollectiveCurves(), 2u);

  std::optional<double> matmul = c.kernelSeconds(
      Calibration::kernelKey("loom.matmul", Precision::BF16,
                             {{2048, 12288}, {12288, 4608}, {2048, 4608}}));
  ASSERT_TRUE(matmul);
  EXPECT_DOUBLE_EQ(*matmul, 1234.5e-6);
  std::optional<double> add = c.kernelSeconds(Calibration::kernelKey(
      "loom.add", Precision::FP32, {{1024, 1024}, {}, {1024, 1024}}));
  ASSERT_TRUE(add);
  EXPECT_DOUBLE_EQ(*add, 21e-6);
  // Same op, other precision or shape: no match.
  EXPECT_FALSE(c.kernelSeconds(
      Calibration::kernelKey("loom.matmul", Precision::FP16,
                             {{2048, 12288}, {12288, 4608}, {2048, 4608}})));
  EXPECT_FALSE(c.kernelSeconds("loom.matmul|bf16|2048x12288"));
}

TEST(Calibration, CollectiveInterpolation) {
  Calibration c = loadExample();
  auto allReduce = [&](double bytes) {
    return c.collectiveSeconds(CollectiveKind::AllReduce, span({8}), bytes);
  };
  // Points: 1 MiB -> 25 us, 16 MiB -> 125 us, 256 MiB -> 1600 us.
  ASSERT_TRUE(allReduce(MiB));
  EXPECT_DOUBLE_EQ(*allReduce(MiB), 25e-6);
  EXPECT_DOUBLE_EQ(*allReduce(16 * MiB), 125e-6);
  // 4 MiB is halfway between 1 and 16 MiB in log(bytes).
  EXPECT_NEAR(*allReduce(4 * MiB), 75e-6, 1e-12);
  // 64 MiB is halfway between 16 and 256 MiB.
  EXPECT_NEAR(*allReduce(64 * MiB), (125e-6 + 1600e-6) / 2, 1e-12);
  // Below the smallest point: its time (latency floor).
  EXPECT_DOUBLE_EQ(*allReduce(1024), 25e-6);
  EXPECT_DOUBLE_EQ(*allReduce(0), 25e-6);
  // Above the largest: scaled with bytes.
  EXPECT_DOUBLE_EQ(*allReduce(512 * MiB), 3200e-6);

  // Trailing 1s do not matter; other layouts and kinds do.
  EXPECT_TRUE(
      c.collectiveSeconds(CollectiveKind::AllReduce, span({8, 1, 1}), MiB));
  EXPECT_FALSE(
      c.collectiveSeconds(CollectiveKind::AllReduce, span({8, 2}), MiB));
  EXPECT_FALSE(c.collectiveSeconds(CollectiveKind::AllReduce, span({4}), MiB));
  EXPECT_FALSE(c.collectiveSeconds(CollectiveKind::AllGather, span({8}), MiB));
  std::optional<double> gather =
      c.collectiveSeconds(CollectiveKind::AllGather, span({8, 2}), MiB);
  ASSERT_TRUE(gather);
  EXPECT_DOUBLE_EQ(*gather, 60e-6);
}

TEST(Calibration, PointsNeedNotBeSorted) {
  llvm::Expected<Calibration> c = Calibration::parse(
      R"({"collectives": [{"kind": "broadcast", "members_per_level": [1, 4],
          "points": [{"bytes": 4096, "time_us": 40},
                     {"bytes": 1024, "time_us": 20}]}]})",
      "calib.json");
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  std::optional<double> t =
      c->collectiveSeconds(CollectiveKind::Broadcast, span({1, 4}), 2048);
  ASSERT_TRUE(t);
  EXPECT_NEAR(*t, 30e-6, 1e-15);
}

TEST(Calibration, EmptyFileIsValid) {
  llvm::Expected<Calibration> c = Calibration::parse("{}", "calib.json");
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->numKernels(), 0u);
  EXPECT_EQ(c->numCollectiveCurves(), 0u);
}

TEST(Calibration, Errors) {
  EXPECT_EQ(parseError(R"({"collectives": [{"kind": "all_reduce",
          "members_per_level": [8, 1], "points": [{"bytes": 1, "time_us": 1},
          {"bytes": 2, "time_us": 2}, {"bytes": 3, "time_us": 0}]}]})"),
            "calib.json: collectives[0].points[2].time_us: must be > 0");
  // Positive in the file but 0 s once converted, or a fraction of a byte:
  // extrapolated to a real message size either made a NaN time (fuzzing).
  EXPECT_EQ(parseError(R"({"collectives": [{"kind": "all_reduce",
          "members_per_level": [8], "points": [{"bytes": 64,
          "time_us": 5e-324}]}]})"),
            "calib.json: collectives[0].points[0].time_us: too small "
            "(underflows to 0 once converted to seconds)");
  EXPECT_EQ(parseError(R"({"kernels": [{"op": "loom.add", "precision":
          "fp32", "shapes": [[2]], "time_us": 1e-320}]})"),
            "calib.json: kernels[0].time_us: too small (underflows to 0 once "
            "converted to seconds)");
  EXPECT_EQ(parseError(R"({"collectives": [{"kind": "all_reduce",
          "members_per_level": [8], "points": [{"bytes": 0.5,
          "time_us": 1}]}]})"),
            "calib.json: collectives[0].points[0].bytes: must be >= 1 (a "
            "measured message size in bytes)");
  EXPECT_EQ(parseError(R"({"kernel": []})"),
            "calib.json: kernel: unknown field (expected one of: device, "
            "source, kernels, collectives)");
  EXPECT_EQ(parseError("[]"), "calib.json: must be a JSON object");
  EXPECT_NE(parseError("{").find("calib.json: invalid JSON"),
            std::string::npos);
  EXPECT_EQ(parseError(R"({"device": 3})"),
            "calib.json: device: must be a string");
  EXPECT_EQ(parseError(R"({"kernels": [{"op": "loom.add", "precision":
          "bf17", "shapes": [], "time_us": 1}]})"),
            "calib.json: kernels[0].precision: unknown precision 'bf17'");
  EXPECT_EQ(parseError(R"({"kernels": [{"op": "loom.add", "precision":
          "fp32", "shapes": [[2], [-2]], "time_us": 1}]})"),
            "calib.json: kernels[0].shapes[1][0]: must be >= 0");
  EXPECT_EQ(parseError(R"({"kernels": [{"op": "loom.add", "precision":
          "fp32", "shapes": [[2]]}]})"),
            "calib.json: kernels[0].time_us: missing");
  EXPECT_EQ(parseError(R"({"kernels": [{"op": "loom.add", "precision":
          "fp32", "shapes": [[2]], "time_ms": 1}]})"),
            "calib.json: kernels[0].time_ms: unknown field (expected one of: "
            "op, precision, shapes, time_us)");
  EXPECT_EQ(parseError(R"({"kernels": [
          {"op": "loom.add", "precision": "fp32", "shapes": [[2]], "time_us": 1},
          {"op": "loom.add", "precision": "fp32", "shapes": [[2]], "time_us": 2}
          ]})"),
            "calib.json: kernels[1]: duplicates kernels[0] "
            "(loom.add|fp32|2)");
  EXPECT_EQ(parseError(R"({"collectives": [{"kind": "allreduce",
          "members_per_level": [8], "points": [{"bytes": 1, "time_us": 1}]}]})"),
            "calib.json: collectives[0].kind: unknown collective 'allreduce' "
            "(expected all_reduce, all_gather, reduce_scatter, all_to_all, "
            "broadcast or send_recv)");
  EXPECT_EQ(parseError(R"({"collectives": [{"kind": "all_reduce",
          "members_per_level": [1, 1], "points": [{"bytes": 1, "time_us": 1}]}]})"),
            "calib.json: collectives[0].members_per_level: must describe a "
            "group of at least 2 devices");
  EXPECT_EQ(parseError(R"({"collectives": [{"kind": "all_reduce",
          "members_per_level": [8, 0], "points": [{"bytes": 1, "time_us": 1}]}]})"),
            "calib.json: collectives[0].members_per_level[1]: must be >= 1");
  EXPECT_EQ(parseError(R"({"collectives": [{"kind": "all_reduce",
          "members_per_level": [8], "points": []}]})"),
            "calib.json: collectives[0].points: must be a non-empty array");
  EXPECT_EQ(parseError(R"({"collectives": [{"kind": "all_reduce",
          "members_per_level": [8], "points": [{"bytes": 64, "time_us": 1},
          {"bytes": 64, "time_us": 2}]}]})"),
            "calib.json: collectives[0].points: two points measure 64 bytes");
  EXPECT_EQ(parseError(R"({"collectives": [
          {"kind": "all_reduce", "members_per_level": [8],
           "points": [{"bytes": 64, "time_us": 1}]},
          {"kind": "all_reduce", "members_per_level": [8, 1],
           "points": [{"bytes": 64, "time_us": 1}]}]})"),
            "calib.json: collectives[1]: duplicates collectives[0] (same kind "
            "and members_per_level)");
}

TEST(Calibration, LoadMissingFile) {
  llvm::Expected<Calibration> c = Calibration::load("/nonexistent/calib.json");
  ASSERT_FALSE(bool(c));
  EXPECT_NE(llvm::toString(c.takeError())
                .find("/nonexistent/calib.json: cannot read"),
            std::string::npos);
}
