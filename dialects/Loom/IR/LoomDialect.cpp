//===- LoomDialect.cpp - loom dialect registration ------------------------===//
//
// Registers the loom ops, enums and attributes, and materializes folded
// constants as `loom.constant`.
//
//===----------------------------------------------------------------------===//

#include "dialects/Loom/IR/LoomDialect.h"
#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::loom;

#include "dialects/Loom/IR/LoomDialect.cpp.inc"
#include "dialects/Loom/IR/LoomEnums.cpp.inc"
#include "dialects/Loom/IR/LoomInterfaces.cpp.inc"

void LoomDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Loom/IR/LoomOps.cpp.inc"
      >();
}

Operation *LoomDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
