// host_link_probe.cu: measures the figures Loom's memory-placement cost model
// (lib/Memory/Placement.cpp) takes from a cluster spec's `host` section, so
// that they can be compared with the presets (bench/gpu_host_link.py does the
// comparison):
//
//   * host.link: the model copies parameters, gradients and optimizer state
//     between host and device at the link's rated per-direction bandwidth,
//     in both directions at once, and overlapped fully with compute. Measured
//     here: pinned H2D/D2H bandwidth against size, both directions at once,
//     pageable H2D for contrast, and a bf16 GEMM with copies running beside
//     it (does the GEMM slow down, does the copy?).
//   * device.peak_TFLOPs.bf16 x efficiency.matmul.compute: a large bf16 GEMM.
//   * host.cpu_adam_GBps: an fp32 Adam step over N parameters on the CPU,
//     with every hardware thread and with one.
//
// Prints one JSON object on stdout; progress goes to stderr. Uses only the
// CUDA runtime and cuBLAS. Without a CUDA device (or with --cpu-only) it
// still runs the CPU Adam part and prints {"skipped": ..., "cpu_adam": ...}.
//
// Build: nvcc -O3 -arch=sm_90 -Xcompiler -fno-math-errno
//          -o host_link_probe host_link_probe.cu -lcublas
// (bench/gpu_host_link.py builds and runs it; -fno-math-errno lets the host
// compiler vectorize the sqrt in the Adam loop.)

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

constexpr double kGB = 1e9; // Loom's cluster specs count GB/s in 10^9 bytes
constexpr size_t kMiB = size_t(1) << 20;

//===----------------------------------------------------------------------===//
// Errors: every CUDA and cuBLAS call goes through one of these; a failure
// names the call and stops the program with a non-zero status.
//===----------------------------------------------------------------------===//

[[noreturn]] void die(const char *what, const char *detail, const char *file,
                      int line) {
  std::fprintf(stderr, "host_link_probe: error: %s failed: %s (%s:%d)\n", what,
               detail, file, line);
  std::exit(1);
}

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::string d_ = std::string(cudaGetErrorName(err_)) + ": " +            \
                       cudaGetErrorString(err_);                               \
      die(#call, d_.c_str(), __FILE__, __LINE__);                              \
    }                                                                          \
  } while (0)

#define CUBLAS_CHECK(call)                                                     \
  do {                                                                         \
    cublasStatus_t st_ = (call);                                               \
    if (st_ != CUBLAS_STATUS_SUCCESS)                                          \
      die(#call, cublasGetStatusString(st_), __FILE__, __LINE__);              \
  } while (0)

//===----------------------------------------------------------------------===//
// A small JSON value, enough to print one nested object.
//===----------------------------------------------------------------------===//

class Json {
public:
  static Json object() { return Json(Kind::Object); }
  static Json array() { return Json(Kind::Array); }
  static Json number(double v) {
    Json j(Kind::Number);
    j.num_ = v;
    return j;
  }
  static Json integer(long long v) {
    Json j(Kind::Integer);
    j.int_ = v;
    return j;
  }
  static Json string(std::string v) {
    Json j(Kind::String);
    j.str_ = std::move(v);
    return j;
  }
  static Json boolean(bool v) {
    Json j(Kind::Bool);
    j.int_ = v;
    return j;
  }

  Json &set(const std::string &key, Json value) {
    members_.emplace_back(key, std::move(value));
    return *this;
  }
  Json &set(const std::string &key, double v) { return set(key, number(v)); }
  Json &set(const std::string &key, const std::string &v) {
    return set(key, string(v));
  }
  Json &set(const std::string &key, const char *v) {
    return set(key, string(v));
  }
  Json &push(Json value) {
    members_.emplace_back(std::string(), std::move(value));
    return *this;
  }

  std::string dump(int indent = 0) const {
    std::string out;
    write(out, indent);
    return out;
  }

private:
  enum class Kind { Number, Integer, String, Bool, Array, Object };
  explicit Json(Kind k) : kind_(k) {}

  static void quote(std::string &out, const std::string &s) {
    out += '"';
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += char(c);
      } else if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += char(c);
      }
    }
    out += '"';
  }

  void write(std::string &out, int indent) const {
    switch (kind_) {
    case Kind::Number: {
      if (!std::isfinite(num_)) { // JSON has no NaN or infinity
        out += "null";
        return;
      }
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", num_);
      out += buf;
      return;
    }
    case Kind::Integer:
      out += std::to_string(int_);
      return;
    case Kind::Bool:
      out += int_ ? "true" : "false";
      return;
    case Kind::String:
      quote(out, str_);
      return;
    case Kind::Array:
    case Kind::Object: {
      bool obj = kind_ == Kind::Object;
      out += obj ? '{' : '[';
      std::string pad(indent + 2, ' ');
      for (size_t i = 0; i < members_.size(); ++i) {
        out += i ? ",\n" : "\n";
        out += pad;
        if (obj) {
          quote(out, members_[i].first);
          out += ": ";
        }
        members_[i].second.write(out, indent + 2);
      }
      if (!members_.empty())
        out += "\n" + std::string(indent, ' ');
      out += obj ? '}' : ']';
      return;
    }
    }
  }

  Kind kind_;
  double num_ = 0;
  long long int_ = 0;
  std::string str_;
  std::vector<std::pair<std::string, Json>> members_;
};

