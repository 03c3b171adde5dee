//===- loom-run.cpp - execute a compiled Loom artifact on 1..N MPI ranks
//---===//
//
// loom-run ARTIFACT --inputs A[,B...] --outputs X[,Y...] [--steps N]
//          [--warmup N] [--timeout SECONDS] [--nvme-dir DIR] [--every-rank]
//          [--quiet]
//
// Loads ARTIFACT/manifest.json and program.so through libloomrt, reads each
// rank's shard of every input (.npy or .pb, checked against the manifest's
// global dtype and shape) and weight, runs the entry `warmup` + `steps`
// times and writes the outputs (rank 0, or every rank with --every-rank).
// A micro-batched artifact runs the entry once per micro-batch in a step,
// cutting each input along its batch dimension and assembling the outputs,
// then its update entry, where it has one (the optimizer, once a step).
// In a pipelined one each rank runs its stage's entry (and its update entry);
// the outputs are on the last stage (written by its lowest rank, split ones
// gathered over that stage's ranks, or by each of its ranks with --every-rank).
//
// Errors never hang and never leave partial output: every phase ends with an
// agreement (an MPI_Allreduce of "the lowest rank that failed"); on failure
// every rank removes its staged output files, then that rank prints
//   loom-run: rank R: error: <what and where>
// and calls MPI_Abort, so all ranks exit non-zero. A watchdog thread aborts
// the job after --timeout seconds (default 300; 0 disables it).
//
// On success rank 0 prints (stdout, unless --quiet) one line per step
//   loom-run: step K: T ms
// and a summary
//   loom-run: N ranks, S steps (W warmup), step time: min A ms, median B ms,
//   max C ms
// where a step's time is the slowest rank's time for that step (each step
// starts after a barrier), and, when the artifact places weights on NVMe,
//   loom-run: NVMe tier: B bytes per rank, file-backed in DIR
// (--nvme-dir, default the artifact's directory), and, when the static
// memory plan places weights or optimizer state (in its arenas or on NVMe),
//   loom-run: weights and optimizer state: P bytes per rank at the static
//   memory plan's places, Q elsewhere
//
// The program allocates its temporaries with malloc and frees them every
// call. loom-run keeps freed memory in the process (as a training
// framework's caching allocator does) rather than letting glibc return each
// large block to the system and fault its pages in again next call.
//
//===----------------------------------------------------------------------===//
#include "loomrt.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

int worldRank = 0, worldSize = 1;
/// Output files written but not yet in place; removed on any failure.
std::vector<std::string> staged;
std::mutex stagedMutex;

std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char *f, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, f);
  vsnprintf(buf, sizeof(buf), f, ap);
  va_end(ap);
  return buf;
}

void removeStaged() {
  std::lock_guard<std::mutex> lock(stagedMutex);
  for (const std::string &p : staged)
    unlink(p.c_str());
  staged.clear();
}

[[noreturn]] void abortNow(const std::string &msg) {
  removeStaged();
  fprintf(stderr, "loom-run: rank %d: error: %s\n", worldRank, msg.c_str());
  fflush(stderr);
  loomrt_abort(1);
  _exit(1);
}

/// Every rank calls this at the same point. If any rank failed, the lowest
/// such rank reports its message and the whole job aborts.
void agree(bool ok, const std::string &msg) {
  int mine = ok ? worldSize : worldRank, first = worldSize;
  if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) !=
      MPI_SUCCESS)
    abortNow(ok ? "MPI_Allreduce failed while checking for errors" : msg);
  if (first == worldSize)
    return;
  removeStaged();
  MPI_Barrier(MPI_COMM_WORLD); // everyone has cleaned up
  if (worldRank == first)
    abortNow(msg);
  // The failing rank aborts the job; do not exit 0 meanwhile.
  for (int i = 0; i < 300; ++i)
    usleep(100000);
  loomrt_abort(1);
  _exit(1);
}

//===----------------------------------------------------------------------===//
// Watchdog
//===----------------------------------------------------------------------===//

struct Watchdog {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::thread thread;

