//===- TraceImporter.cpp - loom-trace JSON to the loom dialect ------------===//
//
// Reads a loom-trace document (docs/trace-format.md, written by
// tools/export/trace_export.py) and builds `func.func @main` of loom ops:
// inputs become arguments (named by `loom.name`), parameters and large
// constants become `loom.weight` references (their storage is checked with a
// stat, never read), small constants are read into `loom.constant`, and every
// node is converted by the table in getConvertTable() and checked against
// the shapes and dtypes the trace declares.
//
// The JSON is parsed without exceptions and every value is type-checked before
// it is read, so malformed documents (truncated, wrong types, unknown ops,
// dangling or cyclic references, ...) become diagnostics naming the file and
// the node. The library is also compiled with -fexceptions and the entry points
// catch everything, so a missed check is an "internal error", not an abort.
//
//===----------------------------------------------------------------------===//

#include "TraceImporter.h"

#include "dialects/Loom/IR/LoomDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringExtras.h"
#include "lib/Translate/NearestNames.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::loom;
using namespace mlir::loom::trace_import;

static constexpr llvm::StringLiteral kFormat = "loom-trace";
static constexpr int64_t kVersion = 1;

//===----------------------------------------------------------------------===//
// The conversion table
//===----------------------------------------------------------------------===//

const ConvertTable &trace_import::getConvertTable() {
  static const ConvertTable table = [] {
    ConvertTable t;
    addContractionConversions(t);
    addElementwiseConversions(t);
    addShapeConversions(t);
    addNormPoolConversions(t);
    return t;
  }();
  return table;
}

/// Results each op produces (all ops but topk produce one).
static unsigned numResultsOf(llvm::StringRef op) {
  return op == "topk" ? 2 : 1;
}

/// Up to three names of `candidates` nearest to `name` by edit distance, as
/// "'a', 'b' or 'c'"; only those within `maxDistance` when it is non-zero.
template <typename Range>
static std::string quotedNearestNames(llvm::StringRef name,
                                      const Range &candidates,
                                      unsigned maxDistance) {
  llvm::SmallVector<llvm::StringRef> near =
      nearestNames(name, candidates, 3, maxDistance);
  std::string out;
  for (size_t i = 0; i < near.size(); ++i) {
    if (i > 0)
      out += i + 1 == near.size() ? " or " : ", ";
    out += "'" + near[i].str() + "'";
  }
  return out;
}

/// Byte offsets of the elements of the top-level arrays named in `keys`, in a
/// text already known to be valid JSON (a minimal scanner: strings, nesting).
static llvm::StringMap<std::vector<size_t>>
entryOffsets(llvm::StringRef text, llvm::ArrayRef<llvm::StringRef> keys) {
  llvm::StringMap<std::vector<size_t>> out;
  std::vector<size_t> *collecting = nullptr;
  bool expectElement = false;
  int depth = 0;
  llvm::StringRef key; // the last key read at depth 1
  for (size_t i = 0, n = text.size(); i < n; ++i) {
    char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
      continue;
    if (collecting && expectElement && depth == 2 && c != ']') {
      collecting->push_back(i);
      expectElement = false;
    }
    switch (c) {
    case '"': {
      size_t start = ++i;
      while (i < n && text[i] != '"')
        i += text[i] == '\\' ? 2 : 1;
      if (depth == 1)
        key = text.slice(start, std::min(i, n));
      break;
    }
    case '[':
    case '{':
      ++depth;
      if (c == '[' && depth == 2 && llvm::is_contained(keys, key)) {
        collecting = &out[key];
        expectElement = true;
      }
      break;
    case ']':
    case '}':
      if (depth == 2)
        collecting = nullptr;
      --depth;
      break;
    case ',':
      if (depth == 2 && collecting)
        expectElement = true;
      break;
    default:
      break;
    }
  }
  return out;
}

namespace {

/// Where a stored tensor's bytes are.
struct Storage {
  std::string file;     // as written in the document
  std::string resolved; // relative to the document's directory
  int64_t offset = 0;
  int64_t nbytes = 0;
};

/// Records why a JSON text failed to parse (SAX consumer used only then).
struct ParseErrorSax : nlohmann::json_sax<Json> {
  size_t byte = 0;
  std::string message;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t &) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string &,
                   const nlohmann::detail::exception &ex) override {
    byte = position;
    message = ex.what();
    return false;
  }
};

