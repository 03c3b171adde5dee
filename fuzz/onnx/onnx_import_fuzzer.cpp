//===- onnx_import_fuzzer.cpp - libFuzzer target for the ONNX importer ----===//
//
// Feeds arbitrary bytes to importONNXBytes with a fresh MLIRContext and all
// diagnostics swallowed. Any crash, sanitizer report or timeout is a bug: the
// importer must turn every malformed model into a diagnostic. A successful
// import is also printed (to a null stream) and verified, so printer and
// verifier paths are exercised on whatever the importer built.
//
// Built as a libFuzzer binary (loom-onnx-fuzzer, LOOM_BUILD_FUZZERS=ON with
// clang) and, with replay_main.cpp, as loom-onnx-fuzz-replay.
//
//===----------------------------------------------------------------------===//

#include "loom/Translate/Import.h"

#include "dialects/Loom/IR/LoomDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext ctx(MLIRContext::Threading::DISABLED);
  ctx.loadDialect<loom::LoomDialect, func::FuncDialect>();
  ScopedDiagnosticHandler swallow(&ctx, [](Diagnostic &) { return success(); });
  loom::ImportOptions options;
  // Pin dynamic dims so that more inputs get past the graph inputs.
  options.defaultDynamicDim = 2;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  OwningOpRef<ModuleOp> module =
      loom::importONNXBytes(bytes, "fuzz.onnx", &ctx, options);
  if (module) {
    // The importer verifies before returning; a module that does not verify
    // here is an importer bug.
    if (failed(verify(*module)))
      std::abort();
    module->print(llvm::nulls());
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// Structure-aware mutation (libFuzzer build only)
//===----------------------------------------------------------------------===//
//
// Random byte flips rarely survive protobuf parsing, so most of libFuzzer's
// effort would end at the parser. When the input parses as a ModelProto, this
// mutator usually edits it as a model instead: it swaps op types among the
// supported ones, perturbs attributes, rewires inputs, changes dims, dtypes,
// opsets and initializer payloads, adds and drops nodes, then re-serializes.

#ifdef LOOM_FUZZ_CUSTOM_MUTATOR
#include <onnx/onnx_pb.h>

#include <random>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size,
                                   size_t maxSize);

