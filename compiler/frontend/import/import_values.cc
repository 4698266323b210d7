// Reading MLIR attribute values in every spelling the two readers produce (builtin, #stablehlo
// dialect attributes, #vhlo.*_v1 attributes) and converting them to ir::Attribute / Literal.
#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/import/import_internal.h"
#include "compiler/frontend/import/sharding_import.h"
#include "compiler/ir/float_conversions.h"

namespace ember::frontend::importer {
namespace {

const DialectParam* FindParam(const Attribute& attr, const char* name) {
  for (const DialectParam& p : attr.params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

const DialectParam* FindParam(const Type& type, const char* name) {
  for (const DialectParam& p : type.params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

absl::Status Unexpected(const Attribute& attr, const char* what) {
  return absl::InvalidArgumentError(
      absl::StrCat("expected ", what, ", got ", PrintAttribute(attr)));
}

// Dims and element type of a builtin ranked tensor or a VHLO tensor.
struct Shaped {
  std::vector<int64_t> dims;
  const Type* element = nullptr;
};

absl::StatusOr<Shaped> ShapedOf(const Type& type) {
  Shaped s;
  if (type.kind == TypeKind::kRankedTensor || type.kind == TypeKind::kVector) {
    s.dims = type.shape;
    s.element = type.element.get();
  } else if (type.kind == TypeKind::kDialect && type.dialect == "vhlo" &&
             type.name == "tensor_v1") {
    const DialectParam* shape = FindParam(type, "shape");
    const DialectParam* element = FindParam(type, "element");
    if (shape == nullptr || element == nullptr) {
      return absl::InvalidArgumentError("malformed !vhlo.tensor_v1");
    }
    for (const DialectParam& d : shape->list) s.dims.push_back(d.i);
    s.element = element->type.get();
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("dense data needs a ranked tensor type, got ", PrintType(type)));
  }
  if (s.element == nullptr) return absl::InvalidArgumentError("tensor type without element type");
  for (int64_t d : s.dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("dense data of dynamically shaped type ", PrintType(type)));
    }
  }
  return s;
}

bool IsI1(const Type& element) {
  if (element.kind == TypeKind::kInteger) return element.width == 1;
  return element.kind == TypeKind::kDialect && element.dialect == "vhlo" &&
         element.name == "bool_v1";
}

// Expands dense data (splat, i1 packing) to `count` elements of `bytes` bytes each (i1: one
// 0/1 byte per element).
absl::StatusOr<std::vector<uint8_t>> ExpandDense(const std::vector<uint8_t>& data,
                                                 int64_t count, int64_t bytes, bool i1,
                                                 I1Layout layout) {
  std::vector<uint8_t> out;
  const size_t n = static_cast<size_t>(count);
  if (i1) {
    out.resize(n);
    if (data.size() == n && !(layout == I1Layout::kWire && n == 1 && data[0] == 0xFF)) {
      for (size_t i = 0; i < n; ++i) out[i] = data[i] != 0;
    } else if (data.size() == 1 && (layout == I1Layout::kBytes || data[0] == 0xFF ||
                                    data[0] == 0x00)) {
      std::fill(out.begin(), out.end(), data[0] != 0 ? 1 : 0);
    } else if (data.size() == (n + 7) / 8) {
      for (size_t i = 0; i < n; ++i) out[i] = (data[i / 8] >> (i % 8)) & 1;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("i1 dense data of ", data.size(), " bytes for ", count, " elements"));
    }
    return out;
  }
  const size_t b = static_cast<size_t>(bytes);
  if (data.size() == n * b) return data;
  if (data.size() == b) {
    out.resize(n * b);
    for (size_t i = 0; i < n; ++i) std::memcpy(out.data() + i * b, data.data(), b);
    return out;
  }
  return absl::InvalidArgumentError(absl::StrCat("dense data of ", data.size(), " bytes for ",
                                                 count, " elements of ", bytes, " bytes"));
}

// Raw dense data and its type, whichever attribute spelling holds it.
struct DenseRef {
  const Type* type = nullptr;
  const std::vector<uint8_t>* data = nullptr;  // builtin attributes: their own bytes
  std::vector<uint8_t> owned;                  // VHLO tensors: a copy of the blob
  bool wire_i1 = false;
  const std::vector<uint8_t>& bytes() const { return data != nullptr ? *data : owned; }
};

absl::StatusOr<DenseRef> DenseOf(const Attribute& attr, const ImportContext& ctx) {
  DenseRef r;
  if (attr.kind == AttrKind::kDenseElements || attr.kind == AttrKind::kDenseResource) {
    if (!attr.type) return absl::InvalidArgumentError("dense elements without a type");
    if (attr.kind == AttrKind::kDenseResource && attr.data.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("dense_resource<", attr.str, "> has no data blob"));
    }
    r.type = attr.type.get();
    r.data = &attr.data;
    r.wire_i1 = ctx.builtin_i1 == I1Layout::kWire;
    return r;
  }
  if (IsVhlo(attr, "tensor_v1")) {
    const DialectParam* type = FindParam(attr, "type");
    const DialectParam* data = FindParam(attr, "data");
    if (type == nullptr || data == nullptr || !type->type) {
      return absl::InvalidArgumentError("malformed #vhlo.tensor_v1");
    }
    r.type = type->type.get();
    r.owned.assign(data->s.begin(), data->s.end());
    r.wire_i1 = true;
    return r;
  }
  return Unexpected(attr, "dense elements");
}

double DecodeFloatBits(FloatKind kind, uint64_t bits, bool* ok) {
  *ok = true;
  switch (kind) {
    case FloatKind::kF64: return std::bit_cast<double>(bits);
    case FloatKind::kF32: return std::bit_cast<float>(static_cast<uint32_t>(bits));
    case FloatKind::kF16: return F16ToFloat(static_cast<uint16_t>(bits));
    case FloatKind::kBF16: return BF16ToFloat(static_cast<uint16_t>(bits));
    default: *ok = false; return 0;
  }
}

absl::StatusOr<FloatKind> FloatKindOf(const Type& type) {
  if (type.kind == TypeKind::kFloat) return type.float_kind;
  if (type.kind == TypeKind::kDialect && type.dialect == "vhlo") {
    if (type.name == "f64_v1") return FloatKind::kF64;
    if (type.name == "f32_v1") return FloatKind::kF32;
    if (type.name == "f16_v1") return FloatKind::kF16;
    if (type.name == "bf16_v1") return FloatKind::kBF16;
  }
  return absl::InvalidArgumentError(absl::StrCat("unsupported float type ", PrintType(type)));
}

// A type attribute: a value type when Ember has one, else the MLIR spelling of an element
// type ("tf32") or "none", the same for builtin and VHLO types.
ir::Attribute TypeAttribute(const Type& type) {
  absl::StatusOr<ir::ValueType> t = ConvertType(type);
  if (t.ok()) return ir::Attribute::OfType(*std::move(t));
  absl::StatusOr<std::string> element = ElementSpelling(type);
  if (element.ok()) return ir::Attribute::String(*element);
  if (type.kind == TypeKind::kNone ||
      (type.kind == TypeKind::kDialect && type.dialect == "vhlo" && type.name == "none_v1")) {
    return ir::Attribute::String("none");
  }
  return ir::Attribute::String(PrintType(type));
}

}  // namespace