  void start(double seconds) {
    if (seconds <= 0)
      return;
    thread = std::thread([this, seconds] {
      std::unique_lock<std::mutex> lock(m);
      auto deadline = std::chrono::steady_clock::now() +
                      std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::duration<double>(seconds));
      if (cv.wait_until(lock, deadline, [this] { return done; }))
        return;
      abortNow(fmt("timed out after %g seconds (--timeout); aborting all "
                   "ranks",
                   seconds));
    });
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(m);
      done = true;
    }
    cv.notify_all();
    if (thread.joinable())
      thread.join();
  }
};

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

struct Options {
  std::string artifact;
  std::vector<std::string> inputs, outputs;
  bool haveOutputs = false;
  long steps = 1, warmup = 0;
  double timeout = 300;
  std::string nvmeDir; // empty: the artifact's directory
  bool everyRank = false, quiet = false, help = false;
};

const char *usage =
    "usage: loom-run ARTIFACT --inputs A[,B...] --outputs X[,Y...]\n"
    "                [--steps N] [--warmup N] [--timeout SECONDS]\n"
    "                [--nvme-dir DIR] [--every-rank] [--quiet]\n"
    "Runs ARTIFACT (manifest.json + program.so) under MPI. Inputs and\n"
    "outputs are .npy or ONNX TensorProto .pb files in manifest order.\n";

std::vector<std::string> splitList(const std::string &s) {
  std::vector<std::string> out;
  if (s.empty())
    return out;
  size_t start = 0;
  for (;;) {
    size_t c = s.find(',', start);
    out.push_back(s.substr(start, c - start));
    if (c == std::string::npos)
      break;
    start = c + 1;
  }
  return out;
}

bool parseLong(const std::string &s, long &v) {
  char *end = nullptr;
  errno = 0;
  v = strtol(s.c_str(), &end, 10);
  return !s.empty() && *end == '\0' && errno == 0;
}

/// Returns an error message, or "" on success.
std::string parseOptions(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], value;
    bool hasValue = false;
    size_t eq = a.find('=');
    if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      hasValue = true;
    }
    auto next = [&](std::string &out) {
      if (hasValue) {
        out = value;
        return true;
      }
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--inputs") {
      if (!next(v))
        return "--inputs needs a value";
      o.inputs = splitList(v);
    } else if (a == "--outputs") {
      if (!next(v))
        return "--outputs needs a value";
      o.outputs = splitList(v);
      o.haveOutputs = true;
    } else if (a == "--steps") {
      if (!next(v) || !parseLong(v, o.steps) || o.steps < 1)
        return "--steps needs an integer >= 1";
    } else if (a == "--warmup") {
      if (!next(v) || !parseLong(v, o.warmup) || o.warmup < 0)
        return "--warmup needs an integer >= 0";
    } else if (a == "--timeout") {
      char *end = nullptr;
      if (!next(v) || v.empty() ||
          ((o.timeout = strtod(v.c_str(), &end)), *end != '\0') ||
          o.timeout < 0)
        return "--timeout needs a number of seconds >= 0 (0 disables it)";
    } else if (a == "--nvme-dir") {
      if (!next(v) || v.empty())
        return "--nvme-dir needs a directory";
      o.nvmeDir = v;
    } else if (a == "--every-rank") {
      o.everyRank = true;
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a.rfind("-", 0) == 0 && a.size() > 1) {
      return "unknown option '" + a + "'";
    } else if (o.artifact.empty()) {
      o.artifact = a;
    } else {
      return "unexpected argument '" + a + "' (the artifact is '" + o.artifact +
             "')";
    }
  }
  if (o.help)
    return "";
  if (o.artifact.empty())
    return "missing the ARTIFACT directory";
  for (const std::string &p : o.inputs)
    if (loomrt_file_format(p.c_str()) < 0)
      return "input file '" + p + "' must end in .npy or .pb";
  for (const std::string &p : o.outputs)
    if (loomrt_file_format(p.c_str()) < 0)
      return "output file '" + p + "' must end in .npy or .pb";
  return "";
}

