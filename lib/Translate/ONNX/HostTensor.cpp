//===- HostTensor.cpp - ONNX tensors known at import time -----------------===//
//
// Decodes TensorProto payloads (raw_data, the typed repeated fields, small
// external files) into host tensors, converts between ONNX dtypes with Cast
// semantics, and builds the DenseElementsAttr of a `loom.constant`. Every
// size is checked against the declared dims before anything is allocated, so
// a malformed tensor is an error, never a crash or a huge allocation.
//
//===----------------------------------------------------------------------===//

#include "ONNXImporter.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::onnx_import;
using onnx::TensorProto;

//===----------------------------------------------------------------------===//
// Dtypes
//===----------------------------------------------------------------------===//

bool onnx_import::isFloatDType(int32_t dtype) {
  return dtype == TensorProto::FLOAT || dtype == TensorProto::FLOAT16 ||
         dtype == TensorProto::BFLOAT16 || dtype == TensorProto::DOUBLE;
}

bool onnx_import::isIntegerDType(int32_t dtype) {
  switch (dtype) {
  case TensorProto::UINT8:
  case TensorProto::INT8:
  case TensorProto::UINT16:
  case TensorProto::INT16:
  case TensorProto::INT32:
  case TensorProto::INT64:
  case TensorProto::UINT32:
  case TensorProto::UINT64:
  case TensorProto::BOOL:
    return true;
  default:
    return false;
  }
}

Type onnx_import::dtypeToType(MLIRContext *ctx, int32_t dtype) {
  auto uns = IntegerType::Unsigned;
  switch (dtype) {
  case TensorProto::FLOAT:
    return Float32Type::get(ctx);
  case TensorProto::FLOAT16:
    return Float16Type::get(ctx);
  case TensorProto::BFLOAT16:
    return BFloat16Type::get(ctx);
  case TensorProto::DOUBLE:
    return Float64Type::get(ctx);
  case TensorProto::BOOL:
    return IntegerType::get(ctx, 1);
  case TensorProto::INT8:
    return IntegerType::get(ctx, 8);
  case TensorProto::INT16:
    return IntegerType::get(ctx, 16);
  case TensorProto::INT32:
    return IntegerType::get(ctx, 32);
  case TensorProto::INT64:
    return IntegerType::get(ctx, 64);
  case TensorProto::UINT8:
    return IntegerType::get(ctx, 8, uns);
  case TensorProto::UINT16:
    return IntegerType::get(ctx, 16, uns);
  case TensorProto::UINT32:
    return IntegerType::get(ctx, 32, uns);
  case TensorProto::UINT64:
    return IntegerType::get(ctx, 64, uns);
  default:
    return nullptr;
  }
}

int32_t onnx_import::typeToDType(Type type) {
  if (type.isF32())
    return TensorProto::FLOAT;
  if (type.isF16())
    return TensorProto::FLOAT16;
  if (type.isBF16())
    return TensorProto::BFLOAT16;
  if (type.isF64())
    return TensorProto::DOUBLE;
  auto it = dyn_cast<IntegerType>(type);
  if (!it)
    return TensorProto::UNDEFINED;
  bool u = it.isUnsigned();
  switch (it.getWidth()) {
  case 1:
    return TensorProto::BOOL;
  case 8:
    return u ? TensorProto::UINT8 : TensorProto::INT8;
  case 16:
    return u ? TensorProto::UINT16 : TensorProto::INT16;
  case 32:
    return u ? TensorProto::UINT32 : TensorProto::INT32;
  case 64:
    return u ? TensorProto::UINT64 : TensorProto::INT64;
  default:
    return TensorProto::UNDEFINED;
  }
}

