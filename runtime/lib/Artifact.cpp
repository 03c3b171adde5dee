//===- Artifact.cpp - compiled artifacts: manifest, program, buffers
//-------===//
//
// Reads ARTIFACT/manifest.json (the compiler's contract with the runtime),
// validates every field before anything runs (grid, rank count, dtypes,
// shapes, splits and the local shapes they imply), loads program.so with
// dlopen(RTLD_NOW | RTLD_GLOBAL) so that it binds to the already loaded
// libloomrt and libmpi, allocates the entry's buffers (inputs, weights,
// the static memory plan's arena if any, outputs in manifest order) and loads each rank's weight shards. A
// pipelined artifact lists one entry and buffer set per stage; loading picks
// the one of this rank's coordinate on the pipeline axis.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/mman.h>
#include <unistd.h>

using namespace loom::runtime;
using json = nlohmann::json;

namespace {

struct TensorDesc {
  std::string name;
  int32_t dtype = 0;
  std::vector<int64_t> shape, local, naxes, axes;
  std::string file; // weights only
  int64_t offset = 0;
  /// Weights only: the dtype of the file's elements where it is narrower
  /// (float16 or bfloat16 widened to float32 or float64 at load: a 16-bit
  /// parameter's master copy); else `dtype`.
  int32_t fileDtype = 0;
  /// Weights only: memory placement's tier (LOOMRT_TIER_*; NVMe's are
  /// file-backed at load), and where in it the static memory plan keeps
  /// the weight: an offset in the tier's arena (the device's or the
  /// host's, as mapped at load) or in the NVMe tier's file; -1: a buffer of
  /// its own.
  int32_t tier = LOOMRT_TIER_DEVICE;
  int64_t arenaOffset = -1;
  bool onNvme() const { return tier == LOOMRT_TIER_NVME; }
  int64_t batchDim = -1; // inputs/outputs under micro-batching
  bool sumOverMicroBatches = false; // outputs: a gradient, summed
};

/// What one pipeline stage's ranks run (the whole program without stages).
struct StageDesc {
  std::string entry;
  std::vector<TensorDesc> tensors[3];
  /// The static memory plan's arenas: the device's, and the host's that
  /// offloaded activations wait in (0: the program has none).
  int64_t arenaBytes = 0, hostArenaBytes = 0;
  /// Whether the entry takes the micro-batch it runs (an int64 after the
  /// arenas): its planned buffers' places differ by micro-batch
  /// (manifest `micro_batch_places`, the micro-batches it has places for).
  bool takesMicroBatch = false;
  /// The step's update, where it has one (a micro-batched or pipelined
  /// training step's optimizer, run once a step after its micro-batches):
  /// its entry and the weights it takes, which are the step's own buffers
  /// where they share a name: by weight, the index of the step's namesake
  /// in its weights (-1: the update's own).
  std::string updateEntry;
  std::vector<TensorDesc> updateWeights;
  std::vector<int64_t> updateStepWeight;
  /// Whether the update takes the step's device and host arenas (after
  /// its weights): it moves something to a place in them.
  bool updateTakesArena[2] = {false, false};
};

const char *kindName(int kind) {
  static const char *names[] = {"inputs", "weights", "outputs"};
  return names[kind];
}

const char *tierName(int32_t tier) {
  static const char *names[] = {"device", "host", "nvme"};
  return names[tier];
}

/// A tensor's bytes on one rank (-1 past int64_t).
int64_t localBytes(const TensorDesc &t) {
  int64_t n = numel(t.local), size = loomrt_dtype_size(t.dtype);
  return n < 0 || (size > 0 && n > INT64_MAX / size) ? -1 : n * size;
}

} // namespace

struct loomrt_artifact {
  std::string dir, manifestPath, library, entry;
  std::vector<int64_t> grid;
  int64_t ranks = 1;
  int64_t microBatches = 1;
  int64_t pipelineAxis = -1; // -1: no pipeline stages
  std::vector<StageDesc> stages;
  int64_t stage = -1;     // this rank's stage, after load
  int64_t outputRank = 0; // lowest world rank holding the outputs
  /// After load, on the ranks holding the outputs (the last stage's, or
  /// every rank): their communicator, ordered by world rank, and its
  /// members' world ranks; a split output is gathered over it.
  MPI_Comm outputComm = MPI_COMM_NULL;
  std::vector<int> outputMembers;
  /// Whether load has split the world into outputComm (once, on every
  /// rank, even where a later step of load failed).
  bool outputCommMade = false;
  /// The model's view before load; this rank's stage's after it.
  std::vector<TensorDesc> tensors[3];
  void *handle = nullptr;
  void (*entryFn)(void **) = nullptr;
  std::vector<loomrt_tensor *> buffers[3];
  /// The update entry, after load (null: none), its arguments, and the
  /// buffers of the weights only it takes (the optimizer's state).
  void (*updateFn)(void **) = nullptr;
  std::vector<void *> updatePointers;
  std::vector<TensorDesc> updateOwn;
  std::vector<loomrt_tensor *> updateOwnBuffers;
  /// This rank's arenas (device, host), mapped once at load and passed
  /// after the weights.
  void *arena[2] = {nullptr, nullptr};
  int64_t arenaBytes[2] = {0, 0};
  /// The micro-batch the next call runs, where the entry takes it.
  int64_t microBatchIndex = 0;
  /// The NVMe tier: the weights placed there, in one shared mapping of an
  /// unlinked file in nvmeDir (the artifact's directory by default).
  std::string nvmeDir;
  void *nvme = nullptr;
  int64_t nvmeBytes = 0;
  /// Each NVMe weight's slot in that mapping, by name (the step's and the
  /// update's own weights have distinct names).
  std::map<std::string, int64_t> nvmeSlots;
  std::vector<void *> pointers;
};

