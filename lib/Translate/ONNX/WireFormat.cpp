//===- WireFormat.cpp - locate tensor payloads inside a .onnx file --------===//
//
// A large initializer embedded in the model file (raw_data) becomes a
// `loom.weight` that names the .onnx file itself and the byte offset of the
// payload, so that nothing downstream copies it. libprotobuf does not report
// where a field sits in the input, so this file walks the protobuf wire format
// itself: ModelProto.graph (7) -> GraphProto.initializer (5) / node (1) ->
// TensorProto.name (8) and raw_data (9), plus packed float_data (4) and
// double_data (10), whose payloads are also contiguous little-endian arrays.
// Every read is bounds-checked; a malformed buffer just stops the walk.
//
//===----------------------------------------------------------------------===//

#include "ONNXImporter.h"

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::onnx_import;

namespace {
/// A cursor over a protobuf message in [pos, end) of the whole buffer.
struct WireReader {
  const uint8_t *base; // start of the whole file: offsets are relative to it
  uint64_t pos, end;

  bool atEnd() const { return pos >= end; }

  bool readVarint(uint64_t &value) {
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= end)
        return false;
      uint8_t byte = base[pos++];
      value |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return true;
    }
    return false;
  }

  /// Reads one field header and, for length-delimited fields, the payload
  /// bounds; other wire types are skipped. Returns false on malformed input.
  bool next(uint64_t &field, int &wireType, uint64_t &payload,
            uint64_t &payloadSize) {
    uint64_t tag;
    if (!readVarint(tag))
      return false;
    field = tag >> 3;
    wireType = int(tag & 7);
    payload = payloadSize = 0;
    switch (wireType) {
    case 0: {
      uint64_t ignored;
      return readVarint(ignored);
    }
    case 1:
      if (end - pos < 8)
        return false;
      pos += 8;
      return true;
    case 2: {
      uint64_t len;
      if (!readVarint(len) || len > end - pos)
        return false;
      payload = pos;
      payloadSize = len;
      pos += len;
      return true;
    }
    case 5:
      if (end - pos < 4)
        return false;
      pos += 4;
      return true;
    default: // groups (3, 4) are not used by onnx.proto
      return false;
    }
  }

  WireReader sub(uint64_t payload, uint64_t size) const {
    return WireReader{base, payload, payload + size};
  }
};

/// Name and data payload of one TensorProto.
struct TensorPayload {
  std::string name;
  std::optional<EmbeddedData> data;
};
} // namespace

static void notePayload(TensorPayload &t, int field, uint64_t payload,
                        uint64_t size) {
  if (t.data && t.data->field == field) {
    // A split packed field (or a repeated raw_data): not one contiguous run.
    t.data->ambiguous = true;
    return;
  }
  // raw_data wins over the typed fields, as in libonnx.
  if (t.data && t.data->field == 9)
    return;
  t.data = EmbeddedData{payload, size, field, false};
}

static bool readTensor(WireReader r, TensorPayload &out) {
  while (!r.atEnd()) {
    uint64_t field, payload, size;
    int wt;
    if (!r.next(field, wt, payload, size))
      return false;
    if (wt != 2)
      continue;
    if (field == 8)
      out.name.assign(reinterpret_cast<const char *>(r.base + payload), size);
    else if (field == 9 || field == 4 || field == 10)
      notePayload(out, int(field), payload, size);
  }
  return true;
}

/// Payload of the tensor attribute named "value" of a NodeProto, if any.
static bool readNode(WireReader r, std::optional<EmbeddedData> &out) {
  while (!r.atEnd()) {
    uint64_t field, payload, size;
    int wt;
    if (!r.next(field, wt, payload, size))
      return false;
    if (field != 5 || wt != 2)
      continue;
    // AttributeProto: name (1), t (5).
    WireReader a = r.sub(payload, size);
    std::string name;
    std::optional<TensorPayload> tensor;
    while (!a.atEnd()) {
      uint64_t af, ap, as;
      int awt;
      if (!a.next(af, awt, ap, as))
        return false;
      if (awt != 2)
        continue;
      if (af == 1) {
        name.assign(reinterpret_cast<const char *>(a.base + ap), as);
      } else if (af == 5) {
        TensorPayload t;
        if (!readTensor(a.sub(ap, as), t))
          return false;
        tensor = std::move(t);
      }
    }
    if (name == "value" && tensor && tensor->data)
      out = tensor->data;
  }
  return true;
}

static bool readGraph(WireReader r, EmbeddedDataIndex &index,
                      int64_t &nodeCount) {
  while (!r.atEnd()) {
    uint64_t field, payload, size;
    int wt;
    if (!r.next(field, wt, payload, size))
      return false;
    if (wt != 2)
      continue;
    if (field == 5) {
      TensorPayload t;
      if (!readTensor(r.sub(payload, size), t))
        return false;
      if (!t.data)
        continue;
      auto [it, inserted] = index.initializers.try_emplace(t.name, *t.data);
      if (!inserted)
        it->second.ambiguous = true;
    } else if (field == 1) {
      std::optional<EmbeddedData> data;
      if (!readNode(r.sub(payload, size), data))
        return false;
      if (data)
        index.constantNodes[nodeCount] = *data;
      ++nodeCount;
    }
  }
  return true;
}

bool onnx_import::indexEmbeddedData(StringRef bytes, EmbeddedDataIndex &index) {
  WireReader r{reinterpret_cast<const uint8_t *>(bytes.data()), 0,
               uint64_t(bytes.size())};
  int64_t nodeCount = 0;
  while (!r.atEnd()) {
    uint64_t field, payload, size;
    int wt;
    if (!r.next(field, wt, payload, size))
      return false;
    if (field == 7 && wt == 2 &&
        !readGraph(r.sub(payload, size), index, nodeCount))
      return false;
  }
  return true;
}
