//===- ModelSummary.h - what a model graph holds and costs -------*- C++ -*-===//
//
// Summarizes an imported model: ops by kind, parameters and buffers (count
// and bytes), and forward FLOPs per sample from each op's CostOpInterface.
// The `loom summarize` driver prints it; tests compare it with what PyTorch
// reports for the same model.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_ANALYSIS_MODELSUMMARY_H
#define LOOM_ANALYSIS_MODELSUMMARY_H

#include "mlir/IR/BuiltinOps.h"
#include <map>
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

namespace mlir::loom {

struct OpKindStats {
  int64_t count = 0;
  double flops = 0;
};

struct ModelSummary {
  std::string name;
  /// Graph inputs as "name: tensor<...>".
  SmallVector<std::string> inputs;
  /// Batch size the per-sample figures divide by (dim 0 of the first input).
  int64_t batch = 1;
  /// Keyed by "loom.matmul", "loom.unary gelu", ...; sorted by name.
  std::map<std::string, OpKindStats> ops;
  int64_t numOps = 0;
  int64_t parameterTensors = 0, parameters = 0, parameterBytes = 0;
  int64_t bufferTensors = 0, buffers = 0, bufferBytes = 0;
  double contractionFlops = 0, totalFlops = 0;

  double contractionFlopsPerSample() const { return contractionFlops / batch; }
  double totalFlopsPerSample() const { return totalFlops / batch; }
};

/// Summarizes the entry function (`main`, else the first function) of a
/// module of loom ops. Fails with a diagnostic when there is no function.
FailureOr<ModelSummary> summarizeModel(ModuleOp module, llvm::StringRef name);

void printSummaryText(const ModelSummary &summary, llvm::raw_ostream &os);
void printSummaryJSON(const ModelSummary &summary, llvm::raw_ostream &os);

} // namespace mlir::loom

#endif // LOOM_ANALYSIS_MODELSUMMARY_H
