// The attribute/type tables of MLIR bytecode: lazy, memoized, cycle-safe resolution of entries
// (with a worklist for deep chains), the entry reader the dialect decoders use, the textual
// fallback for entries without a custom encoding, and dense-data size checks.
#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "compiler/frontend/bytecode_internal.h"

namespace ember::frontend::bytecode {
namespace {

// Past this nesting depth a reference is resolved later from the worklist instead of recursively.
constexpr int kMaxResolveDepth = 8;

// Marks a deferred resolution; never escapes GetAttribute/GetType.
absl::Status DeferredStatus() { return absl::UnavailableError("deferred attribute/type"); }
bool IsDeferred(const absl::Status& s) { return s.code() == absl::StatusCode::kUnavailable; }

template <typename T>
absl::StatusOr<std::shared_ptr<const T>> Finish(std::shared_ptr<const T> value,
                                                const ByteReader& r, bool custom) {
  if (!r.empty()) {
    return r.Error(absl::StrCat(r.remaining(), " unexpected trailing bytes in ",
                                custom ? "custom" : "textual", " entry"));
  }
  if (!value) return r.Error("decoder produced no value");
  return value;
}

absl::StatusOr<absl::string_view> FallbackText(ByteReader& r) {
  absl::StatusOr<absl::string_view> text = r.ReadNulTerminated();
  if (!text.ok()) return text.status();
  return text;
}

}  // namespace

absl::StatusOr<absl::string_view> State::String(uint64_t index, const ByteReader& at) const {
  if (index >= strings.size()) {
    return at.Error(absl::StrCat("string index ", index, " out of range (", strings.size(),
                                 " strings)"));
  }
  return absl::string_view(strings[index]);
}

absl::StatusOr<AttrPtr> State::AttributeAtDepth(uint64_t index, int depth) {
  if (index >= attr_entries.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MLIR bytecode: attribute index ", index, " out of range (", attr_entries.size(), ")"));
  }
  if (attr_state[index] == 2) return attrs[index];
  if (attr_state[index] == 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("MLIR bytecode: attribute ", index, " refers to itself (cycle)"));
  }
  if (depth > kMaxResolveDepth) {
    deferred_is_type = false;
    deferred_index = index;
    return DeferredStatus();
  }
  const EntryInfo& e = attr_entries[index];
  ByteReader bytes(file, e.begin, e.end, "AttrType section (attribute entry)");
  attr_state[index] = 1;
  absl::StatusOr<AttrPtr> result;
  uint32_t depth_of_children = 0;
  const std::string& dialect = dialects[e.dialect].name;
  if (!e.custom) {
    absl::StatusOr<absl::string_view> text = FallbackText(bytes);
    result = text.ok() ? ParseTextualAttribute(*text, dialect) : text.status();
  } else {
    EntryReader r(*this, bytes, depth);
    if (dialect == "builtin") {
      result = DecodeBuiltinAttribute(r);
    } else if (dialect == "vhlo") {
      result = DecodeVhloAttribute(r);
    } else if (dialect == "sdy") {
      result = DecodeSdyAttribute(r);
    } else {
      result = bytes.Error("no bytecode decoder for attributes of dialect '" + dialect + "'");
    }
    bytes = r.bytes();
    depth_of_children = r.max_child_depth();
  }
  if (result.ok()) result = Finish(*std::move(result), bytes, e.custom);
  if (result.ok() && depth_of_children >= kMaxValueNesting) {
    result = bytes.Error(absl::StrCat("attribute nests deeper than ", kMaxValueNesting, " levels"));
  }
  attr_state[index] = 0;
  if (!result.ok()) return result.status();
  attr_depth[index] = depth_of_children + 1;
  attrs[index] = *result;
  attr_state[index] = 2;
  return attrs[index];
}