bool IsVhlo(const Attribute& attr, const char* name) {
  return attr.kind == AttrKind::kDialect && attr.dialect == "vhlo" && attr.name == name;
}

const DialectParam* DialectValueParam(const Attribute& attr) {
  if (attr.kind != AttrKind::kDialect || attr.params.size() != 1) return nullptr;
  if (attr.params[0].name != "value") return nullptr;
  return &attr.params[0];
}

absl::StatusOr<int64_t> ReadInt(const Attribute& attr) {
  if (attr.kind == AttrKind::kInteger) return attr.IntValue();
  if (IsVhlo(attr, "integer_v1")) {
    const DialectParam* v = FindParam(attr, "value");
    if (v == nullptr) return Unexpected(attr, "an integer");
    return v->kind == DialectParam::Kind::kUInt ? static_cast<int64_t>(v->u) : v->i;
  }
  return Unexpected(attr, "an integer");
}

absl::StatusOr<bool> ReadBool(const Attribute& attr) {
  if (attr.kind == AttrKind::kUnit) return true;
  if (attr.kind == AttrKind::kInteger && attr.type && attr.type->kind == TypeKind::kInteger &&
      attr.type->width == 1) {
    return !attr.words.empty() && (attr.words[0] & 1) != 0;
  }
  if (IsVhlo(attr, "bool_v1")) {
    const DialectParam* v = FindParam(attr, "value");
    if (v != nullptr) return v->u != 0;
  }
  return Unexpected(attr, "a bool");
}

