//===- Formats.cpp - .npy and ONNX TensorProto (.pb) readers/writers ------===//
//
// Tensor files for loom-run's inputs and outputs. .npy: format versions
// 1.0/2.0/3.0, little-endian, C order (Fortran order and big-endian data are
// rejected with a clear message). .pb: one ONNX TensorProto, parsed straight
// from the protobuf wire format (no libprotobuf) - dims, data_type, name and
// the data either as raw_data or as the typed repeated fields (packed or
// not). Writers always emit raw little-endian data and are atomic.
// loomrt_file_info describes a file without reading its data, so callers
// can pread only the shard they need when the data is stored raw.
//
//===----------------------------------------------------------------------===//
#include "Internal.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sys/stat.h>

using namespace loom::runtime;

namespace {

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

struct FileCloser {
  void operator()(FILE *f) const {
    if (f)
      fclose(f);
  }
};
using File = std::unique_ptr<FILE, FileCloser>;

loomrt_status openFile(const char *path, File &f) {
  f.reset(fopen(path, "rb"));
  if (!f)
    return fail(LOOMRT_ERR_IO,
                format("cannot open '%s': %s", path, strerror(errno)));
  struct stat st;
  if (fstat(fileno(f.get()), &st) == 0 && S_ISDIR(st.st_mode))
    return fail(LOOMRT_ERR_IO,
                format("cannot read '%s': is a directory", path));
  return ok();
}

int64_t fileSize(FILE *f) {
  struct stat st;
  if (fstat(fileno(f), &st) != 0)
    return -1;
  return (int64_t)st.st_size;
}

bool endsWith(const std::string &s, const char *suffix) {
  size_t n = strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

struct NpyHeader {
  int32_t dtype = -1;
  std::vector<int64_t> shape;
  int64_t dataOffset = 0;
};

struct NpyDescr {
  const char *code; // without byte-order char
  int32_t dtype;
};
const NpyDescr npyDescrs[] = {
    {"f4", LOOMRT_FLOAT32}, {"f8", LOOMRT_FLOAT64}, {"f2", LOOMRT_FLOAT16},
    {"i1", LOOMRT_INT8},    {"i2", LOOMRT_INT16},   {"i4", LOOMRT_INT32},
    {"i8", LOOMRT_INT64},   {"u1", LOOMRT_UINT8},   {"u2", LOOMRT_UINT16},
    {"u4", LOOMRT_UINT32},  {"u8", LOOMRT_UINT64},  {"b1", LOOMRT_BOOL}};

std::string npyDescrFor(int32_t dtype) {
  if (dtype == LOOMRT_BFLOAT16)
    dtype = LOOMRT_UINT16; // raw bits; numpy has no bfloat16
  for (const NpyDescr &d : npyDescrs)
    if (d.dtype == dtype)
      return std::string(loomrt_dtype_size(dtype) == 1 ? "|" : "<") + d.code;
  return "";
}

void skipSpaces(const std::string &s, size_t &i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n'))
    ++i;
}

// Finds the value after 'key': in a header dict; returns npos if absent.
size_t npyValue(const std::string &h, const char *key) {
  for (char q : {'\'', '"'}) {
    std::string k = std::string(1, q) + key + q;
    size_t p = h.find(k);
    if (p == std::string::npos)
      continue;
    p += k.size();
    skipSpaces(h, p);
    if (p >= h.size() || h[p] != ':')
      return std::string::npos;
    ++p;
    skipSpaces(h, p);
    return p;
  }
  return std::string::npos;
}

loomrt_status readNpyHeader(const char *path, FILE *f, NpyHeader &out) {
  unsigned char pre[10];
  auto bad = [&](const std::string &why) {
    return fail(LOOMRT_ERR_FORMAT,
                format("'%s' is not a valid .npy file: %s", path, why.c_str()));
  };
  if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0)
    return bad("missing the \\x93NUMPY magic");
  int major = pre[6];
  uint64_t hlen = 0;
  int64_t prefix = 0;
  if (major == 1) {
    if (fread(pre + 8, 1, 2, f) != 2)
      return bad("truncated header");
    hlen = pre[8] | (pre[9] << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    unsigned char l[4];
    if (fread(l, 1, 4, f) != 4)
      return bad("truncated header");
    hlen = (uint64_t)l[0] | ((uint64_t)l[1] << 8) | ((uint64_t)l[2] << 16) |
           ((uint64_t)l[3] << 24);
    prefix = 12;
  } else {
    return bad(format("unsupported format version %d.%d", major, pre[7]));
  }
  if (hlen > (1u << 24))
    return bad("header too large");
  std::string h(hlen, '\0');
  if (hlen && fread(&h[0], 1, hlen, f) != hlen)
    return bad("truncated header");

  size_t p = npyValue(h, "descr");
  if (p == std::string::npos || (h[p] != '\'' && h[p] != '"'))
    return bad("header has no 'descr'");
  size_t e = h.find(h[p], p + 1);
  if (e == std::string::npos)
    return bad("unterminated 'descr'");
  std::string descr = h.substr(p + 1, e - p - 1);
  if (descr.size() != 3)
    return fail(LOOMRT_ERR_FORMAT, format("'%s': unsupported .npy dtype '%s'",
                                          path, descr.c_str()));
  char order = descr[0];
  std::string code = descr.substr(1);
  out.dtype = -1;
  for (const NpyDescr &d : npyDescrs)
    if (code == d.code)
      out.dtype = d.dtype;
  if (out.dtype < 0 ||
      (order != '<' && order != '>' && order != '|' && order != '='))
    return fail(LOOMRT_ERR_FORMAT, format("'%s': unsupported .npy dtype '%s'",
                                          path, descr.c_str()));
  if (order == '>' && loomrt_dtype_size(out.dtype) > 1)
    return fail(LOOMRT_ERR_FORMAT,
                format("'%s': big-endian .npy data ('%s') is not supported; "
                       "save it little-endian (e.g. a.astype('<%s'))",
                       path, descr.c_str(), code.c_str()));

  p = npyValue(h, "fortran_order");
  if (p == std::string::npos)
    return bad("header has no 'fortran_order'");
  if (h.compare(p, 4, "True") == 0)
    return fail(LOOMRT_ERR_FORMAT,
                format("'%s': Fortran-order .npy arrays are not supported; "
                       "save a C-contiguous array (np.ascontiguousarray)",
                       path));
  if (h.compare(p, 5, "False") != 0)
    return bad("bad 'fortran_order' value");

  p = npyValue(h, "shape");
  if (p == std::string::npos || h[p] != '(')
    return bad("header has no 'shape' tuple");
  ++p;
  out.shape.clear();
  for (;;) {
    skipSpaces(h, p);
    if (p >= h.size())
      return bad("unterminated 'shape'");
    if (h[p] == ')')
      break;
    if (h[p] == ',') {
      ++p;
      continue;
    }
    if (h[p] < '0' || h[p] > '9')
      return bad("bad 'shape' entry");
    int64_t v = 0;
    while (p < h.size() && h[p] >= '0' && h[p] <= '9') {
      if (v > (INT64_MAX - 9) / 10)
        return bad("'shape' entry too large");
      v = v * 10 + (h[p++] - '0');
    }
    if (p < h.size() && h[p] == 'L')
      ++p;
    out.shape.push_back(v);
  }
  if (out.shape.size() > LOOMRT_MAX_RANK)
    return bad("too many dimensions");
  if (numel(out.shape) < 0)
    return bad("shape too large");
  out.dataOffset = prefix + (int64_t)hlen;
  return ok();
}

loomrt_status readData(const char *path, FILE *f, int64_t offset,
                       loomrt_tensor *t) {
  int64_t size = fileSize(f);
  if (size < offset + t->nbytes)
    return fail(LOOMRT_ERR_FORMAT,
                format("'%s' is too short: expected %lld data bytes at "
                       "offset %lld, the file has %lld bytes",
                       path, (long long)t->nbytes, (long long)offset,
                       (long long)size));
  if (fseeko(f, offset, SEEK_SET) != 0 ||
      (t->nbytes &&
       fread(t->data, 1, (size_t)t->nbytes, f) != (size_t)t->nbytes))
    return fail(LOOMRT_ERR_IO,
                format("cannot read '%s': %s", path, strerror(errno)));
  return ok();
}

loomrt_status npyRead(const char *path, loomrt_tensor **out) {
  *out = nullptr;
  File f;
  if (loomrt_status s = openFile(path, f))
    return s;
  NpyHeader h;
  if (loomrt_status s = readNpyHeader(path, f.get(), h))
    return s;
  loomrt_tensor *t = nullptr;
  if (loomrt_status s = makeTensor(h.dtype, h.shape, &t))
    return s;
  if (loomrt_status s = readData(path, f.get(), h.dataOffset, t)) {
    loomrt_tensor_destroy(t);
    return s;
  }
  *out = t;
  return ok();
}

loomrt_status npyWrite(const char *path, const loomrt_tensor *t) {
  std::string descr = npyDescrFor(t->dtype);
  if (descr.empty())
    return fail(LOOMRT_ERR_INVALID,
                format("cannot write dtype %d to .npy", t->dtype));
  std::string shape = "(";
  for (size_t i = 0; i < t->shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(t->shape[i]);
  if (t->shape.size() == 1)
    shape += ","; // a 1-tuple: "(5,)"
  shape += ")";
  std::string dict = "{'descr': '" + descr +
                     "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so that the data starts on a 64-byte boundary.
  bool v2 = dict.size() + 11 > 65535;
  size_t prefix = v2 ? 12 : 10;
  size_t total = prefix + dict.size() + 1;
  size_t pad = (64 - total % 64) % 64;
  dict.append(pad, ' ');
  dict += '\n';
  std::string head = std::string("\x93NUMPY", 6);
  head += (char)(v2 ? 2 : 1);
  head += (char)0;
  uint32_t len = (uint32_t)dict.size();
  head += (char)(len & 0xff);
  head += (char)((len >> 8) & 0xff);
  if (v2) {
    head += (char)((len >> 16) & 0xff);
    head += (char)((len >> 24) & 0xff);
  }
  head += dict;
  return writeFileAtomic(path, {head.data(), t->data},
                         {head.size(), (size_t)t->nbytes});
}

//===----------------------------------------------------------------------===//
// ONNX TensorProto
//===----------------------------------------------------------------------===//

struct OnnxType {
  int onnx;
  int32_t dtype;
};
const OnnxType onnxTypes[] = {
    {1, LOOMRT_FLOAT32},  {2, LOOMRT_UINT8},   {3, LOOMRT_INT8},
    {4, LOOMRT_UINT16},   {5, LOOMRT_INT16},   {6, LOOMRT_INT32},
    {7, LOOMRT_INT64},    {9, LOOMRT_BOOL},    {10, LOOMRT_FLOAT16},
    {11, LOOMRT_FLOAT64}, {12, LOOMRT_UINT32}, {13, LOOMRT_UINT64},
    {16, LOOMRT_BFLOAT16}};

int32_t fromOnnx(int64_t t) {
  for (const OnnxType &o : onnxTypes)
    if (o.onnx == t)
      return o.dtype;
  return -1;
}

int toOnnx(int32_t dtype) {
  for (const OnnxType &o : onnxTypes)
    if (o.dtype == dtype)
      return o.onnx;
  return 0;
}

// Sequential reader over a FILE* that can skip payloads without reading.
struct PbReader {
  FILE *f;
  int64_t pos = 0, size = 0;
  bool byte(uint8_t &b) {
    int c = fgetc(f);
    if (c == EOF)
      return false;
    b = (uint8_t)c;
    ++pos;
    return true;
  }
  bool varint(uint64_t &v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!byte(b))
        return false;
      v |= (uint64_t)(b & 0x7f) << shift;
      if (!(b & 0x80))
        return true;
    }
    return false;
  }
  bool bytes(void *dst, uint64_t n) {
    if ((int64_t)n > size - pos)
      return false;
    if (n && fread(dst, 1, n, f) != n)
      return false;
    pos += (int64_t)n;
    return true;
  }
  bool skip(uint64_t n) {
    if ((int64_t)n > size - pos || fseeko(f, (off_t)n, SEEK_CUR) != 0)
      return false;
    pos += (int64_t)n;
    return true;
  }
};

struct PbTensor {
  std::vector<int64_t> dims;
  int64_t dataType = 0;
  std::string name;
  int64_t rawOffset = -1, rawSize = 0;
  bool external = false;
  bool typed = false;
  // Typed payloads (only when reading data).
  std::vector<float> floats;
  std::vector<double> doubles;
  std::vector<uint64_t> ints; // int32/int64/uint64 fields as raw 64 bits
  std::vector<char> raw;
};

// Reads repeated scalar field values: packed (wire type 2) or one element.
template <typename Fn>
bool readRepeated(PbReader &r, int wire, int elemWire, Fn push) {
  auto one = [&](int w) {
    if (w == 0) {
      uint64_t v;
      if (!r.varint(v))
        return false;
      push(v);
    } else if (w == 5) {
      uint32_t v;
      unsigned char b[4];
      if (!r.bytes(b, 4))
        return false;
      v = b[0] | (b[1] << 8) | (b[2] << 16) | ((uint32_t)b[3] << 24);
      push((uint64_t)v);
    } else if (w == 1) {
      unsigned char b[8];
      if (!r.bytes(b, 8))
        return false;
      uint64_t v = 0;
      for (int i = 7; i >= 0; --i)
        v = (v << 8) | b[i];
      push(v);
    } else {
      return false;
    }
    return true;
  };
  if (wire != 2)
    return wire == elemWire && one(wire);
  uint64_t len;
  if (!r.varint(len) || (int64_t)len > r.size - r.pos)
    return false;
  int64_t end = r.pos + (int64_t)len;
  while (r.pos < end)
    if (!one(elemWire))
      return false;
  return r.pos == end;
}

loomrt_status parsePb(const char *path, FILE *f, bool wantData, PbTensor &t) {
  PbReader r{f};
  r.size = fileSize(f);
  auto bad = [&](const char *why) {
    return fail(LOOMRT_ERR_FORMAT,
                format("'%s' is not a valid ONNX TensorProto: %s (at byte "
                       "%lld)",
                       path, why, (long long)r.pos));
  };
  while (r.pos < r.size) {
    uint64_t key;
    if (!r.varint(key))
      return bad("truncated field key");
    int field = (int)(key >> 3), wire = (int)(key & 7);
    bool okField = true;
    switch (field) {
    case 1: // dims
      okField = readRepeated(r, wire, 0,
                             [&](uint64_t v) { t.dims.push_back((int64_t)v); });
      break;
    case 2: { // data_type
      uint64_t v = 0;
      okField = wire == 0 && r.varint(v);
      t.dataType = (int64_t)v;
      break;
    }
    case 4: // float_data
      t.typed = true;
      if (!wantData)
        goto skipField;
      okField = readRepeated(r, wire, 5, [&](uint64_t v) {
        uint32_t u = (uint32_t)v;
        float x;
        memcpy(&x, &u, 4);
        t.floats.push_back(x);
      });
      break;
    case 5:  // int32_data
    case 7:  // int64_data
    case 11: // uint64_data
      t.typed = true;
      if (!wantData)
        goto skipField;
      okField =
          readRepeated(r, wire, 0, [&](uint64_t v) { t.ints.push_back(v); });
      break;
    case 10: // double_data
      t.typed = true;
      if (!wantData)
        goto skipField;
      okField = readRepeated(r, wire, 1, [&](uint64_t v) {
        double x;
        memcpy(&x, &v, 8);
        t.doubles.push_back(x);
      });
      break;
    case 6: // string_data
      return fail(LOOMRT_ERR_FORMAT,
                  format("'%s': string tensors are not supported", path));
    case 8: { // name
      uint64_t len;
      if (wire != 2 || !r.varint(len) || (int64_t)len > r.size - r.pos)
        return bad("bad name field");
      t.name.resize(len);
      okField = r.bytes(&t.name[0], len);
      break;
    }
    case 9: { // raw_data
      uint64_t len;
      if (wire != 2 || !r.varint(len) || (int64_t)len > r.size - r.pos)
        return bad("bad raw_data field");
      t.rawOffset = r.pos;
      t.rawSize = (int64_t)len;
      if (wantData) {
        t.raw.resize(len);
        okField = r.bytes(t.raw.data(), len);
      } else {
        okField = r.skip(len);
      }
      break;
    }
    case 14: { // data_location
      uint64_t v = 0;
      okField = wire == 0 && r.varint(v);
      t.external = v == 1;
      break;
    }
    default:
    skipField:
      switch (wire) {
      case 0: {
        uint64_t v;
        okField = r.varint(v);
        break;
      }
      case 1:
        okField = r.skip(8);
        break;
      case 5:
        okField = r.skip(4);
        break;
      case 2: {
        uint64_t len;
        okField = r.varint(len) && r.skip(len);
        break;
      }
      default:
        okField = false;
      }
    }
    if (!okField)
      return bad(format("bad or truncated field %d", field).c_str());
  }
  if (t.external)
    return fail(
        LOOMRT_ERR_FORMAT,
        format("'%s': tensors with external data are not supported", path));
  if (fromOnnx(t.dataType) < 0)
    return fail(LOOMRT_ERR_FORMAT,
                format("'%s': unsupported ONNX data_type %lld", path,
                       (long long)t.dataType));
  for (int64_t d : t.dims)
    if (d < 0)
      return bad("negative dimension");
  if (t.dims.size() > LOOMRT_MAX_RANK || numel(t.dims) < 0)
    return bad("bad dims");
  return ok();
}

loomrt_status pbRead(const char *path, loomrt_tensor **out, std::string &name) {
  *out = nullptr;
  File f;
  if (loomrt_status s = openFile(path, f))
    return s;
  PbTensor p;
  if (loomrt_status s = parsePb(path, f.get(), true, p))
    return s;
  name = p.name;
  loomrt_tensor *t = nullptr;
  int32_t dtype = fromOnnx(p.dataType);
  if (loomrt_status s = makeTensor(dtype, p.dims, &t))
    return s;
  std::unique_ptr<loomrt_tensor, void (*)(loomrt_tensor *)> guard(
      t, loomrt_tensor_destroy);
  int64_t n = numel(p.dims);
  int64_t esize = loomrt_dtype_size(dtype);
  if (p.rawOffset >= 0) {
    if (p.rawSize != t->nbytes)
      return fail(LOOMRT_ERR_FORMAT,
                  format("'%s': raw_data has %lld bytes but dims %s of %s "
                         "need %lld",
                         path, (long long)p.rawSize,
                         shapeString(p.dims.data(), p.dims.size()).c_str(),
                         loomrt_dtype_name(dtype), (long long)t->nbytes));
    if (t->nbytes)
      memcpy(t->data, p.raw.data(), t->nbytes);
  } else {
    int64_t have = 0;
    char *d = static_cast<char *>(t->data);
    switch (dtype) {
    case LOOMRT_FLOAT32:
      have = p.floats.size();
      if (have == n && n)
        memcpy(d, p.floats.data(), n * 4);
      break;
    case LOOMRT_FLOAT64:
      have = p.doubles.size();
      if (have == n && n)
        memcpy(d, p.doubles.data(), n * 8);
      break;
    default:
      have = p.ints.size();
      if (have == n)
        for (int64_t i = 0; i < n; ++i) {
          uint64_t v = p.ints[i];
          if (dtype == LOOMRT_BOOL)
            v = v != 0;
          memcpy(d + i * esize, &v, esize); // little-endian truncation
        }
    }
    if (have != n)
      return fail(LOOMRT_ERR_FORMAT,
                  format("'%s': tensor has %lld data elements but dims %s "
                         "need %lld",
                         path, (long long)have,
                         shapeString(p.dims.data(), p.dims.size()).c_str(),
                         (long long)n));
  }
  *out = guard.release();
  return ok();
}

void putVarint(std::string &s, uint64_t v) {
  while (v >= 0x80) {
    s += (char)(v | 0x80);
    v >>= 7;
  }
  s += (char)v;
}

loomrt_status pbWrite(const char *path, const loomrt_tensor *t,
                      const char *name) {
  int onnx = toOnnx(t->dtype);
  if (!onnx)
    return fail(LOOMRT_ERR_INVALID,
                format("cannot write dtype %d to .pb", t->dtype));
  std::string head;
  for (int64_t d : t->shape) {
    putVarint(head, (1 << 3) | 0);
    putVarint(head, (uint64_t)d);
  }
  putVarint(head, (2 << 3) | 0);
  putVarint(head, (uint64_t)onnx);
  if (name && *name) {
    putVarint(head, (8 << 3) | 2);
    putVarint(head, strlen(name));
    head += name;
  }
  putVarint(head, (9 << 3) | 2);
  putVarint(head, (uint64_t)t->nbytes);
  return writeFileAtomic(path, {head.data(), t->data},
                         {head.size(), (size_t)t->nbytes});
}

} // namespace