int64_t onnx_import::dtypeSize(int32_t dtype) {
  switch (dtype) {
  case TensorProto::BOOL:
  case TensorProto::INT8:
  case TensorProto::UINT8:
    return 1;
  case TensorProto::INT16:
  case TensorProto::UINT16:
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    return 2;
  case TensorProto::INT32:
  case TensorProto::UINT32:
  case TensorProto::FLOAT:
    return 4;
  case TensorProto::INT64:
  case TensorProto::UINT64:
  case TensorProto::DOUBLE:
    return 8;
  default:
    return 0;
  }
}

StringRef onnx_import::dtypeName(int32_t dtype) {
  if (TensorProto::DataType_IsValid(dtype))
    return TensorProto::DataType_Name(TensorProto::DataType(dtype));
  return "<invalid dtype>";
}

int64_t onnx_import::checkedNumElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || d > kMaxDim)
      return -1;
    if (d == 0)
      return 0;
  }
  for (int64_t d : shape) {
    if (n > kMaxElements / d)
      return -1;
    n *= d;
  }
  return n;
}

bool HostTensor::isFloat() const { return isFloatDType(dtype); }

int64_t HostTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

void HostTensor::allocate() {
  if (isFloat())
    floats.assign(numel(), 0.0);
  else
    ints.assign(numel(), 0);
}

//===----------------------------------------------------------------------===//
// Element conversion
//===----------------------------------------------------------------------===//

static double roundToSemantics(double v, const llvm::fltSemantics &sem) {
  llvm::APFloat f(v);
  bool lost;
  f.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return f.convertToDouble();
}

static int64_t floatToInt64(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= 9.2233720368547758e18)
    return std::numeric_limits<int64_t>::max();
  if (v <= -9.2233720368547758e18)
    return std::numeric_limits<int64_t>::min();
  return int64_t(v);
}

static int64_t wrapInt(int64_t v, int32_t dtype) {
  switch (dtype) {
  case TensorProto::BOOL:
    return v != 0;
  case TensorProto::INT8:
    return int8_t(uint8_t(uint64_t(v)));
  case TensorProto::UINT8:
    return uint8_t(uint64_t(v));
  case TensorProto::INT16:
    return int16_t(uint16_t(uint64_t(v)));
  case TensorProto::UINT16:
    return uint16_t(uint64_t(v));
  case TensorProto::INT32:
    return int32_t(uint32_t(uint64_t(v)));
  case TensorProto::UINT32:
    return uint32_t(uint64_t(v));
  default:
    return v;
  }
}

void onnx_import::storeElement(HostTensor &t, int64_t i, double fv, int64_t iv,
                               bool fromFloat) {
  if (t.isFloat()) {
    double v = fromFloat ? fv : double(iv);
    switch (t.dtype) {
    case TensorProto::FLOAT:
      v = double(float(v));
      break;
    case TensorProto::FLOAT16:
      v = roundToSemantics(v, llvm::APFloat::IEEEhalf());
      break;
    case TensorProto::BFLOAT16:
      v = roundToSemantics(v, llvm::APFloat::BFloat());
      break;
    default:
      break;
    }
    t.floats[i] = v;
    return;
  }
  if (fromFloat && t.dtype == TensorProto::BOOL) {
    t.ints[i] = fv != 0.0;
    return;
  }
  t.ints[i] = wrapInt(fromFloat ? floatToInt64(fv) : iv, t.dtype);
}

HostTensor onnx_import::castHostTensor(const HostTensor &t, int32_t dtype) {
  HostTensor out;
  out.dtype = dtype;
  out.shape = t.shape;
  out.allocate();
  bool fromFloat = t.isFloat();
  for (int64_t i = 0, e = t.numel(); i < e; ++i)
    storeElement(out, i, fromFloat ? t.floats[i] : 0.0,
                 fromFloat ? 0 : t.ints[i], fromFloat);
  return out;
}

//===----------------------------------------------------------------------===//
// Host tensor -> attribute
//===----------------------------------------------------------------------===//