//===----------------------------------------------------------------------===//
// Options.
//===----------------------------------------------------------------------===//

struct Options {
  bool cpuOnly = false;
  bool adam = true;
  long long adamParams = 256ll << 20; // 256M parameters: 4 GiB over 4 arrays
  int repeats = 7;                    // timed repeats per point (median)
  int gemmSize = 8192;                // M = N = K
  int gemmIters = 50; // GEMMs per timed loop: ~80 ms on an H100, long
                      // enough to hold several 256 MiB copies
};

void usage(const char *argv0) {
  std::fprintf(stderr,
               "usage: %s [--cpu-only] [--no-adam] [--adam-params N]\n"
               "          [--repeats R] [--gemm-size N] [--gemm-iters I]\n"
               "Prints one JSON object on stdout; progress on stderr.\n",
               argv0);
}

bool parseOptions(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](long long lo) -> long long {
      if (i + 1 >= argc)
        return lo - 1;
      char *end = nullptr;
      long long v = std::strtoll(argv[++i], &end, 10);
      return *end ? lo - 1 : v;
    };
    long long v;
    if (a == "--cpu-only") {
      o.cpuOnly = true;
    } else if (a == "--no-adam") {
      o.adam = false;
    } else if (a == "--adam-params") {
      if ((v = value(1)) < 1)
        return false;
      o.adamParams = v;
    } else if (a == "--repeats") {
      if ((v = value(5)) < 5) // the brief's floor: a median of at least 5
        return false;
      o.repeats = int(v);
    } else if (a == "--gemm-size") {
      if ((v = value(16)) < 16 || v > 65536)
        return false;
      o.gemmSize = int(v);
    } else if (a == "--gemm-iters") {
      if ((v = value(1)) < 1 || v > 100000)
        return false;
      o.gemmIters = int(v);
    } else {
      return false;
    }
  }
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

//===----------------------------------------------------------------------===//
// Host facts.
//===----------------------------------------------------------------------===//

// What `nproc` prints: the CPUs this process may run on (a container's cpuset
// can be smaller than the machine).
int usableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? int(n) : 1;
}

std::string firstLineValue(const char *file, const char *key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, std::strlen(key), key) == 0) {
      size_t colon = line.find(':');
      if (colon == std::string::npos)
        return "";
      size_t start = line.find_first_not_of(" \t", colon + 1);
      return start == std::string::npos ? "" : line.substr(start);
    }
  return "";
}

std::string readTrimmed(const std::string &file) {
  std::ifstream in(file);
  std::string s;
  std::getline(in, s);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
    s.pop_back();
  return s;
}

Json hostInfo() {
  Json h = Json::object();
  h.set("nproc", Json::integer(usableCpus()));
  h.set("online_cpus", Json::integer(sysconf(_SC_NPROCESSORS_ONLN)));
  h.set("cpu_model", firstLineValue("/proc/cpuinfo", "model name"));
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && pageSize > 0)
    h.set("memory_GiB", double(pages) * double(pageSize) / double(1ull << 30));
  return h;
}

//===----------------------------------------------------------------------===//
// CPU Adam.
//===----------------------------------------------------------------------===//

struct AdamHyper {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
};

// One thread's share of an Adam step t (1-based), bias-corrected:
//   m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2
//   p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)
// __restrict and the plain loop let the compiler vectorize it; the step is
// meant to be memory-bound, as a real CPU Adam's is. The binary is built on
// one machine and run on another, so rather than -march=native, GCC's
// target_clones compiles AVX-512 and AVX2 variants beside the baseline and
// picks one at load time (real CPU Adam kernels use those widths too).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void adamRange(float *__restrict p, const float *__restrict g,
               float *__restrict m, float *__restrict v, size_t n,
               const AdamHyper &h, float corr1, float corr2) {
  const float b1 = h.beta1, b2 = h.beta2, a1 = 1.0f - h.beta1,
              a2 = 1.0f - h.beta2, lr = h.lr, eps = h.eps;
  for (size_t i = 0; i < n; ++i) {
    float gi = g[i];
    float mi = b1 * m[i] + a1 * gi;
    float vi = b2 * v[i] + a2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] -= lr * (mi * corr1) / (std::sqrt(vi * corr2) + eps);
  }
}