class Importer {
public:
  Importer(MLIRContext *ctx, llvm::StringRef text, llvm::StringRef path,
           const ImportOptions &options)
      : ctx(ctx), text(text), path(path.str()), options(options), builder(ctx),
        fileLoc(FileLineColLoc::get(ctx, path, 0, 0)) {
    if (path != "<stdin>" && path != "-")
      baseDir = llvm::sys::path::parent_path(path).str();
  }

  OwningOpRef<ModuleOp> run();

private:
  LogicalResult fileError(const llvm::Twine &msg) {
    mlir::emitError(fileLoc) << msg;
    return failure();
  }
  LogicalResult errorAt(Location loc, const llvm::Twine &msg) {
    mlir::emitError(loc) << msg;
    return failure();
  }
  /// `name` at the line of entry `index` of top-level array `section`.
  Location entryLoc(llvm::StringRef section, size_t index,
                    llvm::StringRef name);

  LogicalResult parseDocument();
  const Json *member(const Json &object, llvm::StringRef key);
  FailureOr<const Json *> arrayMember(const Json &object, llvm::StringRef key,
                                      bool required, const llvm::Twine &where);
  FailureOr<TensorDecl> readTensorDecl(const Json &e, const llvm::Twine &where,
                                       llvm::StringRef section, size_t index);
  FailureOr<Storage> readStorage(const Json &e, const TensorDecl &decl,
                                 llvm::StringRef kind);
  FailureOr<DenseElementsAttr> readInline(const TensorDecl &decl,
                                          const Storage &storage);
  LogicalResult define(llvm::StringRef name, Value v, Location loc);

  LogicalResult importInputs(func::FuncOp &func);
  LogicalResult importStored(const Json &entries, bool isParameter);
  void collectNodeOutputs(const Json &nodes);
  LogicalResult importNode(const Json &node, size_t index);
  FailureOr<Operand> readOperand(const Json &e, unsigned i,
                                 llvm::StringRef node, Location loc);
  LogicalResult importOutputs(func::FuncOp func);

  MLIRContext *ctx;
  llvm::StringRef text;
  std::string path, baseDir;
  const ImportOptions &options;
  OpBuilder builder;
  Location fileLoc;
  Json doc;
  /// Byte offsets of the entries of inputs/parameters/constants/nodes, and
  /// where each line starts (for line:column locations).
  llvm::StringMap<std::vector<size_t>> offsets;
  std::vector<size_t> lineStarts;

  /// Every tensor defined so far, by name.
  llvm::StringMap<Value> values;
  /// Names that some node defines, with that node's index (cycle detection).
  llvm::StringMap<size_t> nodeOutputs;
  llvm::StringSet<> nodeNames;
  llvm::DenseMap<Attribute, Value> constantCache;
  llvm::DenseMap<Value, Value> transposeCache;
  /// Sizes of the storage files seen so far.
  llvm::StringMap<uint64_t> fileSizes;
  /// An input was pinned to other dims than the trace recorded.
  bool repinned = false;
};

} // namespace

//===----------------------------------------------------------------------===//
// Document structure
//===----------------------------------------------------------------------===//

LogicalResult Importer::parseDocument() {
  doc = Json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                    /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    ParseErrorSax sax;
    Json::sax_parse(text.begin(), text.end(), &sax);
    // Positions count the bytes read, the failing one included (1-based).
    size_t byte = std::min(sax.byte, text.size() + 1);
    llvm::StringRef before = text.take_front(byte > 0 ? byte - 1 : 0);
    unsigned line = 1 + before.count('\n');
    size_t lastNewline = before.rfind('\n');
    unsigned col = 1 + (lastNewline == llvm::StringRef::npos
                            ? before.size()
                            : before.size() - lastNewline - 1);
    // "[json.exception.parse_error.101] parse error at line 1, column 5: X"
    // becomes "X": the location already says where.
    llvm::StringRef msg = sax.message;
    if (size_t p = msg.find("parse error"); p != llvm::StringRef::npos)
      msg = msg.drop_front(p);
    if (msg.starts_with("parse error at line "))
      if (size_t p = msg.find(": "); p != llvm::StringRef::npos)
        msg = msg.drop_front(p + 2);
    msg = msg.take_front(msg.find("; last read:")); // may quote a huge token
    mlir::emitError(FileLineColLoc::get(ctx, path, line, col))
        << "not a valid loom-trace JSON document: "
        << (msg.empty() ? llvm::StringRef("malformed JSON") : msg);
    return failure();
  }
  offsets = entryOffsets(text, {"inputs", "parameters", "constants", "nodes"});
  lineStarts.push_back(0);
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n')
      lineStarts.push_back(i + 1);
  if (!doc.is_object())
    return fileError(llvm::Twine("a loom-trace document is a JSON object, "
                                 "got ") +
                     doc.type_name());
  const Json *format = member(doc, "format");
  if (!format)
    return fileError("missing key 'format' (expected \"loom-trace\")");
  if (!format->is_string() || format->get_ref<const std::string &>() != kFormat)
    return fileError("'format' must be \"loom-trace\"; this is not a "
                     "loom-trace document");
  const Json *version = member(doc, "version");
  if (!version)
    return fileError("missing key 'version'");
  if (!version->is_number_integer())
    return fileError(llvm::Twine("'version' must be an integer, got ") +
                     version->type_name());
  if (version->is_number_unsigned()
          ? version->get<uint64_t>() != uint64_t(kVersion)
          : version->get<int64_t>() != kVersion) {
    std::string v = version->is_number_unsigned()
                        ? std::to_string(version->get<uint64_t>())
                        : std::to_string(version->get<int64_t>());
    return fileError("unsupported loom-trace version " + v +
                     " (this importer reads version " + llvm::Twine(kVersion) +
                     ")");
  }
  return success();
}