DenseElementsAttr onnx_import::hostToAttr(const HostTensor &t,
                                          MLIRContext *ctx) {
  Type elem = dtypeToType(ctx, t.dtype);
  if (!elem)
    return nullptr;
  auto type = RankedTensorType::get(t.shape, elem);
  int64_t n = t.numel();
  // A uniform tensor (a mask of zeros, a filled shape) is stored as a splat.
  bool uniform = n > 1;
  if (t.isFloat()) {
    for (int64_t i = 1; uniform && i < n; ++i)
      uniform = t.floats[i] == t.floats[0] &&
                std::signbit(t.floats[i]) == std::signbit(t.floats[0]);
  } else {
    for (int64_t i = 1; uniform && i < n; ++i)
      uniform = t.ints[i] == t.ints[0];
  }
  if (uniform) {
    HostTensor one;
    one.dtype = t.dtype;
    if (t.isFloat())
      one.floats = {t.floats[0]};
    else
      one.ints = {t.ints[0]};
    DenseElementsAttr scalar = hostToAttr(one, ctx);
    return DenseElementsAttr::get(type, scalar.getSplatValue<Attribute>());
  }
  switch (t.dtype) {
  case TensorProto::FLOAT: {
    std::vector<float> v(t.floats.begin(), t.floats.end());
    return DenseElementsAttr::get(type, ArrayRef<float>(v));
  }
  case TensorProto::DOUBLE:
    return DenseElementsAttr::get(type, ArrayRef<double>(t.floats));
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16: {
    const llvm::fltSemantics &sem = t.dtype == TensorProto::FLOAT16
                                        ? llvm::APFloat::IEEEhalf()
                                        : llvm::APFloat::BFloat();
    // 16-bit patterns, handed over as raw data.
    std::vector<uint16_t> bits;
    bits.reserve(n);
    for (double d : t.floats) {
      llvm::APFloat f(d);
      bool lost;
      f.convert(sem, llvm::APFloat::rmNearestTiesToEven, &lost);
      bits.push_back(uint16_t(f.bitcastToAPInt().getZExtValue()));
    }
    return DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(reinterpret_cast<const char *>(bits.data()),
                             bits.size() * sizeof(uint16_t)));
  }
  case TensorProto::BOOL: {
    SmallVector<bool> v;
    v.reserve(n);
    for (int64_t x : t.ints)
      v.push_back(x != 0);
    return DenseElementsAttr::get(type, v);
  }
  case TensorProto::INT64:
    return DenseElementsAttr::get(type, ArrayRef<int64_t>(t.ints));
  default: {
    unsigned width = cast<IntegerType>(elem).getWidth();
    SmallVector<APInt> v;
    v.reserve(n);
    for (int64_t x : t.ints)
      v.push_back(APInt(width, uint64_t(x), /*isSigned=*/false,
                        /*implicitTrunc=*/true));
    return DenseElementsAttr::get(type, v);
  }
  }
}

//===----------------------------------------------------------------------===//
// TensorProto decoding
//===----------------------------------------------------------------------===//

FailureOr<RankedTensorType>
onnx_import::tensorProtoType(const TensorProto &proto, MLIRContext *ctx,
                             std::string &error) {
  int32_t dtype = proto.data_type();
  Type elem = dtypeToType(ctx, dtype);
  if (!elem) {
    error = "has dtype " + dtypeName(dtype).str() +
            ", which Loom does not support";
    return failure();
  }
  if (proto.dims_size() > kMaxRank) {
    error = "has rank " + std::to_string(proto.dims_size()) +
            ", more than the supported " + std::to_string(kMaxRank);
    return failure();
  }
  SmallVector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  if (checkedNumElements(shape) < 0) {
    error = "has invalid dims (negative, or too many elements)";
    return failure();
  }
  return RankedTensorType::get(shape, elem);
}