// Deterministic values in [-1, 1) from an index (splitmix64's finalizer), so
// the arrays need no random-number state shared between threads.
float hashUnit(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return float(double(x >> 40) / double(1ull << 23) - 1.0);
}

float initialParam(size_t i) { return hashUnit(2 * i); }
float initialGrad(size_t i) { return 1e-2f * hashUnit(2 * i + 1); }

// Runs `fn(begin, end)` over [0, n) on `threads` threads, each a contiguous
// block aligned to a cache line so no two threads write one line.
template <typename Fn> void parallelFor(size_t n, int threads, Fn fn) {
  const size_t align = 16; // floats per 64-byte line
  size_t block = (n + threads - 1) / threads;
  block = (block + align - 1) / align * align;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    size_t begin = std::min(n, size_t(t) * block);
    size_t end = std::min(n, begin + block);
    if (begin < end)
      pool.emplace_back(fn, begin, end);
  }
  for (std::thread &th : pool)
    th.join();
}

struct AdamBuffers {
  float *p = nullptr, *g = nullptr, *m = nullptr, *v = nullptr;
  size_t n = 0;
  explicit AdamBuffers(size_t n_) : n(n_) {
    // new[] of float does not initialize, so the pages are first touched by
    // the initializing threads below (NUMA placement follows first touch).
    p = new float[n];
    g = new float[n];
    m = new float[n];
    v = new float[n];
  }
  ~AdamBuffers() {
    delete[] p;
    delete[] g;
    delete[] m;
    delete[] v;
  }
  AdamBuffers(const AdamBuffers &) = delete;
  AdamBuffers &operator=(const AdamBuffers &) = delete;
};

// Replays Adam for one element in double precision: the reference the
// threaded float update is checked against.
double referenceParam(size_t i, int steps, const AdamHyper &h) {
  double p = initialParam(i), g = initialGrad(i), m = 0, v = 0;
  for (int t = 1; t <= steps; ++t) {
    m = h.beta1 * m + (1 - double(h.beta1)) * g;
    v = h.beta2 * v + (1 - double(h.beta2)) * g * g;
    double mh = m / (1 - std::pow(double(h.beta1), t));
    double vh = v / (1 - std::pow(double(h.beta2), t));
    p -= h.lr * mh / (std::sqrt(vh) + h.eps);
  }
  return p;
}