const Json *Importer::member(const Json &object, llvm::StringRef key) {
  auto it = object.find(std::string(key));
  return it == object.end() ? nullptr : &*it;
}

FailureOr<const Json *> Importer::arrayMember(const Json &object,
                                              llvm::StringRef key,
                                              bool required,
                                              const llvm::Twine &where) {
  const Json *j = member(object, key);
  if (!j) {
    if (required)
      return errorAt(fileLoc, where + "missing key '" + key + "'");
    return static_cast<const Json *>(nullptr);
  }
  if (!j->is_array())
    return errorAt(fileLoc, where + "'" + key + "' must be a list, got " +
                                j->type_name());
  return j;
}

Location Importer::entryLoc(llvm::StringRef section, size_t index,
                            llvm::StringRef name) {
  Location file = fileLoc;
  auto it = offsets.find(section);
  if (it != offsets.end() && index < it->second.size()) {
    size_t offset = it->second[index];
    auto next = std::upper_bound(lineStarts.begin(), lineStarts.end(), offset);
    size_t line = next - lineStarts.begin(); // 1-based
    size_t start = lineStarts[line - 1];
    size_t end = next == lineStarts.end() ? text.size() : *next;
    // Diagnostics quote the line: only point at lines short enough to read
    // (the exporter writes one entry per line).
    if (end - start <= 2000)
      file = FileLineColLoc::get(ctx, path, line, offset - start + 1);
  }
  if (name.empty())
    return file;
  return NameLoc::get(StringAttr::get(ctx, name), file);
}

FailureOr<TensorDecl> Importer::readTensorDecl(const Json &e,
                                               const llvm::Twine &where,
                                               llvm::StringRef section,
                                               size_t index) {
  if (!e.is_object())
    return errorAt(entryLoc(section, index, ""),
                   where + " must be an object, got " + e.type_name());
  const Json *name = member(e, "name");
  if (!name || !name->is_string() ||
      name->get_ref<const std::string &>().empty())
    return errorAt(entryLoc(section, index, ""),
                   where + " needs a non-empty string 'name'");
  TensorDecl decl;
  decl.name = name->get<std::string>();
  Location loc = entryLoc(section, index, decl.name);
  decl.loc = loc;
  std::string what = ("tensor '" + decl.name + "'");

  const Json *shape = member(e, "shape");
  if (!shape)
    return errorAt(loc, what + ": missing key 'shape'");
  if (!shape->is_array())
    return errorAt(loc, what + ": 'shape' must be a list of integers, got " +
                            shape->type_name());
  if (shape->size() > size_t(kMaxRank))
    return errorAt(loc, what + ": rank " + llvm::Twine(shape->size()) +
                            " exceeds the limit of " + llvm::Twine(kMaxRank));
  for (const Json &d : *shape) {
    if (d.is_number_integer() && !d.is_number_unsigned() &&
        d.get<int64_t>() < 0)
      return errorAt(loc, what + ": dim " + llvm::Twine(decl.shape.size()) +
                              " is " + llvm::Twine(d.get<int64_t>()) +
                              "; dims must be non-negative (shapes are "
                              "static)");
    if (!d.is_number_integer())
      return errorAt(loc, what + ": dim " + llvm::Twine(decl.shape.size()) +
                              " must be an integer, got " + d.type_name());
    if (d.get<uint64_t>() > uint64_t(kMaxDim))
      return errorAt(loc, what + ": dim " + llvm::Twine(decl.shape.size()) +
                              " is larger than the limit of " +
                              llvm::Twine(kMaxDim));
    decl.shape.push_back(int64_t(d.get<uint64_t>()));
  }
  if (!checkedNumElements(decl.shape))
    return errorAt(loc, what + ": shape " + shapeString(decl.shape) +
                            " has too many elements");

  const Json *dtype = member(e, "dtype");
  if (!dtype)
    return errorAt(loc, what + ": missing key 'dtype'");
  if (!dtype->is_string())
    return errorAt(loc, what + ": 'dtype' must be a string, got " +
                            dtype->type_name());
  decl.elem = parseDType(ctx, dtype->get_ref<const std::string &>());
  if (!decl.elem)
    return errorAt(loc, what + ": unknown dtype '" +
                            dtype->get_ref<const std::string &>() +
                            "' (expected f32, f16, bf16, f64, i64, i32, i8, "
                            "u8 or i1)");
  return decl;
}

