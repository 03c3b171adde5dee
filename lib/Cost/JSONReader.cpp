//===- JSONReader.cpp - checked reads of hand-written JSON ----------------===//

#include "JSONReader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Regex.h"

#include <cmath>

using namespace llvm;
using namespace loom::detail;

std::string loom::detail::formatNumber(double value) {
  return formatv("{0}", format("%.12g", value)).str();
}

static StringRef kindName(const json::Value &v) {
  switch (v.kind()) {
  case json::Value::Null:
    return "null";
  case json::Value::Boolean:
    return "a boolean";
  case json::Value::Number:
    return "a number";
  case json::Value::String:
    return "a string";
  case json::Value::Array:
    return "an array";
  case json::Value::Object:
    return "an object";
  }
  return "a value";
}

/// The allowed name closest to `name`, if it is a plausible typo.
static std::optional<StringRef> nearestName(StringRef name,
                                            ArrayRef<StringRef> allowed) {
  if (name.size() > 64)
    return std::nullopt;
  std::optional<StringRef> best;
  unsigned bestDistance = 0;
  std::string lowered = name.lower();
  for (StringRef a : allowed) {
    unsigned d = StringRef(lowered).edit_distance(a.lower(), true, 16);
    if (!best || d < bestDistance) {
      best = a;
      bestDistance = d;
    }
  }
  unsigned limit = std::max<unsigned>(2, name.size() / 3);
  if (best && bestDistance <= limit)
    return best;
  return std::nullopt;
}

Expected<json::Object> JSONReader::parseObject(StringRef text) const {
  Expected<json::Value> root = json::parse(text);
  if (!root) {
    std::string msg = toString(root.takeError());
    // json::ParseError prints "[line:col, byte=N]: message".
    SmallVector<StringRef> m;
    if (detailed() &&
        Regex("^\\[([0-9]+):([0-9]+), byte=[0-9]+\\]: (.*)$").match(msg, &m))
      return createStringError(
          inconvertibleErrorCode(),
          (origin + ":" + m[1] + ":" + m[2] + ": invalid JSON: " + m[3]).str());
    return fail("invalid JSON", msg);
  }
  json::Object *top = root->getAsObject();
  if (!top)
    return wrongKind("", "a JSON object", *root);
  return std::move(*top);
}

Error JSONReader::fail(const Twine &path, const Twine &message) const {
  std::string text = path.str();
  return createStringError(
      inconvertibleErrorCode(),
      (origin + ": " + (text.empty() ? "" : text + ": ") + message).str());
}

Error JSONReader::wrongKind(const Twine &path, StringRef expected,
                            const json::Value &value) const {
  if (detailed())
    return fail(path, "expected " + expected + ", got " + kindName(value));
  return fail(path, "must be " + expected);
}

Error JSONReader::failUnknown(const Twine &path, const Twine &what,
                              StringRef name,
                              ArrayRef<StringRef> allowed) const {
  std::string list = llvm::join(allowed, ", ");
  if (!detailed())
    return fail(path, what + " (expected one of: " + list + ")");
  std::string msg = what.str();
  if (std::optional<StringRef> near = nearestName(name, allowed))
    msg += (" (did you mean '" + *near + "'?)").str();
  return fail(path, msg + "; expected one of: " + list);
}

std::string JSONReader::join(StringRef path, StringRef key) {
  return path.empty() ? key.str() : (path + "." + key).str();
}

std::string JSONReader::got(const Twine &actual) const {
  return detailed() ? (" (got " + actual + ")").str() : "";
}

Error JSONReader::checkKeys(const json::Object &object, StringRef path,
                            ArrayRef<StringRef> allowed) const {
  SmallVector<StringRef> keys;
  for (const auto &entry : object)
    keys.push_back(entry.first);
  llvm::sort(keys); // the first unknown key is the same on every run
  for (StringRef key : keys)
    if (!llvm::is_contained(allowed, key))
      return failUnknown(join(path, key),
                         detailed() ? "unknown key" : "unknown field", key,
                         allowed);
  return Error::success();
}

Error JSONReader::readObject(const json::Value &value, StringRef path,
                             ArrayRef<StringRef> allowedKeys,
                             const json::Object *&out) const {
  out = value.getAsObject();
  if (!out)
    return wrongKind(path, "an object", value);
  return allowedKeys.empty() ? Error::success()
                             : checkKeys(*out, path, allowedKeys);
}