/// Reads one little-endian element of `dtype` at `p` into `t[i]`.
static void readRawElement(HostTensor &t, int64_t i, const char *p) {
  using namespace llvm::support;
  switch (t.dtype) {
  case TensorProto::FLOAT: {
    uint32_t bits = endian::read32le(p);
    float f;
    std::memcpy(&f, &bits, 4);
    t.floats[i] = f;
    return;
  }
  case TensorProto::DOUBLE: {
    uint64_t bits = endian::read64le(p);
    double d;
    std::memcpy(&d, &bits, 8);
    t.floats[i] = d;
    return;
  }
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16: {
    uint16_t bits = endian::read16le(p);
    const llvm::fltSemantics &sem = t.dtype == TensorProto::FLOAT16
                                        ? llvm::APFloat::IEEEhalf()
                                        : llvm::APFloat::BFloat();
    llvm::APFloat f(sem, APInt(16, bits));
    bool lost;
    f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    t.floats[i] = f.convertToDouble();
    return;
  }
  case TensorProto::BOOL:
    t.ints[i] = *p != 0;
    return;
  case TensorProto::INT8:
    t.ints[i] = int8_t(*p);
    return;
  case TensorProto::UINT8:
    t.ints[i] = uint8_t(*p);
    return;
  case TensorProto::INT16:
    t.ints[i] = int16_t(endian::read16le(p));
    return;
  case TensorProto::UINT16:
    t.ints[i] = endian::read16le(p);
    return;
  case TensorProto::INT32:
    t.ints[i] = int32_t(endian::read32le(p));
    return;
  case TensorProto::UINT32:
    t.ints[i] = endian::read32le(p);
    return;
  default:
    t.ints[i] = int64_t(endian::read64le(p));
    return;
  }
}

static void decodeRaw(HostTensor &t, const char *data) {
  int64_t esize = dtypeSize(t.dtype);
  for (int64_t i = 0, e = t.numel(); i < e; ++i)
    readRawElement(t, i, data + i * esize);
}

FailureOr<ExternalDataRef>
onnx_import::resolveExternalData(const TensorProto &proto, StringRef baseDir,
                                 uint64_t bytes, std::string &error) {
  ExternalDataRef ref;
  ref.size = bytes;
  std::optional<uint64_t> length;
  for (const onnx::StringStringEntryProto &kv : proto.external_data()) {
    StringRef key = kv.key(), value = kv.value();
    if (key == "location") {
      ref.location = value.str();
    } else if (key == "offset" || key == "length") {
      uint64_t v;
      if (value.getAsInteger(10, v)) {
        error = "has external_data " + key.str() + " '" + value.str() +
                "', which is not a non-negative integer";
        return failure();
      }
      if (key == "offset")
        ref.offset = v;
      else
        length = v;
    }
  }
  if (ref.location.empty()) {
    error = "stores its data externally but names no location";
    return failure();
  }
  SmallString<256> full;
  if (llvm::sys::path::is_absolute(ref.location)) {
    full = ref.location;
  } else {
    full = baseDir;
    llvm::sys::path::append(full, ref.location);
  }
  ref.fullPath = std::string(full);
  if (length && *length < bytes) {
    error = "has external_data length " + std::to_string(*length) +
            ", less than the " + std::to_string(bytes) +
            " bytes its dims and dtype need (file '" + ref.location + "')";
    return failure();
  }
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(ref.fullPath, status) ||
      !llvm::sys::fs::exists(status)) {
    error = "stores its data in external file '" + ref.location +
            "', which does not exist (looked for '" + ref.fullPath + "')";
    return failure();
  }
  if (!llvm::sys::fs::is_regular_file(status)) {
    error = "stores its data in external file '" + ref.location +
            "', which is not a regular file";
    return failure();
  }
  uint64_t fileSize = status.getSize();
  if (ref.offset > fileSize || fileSize - ref.offset < bytes) {
    error = "needs " + std::to_string(bytes) + " bytes at offset " +
            std::to_string(ref.offset) + " of external file '" +
            ref.location + "', which has only " + std::to_string(fileSize) +
            " bytes";
    return failure();
  }
  return ref;
}

