//===- StaticMemoryPlanIR.h - the static memory plan as the IR holds it -*- C++ -*-===//
//
// Memory placement writes the device's static memory plan into the IR
// (docs/memory-placement.md, "In the IR"); the lowering and the checks read
// it back through these accessors, so the attribute names live in one place.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_MEMORY_STATICMEMORYPLANIR_H
#define LOOM_MEMORY_STATICMEMORYPLANIR_H

#include "dialects/Loom/IR/LoomOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>
#include <string>

namespace mlir::loom {

/// The module attribute summarising the placement.
inline constexpr llvm::StringLiteral kMemoryPlanAttr = "loom.memory_plan";

// kOffsetsAttr ("loom.offsets"), the op (and function argument) attribute
// holding its results' offsets, and kPipelineOffsetsAttr
// ("loom.pipeline_offsets"), its pipelined form, are named in LoomOps.h (the
// dialect's canonicalization keeps what they place):
//  - loom.offsets: `{forward, backward, gradient, host}`, each an array by
//    result, -1 where a result has no buffer there (`gradient`: where the
//    backward accumulates the result's gradient). --loom-autodiff marks the
//    op computing a result's final gradient with that offset as its own
//    `forward` one.
//  - loom.pipeline_offsets, on a pipelined program's op (and function
//    argument): its results' offsets on the pipeline device its stage runs
//    on, `{device, backward, forward, gradient, host}`, each array by
//    micro-batch, then by result.

/// A pipelined program's op (and function argument) attribute: for each
/// other pipeline device that receives its results (that takes the
/// argument), their offsets there, as kPipelineOffsetsAttr.
inline constexpr llvm::StringLiteral kReceivedOffsetsAttr =
    "loom.received_offsets";

/// The entry argument attribute naming the tier ("device", "host") of an
/// arena loom-arena-buffers added: the runtime maps it once and passes it
/// after the weights, the device's first.
inline constexpr llvm::StringLiteral kArenaArgAttr = "loom.arena";

/// The attribute of `loom.memory_plan` listing a pipelined program's arenas,
/// pipeline device d's `arenas` dictionary at index d.
inline constexpr llvm::StringLiteral kPipelineArenasKey = "pipeline_arenas";

/// The module's static memory plan's arenas (`{device = {bytes, ...}, host
/// = ..., nvme = ...}`): of one pipeline device where `pipelineDevice` names
/// one (its `pipeline_arenas` entry), else the program's. Null without a plan.
inline DictionaryAttr
planArenas(ModuleOp module,
           std::optional<int64_t> pipelineDevice = std::nullopt) {
  auto plan = module->getAttrOfType<DictionaryAttr>(kMemoryPlanAttr);
  if (!plan)
    return nullptr;
  if (!pipelineDevice)
    return plan.getAs<DictionaryAttr>("arenas");
  auto perDevice = plan.getAs<ArrayAttr>(kPipelineArenasKey);
  if (!perDevice || *pipelineDevice < 0 ||
      *pipelineDevice >= static_cast<int64_t>(perDevice.size()))
    return nullptr;
  return dyn_cast<DictionaryAttr>(perDevice[*pipelineDevice]);
}

/// The attribute of the entry argument loom-arena-buffers adds after the
/// arenas where a pipelined stage's micro-batches have places of their own:
/// the micro-batch the call runs, an int64 the runtime writes before each
/// call. Its value is how many micro-batches' places the program holds
/// (the manifest's `micro_batch_places`).
inline constexpr llvm::StringLiteral kMicroBatchPlacesAttr =
    "loom.micro_batch_places";

/// Where a weight argument lies in its tier's arena, as bytes [begin,
/// end): `weight` is its `loom.weight` dictionary, `type` its type on the
/// rank. loom-weights-to-arguments gives it `arena_offset`, the start of
/// one of the weight's planned buffers, and `arena_slot`, how many tensors
/// of its own size lie before it there. None where it has no place or no
/// static size.
inline std::optional<std::pair<int64_t, int64_t>>
weightArenaBytes(DictionaryAttr weight, Type type) {
  auto offset = weight ? weight.getAs<IntegerAttr>("arena_offset") : nullptr;
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!offset || !tensor || !tensor.hasStaticShape() ||
      !tensor.getElementType().isIntOrFloat())
    return std::nullopt;
  int64_t bytes =
      tensor.getNumElements() * ((tensor.getElementTypeBitWidth() + 7) / 8);
  auto slot = weight.getAs<IntegerAttr>("arena_slot");
  int64_t begin = offset.getInt() + (slot ? slot.getInt() : 0) * bytes;
  return std::make_pair(begin, begin + bytes);
}

