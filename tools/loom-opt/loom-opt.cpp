//===- loom-opt.cpp - mlir-opt with the loom dialect and passes -----------===//
//
// The opt-style driver: every upstream dialect and pass plus Loom's, so that
// users can run any mix of sharding, partitioning and Loom planning passes on
// model graphs and check the result with FileCheck.
//
//===----------------------------------------------------------------------===//

#include "loom/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::loom::registerAllDialects(registry);
  mlir::loom::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Loom optimizer driver\n", registry));
}