Json runCpuAdam(const Options &o) {
  const size_t n = size_t(o.adamParams);
  const int allThreads = usableCpus();
  const AdamHyper h;
  std::fprintf(stderr, "cpu adam: %zu parameters (%.2f GiB over 4 arrays)\n",
               n, 16.0 * double(n) / double(1ull << 30));

  AdamBuffers b(n);
  parallelFor(n, allThreads, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) {
      b.p[i] = initialParam(i);
      b.g[i] = initialGrad(i);
      b.m[i] = 0;
      b.v[i] = 0;
    }
  });

  // Bytes one step moves through the memory system, per parameter: it reads
  // param, grad, m and v (4 x 4 B) and writes param, m and v back (3 x 4 B);
  // the gradient is read only. 28 B/param; "optimizer_state_GBps" below is
  // that traffic over the step time. Loom's cpu_adam_GBps is counted
  // differently (see "loom_state_GBps").
  const double trafficBytesPerParam = 4.0 * 4 + 3.0 * 4;
  // Loom prices a CPU Adam step as optimizer state / cpu_adam_GBps
  // (lib/Memory/Placement.cpp, hostUpdateSeconds) with the state counted by
  // adamStateBytesPerParameter (include/loom/Cost/Estimate.h): 12 B/param
  // (fp32 master copy + m + v) for bf16/fp16 parameters, the case offload is
  // for; this step does that work (the fp32 `param` array is the master
  // copy). So the rate comparable with the preset is 12 B x params/s.
  const double loomStateBytesPerParam = 12.0;

  int step = 0;
  auto oneStep = [&](int threads) {
    ++step;
    const float corr1 = float(1.0 / (1.0 - std::pow(double(h.beta1), step)));
    const float corr2 = float(1.0 / (1.0 - std::pow(double(h.beta2), step)));
    auto t0 = std::chrono::steady_clock::now();
    // Threads are started per step, as a step would be dispatched in
    // training; starting them costs well under a millisecond.
    parallelFor(n, threads, [&](size_t lo, size_t hi) {
      adamRange(b.p + lo, b.g + lo, b.m + lo, b.v + lo, hi - lo, h, corr1,
                corr2);
    });
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
        .count();
  };

  Json runs = Json::array();
  std::vector<int> counts = {allThreads};
  if (allThreads != 1)
    counts.push_back(1);
  for (int threads : counts) {
    oneStep(threads); // warm-up: faults in nothing new, but settles clocks
    std::vector<double> secs;
    for (int r = 0; r < 3; ++r)
      secs.push_back(oneStep(threads));
    double s = median(secs);
    double paramsPerSec = double(n) / s;
    std::fprintf(stderr,
                 "cpu adam: %d thread(s): %.4f s/step, %.3g params/s, "
                 "%.1f GB/s traffic\n",
                 threads, s, paramsPerSec,
                 trafficBytesPerParam * paramsPerSec / kGB);
    Json run = Json::object();
    run.set("threads", Json::integer(threads));
    run.set("seconds_per_step", s);
    Json all = Json::array();
    for (double x : secs)
      all.push(Json::number(x));
    run.set("seconds_all", all);
    run.set("params_per_s", paramsPerSec);
    run.set("optimizer_state_GBps", trafficBytesPerParam * paramsPerSec / kGB);
    run.set("loom_state_GBps", loomStateBytesPerParam * paramsPerSec / kGB);
    run.set("per_thread_loom_state_GBps",
            loomStateBytesPerParam * paramsPerSec / kGB / threads);
    runs.push(run);
  }

  // Correctness: nothing non-finite anywhere, and a few elements agree with a
  // double-precision replay of the same steps.
  std::atomic<size_t> nonFinite{0};
  parallelFor(n, allThreads, [&](size_t lo, size_t hi) {
    size_t bad = 0;
    for (size_t i = lo; i < hi; ++i)
      bad += !std::isfinite(b.p[i]) || !std::isfinite(b.m[i]) ||
             !std::isfinite(b.v[i]);
    nonFinite += bad;
  });
  double worstRel = 0;
  for (size_t i : {size_t(0), n / 3, n / 2, n - 1}) {
    double ref = referenceParam(i, step, h);
    double rel = std::fabs(double(b.p[i]) - ref) /
                 std::max(1e-6, std::fabs(ref));
    worstRel = std::max(worstRel, rel);
  }
  if (nonFinite.load() != 0) {
    std::fprintf(stderr,
                 "host_link_probe: error: cpu adam produced %zu non-finite "
                 "values\n",
                 nonFinite.load());
    std::exit(1);
  }
  if (worstRel > 1e-4) {
    std::fprintf(stderr,
                 "host_link_probe: error: cpu adam disagrees with the "
                 "reference by %.3g (relative)\n",
                 worstRel);
    std::exit(1);
  }

  Json out = Json::object();
  out.set("params", Json::integer((long long)n));
  out.set("dtype", "fp32 param, grad, m, v");
  out.set("steps_run", Json::integer(step));
  out.set("traffic_bytes_per_param", trafficBytesPerParam);
  out.set("traffic_note",
          "optimizer_state_GBps = (read p,g,m,v + write p,m,v) = 28 B/param "
          "per step / seconds");
  out.set("loom_state_bytes_per_param", loomStateBytesPerParam);
  out.set("loom_note",
          "loom_state_GBps = 12 B/param (fp32 master + m + v, as "
          "adamStateBytesPerParameter counts bf16 params) x params/s: the "
          "rate comparable with host.cpu_adam_GBps");
  out.set("runs", runs);
  out.set("non_finite", Json::integer((long long)nonFinite.load()));
  out.set("max_rel_error_vs_reference", worstRel);
  return out;
}

//===----------------------------------------------------------------------===//
// GPU part.
//===----------------------------------------------------------------------===//

// Two events around work on one stream; seconds between them.
double seconds(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  return double(ms) * 1e-3;
}