Error JSONReader::readInteger(const json::Value &value, const Twine &path,
                              int64_t lo, int64_t hi, int64_t &out) const {
  std::optional<double> d = value.getAsNumber();
  if (!d)
    return wrongKind(path, "an integer", value);
  std::optional<int64_t> i = value.getAsInteger();
  if (!i)
    return fail(path, "must be an integer" + got(formatNumber(*d)));
  if (*i < lo || *i > hi) {
    std::string range =
        hi == kNoMax ? (">= " + Twine(lo)).str()
                     : ("between " + Twine(lo) + " and " + Twine(hi)).str();
    return fail(path, "must be " + range + got(Twine(*i)));
  }
  out = *i;
  return Error::success();
}

Error JSONReader::readIntegers(const json::Value &value, StringRef path,
                               int64_t lo,
                               SmallVectorImpl<int64_t> &out) const {
  const json::Array *array = value.getAsArray();
  if (!array)
    return wrongKind(path, "an array of integers", value);
  for (auto [i, element] : llvm::enumerate(*array))
    if (Error e = readInteger(element, path + "[" + Twine(i) + "]", lo, kNoMax,
                              out.emplace_back()))
      return e;
  return Error::success();
}

Error JSONReader::getValue(const json::Object &object, StringRef path,
                           StringRef key, Presence presence,
                           const json::Value *&out, bool *present) const {
  out = object.get(key);
  if (present)
    *present = out != nullptr;
  if (!out && presence == Required)
    return fail(join(path, key), "missing");
  return Error::success();
}

Error JSONReader::getObject(const json::Object &object, StringRef path,
                            StringRef key, Presence presence,
                            const json::Object *&out,
                            ArrayRef<StringRef> allowedKeys) const {
  out = nullptr;
  const json::Value *v;
  if (Error e = getValue(object, path, key, presence, v))
    return e;
  return v ? readObject(*v, join(path, key), allowedKeys, out)
           : Error::success();
}

Error JSONReader::getArray(const json::Object &object, StringRef path,
                           StringRef key, Presence presence,
                           const json::Array *&out, StringRef expected) const {
  out = nullptr;
  const json::Value *v;
  if (Error e = getValue(object, path, key, presence, v))
    return e;
  if (v && !(out = v->getAsArray()))
    return wrongKind(join(path, key), expected, *v);
  return Error::success();
}

Error JSONReader::getString(const json::Object &object, StringRef path,
                            StringRef key, Presence presence, std::string &out,
                            bool allowEmpty) const {
  const json::Value *v;
  if (Error e = getValue(object, path, key, presence, v))
    return e;
  if (!v)
    return Error::success();
  std::optional<StringRef> s = v->getAsString();
  if (!s)
    return wrongKind(join(path, key), "a string", *v);
  if (s->empty() && !allowEmpty)
    return fail(join(path, key), "must not be empty");
  out = s->str();
  return Error::success();
}

Error JSONReader::getNumber(const json::Object &object, StringRef path,
                            StringRef key, Presence presence, Bound bound,
                            double &out, bool *present) const {
  const json::Value *v;
  if (Error e = getValue(object, path, key, presence, v, present))
    return e;
  if (!v)
    return Error::success();
  std::optional<double> d = v->getAsNumber();
  if (!d)
    return wrongKind(join(path, key), "a number", *v);
  StringRef range = bound == Bound::Positive      ? "> 0"
                    : bound == Bound::NonNegative ? ">= 0"
                                                  : "in (0, 1]";
  bool inRange = bound == Bound::Positive      ? *d > 0
                 : bound == Bound::NonNegative ? *d >= 0
                                               : *d > 0 && *d <= 1;
  if (!std::isfinite(*d) && detailed())
    return fail(join(path, key), "must be finite");
  if (!inRange || !std::isfinite(*d))
    return fail(join(path, key), "must be " + range + got(formatNumber(*d)));
  out = *d;
  return Error::success();
}

Error JSONReader::getInteger(const json::Object &object, StringRef path,
                             StringRef key, Presence presence, int64_t lo,
                             int64_t hi, int64_t &out, bool *present) const {
  const json::Value *v;
  if (Error e = getValue(object, path, key, presence, v, present))
    return e;
  return v ? readInteger(*v, join(path, key), lo, hi, out) : Error::success();
}