FailureOr<HostTensor> onnx_import::decodeTensorProto(const TensorProto &proto,
                                                     StringRef baseDir,
                                                     std::string &error) {
  HostTensor t;
  t.dtype = proto.data_type();
  if (!dtypeSize(t.dtype)) {
    error = "has dtype " + dtypeName(t.dtype).str() +
            ", which Loom does not support";
    return failure();
  }
  t.shape.assign(proto.dims().begin(), proto.dims().end());
  if (proto.dims_size() > kMaxRank) {
    error = "has too many dims";
    return failure();
  }
  int64_t n = checkedNumElements(t.shape);
  if (n < 0) {
    error = "has invalid dims (negative, or too many elements)";
    return failure();
  }
  int64_t esize = dtypeSize(t.dtype);
  uint64_t bytes = uint64_t(n) * uint64_t(esize);

  if (proto.data_location() == TensorProto::EXTERNAL) {
    if (n > kMaxFoldElements) {
      error = "is too large to read at import time";
      return failure();
    }
    FailureOr<ExternalDataRef> ref =
        resolveExternalData(proto, baseDir, bytes, error);
    if (failed(ref))
      return failure();
    t.allocate();
    if (bytes == 0)
      return t;
    auto buf = llvm::MemoryBuffer::getFileSlice(ref->fullPath, bytes,
                                                ref->offset);
    if (!buf || (*buf)->getBufferSize() != bytes) {
      error = "could not read " + std::to_string(bytes) +
              " bytes from external file '" + ref->location + "'";
      return failure();
    }
    decodeRaw(t, (*buf)->getBufferStart());
    return t;
  }

  auto sizeMismatch = [&](StringRef field, int64_t have) {
    error = "has " + std::to_string(have) + " " + field.str() +
            " entries but its dims " + "need " + std::to_string(n);
    return failure();
  };

  if (proto.has_raw_data()) {
    const std::string &raw = proto.raw_data();
    if (uint64_t(raw.size()) != bytes) {
      error = "has " + std::to_string(raw.size()) +
              " bytes of raw_data but its dims and dtype need " +
              std::to_string(bytes);
      return failure();
    }
    t.allocate();
    decodeRaw(t, raw.data());
    return t;
  }

  switch (t.dtype) {
  case TensorProto::FLOAT:
    if (proto.float_data_size() != n)
      return sizeMismatch("float_data", proto.float_data_size());
    t.allocate();
    for (int64_t i = 0; i < n; ++i)
      t.floats[i] = proto.float_data(i);
    return t;
  case TensorProto::DOUBLE:
    if (proto.double_data_size() != n)
      return sizeMismatch("double_data", proto.double_data_size());
    t.allocate();
    for (int64_t i = 0; i < n; ++i)
      t.floats[i] = proto.double_data(i);
    return t;
  case TensorProto::INT64:
    if (proto.int64_data_size() != n)
      return sizeMismatch("int64_data", proto.int64_data_size());
    t.allocate();
    for (int64_t i = 0; i < n; ++i)
      t.ints[i] = proto.int64_data(i);
    return t;
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    if (proto.uint64_data_size() != n)
      return sizeMismatch("uint64_data", proto.uint64_data_size());
    t.allocate();
    for (int64_t i = 0; i < n; ++i)
      t.ints[i] = wrapInt(int64_t(proto.uint64_data(i)), t.dtype);
    return t;
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16: {
    if (proto.int32_data_size() != n)
      return sizeMismatch("int32_data", proto.int32_data_size());
    t.allocate();
    for (int64_t i = 0; i < n; ++i) {
      char le[2];
      llvm::support::endian::write16le(le, uint16_t(proto.int32_data(i)));
      readRawElement(t, i, le);
    }
    return t;
  }
  default: // the int32_data dtypes
    if (proto.int32_data_size() != n)
      return sizeMismatch("int32_data", proto.int32_data_size());
    t.allocate();
    for (int64_t i = 0; i < n; ++i)
      t.ints[i] = wrapInt(proto.int32_data(i), t.dtype);
    return t;
  }
}
