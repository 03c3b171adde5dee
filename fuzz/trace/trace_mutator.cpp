//===- trace_mutator.cpp - structure-aware mutations of loom-trace JSON ---===//
//
// libFuzzer's byte mutations mostly break the JSON syntax, so the importer's
// op conversions would rarely see odd-but-valid documents. This custom
// mutator (linked into loom-trace-fuzzer only) parses the input and changes
// one JSON value: a number to an edge value, a string to a vocabulary op, a
// dtype or another tensor's name, a list or object loses, repeats or swaps an
// element, or a node gets another op. Inputs that do not parse, or nest too
// deeply to print safely, fall back to libFuzzer's own mutations.
//
//===----------------------------------------------------------------------===//

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using Json = nlohmann::json;

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

static const char *const kOps[] = {
    "linear",     "matmul",      "bmm",
    "einsum",     "conv2d",      "scaled_dot_product_attention",
    "max_pool2d", "avg_pool2d",  "adaptive_avg_pool2d",
    "batch_norm", "layer_norm",  "relu",
    "gelu",       "silu",        "sigmoid",
    "tanh",       "softmax",     "log_softmax",
    "clamp",      "neg",         "exp",
    "log",        "sqrt",        "rsqrt",
    "abs",        "erf",         "reciprocal",
    "sin",        "cos",         "logical_not",
    "add",        "sub",         "mul",
    "div",        "pow",         "maximum",
    "minimum",    "eq",          "ne",
    "lt",         "le",          "gt",
    "ge",         "logical_and", "logical_or",
    "where",      "masked_fill", "cast",
    "full",       "sum",         "mean",
    "amax",       "amin",        "argmax",
    "argmin",     "reshape",     "permute",
    "expand",     "cat",         "slice",
    "select",     "take",        "gather",
    "scatter",    "embedding",   "topk",
    "one_hot"};
static const char *const kStrings[] = {
    "f32",          "f16",      "bf16", "f64",       "i64",   "i32",
    "i8",           "u8",       "i1",   "inf",       "-inf",  "nan",
    "w.bin",        "tanh",     "none", "ij,jk->ik", "ii->i", "i,i->",
    "bij,bjk->bik", "abc->cba", "ij->", ""};
static const int64_t kInts[] = {0,
                                1,
                                2,
                                3,
                                -1,
                                -2,
                                7,
                                64,
                                65,
                                4096,
                                int64_t(1) << 31,
                                int64_t(1) << 40,
                                (int64_t(1) << 40) + 1,
                                INT64_MAX,
                                INT64_MIN};
static const double kFloats[] = {0.5, -0.0, 1e-300, 1e308, -1e308, 3.5};

/// Largest nesting depth of brackets (strings ignored); bounds dump's
/// recursion.
static int nesting(const uint8_t *data, size_t size) {
  int depth = 0, best = 0;
  bool inString = false;
  for (size_t i = 0; i < size; ++i) {
    char c = char(data[i]);
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      best = std::max(best, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return best;
}

template <typename T, size_t N>
static const T &pick(const T (&arr)[N], std::mt19937 &rng) {
  return arr[rng() % N];
}

static void mutateValue(Json &v, std::mt19937 &rng,
                        const std::vector<std::string> &names) {
  switch (v.type()) {
  case Json::value_t::number_integer:
  case Json::value_t::number_unsigned:
    if (rng() % 4 == 0)
      v = int64_t(uint64_t(v.get<int64_t>()) + rng() % 5 - 2);
    else
      v = pick(kInts, rng);
    return;
  case Json::value_t::number_float:
    v = rng() % 2 ? Json(pick(kFloats, rng)) : Json(pick(kInts, rng));
    return;
  case Json::value_t::string:
    if (!names.empty() && rng() % 2)
      v = names[rng() % names.size()];
    else if (rng() % 2)
      v = pick(kOps, rng);
    else
      v = pick(kStrings, rng);
    return;
  case Json::value_t::boolean:
    v = !v.get<bool>();
    return;
  case Json::value_t::null:
    v = pick(kInts, rng);
    return;
  case Json::value_t::array: {
    size_t n = v.size();
    unsigned what = rng() % 4;
    if (what == 0 && n > 0)
      v.erase(v.begin() + rng() % n);
    else if (what == 1 && n > 0)
      v.push_back(Json(v[rng() % n]));
    else if (what == 2 && n > 1)
      std::swap(v[rng() % n], v[rng() % n]);
    else
      v.push_back(rng() % 2 ? Json(pick(kInts, rng)) : Json(nullptr));
    return;
  }
  case Json::value_t::object: {
    if (v.empty() || rng() % 2) {
      v[pick(kStrings, rng)] = pick(kInts, rng);
      return;
    }
    auto it = v.begin();
    std::advance(it, rng() % v.size());
    v.erase(it);
    return;
  }
  default:
    return;
  }
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  std::mt19937 rng(seed);
  if (rng() % 4 == 0 || nesting(data, size) > 48)
    return LLVMFuzzerMutate(data, size, maxSize);
  Json doc =
      Json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return LLVMFuzzerMutate(data, size, maxSize);

  // Every value of the document, and the tensor names it declares.
  std::vector<Json *> all;
  std::vector<std::string> names;
  std::vector<Json *> stack = {&doc};
  while (!stack.empty()) {
    Json *v = stack.back();
    stack.pop_back();
    all.push_back(v);
    if (v->is_object()) {
      auto name = v->find("name");
      if (name != v->end() && name->is_string())
        names.push_back(name->get<std::string>());
      for (auto &e : v->items())
        stack.push_back(&e.value());
    } else if (v->is_array()) {
      for (Json &e : *v)
        stack.push_back(&e);
    }
  }
  unsigned rounds = 1 + rng() % 3;
  for (unsigned r = 0; r < rounds; ++r) {
    auto nodes = doc.find("nodes");
    if (rng() % 5 == 0 && nodes != doc.end() && nodes->is_array() &&
        !nodes->empty()) {
      Json &node = (*nodes)[rng() % nodes->size()];
      if (node.is_object())
        node["op"] = pick(kOps, rng);
      continue;
    }
    mutateValue(*all[rng() % all.size()], rng, names);
    // Values may have moved (erase/push_back); stop after a structural edit.
    break;
  }
  std::string out = doc.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (out.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