Json deviceInfo(int dev) {
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  int driver = 0, runtime = 0, cublasVer = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  auto attr = [&](cudaDeviceAttr a) {
    int v = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&v, a, dev));
    return v;
  };
  Json d = Json::object();
  d.set("name", prop.name);
  d.set("compute_capability", std::to_string(prop.major) + "." +
                                  std::to_string(prop.minor));
  d.set("sm_count", Json::integer(prop.multiProcessorCount));
  d.set("memory_bytes", Json::integer((long long)prop.totalGlobalMem));
  d.set("memory_GiB", double(prop.totalGlobalMem) / double(1ull << 30));
  d.set("clock_kHz", Json::integer(attr(cudaDevAttrClockRate)));
  d.set("memory_clock_kHz", Json::integer(attr(cudaDevAttrMemoryClockRate)));
  d.set("memory_bus_bits", Json::integer(attr(cudaDevAttrGlobalMemoryBusWidth)));
  // Copy engines: with fewer than 2, H2D and D2H cannot run at once.
  d.set("async_engine_count", Json::integer(attr(cudaDevAttrAsyncEngineCount)));
  char bus[32] = {0};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, dev));
  std::string busId = bus;
  for (char &c : busId)
    c = char(std::tolower((unsigned char)c));
  d.set("pci_bus_id", busId);
  // The CUDA runtime does not report the PCIe link; Linux's sysfs does (the
  // "current" values can read low while the GPU idles in a power state).
  std::string sys = "/sys/bus/pci/devices/" + busId + "/";
  Json link = Json::object();
  for (const char *f : {"current_link_speed", "current_link_width",
                        "max_link_speed", "max_link_width"})
    link.set(f, readTrimmed(sys + f));
  link.set("source", "sysfs " + sys);
  d.set("pcie_link", link);
  d.set("driver_version", Json::integer(driver));
  d.set("runtime_version", Json::integer(runtime));
  CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &cublasVer));
  int minor = 0, patch = 0;
  CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor));
  CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch));
  d.set("cublas_version", std::to_string(cublasVer) + "." +
                              std::to_string(minor) + "." +
                              std::to_string(patch));
  return d;
}

__global__ void fillBf16(__nv_bfloat16 *x, size_t n, uint32_t seed) {
  // Values in [-1, 1): random enough that the GEMM runs at the clocks real
  // data would (all-zero inputs can draw less power and clock higher).
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(i) * 2654435761u ^ seed;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    x[i] = __float2bfloat16(float(h >> 8) / float(1u << 23) - 1.0f);
  }
}