LogicalResult Importer::define(llvm::StringRef name, Value v, Location loc) {
  if (name == "inf" || name == "-inf" || name == "nan")
    return errorAt(loc, "'" + name +
                            "' is reserved for a float scalar and cannot "
                            "name a tensor");
  if (!values.try_emplace(name, v).second)
    return errorAt(loc, "duplicate tensor name '" + name +
                            "': names must be unique among inputs, "
                            "parameters, constants and node outputs");
  return success();
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

LogicalResult Importer::importInputs(func::FuncOp &func) {
  FailureOr<const Json *> inputs = arrayMember(doc, "inputs", true, "");
  if (failed(inputs))
    return failure();
  SmallVector<TensorDecl> decls;
  llvm::StringSet<> inputNames;
  for (auto [i, e] : llvm::enumerate(**inputs)) {
    FailureOr<TensorDecl> decl =
        readTensorDecl(e, "inputs[" + llvm::Twine(i) + "]", "inputs", i);
    if (failed(decl))
      return failure();
    auto pinned = options.inputShapes.find(decl->name);
    if (pinned != options.inputShapes.end()) {
      llvm::ArrayRef<int64_t> shape = pinned->second;
      if (shape.size() != decl->shape.size())
        return errorAt(decl->loc, "--input-shape pins input '" + decl->name +
                                      "' to " + shapeString(shape) + " (rank " +
                                      llvm::Twine(shape.size()) +
                                      "), but the trace records rank " +
                                      llvm::Twine(decl->shape.size()) + " (" +
                                      shapeString(decl->shape) + ")");
      if (!checkedNumElements(shape))
        return errorAt(decl->loc, "--input-shape pins input '" + decl->name +
                                      "' to a shape with too many elements");
      if (shape != llvm::ArrayRef<int64_t>(decl->shape))
        repinned = true;
      decl->shape.assign(shape.begin(), shape.end());
    }
    inputNames.insert(decl->name);
    decls.push_back(std::move(*decl));
  }
  for (const auto &entry : options.inputShapes)
    if (!inputNames.contains(entry.getKey())) {
      std::vector<std::string> names;
      for (const TensorDecl &d : decls)
        names.push_back("'" + d.name + "'");
      return fileError("--input-shape names '" + entry.getKey() +
                       "', which is not an input of the trace (inputs: " +
                       llvm::join(names, ", ") + ")");
    }

  SmallVector<Type> argTypes;
  SmallVector<Location> argLocs;
  for (const TensorDecl &d : decls) {
    argTypes.push_back(d.type());
    argLocs.push_back(d.loc);
  }
  func = func::FuncOp::create(builder, fileLoc, "main",
                              builder.getFunctionType(argTypes, {}));
  Block *body = builder.createBlock(&func.getBody(), {}, argTypes, argLocs);
  for (auto [i, d] : llvm::enumerate(decls)) {
    func.setArgAttr(i, "loom.name", builder.getStringAttr(d.name));
    if (failed(define(d.name, body->getArgument(i), argLocs[i])))
      return failure();
  }
  builder.setInsertionPointToEnd(body);
  return success();
}

//===----------------------------------------------------------------------===//
// Parameters and constants
//===----------------------------------------------------------------------===//

FailureOr<Storage> Importer::readStorage(const Json &e, const TensorDecl &decl,
                                         llvm::StringRef kind) {
  Location loc = decl.loc;
  std::string what = (kind + " '" + decl.name + "'").str();
  const Json *st = member(e, "storage");
  if (!st)
    return errorAt(loc, what + ": missing key 'storage'");
  if (!st->is_object())
    return errorAt(loc, what + ": 'storage' must be an object, got " +
                            st->type_name());
  Storage s;
  const Json *file = member(*st, "file");
  if (!file || !file->is_string() ||
      file->get_ref<const std::string &>().empty())
    return errorAt(loc, what + ": 'storage.file' must be a non-empty string");
  s.file = file->get<std::string>();
  if (s.file.find('\0') != std::string::npos)
    return errorAt(loc, what + ": 'storage.file' contains a NUL character");
  for (auto [key, field] :
       {std::pair<const char *, int64_t *>{"offset", &s.offset},
        {"nbytes", &s.nbytes}}) {
    const Json *j = member(*st, key);
    if (!j)
      return errorAt(loc, what + ": missing key 'storage." + key + "'");
    if (!j->is_number_unsigned() || j->get<uint64_t>() > uint64_t(INT64_MAX))
      return errorAt(loc, what + ": 'storage." + key +
                              "' must be a non-negative integer");
    *field = int64_t(j->get<uint64_t>());
  }
  int64_t numel = *checkedNumElements(decl.shape);
  int64_t expected = numel * dtypeBytes(decl.elem);
  if (s.nbytes != expected)
    return errorAt(
        loc, what + ": 'storage.nbytes' is " + llvm::Twine(s.nbytes) + " but " +
                 shapeString(decl.shape) + " " + dtypeName(decl.elem) +
                 " needs " + llvm::Twine(expected) + " bytes");

  llvm::SmallString<256> resolved;
  if (llvm::sys::path::is_absolute(s.file) || baseDir.empty()) {
    resolved = s.file;
  } else {
    resolved = baseDir;
    llvm::sys::path::append(resolved, s.file);
  }
  s.resolved = resolved.str().str();
  // Models keep every tensor in one or a few files: stat each file once.
  auto cached = fileSizes.find(s.resolved);
  if (cached == fileSizes.end()) {
    llvm::sys::fs::file_status status;
    if (std::error_code ec = llvm::sys::fs::status(s.resolved, status))
      return errorAt(loc, what + ": cannot open its storage file '" + s.file +
                              "' (looked for '" + s.resolved +
                              "'): " + ec.message());
    if (!llvm::sys::fs::is_regular_file(status))
      return errorAt(loc, what + ": storage file '" + s.resolved +
                              "' is not a regular file");
    cached = fileSizes.try_emplace(s.resolved, status.getSize()).first;
  }
  uint64_t size = cached->second;
  if (uint64_t(s.offset) > size || uint64_t(s.nbytes) > size - s.offset)
    return errorAt(loc, what + ": storage file '" + s.file + "' has " +
                            llvm::Twine(size) +
                            " bytes, but the tensor "
                            "needs bytes [" +
                            llvm::Twine(s.offset) + ", " +
                            llvm::Twine(uint64_t(s.offset) + uint64_t(s.nbytes)) +
                            ") (truncated or wrong file?)");
  return s;
}

/// Reads `n` little-endian bytes as an unsigned integer.
static uint64_t readLE(const char *p, unsigned n) {
  uint64_t v = 0;
  for (unsigned k = 0; k < n; ++k)
    v |= uint64_t(uint8_t(p[k])) << (8 * k);
  return v;
}

FailureOr<DenseElementsAttr> Importer::readInline(const TensorDecl &decl,
                                                  const Storage &s) {
  RankedTensorType type = decl.type();
  int64_t numel = type.getNumElements();
  std::string bytes;
  if (s.nbytes > 0) {
    auto buf = llvm::MemoryBuffer::getFileSlice(s.resolved, s.nbytes, s.offset,
                                                /*IsVolatile=*/false);
    if (!buf || (*buf)->getBufferSize() != size_t(s.nbytes))
      return errorAt(decl.loc, "constant '" + decl.name + "': cannot read " +
                                   llvm::Twine(s.nbytes) + " bytes at offset " +
                                   llvm::Twine(s.offset) + " of '" +
                                   s.resolved + "'");
    bytes = (*buf)->getBuffer().str();
  }
  Type elem = decl.elem;
  unsigned width = dtypeBytes(elem);
  if (elem.isInteger(1)) {
    SmallVector<bool> v(numel);
    for (int64_t k = 0; k < numel; ++k)
      v[k] = bytes[k] != 0;
    return DenseElementsAttr::get(type, v);
  }
  if (auto ft = dyn_cast<FloatType>(elem)) {
    std::vector<llvm::APFloat> v;
    v.reserve(numel);
    for (int64_t k = 0; k < numel; ++k)
      v.emplace_back(
          ft.getFloatSemantics(),
          llvm::APInt(ft.getWidth(), readLE(&bytes[k * width], width)));
    return DenseElementsAttr::get(type, v);
  }
  auto it = cast<IntegerType>(elem);
  std::vector<llvm::APInt> v;
  v.reserve(numel);
  for (int64_t k = 0; k < numel; ++k)
    v.emplace_back(it.getWidth(), readLE(&bytes[k * width], width));
  return DenseElementsAttr::get(type, v);
}

LogicalResult Importer::importStored(const Json &entries, bool isParameter) {
  llvm::StringRef section = isParameter ? "parameters" : "constants";
  llvm::StringRef kind = isParameter ? "parameter" : "constant";
  for (auto [i, e] : llvm::enumerate(entries)) {
    FailureOr<TensorDecl> decl =
        readTensorDecl(e, section + "[" + llvm::Twine(i) + "]", section, i);
    if (failed(decl))
      return failure();
    Location loc = decl->loc;
    bool trainable = isParameter;
    if (const Json *t = member(e, "trainable")) {
      if (!t->is_boolean())
        return errorAt(loc, kind + " '" + decl->name +
                                "': 'trainable' must be a bool, got " +
                                t->type_name());
      trainable = t->get<bool>();
    }
    FailureOr<Storage> storage = readStorage(e, *decl, kind);
    if (failed(storage))
      return failure();

    Operation *op;
    int64_t numel = *checkedNumElements(decl->shape);
    if (!isParameter && numel <= options.maxInlineElements) {
      FailureOr<DenseElementsAttr> value = readInline(*decl, *storage);
      if (failed(value))
        return failure();
      op = ConstantOp::create(builder, loc, TypeRange{decl->type()},
                              ValueRange{},
                              {builder.getNamedAttr("value", *value)});
    } else {
      // Frozen parameters (requires_grad=False) get no gradients or
      // optimizer state: they are buffers to the planner.
      WeightRole role =
          isParameter && trainable ? WeightRole::parameter : WeightRole::buffer;
      op = WeightOp::create(
          builder, loc, TypeRange{decl->type()}, ValueRange{},
          {builder.getNamedAttr("role", WeightRoleAttr::get(ctx, role)),
           builder.getNamedAttr("name", builder.getStringAttr(decl->name)),
           builder.getNamedAttr("file", builder.getStringAttr(storage->file)),
           builder.getNamedAttr("offset",
                                builder.getI64IntegerAttr(storage->offset))});
    }
    if (failed(mlir::verify(op)))
      return failure();
    if (failed(define(decl->name, op->getResult(0), loc)))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

void Importer::collectNodeOutputs(const Json &nodes) {
  // Only names are gathered here (to tell "defined later" from "undefined");
  // each node is validated when it is imported.
  for (auto [i, node] : llvm::enumerate(nodes)) {
    if (!node.is_object())
      continue;
    const Json *outs = member(node, "outputs");
    if (!outs || !outs->is_array())
      continue;
    for (const Json &o : *outs) {
      if (!o.is_object())
        continue;
      const Json *name = member(o, "name");
      if (name && name->is_string())
        nodeOutputs.try_emplace(name->get_ref<const std::string &>(), i);
    }
  }
}

FailureOr<Operand> Importer::readOperand(const Json &e, unsigned i,
                                         llvm::StringRef node, Location loc) {
  Operand o;
  if (e.is_null())
    return o;
  if (e.is_string()) {
    const std::string &name = e.get_ref<const std::string &>();
    if (std::optional<Scalar> s = readScalar(e)) { // "inf", "-inf", "nan"
      o.scalar = s;
      return o;
    }
    auto it = values.find(name);
    if (it != values.end()) {
      o.tensor = it->second;
      o.name = name;
      return o;
    }
    std::string prefix = "node '" + node.str() + "': input " +
                         std::to_string(i) + " names '" + name + "', ";
    auto later = nodeOutputs.find(name);
    if (later != nodeOutputs.end())
      return errorAt(loc, prefix + "which node #" + llvm::Twine(later->second) +
                              " defines later; nodes must be in topological "
                              "order (is there a cycle?)");
    std::string near = quotedNearestNames(name, values.keys(),
                                    std::max<unsigned>(2, name.size() / 3));
    return errorAt(loc,
                   prefix +
                       "which is not defined by any input, "
                       "parameter, constant or earlier node" +
                       (near.empty() ? "" : " (did you mean " + near + "?)"));
  }
  if (std::optional<Scalar> s = readScalar(e)) {
    o.scalar = s;
    return o;
  }
  return errorAt(loc, "node '" + node + "': input " + llvm::Twine(i) +
                          " must be a tensor name, a number, a bool or null, "
                          "got " +
                          e.type_name());
}

LogicalResult Importer::importNode(const Json &node, size_t index) {
  std::string where = "nodes[" + std::to_string(index) + "]";
  if (!node.is_object())
    return errorAt(entryLoc("nodes", index, ""),
                   where + " must be an object, got " + node.type_name());
  const Json *nameJ = member(node, "name");
  if (!nameJ || !nameJ->is_string() ||
      nameJ->get_ref<const std::string &>().empty())
    return errorAt(entryLoc("nodes", index, ""),
                   where + " needs a non-empty string 'name'");
  std::string name = nameJ->get<std::string>();
  Location loc = entryLoc("nodes", index, name);
  if (!nodeNames.insert(name).second)
    return errorAt(loc, "duplicate node name '" + name + "'");
  const Json *opJ = member(node, "op");
  if (!opJ || !opJ->is_string())
    return errorAt(loc, "node '" + name + "' needs a string 'op'");
  const std::string &op = opJ->get_ref<const std::string &>();
  const ConvertTable &table = getConvertTable();
  auto conversion = table.find(op);
  if (conversion == table.end())
    return errorAt(loc, "node '" + name + "': unknown op '" + op +
                            "' (not in the loom-trace vocabulary; nearest: " +
                            quotedNearestNames(op, table.keys(), 0) + ")");

  static const Json emptyObject = Json::object();
  const Json *attrs = member(node, "attrs");
  if (!attrs || attrs->is_null())
    attrs = &emptyObject;
  if (!attrs->is_object())
    return errorAt(loc, "node '" + name + "': 'attrs' must be an object, got " +
                            attrs->type_name());

  const Json *inputs = member(node, "inputs");
  if (!inputs)
    return errorAt(loc, "node '" + name + "': missing key 'inputs'");
  if (!inputs->is_array())
    return errorAt(loc, "node '" + name + "': 'inputs' must be a list, got " +
                            inputs->type_name());
  SmallVector<Operand> operands;
  for (auto [i, e] : llvm::enumerate(*inputs)) {
    FailureOr<Operand> o = readOperand(e, i, name, loc);
    if (failed(o))
      return failure();
    operands.push_back(std::move(*o));
  }

  const Json *outputs = member(node, "outputs");
  if (!outputs)
    return errorAt(loc, "node '" + name + "': missing key 'outputs'");
  if (!outputs->is_array())
    return errorAt(loc, "node '" + name + "': 'outputs' must be a list, got " +
                            outputs->type_name());
  unsigned expected = numResultsOf(op);
  if (outputs->size() != expected)
    return errorAt(loc, "node '" + name + "': op '" + op + "' has " +
                            llvm::Twine(expected) + " output(s), but " +
                            llvm::Twine(outputs->size()) + " are declared");
  SmallVector<TensorDecl> decls;
  for (auto [i, o] : llvm::enumerate(*outputs)) {
    FailureOr<TensorDecl> decl = readTensorDecl(
        o, "node '" + name + "': outputs[" + llvm::Twine(i) + "]", "nodes",
        index);
    if (failed(decl))
      return failure();
    decls.push_back(std::move(*decl));
  }

  // Op inference and verification name the op; add the node.
  ScopedDiagnosticHandler context(ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error &&
        !llvm::StringRef(diag.str()).starts_with("node '"))
      diag.attachNote(fileLoc)
          << "while importing node '" << name << "' (" << op << ")";
    return failure(); // not handled: pass it on
  });
  NodeContext cx(builder, loc, name, op, *attrs, std::move(operands), decls,
                 constantCache, transposeCache);
  if (failed(conversion->second(cx))) {
    if (repinned)
      mlir::emitRemark(loc)
          << "--input-shape changed the recorded input shapes; a loom-trace "
             "is specialized to the shapes it was traced with (reshape, "
             "expand and full keep them), so re-export it with the shapes "
             "you need";
    return failure();
  }
  if (cx.results.size() != decls.size()) {
    InFlightDiagnostic diag = cx.emitError();
    diag << "internal error: the conversion produced " << cx.results.size()
         << " results for " << decls.size() << " outputs";
    diag.attachNote() << kImporterBugNote;
    return failure();
  }

  for (auto [decl, v] : llvm::zip(decls, cx.results)) {
    auto got = cast<RankedTensorType>(v.getType());
    bool same = repinned ? got.getElementType() == decl.elem &&
                               got.getRank() == int64_t(decl.shape.size())
                         : got == decl.type();
    if (!same)
      return cx.fail("output '" + decl.name + "' is declared as " +
                     typeString(decl.type()) + " but the op computes " +
                     typeString(got));
    if (failed(define(decl.name, v, decl.loc)))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Outputs and the whole import
//===----------------------------------------------------------------------===//

LogicalResult Importer::importOutputs(func::FuncOp func) {
  const Json *outs = member(doc, "outputs");
  if (!outs)
    return fileError("missing key 'outputs'");
  if (!outs->is_array())
    return fileError(llvm::Twine("'outputs' must be a list of tensor names, "
                                 "got ") +
                     outs->type_name());
  if (outs->empty())
    return fileError("the trace has no outputs");
  SmallVector<Value> results;
  SmallVector<std::string> names;
  for (auto [i, o] : llvm::enumerate(*outs)) {
    if (!o.is_string())
      return fileError("outputs[" + llvm::Twine(i) +
                       "] must be a tensor name, got " + o.type_name());
    const std::string &name = o.get_ref<const std::string &>();
    auto it = values.find(name);
    if (it == values.end()) {
      std::string near = quotedNearestNames(name, values.keys(),
                                      std::max<unsigned>(2, name.size() / 3));
      return fileError("graph output '" + name +
                       "' is not defined by any input, parameter, constant "
                       "or node" +
                       (near.empty() ? "" : " (did you mean " + near + "?)"));
    }
    results.push_back(it->second);
    names.push_back(name);
  }
  func::ReturnOp::create(builder, fileLoc, results);
  func.setType(builder.getFunctionType(func.getArgumentTypes(),
                                       ValueRange(results).getTypes()));
  for (auto [i, name] : llvm::enumerate(names))
    func.setResultAttr(i, "loom.name", builder.getStringAttr(name));
  return success();
}

OwningOpRef<ModuleOp> Importer::run() {
  if (failed(parseDocument()))
    return nullptr;
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  builder.setInsertionPointToEnd(module->getBody());

  FailureOr<const Json *> params = arrayMember(doc, "parameters", false, "");
  FailureOr<const Json *> consts = arrayMember(doc, "constants", false, "");
  FailureOr<const Json *> nodes = arrayMember(doc, "nodes", true, "");
  if (failed(params) || failed(consts) || failed(nodes))
    return nullptr;

  func::FuncOp func;
  if (failed(importInputs(func)))
    return nullptr;
  if (*params && failed(importStored(**params, /*isParameter=*/true)))
    return nullptr;
  if (*consts && failed(importStored(**consts, /*isParameter=*/false)))
    return nullptr;
  collectNodeOutputs(**nodes);
  for (auto [i, node] : llvm::enumerate(**nodes))
    if (failed(importNode(node, i)))
      return nullptr;
  if (failed(importOutputs(func)))
    return nullptr;

  if (failed(mlir::verify(*module))) {
    mlir::emitError(fileLoc) << "the module imported from '" << path
                             << "' does not verify (an importer bug; please "
                                "report it with the trace)";
    return nullptr;
  }
  return module;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp>
mlir::loom::importTraceText(llvm::StringRef text, llvm::StringRef path,
                            MLIRContext *ctx, const ImportOptions &options) {
  ctx->loadDialect<LoomDialect, func::FuncDialect>();
  try {
    Importer importer(ctx, text, path, options);
    return importer.run();
  } catch (const std::exception &e) {
    InFlightDiagnostic diag =
        mlir::emitError(FileLineColLoc::get(ctx, path, 0, 0));
    diag << "internal error while importing '" << path << "': " << e.what();
    diag.attachNote() << kImporterBugNote;
  } catch (...) {
    InFlightDiagnostic diag =
        mlir::emitError(FileLineColLoc::get(ctx, path, 0, 0));
    diag << "internal error while importing '" << path << "'";
    diag.attachNote() << kImporterBugNote;
  }
  return nullptr;
}

OwningOpRef<ModuleOp>
mlir::loom::importTraceFile(llvm::StringRef path, MLIRContext *ctx,
                            const ImportOptions &options) {
  auto buf =
      llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf) {
    mlir::emitError(FileLineColLoc::get(ctx, path, 0, 0))
        << "cannot read '" << path << "': " << buf.getError().message();
    return nullptr;
  }
  return importTraceText((*buf)->getBuffer(), path, ctx, options);
}