extern "C" {

int loomrt_file_format(const char *path) {
  std::string p = path ? path : "";
  if (endsWith(p, ".npy"))
    return 0;
  if (endsWith(p, ".pb"))
    return 1;
  return -1;
}

loomrt_status loomrt_npy_read(const char *path,
                              loomrt_tensor **out){LOOMRT_GUARD({
  if (!path || !out)
    return fail(LOOMRT_ERR_INVALID, "null argument");
  return npyRead(path, out);
})}

loomrt_status
    loomrt_npy_write(const char *path, const loomrt_tensor *t){LOOMRT_GUARD({
      if (!path || !t)
        return fail(LOOMRT_ERR_INVALID, "null argument");
      return npyWrite(path, t);
    })}

loomrt_status loomrt_pb_read(const char *path, loomrt_tensor **out,
                             char *name_out, size_t name_cap){LOOMRT_GUARD({
  if (!path || !out)
    return fail(LOOMRT_ERR_INVALID, "null argument");
  std::string name;
  loomrt_status s = pbRead(path, out, name);
  if (s == LOOMRT_OK && name_out && name_cap) {
    size_t n = std::min(name.size(), name_cap - 1);
    memcpy(name_out, name.data(), n);
    name_out[n] = '\0';
  }
  return s;
})}

loomrt_status loomrt_pb_write(const char *path, const loomrt_tensor *t,
                              const char *name){LOOMRT_GUARD({
  if (!path || !t)
    return fail(LOOMRT_ERR_INVALID, "null argument");
  return pbWrite(path, t, name);
})}

loomrt_status loomrt_tensor_read(const char *path, loomrt_tensor **out) {
  switch (loomrt_file_format(path)) {
  case 0:
    return loomrt_npy_read(path, out);
  case 1:
    return loomrt_pb_read(path, out, nullptr, 0);
  default:
    if (out)
      *out = nullptr;
    return fail(LOOMRT_ERR_INVALID,
                format("'%s': unknown tensor file format (expected .npy or "
                       ".pb)",
                       path ? path : ""));
  }
}

loomrt_status loomrt_tensor_write(const char *path, const loomrt_tensor *t,
                                  const char *name) {
  switch (loomrt_file_format(path)) {
  case 0:
    return loomrt_npy_write(path, t);
  case 1:
    return loomrt_pb_write(path, t, name);
  default:
    return fail(LOOMRT_ERR_INVALID,
                format("'%s': unknown tensor file format (expected .npy or "
                       ".pb)",
                       path ? path : ""));
  }
}

loomrt_status loomrt_file_info(const char *path, int32_t *dtype, int64_t *rank,
                               int64_t *shape, int64_t *data_offset) {
  LOOMRT_GUARD({
    if (!path || !dtype || !rank || !shape || !data_offset)
      return fail(LOOMRT_ERR_INVALID, "null argument");
    File f;
    int fmt = loomrt_file_format(path);
    if (fmt < 0)
      return fail(LOOMRT_ERR_INVALID,
                  format("'%s': unknown tensor file format (expected .npy or "
                         ".pb)",
                         path));
    if (loomrt_status s = openFile(path, f))
      return s;
    std::vector<int64_t> dims;
    if (fmt == 0) {
      NpyHeader h;
      if (loomrt_status s = readNpyHeader(path, f.get(), h))
        return s;
      *dtype = h.dtype;
      dims = h.shape;
      *data_offset = h.dataOffset;
    } else {
      PbTensor p;
      if (loomrt_status s = parsePb(path, f.get(), false, p))
        return s;
      *dtype = fromOnnx(p.dataType);
      dims = p.dims;
      *data_offset = p.rawOffset >= 0 && !p.typed ? p.rawOffset : -1;
      if (p.rawOffset >= 0) {
        int64_t need = numel(dims) * loomrt_dtype_size(*dtype);
        if (p.rawSize != need)
          return fail(LOOMRT_ERR_FORMAT,
                      format("'%s': raw_data has %lld bytes but dims %s "
                             "need %lld",
                             path, (long long)p.rawSize,
                             shapeString(dims.data(), dims.size()).c_str(),
                             (long long)need));
      }
    }
    *rank = (int64_t)dims.size();
    for (size_t i = 0; i < dims.size(); ++i)
      shape[i] = dims[i];
    return ok();
  })
}

} // extern "C"