absl::StatusOr<double> ReadFloat(const Attribute& attr) {
  const Type* type = nullptr;
  uint64_t bits = 0;
  if (attr.kind == AttrKind::kFloat && attr.type) {
    type = attr.type.get();
    bits = attr.words.empty() ? 0 : attr.words[0];
  } else if (IsVhlo(attr, "float_v1")) {
    const DialectParam* t = FindParam(attr, "type");
    const DialectParam* v = FindParam(attr, "value");
    if (t == nullptr || v == nullptr || !t->type) return Unexpected(attr, "a float");
    type = t->type.get();
    bits = v->words.empty() ? 0 : v->words[0];
  } else if (attr.kind == AttrKind::kInteger) {
    return static_cast<double>(attr.IntValue());
  } else {
    return Unexpected(attr, "a float");
  }
  EMBER_ASSIGN_OR_RETURN(FloatKind kind, FloatKindOf(*type));
  bool ok = false;
  const double d = DecodeFloatBits(kind, bits, &ok);
  if (!ok) return Unexpected(attr, "an f16/bf16/f32/f64 float");
  return d;
}

absl::StatusOr<std::string> ReadString(const Attribute& attr) {
  if (attr.kind == AttrKind::kString) return attr.str;
  if (attr.kind == AttrKind::kSymbolRef) {
    std::string s = attr.str;
    for (const std::string& nested : attr.strings) absl::StrAppend(&s, "::", nested);
    return s;
  }
  if (const DialectParam* v = DialectValueParam(attr);
      v != nullptr && v->kind == DialectParam::Kind::kString) {
    return v->s;
  }
  return Unexpected(attr, "a string");
}

absl::StatusOr<std::vector<AttrPtr>> ReadArray(const Attribute& attr) {
  if (attr.kind == AttrKind::kArray) return attr.elements;
  if (IsVhlo(attr, "array_v1")) {
    std::vector<AttrPtr> out;
    if (const DialectParam* e = FindParam(attr, "elements")) {
      for (const DialectParam& p : e->list) out.push_back(p.attr);
    }
    return out;
  }
  return Unexpected(attr, "an array");
}

absl::StatusOr<std::vector<std::pair<std::string, AttrPtr>>> ReadDict(const Attribute& attr) {
  std::vector<std::pair<std::string, AttrPtr>> out;
  if (attr.kind == AttrKind::kDictionary) {
    for (const NamedAttribute& e : attr.entries) out.emplace_back(e.name, e.value);
    return out;
  }
  if (IsVhlo(attr, "dict_v1")) {
    if (const DialectParam* e = FindParam(attr, "entries")) {
      for (const DialectParam& pair : e->list) {
        if (pair.list.size() != 2 || !pair.list[0].attr || !pair.list[1].attr) {
          return Unexpected(attr, "a well-formed #vhlo.dict_v1");
        }
        EMBER_ASSIGN_OR_RETURN(std::string key, ReadString(*pair.list[0].attr));
        out.emplace_back(std::move(key), pair.list[1].attr);
      }
    }
    return out;
  }
  return Unexpected(attr, "a dictionary");
}