/// The bytes of `tier`'s arena ("device", "host", "nvme") in `arenas`, if
/// it has one.
inline std::optional<int64_t> arenaBytes(DictionaryAttr arenas,
                                         llvm::StringRef tier = "device") {
  auto arena = arenas ? arenas.getAs<DictionaryAttr>(tier) : nullptr;
  auto bytes = arena ? arena.getAs<IntegerAttr>("bytes") : nullptr;
  if (!bytes)
    return std::nullopt;
  return bytes.getInt();
}

/// In a tier's arena dictionary, the sizes of its scratch buffers (those no
/// op or weight owns), by the identifier whose value is its offset.
inline constexpr llvm::StringLiteral kScratchBytesKey = "scratch_bytes";

/// Where scratch buffer `id` lies in `tier`'s arena of `arenas`: {offset,
/// bytes}.
inline std::optional<std::pair<int64_t, int64_t>>
scratchBuffer(DictionaryAttr arenas, llvm::StringRef id,
              llvm::StringRef tier = "device") {
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

/// Where result `index` lies in buffer `kind` ("forward", "backward",
/// "gradient" or "host") of an `loom.offsets` dictionary (an op's, or an
/// argument's); none when there is no dictionary, no such entry or a negative
/// one.
inline std::optional<int64_t> resultOffset(DictionaryAttr offsets,
                                           llvm::StringRef kind,
                                           unsigned index) {
  auto at = offsets ? offsets.getAs<DenseI64ArrayAttr>(kind) : nullptr;
  if (!at || index >= at.size() || at[index] < 0)
    return std::nullopt;
  return at[index];
}

/// Result `index`'s entries of a pipelined offsets array (laid out by
/// micro-batch, then by `results` results): one per micro-batch.
inline llvm::SmallVector<int64_t>
resultPlaces(llvm::ArrayRef<int64_t> all, unsigned results, unsigned index) {
  llvm::SmallVector<int64_t> one;
  for (size_t at = index; at < all.size(); at += results)
    one.push_back(all[at]);
  return one;
}

/// The device offset the forward writes result `index` at.
inline std::optional<int64_t> forwardOffset(DictionaryAttr offsets,
                                            unsigned index) {
  return resultOffset(offsets, "forward", index);
}

/// A pipelined program's offsets on pipeline device `device`: the one of
/// `own` (kPipelineOffsetsAttr) and `received` (kReceivedOffsetsAttr) whose
/// `device` entry names it; null where neither does.
inline DictionaryAttr offsetsOnDevice(DictionaryAttr own, ArrayAttr received,
                                      int64_t device) {
  auto on = [&](DictionaryAttr d) {
    auto at = d ? d.getAs<IntegerAttr>("device") : nullptr;
    return at && at.getInt() == device;
  };
  if (on(own))
    return own;
  if (received)
    for (Attribute entry : received)
      if (auto d = dyn_cast<DictionaryAttr>(entry); on(d))
        return d;
  return nullptr;
}

/// Whether the plan offloads a result: it has a host copy.
inline bool offloadedByPlan(DictionaryAttr offsets) {
  auto host = offsets ? offsets.getAs<DenseI64ArrayAttr>("host") : nullptr;
  return host && llvm::any_of(host.asArrayRef(), [](int64_t at) { return at >= 0; });
}

/// Whether the plan offloads result `index` of `results`: a host place in
/// `loom.offsets`, or, in a pipelined plan's (with a `device` entry), a
/// host place in some micro-batch.
inline bool offloadedResult(DictionaryAttr offsets, unsigned results,
                            unsigned index) {
  if (!offsets || !offsets.get("device"))
    return resultOffset(offsets, "host", index).has_value();
  auto host = offsets.getAs<DenseI64ArrayAttr>("host");
  return host && llvm::any_of(resultPlaces(host.asArrayRef(), results, index),
                              [](int64_t at) { return at >= 0; });
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