class GpuProbe {
public:
  explicit GpuProbe(const Options &o) : o_(o) {
    maxBytes_ = 1024 * kMiB;
    CUDA_CHECK(cudaHostAlloc(&host_, maxBytes_, cudaHostAllocDefault));
    std::memset(host_, 1, maxBytes_);
    CUDA_CHECK(cudaMalloc(&dev_, maxBytes_));
    CUDA_CHECK(cudaMemset(dev_, 0, maxBytes_));
    for (cudaStream_t *s : {&s0_, &s1_, &s2_})
      CUDA_CHECK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&a_));
    CUDA_CHECK(cudaEventCreate(&b_));
    CUDA_CHECK(cudaEventCreate(&c_));
    CUDA_CHECK(cudaEventCreate(&d_));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  // Frees everything, checked like every other call; main calls it before
  // printing so a late error still fails the run.
  void release() {
    if (handle_)
      CUBLAS_CHECK(cublasDestroy(handle_));
    handle_ = nullptr;
    for (__nv_bfloat16 **p : {&A_, &B_, &C_}) {
      if (*p)
        CUDA_CHECK(cudaFree(*p));
      *p = nullptr;
    }
    for (cudaEvent_t e : {a_, b_, c_, d_})
      CUDA_CHECK(cudaEventDestroy(e));
    for (cudaStream_t st : {s0_, s1_, s2_})
      CUDA_CHECK(cudaStreamDestroy(st));
    CUDA_CHECK(cudaFree(dev_));
    CUDA_CHECK(cudaFreeHost(host_));
    dev_ = host_ = nullptr;
  }

  // One copy timed by events on its stream.
  double timeCopy(void *dst, const void *src, size_t bytes,
                  cudaMemcpyKind kind, cudaStream_t s) {
    CUDA_CHECK(cudaEventRecord(a_, s));
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s));
    CUDA_CHECK(cudaEventRecord(b_, s));
    CUDA_CHECK(cudaEventSynchronize(b_));
    return seconds(a_, b_);
  }

  // Median over o_.repeats after one untimed warm-up copy.
  double medianCopy(void *dst, const void *src, size_t bytes,
                    cudaMemcpyKind kind) {
    timeCopy(dst, src, bytes, kind, s0_);
    std::vector<double> t;
    for (int r = 0; r < o_.repeats; ++r)
      t.push_back(timeCopy(dst, src, bytes, kind, s0_));
    return median(t);
  }

  Json sweep(cudaMemcpyKind kind, const char *label) {
    Json rows = Json::array();
    for (size_t mib : {1, 4, 16, 64, 256, 1024}) {
      size_t bytes = mib * kMiB;
      double s = kind == cudaMemcpyHostToDevice
                     ? medianCopy(dev_, host_, bytes, kind)
                     : medianCopy(host_, dev_, bytes, kind);
      if (kind == cudaMemcpyHostToDevice && mib == 256)
        h2d256Seconds_ = s;
      std::fprintf(stderr, "%s %5zu MiB: %8.1f us  %6.2f GB/s\n", label, mib,
                   s * 1e6, bytes / s / kGB);
      Json row = Json::object();
      row.set("bytes", Json::integer((long long)bytes));
      row.set("seconds", s);
      row.set("GBps", bytes / s / kGB);
      rows.push(row);
    }
    return rows;
  }

  // H2D on one stream and D2H on another, started together, 256 MiB each,
  // through distinct host and device halves so neither waits on the other's
  // memory.
  Json bidirectional() {
    const size_t bytes = 256 * kMiB;
    char *hUp = static_cast<char *>(host_), *hDown = hUp + 512 * kMiB;
    char *dUp = static_cast<char *>(dev_), *dDown = dUp + 512 * kMiB;
    std::vector<double> up, down, both;
    for (int r = 0; r < o_.repeats + 1; ++r) {
      // Both streams start from one point: s1 waits on an event s0 records.
      CUDA_CHECK(cudaEventRecord(a_, s0_));
      CUDA_CHECK(cudaStreamWaitEvent(s1_, a_, 0));
      CUDA_CHECK(cudaStreamWaitEvent(s2_, a_, 0));
      CUDA_CHECK(cudaMemcpyAsync(dUp, hUp, bytes, cudaMemcpyHostToDevice, s1_));
      CUDA_CHECK(cudaEventRecord(b_, s1_));
      CUDA_CHECK(
          cudaMemcpyAsync(hDown, dDown, bytes, cudaMemcpyDeviceToHost, s2_));
      CUDA_CHECK(cudaEventRecord(c_, s2_));
      CUDA_CHECK(cudaEventSynchronize(b_));
      CUDA_CHECK(cudaEventSynchronize(c_));
      if (r == 0)
        continue; // warm-up
      double tu = seconds(a_, b_), td = seconds(a_, c_);
      up.push_back(bytes / tu / kGB);
      down.push_back(bytes / td / kGB);
      both.push_back(2.0 * bytes / std::max(tu, td) / kGB);
    }
    Json j = Json::object();
    j.set("bytes_each", Json::integer((long long)bytes));
    j.set("h2d_GBps", median(up));
    j.set("d2h_GBps", median(down));
    j.set("total_GBps", median(both));
    std::fprintf(stderr, "bidirectional 256 MiB: h2d %.2f, d2h %.2f GB/s\n",
                 median(up), median(down));
    return j;
  }

  Json pageable() {
    const size_t bytes = 256 * kMiB;
    std::vector<char> buf(bytes, 1); // written, so its pages exist
    double s = medianCopy(dev_, buf.data(), bytes, cudaMemcpyHostToDevice);
    std::fprintf(stderr, "pageable h2d 256 MiB: %.2f GB/s\n", bytes / s / kGB);
    Json j = Json::object();
    j.set("bytes", Json::integer((long long)bytes));
    j.set("seconds", s);
    j.set("GBps", bytes / s / kGB);
    return j;
  }

  void setUpGemm() {
    const size_t n = size_t(o_.gemmSize), elems = n * n;
    CUDA_CHECK(cudaMalloc(&A_, elems * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMalloc(&B_, elems * sizeof(__nv_bfloat16)));
    CUDA_CHECK(cudaMalloc(&C_, elems * sizeof(__nv_bfloat16)));
    fillBf16<<<1024, 256, 0, s0_>>>(A_, elems, 1u);
    CUDA_CHECK(cudaGetLastError());
    fillBf16<<<1024, 256, 0, s0_>>>(B_, elems, 2u);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemsetAsync(C_, 0, elems * sizeof(__nv_bfloat16), s0_));
    CUDA_CHECK(cudaStreamSynchronize(s0_));
    CUBLAS_CHECK(cublasCreate(&handle_));
    CUBLAS_CHECK(cublasSetStream(handle_, s0_));
  }

  void gemm() {
    const int n = o_.gemmSize;
    const float alpha = 1.0f, beta = 0.0f;
    CUBLAS_CHECK(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n,
                              &alpha, A_, CUDA_R_16BF, n, B_, CUDA_R_16BF, n,
                              &beta, C_, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
  }

  double gemmFlops() const {
    double n = o_.gemmSize;
    return 2.0 * n * n * n * o_.gemmIters;
  }

  // The GEMM loop alone: seconds for o_.gemmIters GEMMs, median of repeats.
  double gemmAlone() {
    for (int i = 0; i < 3; ++i)
      gemm();
    CUDA_CHECK(cudaStreamSynchronize(s0_));
    std::vector<double> t;
    for (int r = 0; r < o_.repeats; ++r) {
      CUDA_CHECK(cudaEventRecord(a_, s0_));
      for (int i = 0; i < o_.gemmIters; ++i)
        gemm();
      CUDA_CHECK(cudaEventRecord(b_, s0_));
      CUDA_CHECK(cudaEventSynchronize(b_));
      t.push_back(seconds(a_, b_));
    }
    return median(t);
  }

  // The GEMM loop on s0 while 256 MiB copies run back to back on their own
  // streams (s1 H2D; s2 D2H when `withD2h`). The copies are queued first and
  // outnumber the GEMM loop's length, so they run throughout it; the GEMM
  // starts once the first H2D copy has finished, so it sees the copies in
  // their steady state. Copy rate is over the copies that ran wholly inside
  // the GEMM window.
  struct Overlap {
    double gemmSeconds = 0, h2dGBps = 0, d2hGBps = 0;
    bool covered = true;
  };
  Overlap gemmUnderCopy(double gemmLoopSeconds, double copySeconds,
                        bool withD2h) {
    const size_t bytes = 256 * kMiB;
    char *hUp = static_cast<char *>(host_), *hDown = hUp + 512 * kMiB;
    char *dUp = static_cast<char *>(dev_), *dDown = dUp + 512 * kMiB;
    // Enough copies to outlast the GEMM loop: copies only slow down under
    // load, so the loop's length over one unloaded copy's, with margin, is
    // enough (`covered` in the result confirms it).
    int k = int(std::ceil(1.5 * gemmLoopSeconds / copySeconds)) + 3;
    struct Lane {
      cudaStream_t s;
      void *dst;
      const void *src;
      cudaMemcpyKind kind;
      std::vector<cudaEvent_t> ev; // ev[i] .. ev[i+1] brackets copy i
    };
    std::vector<Lane> lanes;
    lanes.push_back({s1_, dUp, hUp, cudaMemcpyHostToDevice, {}});
    if (withD2h)
      lanes.push_back({s2_, hDown, dDown, cudaMemcpyDeviceToHost, {}});

    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaEventRecord(d_, s0_)); // the common time origin
    for (Lane &l : lanes) {
      CUDA_CHECK(cudaStreamWaitEvent(l.s, d_, 0));
      l.ev.resize(k + 1);
      for (cudaEvent_t &e : l.ev)
        CUDA_CHECK(cudaEventCreate(&e));
      CUDA_CHECK(cudaEventRecord(l.ev[0], l.s));
      for (int i = 0; i < k; ++i) {
        CUDA_CHECK(cudaMemcpyAsync(l.dst, l.src, bytes, l.kind, l.s));
        CUDA_CHECK(cudaEventRecord(l.ev[i + 1], l.s));
      }
    }
    CUDA_CHECK(cudaStreamWaitEvent(s0_, lanes[0].ev[1], 0));
    CUDA_CHECK(cudaEventRecord(a_, s0_));
    for (int i = 0; i < o_.gemmIters; ++i)
      gemm();
    CUDA_CHECK(cudaEventRecord(b_, s0_));
    CUDA_CHECK(cudaDeviceSynchronize());

    Overlap r;
    const double g0 = seconds(d_, a_), g1 = seconds(d_, b_);
    r.gemmSeconds = g1 - g0;
    for (size_t li = 0; li < lanes.size(); ++li) {
      Lane &l = lanes[li];
      std::vector<double> at(k + 1);
      for (int i = 0; i <= k; ++i)
        at[i] = seconds(d_, l.ev[i]);
      r.covered = r.covered && at[0] <= g0 && at[k] >= g1;
      int first = -1, last = -1; // copies wholly inside [g0, g1]
      for (int i = 0; i < k; ++i)
        if (at[i] >= g0 && at[i + 1] <= g1) {
          if (first < 0)
            first = i;
          last = i;
        }
      double rate = 0;
      if (first >= 0)
        rate = double(last - first + 1) * bytes / (at[last + 1] - at[first]) /
               kGB;
      (l.kind == cudaMemcpyHostToDevice ? r.h2dGBps : r.d2hGBps) = rate;
      for (cudaEvent_t e : l.ev)
        CUDA_CHECK(cudaEventDestroy(e));
    }
    return r;
  }

  Json gemmSection() {
    const double h2dCopySeconds = h2d256Seconds_;
    if (!(h2dCopySeconds > 0)) {
      std::fprintf(stderr, "host_link_probe: error: the H2D sweep must run "
                           "before the GEMM overlap test\n");
      std::exit(1);
    }
    setUpGemm();
    const int n = o_.gemmSize;
    double alone = gemmAlone();
    double tflopsAlone = gemmFlops() / alone / 1e12;
    std::fprintf(stderr, "gemm bf16 %dx%dx%d alone: %.1f TFLOP/s\n", n, n, n,
                 tflopsAlone);

    Json j = Json::object();
    j.set("m_n_k", Json::integer(n));
    j.set("dtype", "bf16 in/out, fp32 accumulate (CUBLAS_COMPUTE_32F)");
    j.set("iters_per_timing", Json::integer(o_.gemmIters));
    j.set("tflops_alone", tflopsAlone);

    for (bool withD2h : {false, true}) {
      std::vector<double> tf, up, down;
      bool covered = true;
      gemmUnderCopy(alone, h2dCopySeconds, withD2h); // warm-up
      for (int r = 0; r < 3; ++r) {
        Overlap ov = gemmUnderCopy(alone, h2dCopySeconds, withD2h);
        tf.push_back(gemmFlops() / ov.gemmSeconds / 1e12);
        up.push_back(ov.h2dGBps);
        down.push_back(ov.d2hGBps);
        covered = covered && ov.covered;
      }
      Json u = Json::object();
      u.set("tflops", median(tf));
      u.set("tflops_ratio_to_alone", median(tf) / tflopsAlone);
      u.set("h2d_GBps", median(up));
      if (withD2h)
        u.set("d2h_GBps", median(down));
      u.set("copies_covered_gemm_window", Json::boolean(covered));
      std::fprintf(stderr,
                   "gemm under %s copies: %.1f TFLOP/s (%.3f of alone), "
                   "h2d %.2f GB/s%s\n",
                   withD2h ? "h2d+d2h" : "h2d", median(tf),
                   median(tf) / tflopsAlone, median(up),
                   withD2h ? (", d2h " + std::to_string(median(down)) + " GB/s")
                                 .c_str()
                           : "");
      j.set(withD2h ? "under_h2d_and_d2h_copies" : "under_h2d_copy", u);
    }
    return j;
  }

