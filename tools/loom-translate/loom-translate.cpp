//===- loom-translate.cpp - import models into the loom dialect -----------===//
//
// mlir-translate with Loom's importers: --import-onnx and --import-trace
// (plus every upstream translation). The output file is written only when the
// import succeeds.
//
//===----------------------------------------------------------------------===//

#include "loom/Translate/Import.h"

#include "mlir/InitAllTranslations.h"
#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  mlir::registerAllTranslations();
  mlir::loom::registerImportTranslations();
  return mlir::failed(
             mlir::mlirTranslateMain(argc, argv, "Loom model importer\n"))
             ? 1
             : 0;
}
