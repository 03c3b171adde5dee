//===- ModelSummary.cpp - what a model graph holds and costs --------------===//
//
// Walks the entry function once: counts ops by kind (elementwise and reduce
// ops by their kind attribute too, so "gelu" and "add" are told apart), sums
// weight elements by role, and adds up CostOpInterface FLOPs.
//
//===----------------------------------------------------------------------===//

#include "loom/Analysis/ModelSummary.h"

#include "dialects/Loom/IR/LoomOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::loom;

static std::string kindKey(Operation *op) {
  std::string key = op->getName().getStringRef().str();
  if (auto u = dyn_cast<UnaryOp>(op))
    key += " " + stringifyUnaryKind(u.getKind()).str();
  else if (auto b = dyn_cast<BinaryOp>(op))
    key += " " + stringifyBinaryKind(b.getKind()).str();
  else if (auto r = dyn_cast<ReduceOp>(op))
    key += " " + stringifyReduceKind(r.getKind()).str();
  else if (auto p = dyn_cast<PoolOp>(op))
    key += " " + stringifyPoolKind(p.getKind()).str();
  return key;
}

static int64_t byteSize(RankedTensorType type) {
  int64_t bits = type.getElementType().getIntOrFloatBitWidth();
  return (type.getNumElements() * bits + 7) / 8;
}

FailureOr<ModelSummary> mlir::loom::summarizeModel(ModuleOp module,
                                                   llvm::StringRef name) {
  func::FuncOp entry = module.lookupSymbol<func::FuncOp>("main");
  if (!entry) {
    auto funcs = module.getOps<func::FuncOp>();
    if (funcs.empty())
      return mlir::emitError(module.getLoc(), "model has no function to summarize");
    entry = *funcs.begin();
  }
  ModelSummary s;
  s.name = name.str();
  for (BlockArgument arg : entry.getArguments()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    if (auto names = entry.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                        "loom.name"))
      os << names.getValue() << ": ";
    os << arg.getType();
    s.inputs.push_back(text);
  }
  if (entry.getNumArguments() > 0)
    if (auto t = dyn_cast<RankedTensorType>(entry.getArgument(0).getType()))
      if (t.getRank() > 0 && t.getDimSize(0) > 0)
        s.batch = t.getDimSize(0);

  entry.walk([&](Operation *op) {
    if (!isa<LoomDialect>(op->getDialect()))
      return;
    ++s.numOps;
    OpKindStats &stats = s.ops[kindKey(op)];
    ++stats.count;
    if (auto cost = dyn_cast<CostOpInterface>(op)) {
      stats.flops += cost.getTotalFlops();
      s.totalFlops += cost.getTotalFlops();
      s.contractionFlops += cost.getContractionFlops();
    }
    if (auto w = dyn_cast<WeightOp>(op)) {
      RankedTensorType t = w.getResult().getType();
      if (w.getRole() == WeightRole::parameter) {
        ++s.parameterTensors;
        s.parameters += t.getNumElements();
        s.parameterBytes += byteSize(t);
      } else {
        ++s.bufferTensors;
        s.buffers += t.getNumElements();
        s.bufferBytes += byteSize(t);
      }
    }
  });
  return s;
}

/// 12345678 -> "12.35 M".
static std::string humanCount(double v) {
  const char *units[] = {"", " K", " M", " G", " T", " P", " E"};
  int u = 0;
  while (v >= 1000 && u < 6) {
    v /= 1000;
    ++u;
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format(u ? "%.2f" : "%.0f", v) << units[u];
  return s;
}

void mlir::loom::printSummaryText(const ModelSummary &s, llvm::raw_ostream &os) {
  os << "model: " << s.name << "\n";
  for (const std::string &in : s.inputs)
    os << "input: " << in << "\n";
  os << llvm::format("parameters: %lld (%s, %s bytes) in %lld tensors\n",
                     (long long)s.parameters, humanCount(s.parameters).c_str(),
                     humanCount(s.parameterBytes).c_str(),
                     (long long)s.parameterTensors);
  os << llvm::format("buffers: %lld (%s bytes) in %lld tensors\n",
                     (long long)s.buffers, humanCount(s.bufferBytes).c_str(),
                     (long long)s.bufferTensors);
  os << llvm::format("forward FLOPs per sample (batch %lld): %s contraction, "
                     "%s total\n",
                     (long long)s.batch,
                     humanCount(s.contractionFlopsPerSample()).c_str(),
                     humanCount(s.totalFlopsPerSample()).c_str());
  os << llvm::format("ops: %lld\n", (long long)s.numOps);
  os << llvm::format("  %-28s %8s %14s\n", "kind", "count", "FLOPs");
  for (const auto &[key, stats] : s.ops)
    os << llvm::format("  %-28s %8lld %14s\n", key.c_str(),
                       (long long)stats.count, humanCount(stats.flops).c_str());
}

void mlir::loom::printSummaryJSON(const ModelSummary &s, llvm::raw_ostream &os) {
  llvm::json::Object ops;
  for (const auto &[key, stats] : s.ops)
    ops[key] = llvm::json::Object{{"count", stats.count},
                                  {"flops", stats.flops}};
  llvm::json::Array inputs;
  for (const std::string &in : s.inputs)
    inputs.push_back(in);
  llvm::json::Value root = llvm::json::Object{
      {"model", s.name},
      {"inputs", std::move(inputs)},
      {"batch", s.batch},
      {"num_ops", s.numOps},
      {"ops", std::move(ops)},
      {"parameters", s.parameters},
      {"parameter_tensors", s.parameterTensors},
      {"parameter_bytes", s.parameterBytes},
      {"buffers", s.buffers},
      {"buffer_tensors", s.bufferTensors},
      {"buffer_bytes", s.bufferBytes},
      {"forward_flops_per_sample", s.contractionFlopsPerSample()},
      {"total_flops_per_sample", s.totalFlopsPerSample()},
  };
  os << llvm::formatv("{0:2}", root) << "\n";
}