std::string shapeStr(const int64_t *s, int64_t n) {
  std::string r = "[";
  for (int64_t i = 0; i < n; ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

//===----------------------------------------------------------------------===//
// Inputs and outputs
//===----------------------------------------------------------------------===//

/// Copies micro-batch `m` of `count` between a tensor holding all of them
/// along `dim` (`full`) and one holding one (`part`, of shape `shape`).
void copyMicroBatch(char *full, char *part, const int64_t *shape, int64_t rank,
                    int64_t dim, int64_t m, int64_t count, int64_t elemSize,
                    bool intoFull) {
  int64_t outer = 1, inner = elemSize;
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  for (int64_t d = dim + 1; d < rank; ++d)
    inner *= shape[d];
  int64_t run = shape[dim] * inner;
  for (int64_t o = 0; o < outer; ++o) {
    char *f = full + (o * count + m) * run, *p = part + o * run;
    if (intoFull)
      memcpy(f, p, run);
    else
      memcpy(p, f, run);
  }
}

bool microBatched(const loomrt_tensor_info &info, int64_t microBatches) {
  return microBatches > 1 && info.batch_dim >= 0;
}

/// The shape of the file or output holding every micro-batch.
std::vector<int64_t> fullShape(const loomrt_tensor_info &info,
                               int64_t microBatches) {
  std::vector<int64_t> shape(info.shape, info.shape + info.rank);
  if (microBatched(info, microBatches))
    shape[info.batch_dim] *= microBatches;
  return shape;
}

/// Reads this rank's shard of input `i` into its buffer or, when it is
/// micro-batched, of every micro-batch into `slices`; "" on success.
std::string loadInput(loomrt_artifact *a, int64_t i, const std::string &path,
                      int64_t microBatches,
                      std::vector<std::vector<char>> &slices) {
  loomrt_tensor_info info;
  loomrt_artifact_info(a, LOOMRT_INPUT, i, &info);
  std::string what = fmt("input %lld ('%s')", (long long)i, info.name);
  int32_t dtype;
  int64_t rank, shape[LOOMRT_MAX_RANK], offset;
  if (loomrt_file_info(path.c_str(), &dtype, &rank, shape, &offset))
    return what + ": " + loomrt_last_error();
  bool dtypeOk = dtype == info.dtype ||
                 (info.dtype == LOOMRT_BFLOAT16 && dtype == LOOMRT_UINT16);
  if (!dtypeOk)
    return fmt("%s: file '%s' has dtype %s but the manifest expects %s",
               what.c_str(), path.c_str(), loomrt_dtype_name(dtype),
               loomrt_dtype_name(info.dtype));
  std::vector<int64_t> expected = fullShape(info, microBatches);
  if (rank != info.rank || !std::equal(shape, shape + rank, expected.begin()))
    return fmt("%s: file '%s' has shape %s but the manifest expects %s%s",
               what.c_str(), path.c_str(), shapeStr(shape, rank).c_str(),
               shapeStr(expected.data(), info.rank).c_str(),
               microBatched(info, microBatches)
                   ? fmt(" (%lld micro-batches along dimension %lld)",
                         (long long)microBatches, (long long)info.batch_dim)
                         .c_str()
                   : "");
  loomrt_tensor *buf = loomrt_artifact_buffer(a, LOOMRT_INPUT, i);
  if (offset >= 0 && !microBatched(info, microBatches)) {
    // Raw data at a known offset: read only this rank's slice.
    if (loomrt_shard_read_file(
            what.c_str(), path.c_str(), offset, info.dtype, info.rank,
            info.shape, info.split_naxes, info.split_axes, worldRank,
            loomrt_tensor_data(buf), loomrt_tensor_nbytes(buf)))
      return loomrt_last_error();
    return "";
  }
  loomrt_tensor *global = nullptr;
  if (loomrt_tensor_read(path.c_str(), &global))
    return what + ": " + loomrt_last_error();
  std::string err;
  if (!microBatched(info, microBatches)) {
    if (loomrt_shard_copy(global, info.split_naxes, info.split_axes, worldRank,
                          loomrt_tensor_data(buf), loomrt_tensor_nbytes(buf)))
      err = what + ": " + loomrt_last_error();
    loomrt_tensor_destroy(global);
    return err;
  }
  loomrt_tensor *micro = nullptr;
  if (loomrt_tensor_create(info.dtype, info.rank, info.shape, &micro)) {
    loomrt_tensor_destroy(global);
    return what + ": " + loomrt_last_error();
  }
  slices.assign(microBatches, std::vector<char>(loomrt_tensor_nbytes(buf)));
  for (int64_t m = 0; m < microBatches && err.empty(); ++m) {
    copyMicroBatch(static_cast<char *>(loomrt_tensor_data(global)),
                   static_cast<char *>(loomrt_tensor_data(micro)), info.shape,
                   info.rank, info.batch_dim, m, microBatches,
                   loomrt_dtype_size(info.dtype), /*intoFull=*/false);
    if (loomrt_shard_copy(micro, info.split_naxes, info.split_axes, worldRank,
                          slices[m].data(), (int64_t)slices[m].size()))
      err = what + ": " + loomrt_last_error();
  }
  loomrt_tensor_destroy(micro);
  loomrt_tensor_destroy(global);
  return err;
}

/// "dir/name.rank3.npy" for "dir/name.npy".
std::string rankPath(const std::string &p, int r) {
  size_t dot = p.rfind('.');
  return p.substr(0, dot) + ".rank" + std::to_string(r) + p.substr(dot);
}

/// A hidden file next to `p` with the same extension.
std::string stagePath(const std::string &p) {
  size_t slash = p.rfind('/');
  std::string dir = slash == std::string::npos ? "" : p.substr(0, slash + 1);
  std::string base = slash == std::string::npos ? p : p.substr(slash + 1);
  size_t dot = base.rfind('.');
  return dir + "." + base.substr(0, dot) + ".loom-run-" +
         std::to_string(getpid()) + base.substr(dot);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

} // namespace

int main(int argc, char **argv) {
  // Large blocks from the heap, never unmapped or trimmed: the next call's
  // buffers reuse the same pages (docs/benchmarks.md, "Gradients reduced
  // once a step").
  // (A glibc that refuses 1 GiB takes its largest, 32 MiB: setting the trim
  // threshold alone would freeze the mmap threshold at 128 KiB.)
  if (!mallopt(M_MMAP_THRESHOLD, 1 << 30))
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, -1);
  if (loomrt_init(&argc, &argv) != LOOMRT_OK) {
    fprintf(stderr, "loom-run: error: %s\n", loomrt_last_error());
    return 1;
  }
  worldRank = loomrt_world_rank();
  worldSize = loomrt_world_size();

  Options o;
  std::string err = parseOptions(argc, argv, o);
  if (o.help && err.empty()) {
    if (worldRank == 0)
      fputs(usage, stdout);
    loomrt_finalize();
    return 0;
  }
  Watchdog watchdog;
  watchdog.start(o.timeout);
  agree(err.empty(), err + "\n" + usage);

  // Manifest (identical on every rank).
  loomrt_artifact *a = nullptr;
  if (loomrt_artifact_open(o.artifact.c_str(), &a))
    err = loomrt_last_error();
  if (err.empty()) {
    int64_t nin = loomrt_artifact_count(a, LOOMRT_INPUT);
    int64_t nout = loomrt_artifact_count(a, LOOMRT_OUTPUT);
    if ((int64_t)o.inputs.size() != nin)
      err = fmt("the artifact takes %lld inputs but --inputs names %zu",
                (long long)nin, o.inputs.size());
    else if (o.haveOutputs && (int64_t)o.outputs.size() != nout)
      err = fmt("the artifact has %lld outputs but --outputs names %zu",
                (long long)nout, o.outputs.size());
  }
  agree(err.empty(), err);

  // Rank count, grid, program library, buffers.
  if ((!o.nvmeDir.empty() && loomrt_artifact_set_nvme_dir(a, o.nvmeDir.c_str())) ||
      loomrt_artifact_load(a))
    err = loomrt_last_error();
  agree(err.empty(), err);

  // Inputs: each rank reads only its shard (of every micro-batch).
  const int64_t microBatches = loomrt_artifact_micro_batches(a);
  std::vector<std::vector<std::vector<char>>> inputSlices(o.inputs.size());
  for (int64_t i = 0; err.empty() && i < (int64_t)o.inputs.size(); ++i)
    err = loadInput(a, i, o.inputs[i], microBatches, inputSlices[i]);
  agree(err.empty(), err);

  // Weights: each rank reads only its shard.
  if (loomrt_artifact_load_weights(a))
    err = loomrt_last_error();
  agree(err.empty(), err);

  // Outputs of every micro-batch are assembled here (this rank's stage's:
  // only the last pipeline stage has outputs): concatenated along their
  // batch dimension, or, a weight's gradient, summed.
  // A 16-bit gradient is summed in a float32 tensor of its own and rounded
  // once, after the last micro-batch.
  const int64_t numOutputs = loomrt_artifact_count(a, LOOMRT_OUTPUT);
  std::vector<loomrt_tensor *> assembled(numOutputs, nullptr);
  std::vector<loomrt_tensor *> sums(numOutputs, nullptr);
  for (int64_t i = 0; err.empty() && i < numOutputs; ++i) {
    loomrt_tensor_info info;
    loomrt_artifact_info(a, LOOMRT_OUTPUT, i, &info);
    bool summed = microBatches > 1 && info.sum_over_micro_batches;
    if (!microBatched(info, microBatches) && !summed)
      continue;
    std::vector<int64_t> shape =
        summed ? std::vector<int64_t>(info.local_shape,
                                      info.local_shape + info.rank)
               : fullShape(info, microBatches);
    bool wide = info.dtype == LOOMRT_FLOAT32 || info.dtype == LOOMRT_FLOAT64;
    if (loomrt_tensor_create(info.dtype, info.rank, shape.data(),
                             &assembled[i]) ||
        (summed && !wide &&
         loomrt_tensor_create(LOOMRT_FLOAT32, info.rank, shape.data(),
                              &sums[i])))
      err = fmt("output %lld ('%s'): %s", (long long)i, info.name,
                loomrt_last_error());
    else if (summed && wide)
      sums[i] = assembled[i];
  }
  agree(err.empty(), err);

  // Run: a step is every micro-batch through this rank's program. Pipeline
  // stages overlap through the transfers inside the programs.
  std::vector<double> times;
  for (long s = 0; s < o.warmup + o.steps; ++s) {
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t t0 = loomrt_now_ns();
    for (int64_t m = 0; m < microBatches; ++m) {
      for (size_t i = 0; i < inputSlices.size(); ++i)
        if (!inputSlices[i].empty())
          memcpy(loomrt_tensor_data(loomrt_artifact_buffer(a, LOOMRT_INPUT, i)),
                 inputSlices[i][m].data(), inputSlices[i][m].size());
      loomrt_artifact_set_micro_batch(a, m); // in range: m < microBatches
      // (Neither call fails once load has resolved the entries; a failure
      // would be the same on every rank, and ends the job at once.)
      if (loomrt_artifact_run(a) != LOOMRT_OK)
        abortNow(fmt("step %ld, micro-batch %lld: %s", s, (long long)m,
                     loomrt_last_error()));
      for (int64_t i = 0; i < numOutputs; ++i) {
        if (!assembled[i])
          continue;
        loomrt_tensor_info info;
        loomrt_artifact_info(a, LOOMRT_OUTPUT, i, &info);
        if (loomrt_tensor *sum = sums[i]) {
          // (Both succeed: the tensors were made for this output's dtype
          // and shape.)
          if (m == 0)
            memset(loomrt_tensor_data(sum), 0, loomrt_tensor_nbytes(sum));
          loomrt_tensor_accumulate(sum,
                                   loomrt_artifact_buffer(a, LOOMRT_OUTPUT, i));
          if (m == microBatches - 1 && sum != assembled[i])
            loomrt_tensor_round(sum, assembled[i]);
          continue;
        }
        copyMicroBatch(
            static_cast<char *>(loomrt_tensor_data(assembled[i])),
            static_cast<char *>(loomrt_tensor_data(
                loomrt_artifact_buffer(a, LOOMRT_OUTPUT, i))),
            info.shape, info.rank, info.batch_dim, m, microBatches,
            loomrt_dtype_size(info.dtype), /*intoFull=*/true);
      }
    }
    // The optimizer of a micro-batched or pipelined step, once the
    // gradients of every micro-batch are summed.
    if (loomrt_artifact_has_update(a) && loomrt_artifact_update(a) != LOOMRT_OK)
      abortNow(fmt("step %ld, the update: %s", s, loomrt_last_error()));
    int64_t t1 = loomrt_now_ns();
    if (s >= o.warmup)
      times.push_back((t1 - t0) / 1e6);
  }
  std::vector<double> slowest(times.size());
  MPI_Reduce(times.data(), slowest.data(), (int)times.size(), MPI_DOUBLE,
             MPI_MAX, 0, MPI_COMM_WORLD);
  if (worldRank == 0 && !o.quiet) {
    for (size_t s = 0; s < slowest.size(); ++s)
      printf("loom-run: step %zu: %.3f ms\n", s, slowest[s]);
    printf("loom-run: %d ranks, %ld steps (%ld warmup), step time: min %.3f "
           "ms, median %.3f ms, max %.3f ms\n",
           worldSize, o.steps, o.warmup,
           *std::min_element(slowest.begin(), slowest.end()), median(slowest),
           *std::max_element(slowest.begin(), slowest.end()));
    if (int64_t nvme = loomrt_artifact_nvme_bytes(a))
      printf("loom-run: NVMe tier: %lld bytes per rank, file-backed in %s\n",
             (long long)nvme, o.nvmeDir.empty() ? o.artifact.c_str() : o.nvmeDir.c_str());
    if (int64_t placed = loomrt_artifact_weight_bytes(a, 1))
      printf("loom-run: weights and optimizer state: %lld bytes per rank at "
             "the static memory plan's places, %lld elsewhere\n",
             (long long)placed, (long long)loomrt_artifact_weight_bytes(a, 0));
    fflush(stdout);
  }

  // Outputs: gather split ones, stage every file, then move them in place.
  // Ranks of earlier pipeline stages hold no outputs and write nothing;
  // without --every-rank the lowest rank holding them writes them.
  std::vector<std::pair<std::string, std::string>> moves; // staged -> final
  for (size_t i = 0; (int64_t)i < numOutputs && i < o.outputs.size(); ++i) {
    loomrt_tensor_info info;
    loomrt_artifact_info(a, LOOMRT_OUTPUT, (int64_t)i, &info);
    loomrt_tensor *local = assembled[i]
                               ? assembled[i]
                               : loomrt_artifact_buffer(a, LOOMRT_OUTPUT, (int64_t)i);
    bool split = false;
    for (int64_t d = 0; d < info.rank; ++d)
      split |= info.split_naxes[d] > 0;
    loomrt_tensor *global = nullptr;
    const loomrt_tensor *toWrite = local;
    if (split && !o.everyRank) {
      // Collective over the ranks holding outputs: every one takes part
      // even after a local error.
      if (loomrt_artifact_gather_output(a, (int64_t)i, local, &global) &&
          err.empty())
        err = fmt("output %zu ('%s'): %s", i, info.name, loomrt_last_error());
      toWrite = global;
    }
    bool writer = o.everyRank || worldRank == loomrt_artifact_output_rank(a);
    if (writer && err.empty()) {
      std::string final =
          o.everyRank ? rankPath(o.outputs[i], worldRank) : o.outputs[i];
      std::string stage = stagePath(final);
      {
        std::lock_guard<std::mutex> lock(stagedMutex);
        staged.push_back(stage);
      }
      if (loomrt_tensor_write(stage.c_str(), toWrite, info.name))
        err = fmt("output %zu ('%s'): cannot write '%s': %s", i, info.name,
                  final.c_str(), loomrt_last_error());
      moves.emplace_back(stage, final);
    }
    loomrt_tensor_destroy(global);
  }
  agree(err.empty(), err);
  std::vector<std::string> done;
  for (auto &m : moves) {
    if (rename(m.first.c_str(), m.second.c_str()) != 0) {
      err = fmt("cannot move the output into '%s': %s", m.second.c_str(),
                strerror(errno));
      for (const std::string &d : done)
        unlink(d.c_str());
      break;
    }
    done.push_back(m.second);
  }
  {
    std::lock_guard<std::mutex> lock(stagedMutex);
    if (err.empty())
      staged.clear();
  }
  agree(err.empty(), err);

  watchdog.stop();
  for (int64_t i = 0; i < numOutputs; ++i) {
    if (sums[i] != assembled[i])
      loomrt_tensor_destroy(sums[i]);
    loomrt_tensor_destroy(assembled[i]);
  }
  loomrt_artifact_close(a);
  loomrt_finalize();
  return 0;
}