absl::StatusOr<TypePtr> State::TypeAtDepth(uint64_t index, int depth) {
  if (index >= type_entries.size()) {
    return absl::InvalidArgumentError(absl::StrCat("MLIR bytecode: type index ", index,
                                                   " out of range (", type_entries.size(), ")"));
  }
  if (type_state[index] == 2) return types[index];
  if (type_state[index] == 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("MLIR bytecode: type ", index, " refers to itself (cycle)"));
  }
  if (depth > kMaxResolveDepth) {
    deferred_is_type = true;
    deferred_index = index;
    return DeferredStatus();
  }
  const EntryInfo& e = type_entries[index];
  ByteReader bytes(file, e.begin, e.end, "AttrType section (type entry)");
  type_state[index] = 1;
  absl::StatusOr<TypePtr> result;
  uint32_t depth_of_children = 0;
  const std::string& dialect = dialects[e.dialect].name;
  if (!e.custom) {
    absl::StatusOr<absl::string_view> text = FallbackText(bytes);
    result = text.ok() ? ParseTextualType(*text, dialect) : text.status();
  } else {
    EntryReader r(*this, bytes, depth);
    if (dialect == "builtin") {
      result = DecodeBuiltinType(r);
    } else if (dialect == "vhlo") {
      result = DecodeVhloType(r);
    } else if (dialect == "stablehlo") {
      result = DecodeStablehloType(r);
    } else {
      result = bytes.Error("no bytecode decoder for types of dialect '" + dialect + "'");
    }
    bytes = r.bytes();
    depth_of_children = r.max_child_depth();
  }
  if (result.ok()) result = Finish(*std::move(result), bytes, e.custom);
  if (result.ok() && depth_of_children >= kMaxValueNesting) {
    result = bytes.Error(absl::StrCat("type nests deeper than ", kMaxValueNesting, " levels"));
  }
  type_state[index] = 0;
  if (!result.ok()) return result.status();
  type_depth[index] = depth_of_children + 1;
  types[index] = *result;
  type_state[index] = 2;
  return types[index];
}