private:
  const Options &o_;
  size_t maxBytes_ = 0;
  double h2d256Seconds_ = 0; // from the H2D sweep; sizes the overlap test
  void *host_ = nullptr, *dev_ = nullptr;
  cudaStream_t s0_ = nullptr, s1_ = nullptr, s2_ = nullptr;
  cudaEvent_t a_ = nullptr, b_ = nullptr, c_ = nullptr, d_ = nullptr;
  cublasHandle_t handle_ = nullptr;
  __nv_bfloat16 *A_ = nullptr, *B_ = nullptr, *C_ = nullptr;
};

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (!parseOptions(argc, argv, o)) {
    usage(argv[0]);
    return 2;
  }

  Json out = Json::object();
  out.set("tool", "bench/gpu/host_link_probe.cu");
  out.set("GB", "1e9 bytes");

  int count = 0;
  std::string skipped;
  if (o.cpuOnly) {
    skipped = "--cpu-only";
  } else {
    // No device or no driver both mean "nothing to measure here", not an
    // error: the CPU half still runs.
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
      skipped = "no CUDA device";
      out.set("skipped", skipped);
      out.set("cuda_error", err != cudaSuccess
                                ? std::string(cudaGetErrorName(err)) + ": " +
                                      cudaGetErrorString(err)
                                : std::string("device count 0"));
      (void)cudaGetLastError(); // clear it
    }
  }
  if (o.cpuOnly)
    out.set("skipped", skipped);

  Json device = Json::object();
  if (skipped.empty()) {
    CUDA_CHECK(cudaSetDevice(0));
    device = deviceInfo(0);
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::fprintf(stderr, "device 0 of %d: %s\n", count, prop.name);
  }
  device.set("host", hostInfo());
  out.set("device", device);

  if (skipped.empty()) {
    GpuProbe g(o);
    Json h2d = g.sweep(cudaMemcpyHostToDevice, "pinned h2d");
    Json d2h = g.sweep(cudaMemcpyDeviceToHost, "pinned d2h");
    out.set("h2d_GBps", h2d);
    out.set("d2h_GBps", d2h);
    out.set("bidirectional", g.bidirectional());
    out.set("pageable_h2d_GBps", g.pageable());
    out.set("gemm", g.gemmSection());
    g.release();
  }

  if (o.adam)
    out.set("cpu_adam", runCpuAdam(o));

  std::printf("%s\n", out.dump().c_str());
  return 0;
}