absl::StatusOr<std::vector<int64_t>> ReadInts(const Attribute& attr, const ImportContext& ctx) {
  std::vector<int64_t> out;
  if (attr.kind == AttrKind::kDenseArray) {
    if (!attr.type || attr.type->kind != TypeKind::kInteger) {
      return Unexpected(attr, "an integer array");
    }
    const size_t width = attr.type->width <= 8 ? 1 : attr.type->width / 8;
    if (attr.data.size() != attr.count * width) return Unexpected(attr, "a well-formed array");
    for (size_t i = 0; i < attr.count; ++i) {
      int64_t v = 0;
      switch (width) {
        case 1: v = static_cast<int8_t>(attr.data[i]); break;
        case 2: { int16_t x; std::memcpy(&x, &attr.data[2 * i], 2); v = x; break; }
        case 4: { int32_t x; std::memcpy(&x, &attr.data[4 * i], 4); v = x; break; }
        default: std::memcpy(&v, &attr.data[8 * i], 8); break;
      }
      out.push_back(v);
    }
    return out;
  }
  if (attr.kind == AttrKind::kArray || IsVhlo(attr, "array_v1")) {
    EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> elements, ReadArray(attr));
    for (const AttrPtr& e : elements) {
      if (!e) return Unexpected(attr, "an integer list");
      EMBER_ASSIGN_OR_RETURN(int64_t v, ReadInt(*e));
      out.push_back(v);
    }
    return out;
  }
  EMBER_ASSIGN_OR_RETURN(ir::Literal literal, ReadLiteral(attr, ctx));
  const ir::ElementType et = literal.element_type();
  if (!ir::IsInteger(et) && et != ir::ElementType::kPred) {
    return Unexpected(attr, "integer dense elements");
  }
  const int bytes = ir::StorageBytes(et);
  const bool is_signed = ir::IsSignedInteger(et);
  absl::Span<const uint8_t> raw = literal.bytes();
  for (size_t i = 0; i + bytes <= raw.size(); i += bytes) {
    uint64_t u = 0;
    std::memcpy(&u, raw.data() + i, bytes);
    int64_t v = static_cast<int64_t>(u);
    if (is_signed && bytes < 8) {
      const int bits = bytes == 1 ? ir::BitWidth(et) : bytes * 8;
      const uint64_t sign = uint64_t{1} << (bits - 1);
      if (u & sign) v = static_cast<int64_t>(u | ~((sign << 1) - 1));
    }
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<std::vector<bool>> ReadBools(const Attribute& attr, const ImportContext& ctx) {
  std::vector<bool> out;
  if (attr.kind == AttrKind::kArray || IsVhlo(attr, "array_v1")) {
    EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> elements, ReadArray(attr));
    for (const AttrPtr& e : elements) {
      if (!e) return Unexpected(attr, "a bool list");
      EMBER_ASSIGN_OR_RETURN(bool v, ReadBool(*e));
      out.push_back(v);
    }
    return out;
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> ints, ReadInts(attr, ctx));
  for (int64_t v : ints) out.push_back(v != 0);
  return out;
}

absl::StatusOr<ir::Literal> ReadLiteral(const Attribute& attr, const ImportContext& ctx) {
  EMBER_ASSIGN_OR_RETURN(DenseRef dense, DenseOf(attr, ctx));
  EMBER_ASSIGN_OR_RETURN(Shaped shaped, ShapedOf(*dense.type));
  EMBER_ASSIGN_OR_RETURN(ir::ElementType et, ConvertElementType(*shaped.element));
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(et, shaped.dims));
  EMBER_ASSIGN_OR_RETURN(
      std::vector<uint8_t> bytes,
      ExpandDense(dense.bytes(), shape.element_count(), ir::StorageBytes(et), IsI1(*shaped.element),
                  dense.wire_i1 ? I1Layout::kWire : I1Layout::kBytes));
  return ir::Literal::FromBytes(shape, bytes);
}