namespace {

bool intArray(const json &j, std::vector<int64_t> &out, bool allowNeg = false) {
  if (!j.is_array())
    return false;
  out.clear();
  for (const json &e : j) {
    if (!e.is_number_integer())
      return false;
    int64_t v = e.get<int64_t>();
    if (v < 0 && !allowNeg)
      return false;
    out.push_back(v);
  }
  return true;
}

std::string splitString(const TensorDesc &t) {
  std::string s = "[";
  for (size_t d = 0; d < t.naxes.size(); ++d) {
    s += d ? ", [" : "[";
    for (int64_t i = 0; i < t.naxes[d]; ++i)
      s += (i ? ", " : "") + std::to_string((t.axes[d] >> (8 * i)) & 0xff);
    s += "]";
  }
  return s + "]";
}

loomrt_status parseTensor(loomrt_artifact &a, const std::string &scope, int kind,
                          size_t i, const json &j, TensorDesc &t) {
  std::string where = scope + format("%s[%zu]", kindName(kind), i);
  auto bad = [&](const std::string &why) {
    return fail(LOOMRT_ERR_INVALID,
                format("manifest '%s': %s: %s", a.manifestPath.c_str(),
                       where.c_str(), why.c_str()));
  };
  if (!j.is_object())
    return bad("not an object");
  if (!j.contains("name") || !j["name"].is_string())
    return bad("missing string 'name'");
  t.name = j["name"].get<std::string>();
  where += " ('" + t.name + "')";
  if (!j.contains("dtype") || !j["dtype"].is_string())
    return bad("missing string 'dtype'");
  std::string dt = j["dtype"].get<std::string>();
  t.dtype = loomrt_dtype_from_name(dt.c_str());
  if (t.dtype < 0)
    return bad("unknown dtype '" + dt + "'");
  if (!j.contains("shape") || !intArray(j["shape"], t.shape))
    return bad("'shape' must be an array of non-negative integers");
  if (t.shape.size() > LOOMRT_MAX_RANK)
    return bad("too many dimensions");
  if (numel(t.shape) < 0)
    return bad("shape too large");
  if (!j.contains("local_shape") || !intArray(j["local_shape"], t.local))
    return bad("'local_shape' must be an array of non-negative integers");
  if (t.local.size() != t.shape.size())
    return bad(format("local_shape has %zu dims but shape has %zu",
                      t.local.size(), t.shape.size()));
  t.naxes.assign(t.shape.size(), 0);
  t.axes.assign(t.shape.size(), 0);
  if (j.contains("split") && !j["split"].is_null()) {
    const json &s = j["split"];
    if (!s.is_array() || s.size() != t.shape.size())
      return bad(format("'split' must be an array of %zu axis lists (one per "
                        "dimension)",
                        t.shape.size()));
    std::vector<bool> used(a.grid.size(), false);
    for (size_t d = 0; d < s.size(); ++d) {
      std::vector<int64_t> list;
      if (!intArray(s[d], list))
        return bad(format("split[%zu] must be an array of grid axes", d));
      for (int64_t ax : list) {
        if (ax >= (int64_t)a.grid.size())
          return bad(format("split[%zu] names grid axis %lld but the grid "
                            "has %zu axes",
                            d, (long long)ax, a.grid.size()));
        if (used[ax])
          return bad(
              format("grid axis %lld is used twice in 'split'", (long long)ax));
        used[ax] = true;
      }
      t.naxes[d] = (int64_t)list.size();
      for (size_t k = 0; k < list.size(); ++k)
        t.axes[d] |= list[k] << (8 * k);
    }
  } else if (!t.shape.empty()) {
    return bad("missing 'split'");
  }
  // The local shape the split implies must match the manifest's.
  std::vector<int64_t> expect(t.shape.size());
  for (size_t d = 0; d < t.shape.size(); ++d) {
    int64_t parts = 1;
    for (int64_t k = 0; k < t.naxes[d]; ++k)
      parts *= a.grid[(t.axes[d] >> (8 * k)) & 0xff];
    if (t.shape[d] % parts != 0)
      return bad(format("dimension %zu of size %lld is not divisible by the "
                        "%lld shards of split %s",
                        d, (long long)t.shape[d], (long long)parts,
                        splitString(t).c_str()));
    expect[d] = t.shape[d] / parts;
  }
  if (expect != t.local)
    return bad(format("local_shape %s does not match shape %s split %s over "
                      "grid %s (expected %s)",
                      shapeString(t.local.data(), t.local.size()).c_str(),
                      shapeString(t.shape.data(), t.shape.size()).c_str(),
                      splitString(t).c_str(),
                      shapeString(a.grid.data(), a.grid.size()).c_str(),
                      shapeString(expect.data(), expect.size()).c_str()));
  if (j.contains("batch_dim")) {
    if (kind == LOOMRT_WEIGHT || !j["batch_dim"].is_number_integer() ||
        j["batch_dim"].get<int64_t>() < 0 ||
        j["batch_dim"].get<int64_t>() >= (int64_t)t.shape.size())
      return bad("'batch_dim' must be a dimension of an input or output");
    t.batchDim = j["batch_dim"].get<int64_t>();
  }
  if (j.contains("sum_over_micro_batches")) {
    if (kind != LOOMRT_OUTPUT || !j["sum_over_micro_batches"].is_boolean())
      return bad("'sum_over_micro_batches' must be a boolean of an output");
    t.sumOverMicroBatches = j["sum_over_micro_batches"].get<bool>();
    bool summable = t.dtype == LOOMRT_FLOAT32 || t.dtype == LOOMRT_FLOAT64 ||
                    t.dtype == LOOMRT_FLOAT16 || t.dtype == LOOMRT_BFLOAT16;
    if (t.sumOverMicroBatches && (t.batchDim >= 0 || !summable))
      return bad("'sum_over_micro_batches' needs a float output (float32, "
                 "float64, float16 or bfloat16) without a 'batch_dim'");
  }
  if (kind == LOOMRT_WEIGHT && j.contains("tier")) {
    // Memory placement's tier: the runtime keeps NVMe's in a file.
    std::string tier = j["tier"].is_string() ? j["tier"].get<std::string>() : "";
    if (tier != "device" && tier != "host" && tier != "nvme")
      return bad("'tier' must be one of \"device\", \"host\", \"nvme\"");
    t.tier = tier == "nvme"   ? LOOMRT_TIER_NVME
             : tier == "host" ? LOOMRT_TIER_HOST
                              : LOOMRT_TIER_DEVICE;
  }
  if (j.contains("arena_offset")) {
    if (kind != LOOMRT_WEIGHT || !j["arena_offset"].is_number_integer() ||
        j["arena_offset"].get<int64_t>() < 0)
      return bad("'arena_offset' must be a non-negative integer of a weight");
    t.arenaOffset = j["arena_offset"].get<int64_t>();
  }
  if (kind == LOOMRT_WEIGHT) {
    // Optimizer state ("role": "state") may have no file: it starts at zero.
    bool state = j.contains("role") && j["role"].is_string() &&
                 j["role"].get<std::string>() == "state";
    if (state && !j.contains("file")) {
      if (j.contains("file_dtype"))
        return bad("'file_dtype' needs a 'file'");
      return ok();
    }
    if (!j.contains("file") || !j["file"].is_string() ||
        j["file"].get<std::string>().empty())
      return bad("missing string 'file'");
    t.file = j["file"].get<std::string>();
    if (t.file[0] != '/')
      t.file = a.dir + "/" + t.file;
    if (!j.contains("offset"))
      t.offset = 0;
    else if (!j["offset"].is_number_integer() || j["offset"].get<int64_t>() < 0)
      return bad("'offset' must be a non-negative integer");
    else
      t.offset = j["offset"].get<int64_t>();
    t.fileDtype = t.dtype;
    if (j.contains("file_dtype")) {
      std::string fd =
          j["file_dtype"].is_string() ? j["file_dtype"].get<std::string>() : "";
      int32_t code = loomrt_dtype_from_name(fd.c_str());
      if ((code != LOOMRT_FLOAT16 && code != LOOMRT_BFLOAT16) ||
          (t.dtype != LOOMRT_FLOAT32 && t.dtype != LOOMRT_FLOAT64))
        return bad("'file_dtype' must be \"float16\" or \"bfloat16\", of a "
                   "float32 or float64 weight");
      t.fileDtype = code;
    }
  }
  return ok();
}

/// The weights of `stage` placed on NVMe: the step's, then the update's
/// own (its optimizer state there).
std::vector<const TensorDesc *> nvmeWeights(const StageDesc &stage) {
  std::vector<const TensorDesc *> placed;
  for (const TensorDesc &t : stage.tensors[LOOMRT_WEIGHT])
    if (t.onNvme())
      placed.push_back(&t);
  for (size_t i = 0; i < stage.updateWeights.size(); ++i)
    if (stage.updateStepWeight[i] < 0 && stage.updateWeights[i].onNvme())
      placed.push_back(&stage.updateWeights[i]);
  return placed;
}

/// Maps the NVMe tier of `stage`'s weights (those the manifest places on
/// NVMe, the update's own included) as one shared mapping of a file in
/// `a.nvmeDir`, unlinked at once so that nothing outlives the process:
/// their bytes live on that file system and the kernel pages them in as
/// the program reads them and writes them back.
loomrt_status mapNvmeTier(loomrt_artifact &a, const StageDesc &stage) {
  // The static memory plan's places first (its NVMe arena), then the
  // weights it does not place, after them.
  int64_t bytes = 0;
  a.nvmeSlots.clear();
  for (const TensorDesc *t : nvmeWeights(stage))
    if (t->arenaOffset >= 0)
      bytes = std::max(bytes, t->arenaOffset + localBytes(*t));
  bytes = (bytes + 63) / 64 * 64;
  for (const TensorDesc *t : nvmeWeights(stage)) {
    if (t->arenaOffset >= 0) {
      a.nvmeSlots[t->name] = t->arenaOffset;
      continue;
    }
    a.nvmeSlots[t->name] = bytes;
    bytes += tensorAllocBytes(localBytes(*t));
  }
  if (bytes == 0)
    return ok();
  std::string dir = a.nvmeDir.empty() ? a.dir : a.nvmeDir;
  std::string path = dir + "/.loom-nvme-XXXXXX";
  int fd = mkstemp(path.data());
  if (fd < 0)
    return fail(LOOMRT_ERR_IO, format("cannot create the NVMe tier's file in '%s': %s",
                                      dir.c_str(), strerror(errno)));
  unlink(path.c_str());
  void *p = MAP_FAILED;
  if (ftruncate(fd, (off_t)bytes) == 0)
    p = mmap(nullptr, (size_t)bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED)
    return fail(LOOMRT_ERR_IO, format("cannot map %lld bytes of the NVMe tier in '%s': %s",
                                      (long long)bytes, dir.c_str(), strerror(err)));
  a.nvme = p;
  a.nvmeBytes = bytes;
  return ok();
}

/// Where a weight's bytes live when the runtime does not allocate them: an
/// NVMe-placed weight's slot in the tier's file (mapNvmeTier), or the place
/// the static memory plan gives it in the device's or the host's arena;
/// null for any other.
void *placedStorage(const loomrt_artifact &a, const TensorDesc &t) {
  if (t.onNvme())
    return static_cast<char *>(a.nvme) + a.nvmeSlots.at(t.name);
  if (t.arenaOffset >= 0)
    return static_cast<char *>(a.arena[t.tier]) + t.arenaOffset;
  return nullptr;
}

loomrt_status parseManifest(loomrt_artifact &a) {
  std::ifstream in(a.manifestPath);
  if (!in)
    return fail(LOOMRT_ERR_IO, format("cannot open manifest '%s': %s",
                                      a.manifestPath.c_str(), strerror(errno)));
  std::stringstream ss;
  ss << in.rdbuf();
  json m = json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  auto bad = [&](const std::string &why) {
    return fail(
        LOOMRT_ERR_INVALID,
        format("manifest '%s': %s", a.manifestPath.c_str(), why.c_str()));
  };
  if (m.is_discarded())
    return fail(LOOMRT_ERR_FORMAT, format("manifest '%s' is not valid JSON",
                                          a.manifestPath.c_str()));
  if (!m.is_object())
    return bad("not a JSON object");
  auto str = [&](const char *key, std::string &out) {
    if (!m.contains(key) || !m[key].is_string())
      return false;
    out = m[key].get<std::string>();
    return true;
  };
  std::string fmt, backend;
  if (!str("format", fmt) || fmt != "loom-artifact")
    return bad("'format' must be \"loom-artifact\"");
  if (!m.contains("version") || !m["version"].is_number_integer() ||
      m["version"].get<int64_t>() != 1)
    return bad("unsupported 'version' (this loom-run reads version 1)");
  if (!str("backend", backend) || backend != "cpu")
    return bad("'backend' must be \"cpu\" (got " +
               (m.contains("backend") ? m["backend"].dump() : "nothing") + ")");
  if (!str("library", a.library) || a.library.empty())
    return bad("missing string 'library'");
  if (!m.contains("stages") && (!str("entry", a.entry) || a.entry.empty()))
    return bad("missing string 'entry'");
  a.grid.clear();
  if (m.contains("grid") && !m["grid"].is_null()) {
    const json &g = m["grid"];
    if (!g.is_object() || !g.contains("shape") || !intArray(g["shape"], a.grid))
      return bad("'grid' must be null or an object with an integer 'shape'");
    if (a.grid.size() > 8)
      return bad("grids of more than 8 axes are not supported");
    for (int64_t d : a.grid)
      if (d <= 0)
        return bad("grid shape " + shapeString(a.grid.data(), a.grid.size()) +
                   " has a non-positive axis");
  }
  int64_t product = numel(a.grid);
  if (!m.contains("ranks") || !m["ranks"].is_number_integer())
    return bad("missing integer 'ranks'");
  a.ranks = m["ranks"].get<int64_t>();
  if (a.ranks != product)
    return bad(format(
        "'ranks' is %lld but grid %s has %lld devices", (long long)a.ranks,
        shapeString(a.grid.data(), a.grid.size()).c_str(), (long long)product));
  auto parseArena = [&](const json &object, const std::string &scope,
                        StageDesc &stage) -> loomrt_status {
    for (auto [key, bytes] : {std::pair<const char *, int64_t *>{"arena_bytes", &stage.arenaBytes},
                              {"host_arena_bytes", &stage.hostArenaBytes}}) {
      *bytes = 0;
      if (!object.contains(key))
        continue;
      if (!object[key].is_number_integer() || object[key].get<int64_t>() <= 0)
        return bad(scope + "'" + key + "' must be a positive integer");
      *bytes = object[key].get<int64_t>();
    }
    if (stage.hostArenaBytes && !stage.arenaBytes)
      return bad(scope + "'host_arena_bytes' without 'arena_bytes'");
    if (object.contains("micro_batch_places")) {
      const json &places = object["micro_batch_places"];
      if (!places.is_number_integer() || places.get<int64_t>() < 2)
        return bad(scope +
                   "'micro_batch_places' must be an integer of two or more");
      if (places.get<int64_t>() != a.microBatches)
        return bad(scope +
                   format("'micro_batch_places' is %lld but a step runs %lld "
                          "micro-batches ('micro_batches')",
                          (long long)places.get<int64_t>(),
                          (long long)a.microBatches));
      if (!stage.arenaBytes)
        return bad(scope + "'micro_batch_places' needs 'arena_bytes'");
      stage.takesMicroBatch = true;
    }
    return ok();
  };
  auto parseLists = [&](const json &object, const std::string &scope,
                        std::vector<TensorDesc> (&tensors)[3]) -> loomrt_status {
    for (int kind = 0; kind < 3; ++kind) {
      const char *key = kindName(kind);
      if (!object.contains(key) || !object[key].is_array())
        return bad(format("%smissing array '%s'", scope.c_str(), key));
      const json &list = object[key];
      for (size_t i = 0; i < list.size(); ++i) {
        TensorDesc t;
        if (loomrt_status s = parseTensor(a, scope, kind, i, list[i], t))
          return s;
        tensors[kind].push_back(std::move(t));
      }
    }
    return ok();
  };
  if (loomrt_status s = parseLists(m, "", a.tensors))
    return s;
  if (a.tensors[LOOMRT_OUTPUT].empty())
    return bad("the program has no outputs");
  if (m.contains("micro_batches")) {
    if (!m["micro_batches"].is_number_integer() ||
        m["micro_batches"].get<int64_t>() < 1)
      return bad("'micro_batches' must be a positive integer");
    a.microBatches = m["micro_batches"].get<int64_t>();
  }
  // A micro-batched output is concatenated along its batch dimension, which
  // the runtime does on whole tensors; a gradient summed over micro-batches
  // is summed shard by shard (ZeRO's reduce-scattered gradients). Checked
  // on the model's outputs and on each stage's.
  auto checkSplitOutputs = [&](const std::string &scope,
                               const std::vector<TensorDesc> &outputs) {
    if (a.microBatches > 1)
      for (size_t o = 0; o < outputs.size(); ++o)
        for (int64_t n : outputs[o].naxes)
          if (n && !outputs[o].sumOverMicroBatches)
            return bad(format("%soutputs[%zu] ('%s') is split over the grid; "
                              "micro-batched programs must return replicated "
                              "outputs, or gradients summed over the "
                              "micro-batches",
                              scope.c_str(), o, outputs[o].name.c_str()));
    return ok();
  };
  if (loomrt_status s = checkSplitOutputs("", a.tensors[LOOMRT_OUTPUT]))
    return s;
  // A step's update takes weights only: the step's where it names one of
  // them (the same buffer, so the same dtype and local shape), else its
  // own, kept in memory.
  auto parseUpdate = [&](const json &object, const std::string &scope,
                         StageDesc &stage) -> loomrt_status {
    if (!object.contains("update") || object["update"].is_null())
      return ok();
    const json &u = object["update"];
    std::string at = scope + "update.";
    if (!u.is_object() || !u.contains("entry") || !u["entry"].is_string() ||
        u["entry"].get<std::string>().empty())
      return bad(at + "missing string 'entry'");
    if (!u.contains("weights") || !u["weights"].is_array())
      return bad(at + "missing array 'weights'");
    stage.updateEntry = u["entry"].get<std::string>();
    // The step's arenas, where the update moves something into them: the
    // same sizes, since they are the same buffers.
    const int64_t stageArenas[2] = {stage.arenaBytes, stage.hostArenaBytes};
    const char *arenaKeys[2] = {"arena_bytes", "host_arena_bytes"};
    for (int k = 0; k < 2; ++k) {
      if (!u.contains(arenaKeys[k]))
        continue;
      if (!u[arenaKeys[k]].is_number_integer() ||
          u[arenaKeys[k]].get<int64_t>() != stageArenas[k] ||
          stageArenas[k] <= 0)
        return bad(format("%s%s must be the step's %s (%lld): the update "
                          "runs in the step's arenas",
                          at.c_str(), arenaKeys[k], arenaKeys[k],
                          (long long)stageArenas[k]));
      stage.updateTakesArena[k] = true;
    }
    if (stage.updateTakesArena[1] && !stage.updateTakesArena[0])
      return bad(at + "'host_arena_bytes' without 'arena_bytes'");
    for (size_t i = 0; i < u["weights"].size(); ++i) {
      TensorDesc t;
      if (loomrt_status s =
              parseTensor(a, at, LOOMRT_WEIGHT, i, u["weights"][i], t))
        return s;
      // The step's weight of that name is the same buffer: the same
      // tensor, split the same way.
      auto same =
          std::find_if(stage.tensors[LOOMRT_WEIGHT].begin(),
                       stage.tensors[LOOMRT_WEIGHT].end(),
                       [&](const TensorDesc &w) { return w.name == t.name; });
      if (same != stage.tensors[LOOMRT_WEIGHT].end() &&
          (same->dtype != t.dtype || same->shape != t.shape ||
           same->naxes != t.naxes || same->axes != t.axes))
        return bad(
            format("%sweights[%zu] ('%s') is the step's weight of that "
                   "name, but as %s %s split %s rather than %s %s "
                   "split %s",
                   at.c_str(), i, t.name.c_str(), loomrt_dtype_name(t.dtype),
                   shapeString(t.shape.data(), t.shape.size()).c_str(),
                   splitString(t).c_str(), loomrt_dtype_name(same->dtype),
                   shapeString(same->shape.data(), same->shape.size()).c_str(),
                   splitString(*same).c_str()));
      // (The same buffer, so loaded once: from the same bytes.)
      if (same != stage.tensors[LOOMRT_WEIGHT].end() &&
          (same->file != t.file || same->offset != t.offset ||
           same->fileDtype != t.fileDtype))
        return bad(format(
            "%sweights[%zu] ('%s') is the step's weight of that name, but "
            "loaded from '%s'[%lld] as %s rather than '%s'[%lld] as %s",
            at.c_str(), i, t.name.c_str(), t.file.c_str(), (long long)t.offset,
            loomrt_dtype_name(t.fileDtype), same->file.c_str(),
            (long long)same->offset, loomrt_dtype_name(same->fileDtype)));
      // (The same buffer, so in the same place.)
      if (same != stage.tensors[LOOMRT_WEIGHT].end() &&
          (same->tier != t.tier || same->arenaOffset != t.arenaOffset))
        return bad(format("%sweights[%zu] ('%s') is the step's weight of that "
                          "name, but placed in %s at %lld rather than in %s "
                          "at %lld",
                          at.c_str(), i, t.name.c_str(), tierName(t.tier),
                          (long long)t.arenaOffset, tierName(same->tier),
                          (long long)same->arenaOffset));
      stage.updateStepWeight.push_back(
          same == stage.tensors[LOOMRT_WEIGHT].end()
              ? -1
              : same - stage.tensors[LOOMRT_WEIGHT].begin());
      stage.updateWeights.push_back(std::move(t));
    }
    return ok();
  };
  // The weights the static memory plan places (the step's, then the
  // update's own) lie inside their arenas (an NVMe file grows to hold
  // them), and no two of a tier share a byte: each is a buffer that lives
  // as long as the program is loaded.
  auto checkArenaPlaces = [&](const std::string &scope,
                              const StageDesc &stage) -> loomrt_status {
    struct Placed {
      int64_t begin, end;
      std::string what;
    };
    std::vector<Placed> byTier[3];
    const int64_t arenaBytes[2] = {stage.arenaBytes, stage.hostArenaBytes};
    auto place = [&](const TensorDesc &t, const std::string &what) {
      if (t.arenaOffset < 0)
        return ok();
      // (Bounded so that the NVMe file's size, and any sum of places, stays
      // an int64_t.)
      const int64_t bytes = localBytes(t), limit = int64_t(1) << 62;
      if (bytes < 0 || bytes > limit || t.arenaOffset > limit - bytes)
        return bad(format("%s ('%s') lies at %lld, past any arena",
                          what.c_str(), t.name.c_str(), (long long)t.arenaOffset));
      if (int64_t size = loomrt_dtype_size(t.dtype);
          size <= 0 || t.arenaOffset % size != 0)
        return bad(format("%s ('%s') lies at %lld, not a multiple of its %s "
                          "elements' size",
                          what.c_str(), t.name.c_str(),
                          (long long)t.arenaOffset,
                          loomrt_dtype_name(t.dtype)));
      int64_t end = t.arenaOffset + bytes;
      if (t.tier != LOOMRT_TIER_NVME && end > arenaBytes[t.tier])
        return bad(format("%s ('%s') lies at [%lld, %lld) of the %s arena, "
                          "which has %lld bytes",
                          what.c_str(), t.name.c_str(),
                          (long long)t.arenaOffset, (long long)end,
                          tierName(t.tier), (long long)arenaBytes[t.tier]));
      byTier[t.tier].push_back(
          {t.arenaOffset, end,
           format("%s ('%s')", what.c_str(), t.name.c_str())});
      return ok();
    };
    const std::vector<TensorDesc> &weights = stage.tensors[LOOMRT_WEIGHT];
    for (size_t i = 0; i < weights.size(); ++i)
      if (loomrt_status s =
              place(weights[i], format("%sweights[%zu]", scope.c_str(), i)))
        return s;
    for (size_t i = 0; i < stage.updateWeights.size(); ++i)
      if (stage.updateStepWeight[i] < 0)
        if (loomrt_status s =
                place(stage.updateWeights[i],
                      format("%supdate.weights[%zu]", scope.c_str(), i)))
          return s;
    for (int tier = 0; tier < 3; ++tier) {
      std::vector<Placed> &placed = byTier[tier];
      std::sort(
          placed.begin(), placed.end(),
          [](const Placed &x, const Placed &y) { return x.begin < y.begin; });
      for (size_t k = 1; k < placed.size(); ++k)
        if (placed[k].begin < placed[k - 1].end)
          return bad(format("%s at [%lld, %lld) and %s at [%lld, %lld) "
                            "overlap in the %s arena",
                            placed[k - 1].what.c_str(),
                            (long long)placed[k - 1].begin,
                            (long long)placed[k - 1].end,
                            placed[k].what.c_str(), (long long)placed[k].begin,
                            (long long)placed[k].end, tierName(tier)));
    }
    return ok();
  };

  if (!m.contains("stages")) {
    StageDesc whole;
    whole.entry = a.entry;
    if (loomrt_status s = parseArena(m, "", whole))
      return s;
    for (int kind = 0; kind < 3; ++kind)
      whole.tensors[kind] = a.tensors[kind];
    if (loomrt_status s = parseUpdate(m, "", whole))
      return s;
    if (loomrt_status s = checkArenaPlaces("", whole))
      return s;
    a.stages.push_back(std::move(whole));
    return ok();
  }
  // Pipeline stages: each takes every model input (as the top level lists
  // them, possibly sharded differently); the last returns the outputs.
  if (!m.contains("pipeline_axis") || !m["pipeline_axis"].is_number_integer() ||
      m["pipeline_axis"].get<int64_t>() < 0 ||
      m["pipeline_axis"].get<int64_t>() >= (int64_t)a.grid.size())
    return bad("'stages' needs a 'pipeline_axis' that is one of the grid's axes");
  a.pipelineAxis = m["pipeline_axis"].get<int64_t>();
  const json &stages = m["stages"];
  int64_t count = a.grid[a.pipelineAxis];
  if (!stages.is_array() || (int64_t)stages.size() != count)
    return bad(format("'stages' must list the %lld stages of pipeline axis %lld",
                      (long long)count, (long long)a.pipelineAxis));
  auto sameModelTensor = [](const TensorDesc &x, const TensorDesc &y) {
    return x.dtype == y.dtype && x.shape == y.shape &&
           x.batchDim == y.batchDim &&
           x.sumOverMicroBatches == y.sumOverMicroBatches;
  };
  for (size_t k = 0; k < stages.size(); ++k) {
    std::string scope = format("stages[%zu].", k);
    StageDesc stage;
    if (!stages[k].is_object() || !stages[k].contains("entry") ||
        !stages[k]["entry"].is_string() ||
        stages[k]["entry"].get<std::string>().empty())
      return bad(scope + "missing string 'entry'");
    stage.entry = stages[k]["entry"].get<std::string>();
    if (loomrt_status s = parseLists(stages[k], scope, stage.tensors))
      return s;
    if (loomrt_status s = parseArena(stages[k], scope, stage))
      return s;
    if (loomrt_status s = parseUpdate(stages[k], scope, stage))
      return s;
    if (loomrt_status s = checkArenaPlaces(scope, stage))
      return s;
    if (k > 0 &&
        stage.updateEntry.empty() != a.stages.front().updateEntry.empty())
      return bad(scope + "'update' must be given for every stage or for none");
    bool last = (int64_t)k + 1 == count;
    for (int kind : {LOOMRT_INPUT, LOOMRT_OUTPUT}) {
      const std::vector<TensorDesc> &model = a.tensors[kind];
      const std::vector<TensorDesc> &own = stage.tensors[kind];
      size_t expected = kind == LOOMRT_INPUT || last ? model.size() : 0;
      if (own.size() != expected)
        return bad(format("%s%s lists %zu tensors; expected %zu", scope.c_str(),
                          kindName(kind), own.size(), expected));
      for (size_t i = 0; i < own.size(); ++i)
        if (!sameModelTensor(own[i], model[i]))
          return bad(format("%s%s[%zu] ('%s') differs from the model's in "
                            "dtype, shape, batch_dim or sum_over_micro_batches",
                            scope.c_str(), kindName(kind), i,
                            own[i].name.c_str()));
    }
    // The last stage's ranks hold the outputs, so a split output is split
    // over the other axes only and gathered from those ranks. (One stage is
    // no pipeline: its ranks are the whole grid, and an output may be split
    // over any axis.)
    if (loomrt_status s =
            checkSplitOutputs(scope, stage.tensors[LOOMRT_OUTPUT]))
      return s;
    for (size_t o = 0; count > 1 && o < stage.tensors[LOOMRT_OUTPUT].size();
         ++o) {
      const TensorDesc &t = stage.tensors[LOOMRT_OUTPUT][o];
      for (size_t d = 0; d < t.naxes.size(); ++d)
        for (int64_t i = 0; i < t.naxes[d]; ++i)
          if (((t.axes[d] >> (8 * i)) & 0xff) == a.pipelineAxis)
            return bad(format("%soutputs[%zu] ('%s') is split over the "
                              "pipeline axis (grid axis %lld); only the last "
                              "stage holds the outputs",
                              scope.c_str(), o, t.name.c_str(),
                              (long long)a.pipelineAxis));
    }
    a.stages.push_back(std::move(stage));
  }
  return ok();
}

bool validKind(const loomrt_artifact *a, int32_t kind, int64_t index) {
  return a && kind >= 0 && kind < 3 && index >= 0 &&
         index < (int64_t)a->tensors[kind].size();
}

} // namespace