namespace {

// Resolves `index` of the requested kind, pushing deferred dependencies on an explicit stack.
absl::Status ResolveWithWorklist(State& s, bool is_type, uint64_t index) {
  std::vector<std::pair<bool, uint64_t>> stack{{is_type, index}};
  while (!stack.empty()) {
    auto [t, i] = stack.back();
    absl::Status st = t ? s.TypeAtDepth(i, 0).status() : s.AttributeAtDepth(i, 0).status();
    if (st.ok()) {
      stack.pop_back();
      continue;
    }
    if (!IsDeferred(st)) return st;
    const std::pair<bool, uint64_t> dep{s.deferred_is_type, s.deferred_index};
    if (std::find(stack.begin(), stack.end(), dep) != stack.end()) {
      return absl::InvalidArgumentError(absl::StrCat("MLIR bytecode: ",
                                                     dep.first ? "type " : "attribute ",
                                                     dep.second, " is part of a reference cycle"));
    }
    stack.push_back(dep);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AttrPtr> State::GetAttribute(uint64_t index) {
  if (index < attr_state.size() && attr_state[index] == 2) return attrs[index];
  absl::Status s = ResolveWithWorklist(*this, false, index);
  if (!s.ok()) return s;
  return attrs[index];
}

absl::StatusOr<TypePtr> State::GetType(uint64_t index) {
  if (index < type_state.size() && type_state[index] == 2) return types[index];
  absl::Status s = ResolveWithWorklist(*this, true, index);
  if (!s.ok()) return s;
  return types[index];
}

// ---- EntryReader ----

absl::StatusOr<bool> EntryReader::Bool() {
  absl::StatusOr<uint8_t> b = bytes_.ReadByte();
  if (!b.ok()) return b.status();
  return *b != 0;
}

absl::StatusOr<AttrPtr> EntryReader::Attr() {
  absl::StatusOr<uint64_t> index = bytes_.ReadVarInt();
  if (!index.ok()) return index.status();
  if (*index >= state_.attr_entries.size()) {
    return bytes_.Error(absl::StrCat("attribute index ", *index, " out of range (",
                                     state_.attr_entries.size(), ")"));
  }
  absl::StatusOr<AttrPtr> a = state_.AttributeAtDepth(*index, depth_ + 1);
  if (a.ok()) max_child_depth_ = std::max(max_child_depth_, state_.attr_depth[*index]);
  return a;
}

absl::StatusOr<AttrPtr> EntryReader::OptionalAttr() {
  absl::StatusOr<uint64_t> v = bytes_.ReadVarInt();
  if (!v.ok()) return v.status();
  if ((*v & 1) == 0) return AttrPtr();
  if ((*v >> 1) >= state_.attr_entries.size()) {
    return bytes_.Error(absl::StrCat("attribute index ", *v >> 1, " out of range"));
  }
  absl::StatusOr<AttrPtr> a = state_.AttributeAtDepth(*v >> 1, depth_ + 1);
  if (a.ok()) max_child_depth_ = std::max(max_child_depth_, state_.attr_depth[*v >> 1]);
  return a;
}

absl::StatusOr<TypePtr> EntryReader::TypeRef() {
  absl::StatusOr<uint64_t> index = bytes_.ReadVarInt();
  if (!index.ok()) return index.status();
  if (*index >= state_.type_entries.size()) {
    return bytes_.Error(absl::StrCat("type index ", *index, " out of range (",
                                     state_.type_entries.size(), ")"));
  }
  absl::StatusOr<TypePtr> t = state_.TypeAtDepth(*index, depth_ + 1);
  if (t.ok()) max_child_depth_ = std::max(max_child_depth_, state_.type_depth[*index]);
  return t;
}

absl::StatusOr<std::string> EntryReader::String() {
  absl::StatusOr<uint64_t> index = bytes_.ReadVarInt();
  if (!index.ok()) return index.status();
  absl::StatusOr<absl::string_view> s = state_.String(*index, bytes_);
  if (!s.ok()) return s.status();
  return std::string(*s);
}

absl::StatusOr<std::vector<uint8_t>> EntryReader::Blob() {
  absl::StatusOr<absl::Span<const uint8_t>> b = bytes_.ReadBlob();
  if (!b.ok()) return b.status();
  return std::vector<uint8_t>(b->begin(), b->end());
}

absl::StatusOr<std::vector<uint64_t>> EntryReader::APInt(unsigned width) {
  if (width == 0) return Error("integer of width 0");
  if (width <= 8) {
    absl::StatusOr<uint8_t> b = bytes_.ReadByte();
    if (!b.ok()) return b.status();
    uint64_t v = *b;
    if (width < 8) v &= (uint64_t{1} << width) - 1;
    return std::vector<uint64_t>{v};
  }
  if (width <= 64) {
    absl::StatusOr<int64_t> v = bytes_.ReadSignedVarInt();
    if (!v.ok()) return v.status();
    uint64_t u = static_cast<uint64_t>(*v);
    if (width < 64) u &= (uint64_t{1} << width) - 1;
    return std::vector<uint64_t>{u};
  }
  const uint64_t max_words = (width + 63) / 64;
  absl::StatusOr<uint64_t> n = bytes_.ReadCount(1);
  if (!n.ok()) return n.status();
  if (*n > max_words) {
    return Error(absl::StrCat(*n, " active words for an integer of width ", width));
  }
  // Only the active words are kept: a huge declared width must not allocate by itself.
  std::vector<uint64_t> words(std::max<uint64_t>(*n, 1), 0);
  for (uint64_t i = 0; i < *n; ++i) {
    absl::StatusOr<int64_t> w = bytes_.ReadSignedVarInt();
    if (!w.ok()) return w.status();
    words[i] = static_cast<uint64_t>(*w);
  }
  if (*n == max_words && width % 64 != 0) words.back() &= (uint64_t{1} << (width % 64)) - 1;
  return words;
}

absl::StatusOr<std::vector<AttrPtr>> EntryReader::AttrList() {
  absl::StatusOr<uint64_t> n = Count();
  if (!n.ok()) return n.status();
  std::vector<AttrPtr> out;
  out.reserve(*n);
  for (uint64_t i = 0; i < *n; ++i) {
    absl::StatusOr<AttrPtr> a = Attr();
    if (!a.ok()) return a.status();
    out.push_back(*std::move(a));
  }
  return out;
}

absl::StatusOr<std::vector<TypePtr>> EntryReader::TypeList() {
  absl::StatusOr<uint64_t> n = Count();
  if (!n.ok()) return n.status();
  std::vector<TypePtr> out;
  out.reserve(*n);
  for (uint64_t i = 0; i < *n; ++i) {
    absl::StatusOr<TypePtr> t = TypeRef();
    if (!t.ok()) return t.status();
    out.push_back(*std::move(t));
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> EntryReader::SignedVarIntList() {
  absl::StatusOr<uint64_t> n = Count();
  if (!n.ok()) return n.status();
  std::vector<int64_t> out;
  out.reserve(*n);
  for (uint64_t i = 0; i < *n; ++i) {
    absl::StatusOr<int64_t> v = SignedVarInt();
    if (!v.ok()) return v.status();
    out.push_back(*v);
  }
  return out;
}

// ---- Textual fallback ----

namespace {

std::shared_ptr<Type> BuiltinTypeByName(absl::string_view text) {
  static const std::pair<const char*, FloatKind> kFloats[] = {
      {"bf16", FloatKind::kBF16}, {"f16", FloatKind::kF16}, {"f32", FloatKind::kF32},
      {"f64", FloatKind::kF64}, {"f80", FloatKind::kF80}, {"f128", FloatKind::kF128},
      {"tf32", FloatKind::kTF32}, {"f8E5M2", FloatKind::kF8E5M2},
      {"f8E4M3", FloatKind::kF8E4M3}, {"f8E4M3FN", FloatKind::kF8E4M3FN},
      {"f8E5M2FNUZ", FloatKind::kF8E5M2FNUZ}, {"f8E4M3FNUZ", FloatKind::kF8E4M3FNUZ},
      {"f8E4M3B11FNUZ", FloatKind::kF8E4M3B11FNUZ}, {"f8E3M4", FloatKind::kF8E3M4},
      {"f4E2M1FN", FloatKind::kF4E2M1FN}, {"f6E2M3FN", FloatKind::kF6E2M3FN},
      {"f6E3M2FN", FloatKind::kF6E3M2FN}, {"f8E8M0FNU", FloatKind::kF8E8M0FNU},
  };
  auto t = std::make_shared<Type>();
  for (const auto& [name, kind] : kFloats) {
    if (text == name) {
      t->kind = TypeKind::kFloat;
      t->float_kind = kind;
      return t;
    }
  }
  if (text == "index") {
    t->kind = TypeKind::kIndex;
    return t;
  }
  if (text == "none") {
    t->kind = TypeKind::kNone;
    return t;
  }
  absl::string_view digits = text;
  Signedness sign = Signedness::kSignless;
  if (digits.substr(0, 2) == "si") {
    sign = Signedness::kSigned;
    digits.remove_prefix(2);
  } else if (digits.substr(0, 2) == "ui") {
    sign = Signedness::kUnsigned;
    digits.remove_prefix(2);
  } else if (digits.substr(0, 1) == "i") {
    digits.remove_prefix(1);
  } else {
    return nullptr;
  }
  uint32_t width = 0;
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), ::isdigit) ||
      !absl::SimpleAtoi(digits, &width) || width == 0 || width > (1u << 24)) {
    return nullptr;
  }
  t->kind = TypeKind::kInteger;
  t->width = width;
  t->signedness = sign;
  return t;
}

}  // namespace

absl::StatusOr<TypePtr> ParseTextualType(absl::string_view text, absl::string_view dialect) {
  if (dialect == "builtin") {
    if (std::shared_ptr<Type> t = BuiltinTypeByName(text)) return TypePtr(std::move(t));
  }
  // Kept verbatim: the text is the type's full MLIR spelling, so nothing is lost.
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kOpaque;
  t->dialect = std::string(dialect);
  t->name = std::string(text);
  return TypePtr(std::move(t));
}

absl::StatusOr<AttrPtr> ParseTextualAttribute(absl::string_view text, absl::string_view dialect) {
  auto a = std::make_shared<Attribute>();
  if (dialect == "builtin" && text == "unit") {
    a->kind = AttrKind::kUnit;
    return AttrPtr(std::move(a));
  }
  if (dialect == "builtin" && text.substr(0, 11) == "affine_map<" && text.back() == '>') {
    a->kind = AttrKind::kAffineMap;
    a->str = std::string(text.substr(11, text.size() - 12));
    return AttrPtr(std::move(a));
  }
  a->kind = AttrKind::kOpaque;
  a->dialect = std::string(dialect);
  a->str = std::string(text);
  return AttrPtr(std::move(a));
}

// ---- Dense data helpers ----

absl::StatusOr<uint64_t> ElementStorageBytes(const Type& element) {
  switch (element.kind) {
    case TypeKind::kInteger:
      if (element.width == 1) return 0;
      return (uint64_t{element.width} + 7) / 8;
    case TypeKind::kIndex: return 8;
    case TypeKind::kFloat: return (FloatKindBitWidth(element.float_kind) + 7) / 8;
    case TypeKind::kComplex: {
      if (!element.element) return absl::InvalidArgumentError("complex type without element");
      absl::StatusOr<uint64_t> inner = ElementStorageBytes(*element.element);
      if (!inner.ok()) return inner.status();
      if (*inner == 0) return absl::InvalidArgumentError("complex<i1> is not a dense element");
      return 2 * *inner;
    }
    case TypeKind::kDialect:
      if (element.dialect == "vhlo") {
        const std::string& n = element.name;
        if (n == "bool_v1") return 0;
        if (n == "complex_v1") {
          if (element.params.empty() || !element.params[0].type) break;
          absl::StatusOr<uint64_t> inner = ElementStorageBytes(*element.params[0].type);
          if (!inner.ok()) return inner.status();
          if (*inner == 0) break;
          return 2 * *inner;
        }
        if (n == "f64_v1" || n == "i64_v1" || n == "ui64_v1" || n == "index_v1") return 8;
        if (n == "f32_v1" || n == "i32_v1" || n == "ui32_v1" || n == "tf31_v1") return 4;
        if (n == "bf16_v1" || n == "f16_v1" || n == "i16_v1" || n == "ui16_v1") return 2;
        if (n == "i8_v1" || n == "ui8_v1" || n == "i4_v1" || n == "ui4_v1" || n == "i2_v1" ||
            n == "ui2_v1" || n.substr(0, 2) == "f8" || n.substr(0, 2) == "f6" ||
            n.substr(0, 2) == "f4") {
          return 1;
        }
        // Quantized element types store their storage type's bytes.
        if ((n == "quant_v1" || n == "quant_per_axis_v1") && element.params.size() > 1 &&
            element.params[1].type) {
          return ElementStorageBytes(*element.params[1].type);
        }
      }
      break;
    default: break;
  }
  return absl::InvalidArgumentError("type " + PrintType(element) +
                                    " is not a dense element type");
}

absl::StatusOr<uint64_t> StaticElementCount(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return absl::InvalidArgumentError("dense data of a dynamically shaped type");
    if (d != 0 && n > UINT64_MAX / static_cast<uint64_t>(d)) {
      return absl::InvalidArgumentError("element count overflows");
    }
    n *= static_cast<uint64_t>(d);
  }
  return n;
}

absl::Status ValidateDenseData(const Type& shaped, size_t data_size, const ByteReader& at) {
  const Type* element = nullptr;
  std::vector<int64_t> shape;
  if (shaped.kind == TypeKind::kRankedTensor || shaped.kind == TypeKind::kVector) {
    element = shaped.element.get();
    shape = shaped.shape;
  } else if (shaped.kind == TypeKind::kDialect && shaped.dialect == "vhlo" &&
             shaped.name == "tensor_v1" && shaped.params.size() >= 2) {
    // VHLO ranked tensor params: shape (list of ints), element type.
    element = shaped.params[1].type.get();
    for (const DialectParam& p : shaped.params[0].list) shape.push_back(p.i);
  } else {
    return at.Error("dense elements need a ranked tensor or vector type, got " +
                    PrintType(shaped));
  }
  if (element == nullptr) return at.Error("shaped type without element type");
  absl::StatusOr<uint64_t> n = StaticElementCount(shape);
  if (!n.ok()) return at.Error(n.status().message());
  absl::StatusOr<uint64_t> bytes = ElementStorageBytes(*element);
  if (!bytes.ok()) return at.Error(bytes.status().message());
  if (*bytes == 0) {
    // i1: one byte splat, bit-packed, or (newer writers) one byte per element.
    if (data_size == 1 || data_size == (*n + 7) / 8 || data_size == *n) return absl::OkStatus();
  } else if (data_size == *bytes || (*n <= UINT64_MAX / *bytes && data_size == *n * *bytes)) {
    return absl::OkStatus();
  }
  return at.Error(absl::StrCat("dense data of ", data_size, " bytes does not match ",
                               PrintType(shaped)));
}

}  // namespace ember::frontend::bytecode