absl::StatusOr<std::optional<ir::Literal>> ReadSplatValue(const Attribute& attr,
                                                           const ImportContext& ctx,
                                                           int64_t min_elements) {
  EMBER_ASSIGN_OR_RETURN(DenseRef dense, DenseOf(attr, ctx));
  EMBER_ASSIGN_OR_RETURN(Shaped shaped, ShapedOf(*dense.type));
  EMBER_ASSIGN_OR_RETURN(ir::ElementType et, ConvertElementType(*shaped.element));
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(et, shaped.dims));
  const bool i1 = IsI1(*shaped.element);
  const int64_t bytes = ir::StorageBytes(et);
  const size_t splat_size = i1 ? 1 : static_cast<size_t>(bytes);
  if (shape.element_count() < std::max<int64_t>(min_elements, 2) ||
      dense.bytes().size() != splat_size) {
    return std::nullopt;
  }
  EMBER_ASSIGN_OR_RETURN(ir::Shape scalar, ir::Shape::Make(et, {}));
  EMBER_ASSIGN_OR_RETURN(std::vector<uint8_t> value,
                         ExpandDense(dense.bytes(), 1, bytes, i1,
                                     dense.wire_i1 ? I1Layout::kWire : I1Layout::kBytes));
  EMBER_ASSIGN_OR_RETURN(ir::Literal literal, ir::Literal::FromBytes(scalar, value));
  return literal;
}

namespace {
// Records the element type of a typed scalar attribute (for the handlers that check it).
ir::Attribute WithScalarType(ir::Attribute a, const Type* type) {
  if (type != nullptr) {
    absl::StatusOr<ir::ElementType> et = ConvertElementType(*type);
    if (et.ok()) a.scalar_type = *et;
  }
  return a;
}
}  // namespace

