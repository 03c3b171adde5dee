//===- LoomDialect.h - loom dialect declaration ------------------*- C++ -*-===//
//
// Declares the loom dialect, its enums and attributes. Include LoomOps.h for
// the ops themselves.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECTS_LOOM_IR_LOOMDIALECT_H
#define LOOM_DIALECTS_LOOM_IR_LOOMDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"

#include "dialects/Loom/IR/LoomDialect.h.inc"
#include "dialects/Loom/IR/LoomEnums.h.inc"

#endif // LOOM_DIALECTS_LOOM_IR_LOOMDIALECT_H
