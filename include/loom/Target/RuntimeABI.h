//===- RuntimeABI.h - what the compiler and the runtime share ---*- C++ -*-===//
//
// The few encodings shared by the compiler (lowering, manifest) and
// runtime/include/loomrt.h: the dtype list, whose order is the runtime's
// dtype code and whose names the manifest uses, the packing of grid
// axes into one integer for the collective calls, and the C symbols of the
// entries (entrySymbol, updateEntrySymbol).
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_TARGET_RUNTIMEABI_H
#define LOOM_TARGET_RUNTIMEABI_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::loom {

/// The runtime's dtypes; the index is the dtype code (loomrt_dtype).
inline constexpr llvm::StringLiteral kRuntimeDtypeNames[] = {
    "float32", "float64", "float16", "bfloat16", "int8",   "int16",  "int32",
    "int64",   "uint8",   "uint16",  "uint32",   "uint64", "bool"};

/// The runtime dtype code of an element type. Signless and signed integers
/// are the signed dtypes.
inline std::optional<int32_t> runtimeDtype(Type type) {
  if (type.isF32()) return 0;
  if (type.isF64()) return 1;
  if (type.isF16()) return 2;
  if (type.isBF16()) return 3;
  if (type.isInteger(1)) return 12;
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return std::nullopt;
  int32_t base = integer.isUnsigned() ? 8 : 4;
  switch (integer.getWidth()) {
  case 8: return base;
  case 16: return base + 1;
  case 32: return base + 2;
  case 64: return base + 3;
  default: return std::nullopt;
  }
}

/// Grid axes as the collective calls take them: axis i in bits [8i, 8i+8).
inline int64_t packGridAxes(llvm::ArrayRef<int16_t> axes) {
  int64_t packed = 0;
  for (auto [i, axis] : llvm::enumerate(axes))
    packed |= static_cast<int64_t>(axis) << (8 * i);
  return packed;
}

/// The C symbol the runtime calls: `loom_entry`, or per pipeline stage
/// `loom_entry_stage<k>`.
inline std::string entrySymbol(std::optional<int64_t> stage = std::nullopt) {
  return stage ? "loom_entry_stage" + std::to_string(*stage) : "loom_entry";
}

/// The C symbol of a micro-batched or pipelined step's optimizer update,
/// which the runtime calls once a step: `loom_update`, or per pipeline
/// stage `loom_update_stage<k>`.
inline std::string
updateEntrySymbol(std::optional<int64_t> stage = std::nullopt) {
  return stage ? "loom_update_stage" + std::to_string(*stage) : "loom_update";
}

} // namespace mlir::loom

#endif // LOOM_TARGET_RUNTIMEABI_H