absl::StatusOr<ir::Attribute> ConvertGeneric(const Attribute& attr, const ImportContext& ctx) {
  switch (attr.kind) {
    case AttrKind::kInteger: {
      if (attr.type && attr.type->kind == TypeKind::kInteger && attr.type->width == 1) {
        EMBER_ASSIGN_OR_RETURN(bool b, ReadBool(attr));
        return ir::Attribute::Bool(b);
      }
      return WithScalarType(ir::Attribute::Int(attr.IntValue()), attr.type.get());
    }
    case AttrKind::kFloat: {
      EMBER_ASSIGN_OR_RETURN(double f, ReadFloat(attr));
      return WithScalarType(ir::Attribute::Float(f), attr.type.get());
    }
    case AttrKind::kString:
    case AttrKind::kSymbolRef: {
      EMBER_ASSIGN_OR_RETURN(std::string s, ReadString(attr));
      return ir::Attribute::String(std::move(s));
    }
    case AttrKind::kUnit: return ir::Attribute::Bool(true);
    case AttrKind::kDenseElements:
    case AttrKind::kDenseResource: {
      EMBER_ASSIGN_OR_RETURN(ir::Literal literal, ReadLiteral(attr, ctx));
      return ir::Attribute::OfLiteral(std::move(literal));
    }
    case AttrKind::kDenseArray: {
      if (attr.type && attr.type->kind == TypeKind::kInteger && attr.type->width == 1) {
        EMBER_ASSIGN_OR_RETURN(std::vector<bool> b, ReadBools(attr, ctx));
        return ir::Attribute::Bools(std::move(b));
      }
      if (attr.type && attr.type->kind == TypeKind::kInteger) {
        EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadInts(attr, ctx));
        return WithScalarType(ir::Attribute::Ints(std::move(v)), attr.type.get());
      }
      break;
    }
    case AttrKind::kType: {
      if (!attr.type) break;
      return TypeAttribute(*attr.type);
    }
    case AttrKind::kArray: break;
    case AttrKind::kDictionary: break;
    default: break;
  }
  if (attr.kind == AttrKind::kArray || IsVhlo(attr, "array_v1")) {
    EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> elements, ReadArray(attr));
    std::vector<ir::Attribute> list;
    bool all_ints = !elements.empty();
    for (const AttrPtr& e : elements) {
      if (!e) return Unexpected(attr, "an array without null elements");
      EMBER_ASSIGN_OR_RETURN(ir::Attribute c, ConvertGeneric(*e, ctx));
      all_ints &= c.kind == ir::Attribute::Kind::kInt;
      list.push_back(std::move(c));
    }
    if (all_ints) {
      std::vector<int64_t> ints;
      for (const ir::Attribute& a : list) ints.push_back(a.i);
      return ir::Attribute::Ints(std::move(ints));
    }
    return ir::Attribute::List(std::move(list));
  }
  if (attr.kind == AttrKind::kDictionary || IsVhlo(attr, "dict_v1")) {
    EMBER_ASSIGN_OR_RETURN(ir::AttributeMap map, ConvertDictionary(attr, ctx));
    return ir::Attribute::Dict(map.entries());
  }
  if (attr.kind == AttrKind::kDialect && attr.dialect == "vhlo") {
    if (attr.name == "integer_v1") {
      EMBER_ASSIGN_OR_RETURN(int64_t v, ReadInt(attr));
      const DialectParam* type = FindParam(attr, "type");
      return WithScalarType(ir::Attribute::Int(v), type != nullptr ? type->type.get() : nullptr);
    }
    if (attr.name == "bool_v1") {
      EMBER_ASSIGN_OR_RETURN(bool v, ReadBool(attr));
      return ir::Attribute::Bool(v);
    }
    if (attr.name == "float_v1") {
      EMBER_ASSIGN_OR_RETURN(double v, ReadFloat(attr));
      const DialectParam* type = FindParam(attr, "type");
      return WithScalarType(ir::Attribute::Float(v), type != nullptr ? type->type.get() : nullptr);
    }
    if (attr.name == "tensor_v1") {
      EMBER_ASSIGN_OR_RETURN(ir::Literal literal, ReadLiteral(attr, ctx));
      return ir::Attribute::OfLiteral(std::move(literal));
    }
    if (attr.name == "type_v1") {
      const DialectParam* v = FindParam(attr, "value");
      if (v != nullptr && v->type) return TypeAttribute(*v->type);
    }
  }
  if (const DialectParam* v = DialectValueParam(attr);
      v != nullptr && v->kind == DialectParam::Kind::kString) {
    return ir::Attribute::String(v->s);  // enums and #vhlo.string_v1
  }
  EMBER_ASSIGN_OR_RETURN(std::optional<ir::Attribute> shardy, ImportShardyAttribute(attr));
  if (shardy.has_value()) return *std::move(shardy);
  // Not modelled in the IR (locations, sharding rules, opaque dialect attributes): keep the text.
  if (attr.kind == AttrKind::kOpaque) return ir::Attribute::String(attr.str);
  return ir::Attribute::String(PrintAttribute(attr));
}

absl::StatusOr<ir::AttributeMap> ConvertDictionary(const Attribute& attr,
                                                   const ImportContext& ctx) {
  EMBER_ASSIGN_OR_RETURN(auto entries, ReadDict(attr));
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  ir::AttributeMap map;
  for (const auto& [name, value] : entries) {
    if (!value) return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' is null"));
    absl::StatusOr<ir::Attribute> converted = ConvertGeneric(*value, ctx);
    // An empty mhlo.sharding (older JAX exports) says nothing: it stays an empty string.
    if (converted.ok() && name == "mhlo.sharding" && converted->kind == ir::Attribute::Kind::kString &&
        !converted->s.empty()) {
      converted = ImportGspmdSharding(converted->s);
    }
    if (!converted.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("attribute '", name, "': ", converted.status().message()));
    }
    map.Set(name, *std::move(converted));
  }
  return map;
}

}  // namespace ember::frontend::importer