namespace {
const char *const kOps[] = {
    "Abs", "Add", "And", "ArgMax", "AveragePool", "BatchNormalization",
    "Cast", "CastLike", "Ceil", "Celu", "Clip", "Concat", "ConcatFromSequence",
    "Constant", "ConstantOfShape", "Conv", "Cos", "CumSum", "DepthToSpace",
    "Div", "Dropout", "Einsum", "Elu", "Equal", "Erf", "Exp", "Expand",
    "EyeLike", "Flatten", "Floor", "Gather", "Gelu", "Gemm",
    "GlobalAveragePool", "Greater", "Hardmax", "HardSigmoid", "Identity", "If",
    "InstanceNormalization", "IsInf", "LayerNormalization", "LeakyRelu",
    "Less", "Log", "LogSoftmax", "Loop", "LRN", "MatMul", "Max", "MaxPool",
    "Mean", "Min", "Mod", "Mul", "Neg", "NegativeLogLikelihoodLoss", "NonZero",
    "Not", "OneHot", "Pad", "Pow", "PRelu", "Range", "Reciprocal", "ReduceL2",
    "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceProd", "ReduceSum",
    "Relu", "Reshape", "ScatterElements", "SequenceAt", "SequenceConstruct",
    "SequenceInsert", "Shape", "Sigmoid", "Size", "Slice", "Softmax",
    "SoftmaxCrossEntropyLoss", "SpaceToDepth", "Split", "SplitToSequence",
    "Sqrt", "Squeeze", "Sub", "Sum", "Tanh", "Tile", "TopK", "Transpose",
    "Trilu", "Unsqueeze", "Where"};
const char *const kAttrs[] = {"axis", "axes", "perm", "keepdims", "to",
                              "kernel_shape", "strides", "pads", "dilations",
                              "group", "alpha", "beta", "epsilon", "transA",
                              "transB", "equation", "mode", "auto_pad",
                              "ceil_mode", "split", "num_outputs", "value",
                              "blocksize", "upper", "reduction", "new_axis"};

int64_t interestingInt(std::mt19937_64 &rng) {
  static const int64_t values[] = {0, 1, 2, 3, -1, -2, 7, 64, 1 << 20,
                                   INT32_MAX, int64_t(1) << 40, INT64_MAX,
                                   INT64_MIN, -9223372036854775807};
  if (rng() % 2)
    return values[rng() % (sizeof(values) / sizeof(values[0]))];
  return int64_t(rng() % 9) - 4;
}

/// Every value name a node could read: inputs, initializers, node outputs.
std::vector<std::string> valueNames(const onnx::GraphProto &g) {
  std::vector<std::string> names;
  for (const auto &i : g.input())
    names.push_back(i.name());
  for (const auto &t : g.initializer())
    names.push_back(t.name());
  for (const auto &n : g.node())
    for (const auto &o : n.output())
      names.push_back(o);
  return names;
}

void mutateAttribute(onnx::AttributeProto &a, std::mt19937_64 &rng) {
  switch (rng() % 6) {
  case 0:
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(interestingInt(rng));
    break;
  case 1:
    a.set_type(onnx::AttributeProto::INTS);
    if (a.ints_size() && rng() % 2)
      a.set_ints(int(rng() % a.ints_size()), interestingInt(rng));
    else
      a.add_ints(interestingInt(rng));
    break;
  case 2:
    a.set_type(onnx::AttributeProto::FLOAT);
    a.set_f(float(interestingInt(rng)) / 3.0f);
    break;
  case 3:
    a.clear_ints();
    break;
  case 4: {
    static const char *const strings[] = {"SAME_UPPER", "VALID", "reflect",
                                          "edge", "bij,bjk->bik", "ii->i",
                                          "...ij->...ji", "tanh", "add", ""};
    a.set_type(onnx::AttributeProto::STRING);
    a.set_s(strings[rng() % (sizeof(strings) / sizeof(strings[0]))]);
    break;
  }
  default:
    a.set_name(kAttrs[rng() % (sizeof(kAttrs) / sizeof(kAttrs[0]))]);
    break;
  }
}

void mutateModel(onnx::ModelProto &m, std::mt19937_64 &rng) {
  onnx::GraphProto &g = *m.mutable_graph();
  std::vector<std::string> names = valueNames(g);
  auto randomName = [&]() -> std::string {
    if (names.empty() || rng() % 16 == 0)
      return rng() % 2 ? "" : "bogus";
    return names[rng() % names.size()];
  };
  switch (rng() % 12) {
  case 0: // change an op type
    if (g.node_size())
      g.mutable_node(int(rng() % g.node_size()))
          ->set_op_type(kOps[rng() % (sizeof(kOps) / sizeof(kOps[0]))]);
    break;
  case 1: // perturb or add an attribute
    if (g.node_size()) {
      onnx::NodeProto *n = g.mutable_node(int(rng() % g.node_size()));
      if (n->attribute_size() && rng() % 3)
        mutateAttribute(*n->mutable_attribute(int(rng() % n->attribute_size())),
                        rng);
      else {
        onnx::AttributeProto *a = n->add_attribute();
        a->set_name(kAttrs[rng() % (sizeof(kAttrs) / sizeof(kAttrs[0]))]);
        mutateAttribute(*a, rng);
      }
    }
    break;
  case 2: // rewire an input
    if (g.node_size()) {
      onnx::NodeProto *n = g.mutable_node(int(rng() % g.node_size()));
      if (n->input_size() && rng() % 3)
        n->set_input(int(rng() % n->input_size()), randomName());
      else
        n->add_input(randomName());
    }
    break;
  case 3: // change a graph input's dims
    if (g.input_size()) {
      auto *t = g.mutable_input(int(rng() % g.input_size()))
                    ->mutable_type()
                    ->mutable_tensor_type();
      auto *shape = t->mutable_shape();
      if (shape->dim_size() && rng() % 4)
        shape->mutable_dim(int(rng() % shape->dim_size()))
            ->set_dim_value(rng() % 4 ? int64_t(rng() % 6) : interestingInt(rng));
      else if (rng() % 2)
        shape->add_dim()->set_dim_value(int64_t(rng() % 5));
      else
        t->set_elem_type(int32_t(rng() % 18));
    }
    break;
  case 4: // change an initializer
    if (g.initializer_size()) {
      onnx::TensorProto *t =
          g.mutable_initializer(int(rng() % g.initializer_size()));
      switch (rng() % 4) {
      case 0:
        if (t->dims_size())
          t->set_dims(int(rng() % t->dims_size()), interestingInt(rng));
        break;
      case 1:
        t->set_data_type(int32_t(rng() % 18));
        break;
      case 2:
        if (t->has_raw_data())
          t->mutable_raw_data()->resize(rng() % (t->raw_data().size() + 2));
        break;
      default:
        t->add_int64_data(interestingInt(rng));
        break;
      }
    }
    break;
  case 5: // change the opset
    if (m.opset_import_size())
      m.mutable_opset_import(0)->set_version(12 + int64_t(rng() % 11));
    break;
  case 6: { // add a node reading existing values
    onnx::NodeProto *n = g.add_node();
    n->set_op_type(kOps[rng() % (sizeof(kOps) / sizeof(kOps[0]))]);
    int inputs = int(rng() % 4);
    for (int i = 0; i < inputs; ++i)
      n->add_input(randomName());
    std::string out = "fz" + std::to_string(rng() % 1000);
    n->add_output(out);
    if (rng() % 2)
      g.add_output()->set_name(out);
    break;
  }
  case 7: // drop or duplicate a node
    if (g.node_size()) {
      int i = int(rng() % g.node_size());
      if (rng() % 2)
        g.mutable_node()->DeleteSubrange(i, 1);
      else
        *g.add_node() = g.node(i);
    }
    break;
  case 8: // swap two nodes (ordering)
    if (g.node_size() > 1)
      g.mutable_node()->SwapElements(int(rng() % g.node_size()),
                                     int(rng() % g.node_size()));
    break;
  case 9: // point a graph output elsewhere
    if (g.output_size())
      g.mutable_output(int(rng() % g.output_size()))->set_name(randomName());
    break;
  case 10: // a Constant node with a random small tensor
  {
    onnx::NodeProto *n = g.add_node();
    n->set_op_type("Constant");
    std::string out = "fc" + std::to_string(rng() % 1000);
    n->add_output(out);
    onnx::AttributeProto *a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    onnx::TensorProto *t = a->mutable_t();
    t->set_data_type(rng() % 2 ? onnx::TensorProto::INT64
                               : onnx::TensorProto::FLOAT);
    int n0 = int(rng() % 4);
    t->add_dims(n0);
    for (int i = 0; i < n0; ++i) {
      if (t->data_type() == onnx::TensorProto::INT64)
        t->add_int64_data(interestingInt(rng));
      else
        t->add_float_data(float(interestingInt(rng)));
    }
    break;
  }
  default: // an attribute of a subgraph node, if any
    for (auto &node : *g.mutable_node())
      for (auto &a : *node.mutable_attribute())
        if (a.has_g() && a.g().node_size()) {
          onnx::NodeProto *inner =
              a.mutable_g()->mutable_node(int(rng() % a.g().node_size()));
          inner->set_op_type(kOps[rng() % (sizeof(kOps) / sizeof(kOps[0]))]);
          return;
        }
    break;
  }
}
} // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned int seed) {
  std::mt19937_64 rng(seed);
  onnx::ModelProto m;
  if (rng() % 4 == 0 || size > size_t(INT32_MAX) ||
      !m.ParseFromArray(data, int(size)))
    return LLVMFuzzerMutate(data, size, maxSize);
  int rounds = 1 + int(rng() % 3);
  for (int i = 0; i < rounds; ++i)
    mutateModel(m, rng);
  std::string out;
  if (!m.SerializeToString(&out) || out.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
#endif // LOOM_FUZZ_CUSTOM_MUTATOR
