//===- StaticMemoryPlanIR.h - the static memory plan as the IR holds it -*- C++ -*-===//
//
// Memory placement writes the device's static memory plan into the IR
// (docs/memory-placement.md, "In the IR"); the lowering and the checks read
// it back through these accessors, so the attribute names live in one place.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_MEMORY_STATICMEMORYPLANIR_H
#define LOOM_MEMORY_STATICMEMORYPLANIR_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace mlir::loom {

/// The module attribute summarising the placement.
inline constexpr llvm::StringLiteral kMemoryPlanAttr = "loom.memory_plan";

/// The op (and function argument) attribute holding its results' offsets:
/// `{forward, backward, host}`, each an array by result, -1 where a result
/// has no buffer there.
inline constexpr llvm::StringLiteral kOffsetsAttr = "loom.offsets";

/// A pipelined program's op (and function argument) attribute: its
/// results' offsets on the pipeline device its stage runs on, `{device,
/// backward, forward, host}`, each array by micro-batch, then by result.
inline constexpr llvm::StringLiteral kPipelineOffsetsAttr =
    "loom.pipeline_offsets";

/// A pipelined program's op (and function argument) attribute: for each
/// other pipeline device that receives its results (that takes the
/// argument), their offsets there, as kPipelineOffsetsAttr.
inline constexpr llvm::StringLiteral kReceivedOffsetsAttr =
    "loom.received_offsets";

/// The entry argument attribute naming the tier ("device", "host") of an
/// arena loom-arena-buffers added: the runtime maps it once and passes it
/// after the weights, the device's first.
inline constexpr llvm::StringLiteral kArenaArgAttr = "loom.arena";

/// The bytes of `tier`'s arena ("device", "host", "nvme") in the module's
/// memory plan, if it has one.
inline std::optional<int64_t> arenaBytes(ModuleOp module,
                                         llvm::StringRef tier = "device") {
  auto plan = module->getAttrOfType<DictionaryAttr>(kMemoryPlanAttr);
  auto arenas = plan ? plan.getAs<DictionaryAttr>("arenas") : nullptr;
  auto arena = arenas ? arenas.getAs<DictionaryAttr>(tier) : nullptr;
  auto bytes = arena ? arena.getAs<IntegerAttr>("bytes") : nullptr;
  if (!bytes)
    return std::nullopt;
  return bytes.getInt();
}

/// In a tier's arena dictionary, the sizes of its scratch buffers (those no
/// op or weight owns), by the identifier whose value is its offset.
inline constexpr llvm::StringLiteral kScratchBytesKey = "scratch_bytes";

/// Where scratch buffer `id` lies in `tier`'s arena: {offset, bytes}.
inline std::optional<std::pair<int64_t, int64_t>>
scratchBuffer(ModuleOp module, llvm::StringRef id, llvm::StringRef tier = "device") {
  auto plan = module->getAttrOfType<DictionaryAttr>(kMemoryPlanAttr);
  auto arenas = plan ? plan.getAs<DictionaryAttr>("arenas") : nullptr;
  auto arena = arenas ? arenas.getAs<DictionaryAttr>(tier) : nullptr;
  auto offset = arena ? arena.getAs<IntegerAttr>(id) : nullptr;
  auto sizes = arena ? arena.getAs<DictionaryAttr>(kScratchBytesKey) : nullptr;
  auto bytes = sizes ? sizes.getAs<IntegerAttr>(id) : nullptr;
  if (!offset || !bytes)
    return std::nullopt;
  return std::make_pair(offset.getInt(), bytes.getInt());
}

/// The scratch buffer a split's device update reads a kept weight into
/// when the chunk schedule leaves none of its copies on the device (its
/// `loom.reload`), one weight at a time.
inline constexpr llvm::StringLiteral kUpdateReloadScratch = "update_reload";

/// The scratch buffer of ZeRO-3's `k`th gathered-weight slot.
inline std::string zeroGatherSlot(size_t k) {
  return "zero3_gather_" + std::to_string(k);
}

/// Where result `index` lies in buffer `kind` ("forward", "backward" or
/// "host") of an `loom.offsets` dictionary (an op's, or an argument's);
/// none when there is no dictionary, no such entry or a negative one.
inline std::optional<int64_t> resultOffset(DictionaryAttr offsets,
                                           llvm::StringRef kind,
                                           unsigned index) {
  auto at = offsets ? offsets.getAs<DenseI64ArrayAttr>(kind) : nullptr;
  if (!at || index >= at.size() || at[index] < 0)
    return std::nullopt;
  return at[index];
}

/// The device offset the forward writes result `index` at.
inline std::optional<int64_t> forwardOffset(DictionaryAttr offsets,
                                            unsigned index) {
  return resultOffset(offsets, "forward", index);
}

/// Whether the plan offloads a result: it has a host copy.
inline bool offloadedByPlan(DictionaryAttr offsets) {
  auto host = offsets ? offsets.getAs<DenseI64ArrayAttr>("host") : nullptr;
  return host && llvm::any_of(host.asArrayRef(), [](int64_t at) { return at >= 0; });
}

/// Whether the plan recomputes a result: it has a backward buffer and no
/// host copy to fetch back into it.
inline bool recomputedByOffsets(DictionaryAttr offsets) {
  auto backward = offsets ? offsets.getAs<DenseI64ArrayAttr>("backward") : nullptr;
  if (!backward)
    return false;
  for (unsigned i = 0; i < backward.size(); ++i)
    if (backward[i] >= 0 && !resultOffset(offsets, "host", i))
      return true;
  return false;
}

} // namespace mlir::loom

#endif // LOOM_MEMORY_STATICMEMORYPLANIR_H