extern "C" {

loomrt_status loomrt_artifact_open(const char *dir, loomrt_artifact **out) {
  LOOMRT_GUARD({
    if (!dir || !out)
      return fail(LOOMRT_ERR_INVALID, "null argument");
    *out = nullptr;
    auto *a = new loomrt_artifact;
    a->dir = dir;
    while (a->dir.size() > 1 && a->dir.back() == '/')
      a->dir.pop_back();
    a->manifestPath = a->dir + "/manifest.json";
    if (loomrt_status s = parseManifest(*a)) {
      delete a;
      return s;
    }
    *out = a;
    return ok();
  })
}

void loomrt_artifact_close(loomrt_artifact *a) {
  if (!a)
    return;
  for (auto &list : a->buffers)
    for (loomrt_tensor *t : list)
      loomrt_tensor_destroy(t);
  for (loomrt_tensor *t : a->updateOwnBuffers)
    loomrt_tensor_destroy(t);
  for (int k = 0; k < 2; ++k)
    if (a->arena[k])
      munmap(a->arena[k], (size_t)a->arenaBytes[k]);
  if (a->nvme)
    munmap(a->nvme, (size_t)a->nvmeBytes);
  if (a->outputComm != MPI_COMM_NULL && mpiRunning())
    MPI_Comm_free(&a->outputComm);
  // The program library stays loaded: MPI and atexit handlers may still
  // reference it.
  delete a;
}

int64_t loomrt_artifact_ranks(const loomrt_artifact *a) {
  return a ? a->ranks : 0;
}
int64_t loomrt_artifact_grid_ndims(const loomrt_artifact *a) {
  return a ? (int64_t)a->grid.size() : 0;
}
const int64_t *loomrt_artifact_grid_shape(const loomrt_artifact *a) {
  return a ? a->grid.data() : nullptr;
}
int64_t loomrt_artifact_micro_batches(const loomrt_artifact *a) {
  return a ? a->microBatches : 1;
}
int64_t loomrt_artifact_stage(const loomrt_artifact *a) {
  return a ? a->stage : -1;
}
int64_t loomrt_artifact_output_rank(const loomrt_artifact *a) {
  return a ? a->outputRank : 0;
}
loomrt_status loomrt_artifact_gather_output(const loomrt_artifact *a,
                                            int64_t index,
                                            const loomrt_tensor *local,
                                            loomrt_tensor **out) {
  LOOMRT_GUARD({
    if (!out)
      return fail(LOOMRT_ERR_INVALID, "null output handle");
    *out = nullptr;
    if (!validKind(a, LOOMRT_OUTPUT, index) || !local)
      return fail(LOOMRT_ERR_INVALID, "invalid artifact output");
    if (!mpiRunning())
      return fail(LOOMRT_ERR_STATE, "MPI is not initialised");
    if (a->outputComm == MPI_COMM_NULL)
      return fail(LOOMRT_ERR_STATE,
                  "this rank holds no outputs, or the artifact is not loaded");
    const TensorDesc &t = a->tensors[LOOMRT_OUTPUT][index];
    return gatherShards(a->outputComm, a->outputMembers, /*root=*/0,
                        local->data, local->nbytes, t.dtype,
                        (int64_t)t.shape.size(), t.shape.data(),
                        t.naxes.data(), t.axes.data(), out);
  })
}
int64_t loomrt_artifact_arena_bytes(const loomrt_artifact *a) {
  return a ? a->arenaBytes[0] : 0;
}
int64_t loomrt_artifact_host_arena_bytes(const loomrt_artifact *a) {
  return a ? a->arenaBytes[1] : 0;
}
int64_t loomrt_artifact_weight_bytes(const loomrt_artifact *a, int32_t placed) {
  if (!a || !a->handle)
    return 0;
  int64_t bytes = 0;
  auto count = [&](const TensorDesc &t) {
    if ((t.arenaOffset >= 0) == (placed != 0))
      bytes += localBytes(t);
  };
  for (const TensorDesc &t : a->tensors[LOOMRT_WEIGHT])
    count(t);
  for (const TensorDesc &t : a->updateOwn)
    count(t);
  return bytes;
}
int64_t loomrt_artifact_nvme_bytes(const loomrt_artifact *a) {
  return a ? a->nvmeBytes : 0;
}
loomrt_status loomrt_artifact_set_nvme_dir(loomrt_artifact *a, const char *dir) {
  if (!a || !dir || !*dir)
    return fail(LOOMRT_ERR_INVALID, "no artifact or no directory for the NVMe tier");
  if (a->handle)
    return fail(LOOMRT_ERR_STATE, "the NVMe directory must be set before load");
  a->nvmeDir = dir;
  return ok();
}
int64_t loomrt_artifact_count(const loomrt_artifact *a, int32_t kind) {
  if (!a || kind < 0 || kind > 2)
    return 0;
  return (int64_t)a->tensors[kind].size();
}

loomrt_status loomrt_artifact_info(const loomrt_artifact *a, int32_t kind,
                                   int64_t index, loomrt_tensor_info *info) {
  if (!validKind(a, kind, index) || !info)
    return fail(LOOMRT_ERR_INVALID, "invalid artifact tensor");
  const TensorDesc &t = a->tensors[kind][index];
  info->name = t.name.c_str();
  info->dtype = t.dtype;
  info->rank = (int64_t)t.shape.size();
  info->shape = t.shape.data();
  info->local_shape = t.local.data();
  info->split_naxes = t.naxes.data();
  info->split_axes = t.axes.data();
  info->file = kind == LOOMRT_WEIGHT && !t.file.empty() ? t.file.c_str() : nullptr;
  info->offset = t.offset;
  info->batch_dim = t.batchDim;
  info->sum_over_micro_batches = t.sumOverMicroBatches;
  info->file_dtype =
      kind == LOOMRT_WEIGHT && !t.file.empty() ? t.fileDtype : t.dtype;
  info->tier = kind == LOOMRT_WEIGHT ? t.tier : LOOMRT_TIER_DEVICE;
  info->arena_offset = kind == LOOMRT_WEIGHT ? t.arenaOffset : -1;
  return ok();
}

loomrt_status loomrt_artifact_load(loomrt_artifact *a){LOOMRT_GUARD({
  if (!a)
    return fail(LOOMRT_ERR_INVALID, "null artifact");
  if (a->handle)
    return fail(LOOMRT_ERR_STATE, "artifact already loaded");
  int size = loomrt_world_size();
  if (a->ranks != size)
    return fail(LOOMRT_ERR_INVALID,
                format("artifact '%s' is compiled for %lld ranks (grid %s) "
                       "but this job has %d; run it with mpirun -np %lld",
                       a->dir.c_str(), (long long)a->ranks,
                       shapeString(a->grid.data(), a->grid.size()).c_str(),
                       size, (long long)a->ranks));
  if (loomrt_status s =
          loomrt_set_grid((int64_t)a->grid.size(), a->grid.data()))
    return s;
  // This rank's pipeline stage: its coordinate on the pipeline axis. The
  // outputs are on the last stage; its lowest rank writes them.
  a->stage = 0;
  a->outputRank = 0;
  if (a->pipelineAxis >= 0) {
    std::vector<int64_t> coords(a->grid.size());
    loomrt_grid_coords(loomrt_world_rank(), coords.data());
    a->stage = coords[a->pipelineAxis];
    int64_t stride = 1;
    for (size_t d = a->pipelineAxis + 1; d < a->grid.size(); ++d)
      stride *= a->grid[d];
    a->outputRank = (a->grid[a->pipelineAxis] - 1) * stride;
  }
  // The ranks holding the outputs: those of the last stage (every rank
  // without stages). Collective over the world, as load is.
  bool holdsOutputs = a->pipelineAxis < 0 ||
                      a->stage == a->grid[a->pipelineAxis] - 1;
  if (mpiRunning() && !a->outputCommMade) {
    a->outputCommMade = true;
    if (MPI_Comm_split(MPI_COMM_WORLD, holdsOutputs ? 0 : MPI_UNDEFINED,
                       loomrt_world_rank(), &a->outputComm) != MPI_SUCCESS)
      return fail(LOOMRT_ERR_MPI,
                  "cannot make the communicator of the ranks holding the "
                  "outputs");
    a->outputMembers.clear();
    if (holdsOutputs) {
      int members = 0;
      MPI_Comm_size(a->outputComm, &members);
      int me = loomrt_world_rank();
      a->outputMembers.resize(members);
      MPI_Allgather(&me, 1, MPI_INT, a->outputMembers.data(), 1, MPI_INT,
                    a->outputComm);
    }
  }
  const StageDesc &stage = a->stages[a->stage];
  a->entry = stage.entry;
  for (int kind = 0; kind < 3; ++kind)
    a->tensors[kind] = stage.tensors[kind];
  std::string lib =
      a->library[0] == '/' ? a->library : a->dir + "/" + a->library;
  dlerror();
  void *h = dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    const char *e = dlerror();
    return fail(LOOMRT_ERR_LOAD, format("cannot load program library '%s': %s",
                                        lib.c_str(), e ? e : "unknown error"));
  }
  dlerror();
  void *sym = dlsym(h, a->entry.c_str());
  if (!sym)
    return fail(LOOMRT_ERR_LOAD,
                format("program library '%s' has no entry symbol '%s'",
                       lib.c_str(), a->entry.c_str()));
  a->handle = h;
  a->entryFn = reinterpret_cast<void (*)(void **)>(sym);
  a->pointers.clear();
  // The arenas, mapped before the weights the plan places in them. Mapped,
  // not allocated: the pages of a training plan's arena the forward never
  // touches cost nothing.
  const int64_t stageArenas[2] = {stage.arenaBytes, stage.hostArenaBytes};
  for (int k = 0; k < 2; ++k) {
    if (stageArenas[k] <= 0)
      continue;
    void *p = mmap(nullptr, (size_t)stageArenas[k], PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return fail(LOOMRT_ERR_NOMEM,
                  format("cannot map the %lld-byte %s arena of the static "
                         "memory plan: %s",
                         (long long)stageArenas[k], tierName(k),
                         strerror(errno)));
    a->arena[k] = p;
    a->arenaBytes[k] = stageArenas[k];
  }
  for (int kind = 0; kind < 3; ++kind) {
    // The arenas go between the weights and the outputs, the device's
    // first (the entry's argument order).
    for (int k = 0; k < 2 && kind == LOOMRT_OUTPUT; ++k)
      if (a->arena[k])
        a->pointers.push_back(a->arena[k]);
    if (kind == LOOMRT_OUTPUT && stage.takesMicroBatch)
      a->pointers.push_back(&a->microBatchIndex);
    if (kind == LOOMRT_WEIGHT)
      if (loomrt_status s = mapNvmeTier(*a, stage))
        return s;
    for (const TensorDesc &t : a->tensors[kind]) {
      loomrt_tensor *b = nullptr;
      if (loomrt_status s =
              makeTensor(t.dtype, t.local, &b, placedStorage(*a, t)))
        return fail(s, format("%s '%s': %s", kindName(kind), t.name.c_str(),
                              loomrt_last_error()));
      a->buffers[kind].push_back(b);
      a->pointers.push_back(b->data);
    }
  }
  // The update's arguments: the step's weight of each name, else its own.
  if (!stage.updateEntry.empty()) {
    void *update = dlsym(h, stage.updateEntry.c_str());
    if (!update)
      return fail(LOOMRT_ERR_LOAD,
                  format("program library '%s' has no update symbol '%s'",
                         lib.c_str(), stage.updateEntry.c_str()));
    a->updateFn = reinterpret_cast<void (*)(void **)>(update);
    a->updatePointers.clear();
    for (size_t i = 0; i < stage.updateWeights.size(); ++i) {
      const TensorDesc &t = stage.updateWeights[i];
      if (int64_t step = stage.updateStepWeight[i]; step >= 0) {
        a->updatePointers.push_back(a->buffers[LOOMRT_WEIGHT][step]->data);
        continue;
      }
      loomrt_tensor *b = nullptr;
      if (loomrt_status s =
              makeTensor(t.dtype, t.local, &b, placedStorage(*a, t)))
        return fail(s, format("update weight '%s': %s", t.name.c_str(),
                              loomrt_last_error()));
      a->updateOwn.push_back(t);
      a->updateOwnBuffers.push_back(b);
      a->updatePointers.push_back(b->data);
    }
    // The arenas follow the weights, the device's first (the update's
    // argument order).
    for (int k = 0; k < 2; ++k)
      if (stage.updateTakesArena[k])
        a->updatePointers.push_back(a->arena[k]);
  }
  return ok();
})}

loomrt_tensor *loomrt_artifact_buffer(loomrt_artifact *a, int32_t kind,
                                      int64_t index) {
  if (!validKind(a, kind, index) || index >= (int64_t)a->buffers[kind].size())
    return nullptr;
  return a->buffers[kind][index];
}

loomrt_status loomrt_artifact_load_weights(loomrt_artifact *a){LOOMRT_GUARD({
  if (!a || !a->handle)
    return fail(LOOMRT_ERR_STATE, "artifact not loaded");
  int me = loomrt_world_rank();
  auto load = [&](const TensorDesc &t, loomrt_tensor *b) -> loomrt_status {
    std::string what = "weight '" + t.name + "'";
    if (t.file.empty()) { // optimizer state: zeros before the first step
      std::memset(b->data, 0, b->nbytes);
      return ok();
    }
    if (t.fileDtype == t.dtype)
      return loomrt_shard_read_file(what.c_str(), t.file.c_str(), t.offset,
                                    t.dtype, (int64_t)t.shape.size(),
                                    t.shape.data(), t.naxes.data(),
                                    t.axes.data(), me, b->data, b->nbytes);
    // Stored narrower (a master copy of a 16-bit parameter): read the
    // shard's 16-bit elements, then widen them into the buffer.
    int64_t n = numel(t.local);
    std::vector<uint16_t> narrow(n);
    if (loomrt_status s = loomrt_shard_read_file(
            what.c_str(), t.file.c_str(), t.offset, t.fileDtype,
            (int64_t)t.shape.size(), t.shape.data(), t.naxes.data(),
            t.axes.data(), me, narrow.data(), n * 2))
      return s;
    float (*widen)(uint16_t) =
        t.fileDtype == LOOMRT_BFLOAT16 ? bf16ToFloat : halfToFloat;
    if (t.dtype == LOOMRT_FLOAT32)
      for (int64_t i = 0; i < n; ++i)
        static_cast<float *>(b->data)[i] = widen(narrow[i]);
    else
      for (int64_t i = 0; i < n; ++i)
        static_cast<double *>(b->data)[i] = widen(narrow[i]);
    return ok();
  };
  for (size_t i = 0; i < a->tensors[LOOMRT_WEIGHT].size(); ++i)
    if (loomrt_status s =
            load(a->tensors[LOOMRT_WEIGHT][i], a->buffers[LOOMRT_WEIGHT][i]))
      return s;
  for (size_t i = 0; i < a->updateOwn.size(); ++i)
    if (loomrt_status s = load(a->updateOwn[i], a->updateOwnBuffers[i]))
      return s;
  return ok();
})}

loomrt_status loomrt_artifact_set_micro_batch(loomrt_artifact *a, int64_t m) {
  if (!a)
    return fail(LOOMRT_ERR_STATE, "no artifact");
  if (m < 0 || m >= a->microBatches)
    return fail(LOOMRT_ERR_INVALID,
                format("micro-batch %lld of a step of %lld", (long long)m,
                       (long long)a->microBatches));
  a->microBatchIndex = m;
  return ok();
}

loomrt_status loomrt_artifact_run(loomrt_artifact *a) {
  if (!a || !a->entryFn)
    return fail(LOOMRT_ERR_STATE, "artifact not loaded");
  a->entryFn(a->pointers.data());
  // One call is one micro-batch: its transfers end with it.
  loomrt_complete_sends();
  return ok();
}

int loomrt_artifact_has_update(const loomrt_artifact *a) {
  return a && !a->stages.empty() && !a->stages.front().updateEntry.empty();
}

loomrt_status loomrt_artifact_update(loomrt_artifact *a) {
  if (!a || !a->entryFn)
    return fail(LOOMRT_ERR_STATE, "artifact not loaded");
  if (!a->updateFn)
    return fail(LOOMRT_ERR_STATE,
                format("artifact '%s' has no update entry (only a "
                       "micro-batched or pipelined training step has one)",
                       a->dir.c_str()));
  a->updateFn(a->updatePointers.data());
  // (A tied weight's exchange of its sums: copies held until delivered.)
  loomrt_complete_sends();
  return ok();
}

} // extern "C"
