// Types (builtin and VHLO) and locations (FileLineCol, Name, CallSite, Fused) of the generic MLIR
// tree, converted to Ember's ValueType and Location.
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/import/import_internal.h"

namespace ember::frontend::importer {
namespace {

const DialectParam* FindParam(const Type& type, const char* name) {
  for (const DialectParam& p : type.params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// Integer storage type of a quantized type: signedness comes from the type's flags (VHLO) or its
// spelling (i8 = signed, u8 = unsigned), the width from the type.
absl::StatusOr<ir::ElementType> StorageElementType(bool is_signed, int64_t bits) {
  return ir::ElementTypeFromName(absl::StrCat(is_signed ? "i" : "ui", bits));
}

// Reads the body of a `!quant.uniform<...>` spelling (whitespace already normalized by the text
// parser, but tolerated anywhere):
//   storage ['<' min ':' max '>'] ':' expressed [':' dim] ',' (param | '{' param {',' param} '}')
//   param = scale [':' zero_point]
class QuantTextReader {
 public:
  explicit QuantTextReader(const std::string& text) : text_(text) {}

  absl::StatusOr<ir::QuantizedType> Read() {
    const std::string prefix = "!quant.uniform";
    if (text_.compare(0, prefix.size(), prefix) != 0) return Error("expected !quant.uniform");
    pos_ = prefix.size();
    if (!Eat('<')) return Error("expected '<'");
    ir::QuantizedType q;
    // Storage type: i<N> or u<N>.
    Skip();
    if (pos_ >= text_.size() || (text_[pos_] != 'i' && text_[pos_] != 'u')) {
      return Error("expected a storage type i<N> or u<N>");
    }
    const bool is_signed = text_[pos_++] == 'i';
    std::optional<int64_t> bits = Integer();
    if (!bits.has_value()) return Error("expected the storage type's width");
    absl::StatusOr<ir::ElementType> storage = StorageElementType(is_signed, *bits);
    if (!storage.ok()) return Error(absl::StrCat("unsupported storage type ", is_signed ? "i" : "u", *bits));
    q.storage_type = *storage;
    q.storage_min = ir::QuantizedType::StorageTypeMin(q.storage_type);
    q.storage_max = ir::QuantizedType::StorageTypeMax(q.storage_type);
    if (Eat('<')) {
      std::optional<int64_t> lo = Integer();
      if (!lo.has_value() || !Eat(':')) return Error("expected storage_min ':'");
      std::optional<int64_t> hi = Integer();
      if (!hi.has_value() || !Eat('>')) return Error("expected storage_max '>'");
      q.storage_min = *lo;
      q.storage_max = *hi;
    }
    if (!Eat(':')) return Error("expected ':' before the expressed type");
    Skip();
    size_t end = pos_;
    while (end < text_.size() && std::isalnum(static_cast<unsigned char>(text_[end]))) ++end;
    absl::StatusOr<ir::ElementType> expressed =
        ir::ElementTypeFromName(text_.substr(pos_, end - pos_));
    if (!expressed.ok() || !ir::IsFloat(*expressed)) {
      return Error(absl::StrCat("expressed type '", text_.substr(pos_, end - pos_),
                                "' is not a float type"));
    }
    q.expressed_type = *expressed;
    pos_ = end;
    if (Eat(':')) {
      std::optional<int64_t> dim = Integer();
      if (!dim.has_value()) return Error("expected the quantized dimension");
      q.quantized_dimension = *dim;
    }
    if (!Eat(',')) return Error("expected ',' before the scales");
    const bool braced = Eat('{');
    if (braced != q.quantized_dimension.has_value()) {
      return Error(braced ? "per-tensor parameters must not be braced"
                          : "per-axis parameters must be in braces");
    }
    do {
      EMBER_RETURN_IF_ERROR(Param(&q));
    } while (braced && Eat(','));
    if (braced && !Eat('}')) return Error("expected '}'");
    if (!Eat('>')) return Error("expected '>'");
    Skip();
    if (pos_ != text_.size()) return Error("unexpected trailing text");
    return q;
  }

 private:
  absl::Status Param(ir::QuantizedType* q) {
    Skip();
    const char* begin = text_.c_str() + pos_;
    char* end = nullptr;
    const double scale = std::strtod(begin, &end);
    if (end == begin) return Error("expected a scale");
    pos_ += static_cast<size_t>(end - begin);
    int64_t zero_point = 0;
    if (Eat(':')) {
      std::optional<int64_t> zp = Integer();
      if (!zp.has_value()) return Error("expected a zero point");
      zero_point = *zp;
    }
    q->scales.push_back(scale);
    q->zero_points.push_back(zero_point);
    return absl::OkStatus();
  }
  void Skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Eat(char c) {
    Skip();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::optional<int64_t> Integer() {
    Skip();
    const char* begin = text_.c_str() + pos_;
    if (*begin != '-' && *begin != '+' && !std::isdigit(static_cast<unsigned char>(*begin))) {
      return std::nullopt;
    }
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(begin, &end, 10);
    if (end == begin || errno != 0) return std::nullopt;
    pos_ += static_cast<size_t>(end - begin);
    return static_cast<int64_t>(v);
  }
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat("quantized type ", text_, ": ", what,
                                                   " at offset ", pos_));
  }

  const std::string& text_;
  size_t pos_ = 0;
};

bool IsQuantizedElement(const Type& type) {
  return (type.kind == TypeKind::kOpaque && type.dialect == "quant") ||
         (type.kind == TypeKind::kDialect && type.dialect == "vhlo" &&
          (type.name == "quant_v1" || type.name == "quant_per_axis_v1"));
}

absl::StatusOr<int64_t> IntOf(const Type& type, const char* name) {
  const DialectParam* p = FindParam(type, name);
  if (p == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("malformed ", PrintType(type), ": no ", name));
  }
  return p->kind == DialectParam::Kind::kUInt ? static_cast<int64_t>(p->u) : p->i;
}

absl::StatusOr<double> DoubleOf(const DialectParam& p) {
  if (p.kind != DialectParam::Kind::kFloatBits || p.words.empty()) {
    return absl::InvalidArgumentError("malformed quantization scale");
  }
  double d;
  static_assert(sizeof(d) == sizeof(p.words[0]));
  std::memcpy(&d, &p.words[0], sizeof(d));
  return d;
}

// !vhlo.quant_v1 / !vhlo.quant_per_axis_v1 (bytecode codes 24 and 30).
absl::StatusOr<ir::QuantizedType> ConvertVhloQuantized(const Type& type) {
  ir::QuantizedType q;
  const DialectParam* storage = FindParam(type, "storage_type");
  const DialectParam* expressed = FindParam(type, "expressed_type");
  if (storage == nullptr || !storage->type || expressed == nullptr || !expressed->type) {
    return absl::InvalidArgumentError(absl::StrCat("malformed ", PrintType(type)));
  }
  EMBER_ASSIGN_OR_RETURN(int64_t flags, IntOf(type, "flags"));
  EMBER_ASSIGN_OR_RETURN(ir::ElementType storage_bits, ConvertElementType(*storage->type));
  if (!ir::IsInteger(storage_bits)) {
    return absl::InvalidArgumentError(
        absl::StrCat(PrintType(type), ": storage type is not an integer type"));
  }
  EMBER_ASSIGN_OR_RETURN(q.storage_type,
                         StorageElementType((flags & 1) != 0, ir::BitWidth(storage_bits)));
  EMBER_ASSIGN_OR_RETURN(q.expressed_type, ConvertElementType(*expressed->type));
  EMBER_ASSIGN_OR_RETURN(q.storage_min, IntOf(type, "storage_type_min"));
  EMBER_ASSIGN_OR_RETURN(q.storage_max, IntOf(type, "storage_type_max"));
  if (type.name == "quant_v1") {
    const DialectParam* scale = FindParam(type, "scale");
    if (scale == nullptr) return absl::InvalidArgumentError("malformed !vhlo.quant_v1: no scale");
    EMBER_ASSIGN_OR_RETURN(double s, DoubleOf(*scale));
    EMBER_ASSIGN_OR_RETURN(int64_t zp, IntOf(type, "zero_point"));
    q.scales = {s};
    q.zero_points = {zp};
  } else {
    EMBER_ASSIGN_OR_RETURN(int64_t dim, IntOf(type, "quantized_dimension"));
    q.quantized_dimension = dim;
    const DialectParam* scales = FindParam(type, "scales");
    const DialectParam* zps = FindParam(type, "zero_points");
    if (scales == nullptr || zps == nullptr) {
      return absl::InvalidArgumentError("malformed !vhlo.quant_per_axis_v1");
    }
    for (const DialectParam& s : scales->list) {
      EMBER_ASSIGN_OR_RETURN(double d, DoubleOf(s));
      q.scales.push_back(d);
    }
    for (const DialectParam& z : zps->list) q.zero_points.push_back(z.i);
  }
  return q;
}

absl::StatusOr<ir::QuantizedType> ConvertQuantizedType(const Type& type) {
  if (type.kind == TypeKind::kOpaque) return QuantTextReader(type.name).Read();
  return ConvertVhloQuantized(type);
}

}  // namespace

absl::StatusOr<std::string> ElementSpelling(const Type& type) {
  switch (type.kind) {
    case TypeKind::kInteger:
      switch (type.signedness) {
        case Signedness::kSignless: return absl::StrCat("i", type.width);
        case Signedness::kSigned: return absl::StrCat("si", type.width);
        case Signedness::kUnsigned: return absl::StrCat("ui", type.width);
      }
      break;
    case TypeKind::kFloat: return std::string(FloatKindName(type.float_kind));
    case TypeKind::kComplex: {
      if (!type.element) break;
      EMBER_ASSIGN_OR_RETURN(std::string inner, ElementSpelling(*type.element));
      return absl::StrCat("complex<", inner, ">");
    }
    case TypeKind::kDialect: {
      if (type.dialect != "vhlo") break;
      const std::string& n = type.name;
      if (n == "bool_v1") return std::string("i1");
      if (n == "tf31_v1") return std::string("tf32");
      if (n == "complex_v1") {
        const DialectParam* e = FindParam(type, "element");
        if (e == nullptr || !e->type) break;
        EMBER_ASSIGN_OR_RETURN(std::string inner, ElementSpelling(*e->type));
        return absl::StrCat("complex<", inner, ">");
      }
      if (n.size() > 3 && n.substr(n.size() - 3) == "_v1" && n != "index_v1" &&
          n != "tf31_v1" && n.find("quant") == std::string::npos) {
        return n.substr(0, n.size() - 3);  // i8_v1 -> i8, f8E4M3FN_v1 -> f8E4M3FN
      }
      break;
    }
    default: break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("element type ", PrintType(type), " is not supported"));
}

absl::StatusOr<ir::ElementType> ConvertElementType(const Type& type) {
  // `index` (the shape operands of the dynamic ops, tensor<?xindex>) is a 64-bit integer, as
  // XLA reads it; MLIR stores index elements as 64-bit integers too.
  if (type.kind == TypeKind::kIndex ||
      (type.kind == TypeKind::kDialect && type.dialect == "vhlo" && type.name == "index_v1")) {
    return ir::ElementType::kS64;
  }
  EMBER_ASSIGN_OR_RETURN(std::string name, ElementSpelling(type));
  absl::StatusOr<ir::ElementType> et = ir::ElementTypeFromName(name);
  if (!et.ok() || *et == ir::ElementType::kToken || *et == ir::ElementType::kInvalid) {
    return absl::InvalidArgumentError(
        absl::StrCat("element type ", PrintType(type), " is not supported"));
  }
  return *et;
}

absl::StatusOr<ir::ValueType> ConvertType(const Type& type) {
  std::vector<int64_t> dims;
  const Type* element = nullptr;
  const Attribute* encoding = nullptr;
  bool buffer = false;
  if (type.kind == TypeKind::kMemRef) {
    // StableHLO's buffer type: a plain memref. Memory space 0 is MLIR's default one (JAX's
    // pin(to='hbm') writes it); other spaces (1 is a TPU's vmem) and layouts are not taken.
    const bool default_space =
        !type.memory_space ||
        (type.memory_space->kind == AttrKind::kInteger && type.memory_space->IntValue() == 0);
    if (type.encoding || !default_space) {
      return absl::InvalidArgumentError(absl::StrCat(
          "type ", PrintType(type),
          ": a buffer takes no layout and no memory space but the default (0)"));
    }
    dims = type.shape;
    element = type.element.get();
    buffer = true;
  } else if (type.kind == TypeKind::kRankedTensor) {
    dims = type.shape;
    element = type.element.get();
    encoding = type.encoding.get();
  } else if (type.kind == TypeKind::kTuple) {
    std::vector<ir::ValueType> elements;
    for (const TypePtr& t : type.types) {
      if (!t) return absl::InvalidArgumentError("tuple type with a null element");
      EMBER_ASSIGN_OR_RETURN(ir::ValueType e, ConvertType(*t));
      elements.push_back(std::move(e));
    }
    return ir::ValueType::Tuple(std::move(elements));
  } else if (type.kind == TypeKind::kDialect &&
             ((type.dialect == "stablehlo" && type.name == "token") ||
              (type.dialect == "vhlo" && type.name == "token_v1"))) {
    return ir::ValueType::Token();
  } else if (type.kind == TypeKind::kDialect && type.dialect == "vhlo" &&
             (type.name == "tensor_v1" || type.name == "buffer_v1")) {
    const DialectParam* shape = FindParam(type, "shape");
    const DialectParam* e = FindParam(type, "element");
    if (shape == nullptr || e == nullptr || !e->type) {
      return absl::InvalidArgumentError(absl::StrCat("malformed !vhlo.", type.name));
    }
    for (const DialectParam& d : shape->list) dims.push_back(d.i);
    element = e->type.get();
    if (const DialectParam* enc = FindParam(type, "encoding")) encoding = enc->attr.get();
    buffer = type.name == "buffer_v1";
  } else if (type.kind == TypeKind::kDialect &&
             ((type.dialect == "stablehlo" && type.name == "future") ||
              (type.dialect == "vhlo" && type.name == "future_v1"))) {
    // !stablehlo.future<T...>: the spec's FutureElementTypes are tensors.
    std::vector<ir::ValueType> elements;
    if (const DialectParam* types = FindParam(type, "types")) {
      for (const DialectParam& t : types->list) {
        if (!t.type) return absl::InvalidArgumentError("future type with a null element");
        EMBER_ASSIGN_OR_RETURN(ir::ValueType v, ConvertType(*t.type));
        if (!v.is_tensor()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "type ", PrintType(type), ": a future holds tensors, not ", v.ToString()));
        }
        elements.push_back(std::move(v));
      }
    }
    if (elements.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("type ", PrintType(type), ": a future holds at least one tensor"));
    }
    return ir::ValueType::Future(std::move(elements));
  } else if (type.kind == TypeKind::kDialect && type.dialect == "vhlo" &&
             type.name == "tuple_v1") {
    std::vector<ir::ValueType> elements;
    if (const DialectParam* types = FindParam(type, "types")) {
      for (const DialectParam& t : types->list) {
        if (!t.type) return absl::InvalidArgumentError("tuple type with a null element");
        EMBER_ASSIGN_OR_RETURN(ir::ValueType v, ConvertType(*t.type));
        elements.push_back(std::move(v));
      }
    }
    return ir::ValueType::Tuple(std::move(elements));
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("type ", PrintType(type), " is not supported (Ember takes static tensors, ",
                     "tokens, tuples, futures and buffers)"));
  }
  // `?` dims (shape-polymorphic programs) import as ir::kDynamicDim; refine_shapes makes them
  // static before compilation. Any other negative size is malformed.
  for (int64_t& d : dims) {
    if (d == kDynamicDim) {
      d = ir::kDynamicDim;
    } else if (d < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("type ", PrintType(type), " has a negative dimension size ", d));
    }
  }
  // The only encoding StableHLO defines: bounds of dynamic dims (#stablehlo.type_extensions,
  // spelled #stablehlo.bounds<...> in text, #vhlo.type_extensions_v1 in artifacts).
  std::vector<int64_t> bounds;
  if (encoding != nullptr) {
    const DialectParam* list = nullptr;
    if (encoding->kind == AttrKind::kDialect &&
        ((encoding->dialect == "stablehlo" && encoding->name == "type_extensions") ||
         (encoding->dialect == "vhlo" && encoding->name == "type_extensions_v1"))) {
      for (const DialectParam& p : encoding->params) {
        if (p.name == "bounds" && p.kind == DialectParam::Kind::kList) list = &p;
      }
    }
    if (list == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor encoding ", PrintAttribute(*encoding), " is not supported"));
    }
    for (const DialectParam& b : list->list) {
      if (b.kind != DialectParam::Kind::kInt) {
        return absl::InvalidArgumentError(
            absl::StrCat("type ", PrintType(type), ": bounds must be integers"));
      }
      bounds.push_back(b.i == kDynamicDim ? ir::kDynamicDim : b.i);
    }
  }
  if (element == nullptr) return absl::InvalidArgumentError("tensor type without element type");
  if (IsQuantizedElement(*element)) {
    if (buffer || !bounds.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "type ", PrintType(type), buffer ? ": quantized buffers are not supported"
                                           : ": bounded quantized tensors are not supported"));
    }
    EMBER_ASSIGN_OR_RETURN(ir::QuantizedType q, ConvertQuantizedType(*element));
    EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::MakeQuantized(q, dims));
    return ir::ValueType::Tensor(std::move(shape));
  }
  EMBER_ASSIGN_OR_RETURN(ir::ElementType et, ConvertElementType(*element));
  absl::StatusOr<ir::Shape> shape = ir::Shape::MakeBounded(et, dims, bounds);
  if (!shape.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("type ", PrintType(type), ": ", shape.status().message()));
  }
  return buffer ? ir::ValueType::Buffer(*std::move(shape)) : ir::ValueType::Tensor(*std::move(shape));
}

absl::StatusOr<FunctionSignature> ReadFunctionType(const Attribute& attr) {
  const Type* type = nullptr;
  if (attr.kind == AttrKind::kType) {
    type = attr.type.get();
  } else if (IsVhlo(attr, "type_v1") && !attr.params.empty()) {
    type = attr.params[0].type.get();
  }
  if (type == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a function type, got ", PrintAttribute(attr)));
  }
  FunctionSignature sig;
  if (type->kind == TypeKind::kFunction) {
    sig.inputs = type->types;
    sig.results = type->results;
    return sig;
  }
  if (type->kind == TypeKind::kDialect && type->dialect == "vhlo" && type->name == "func_v1") {
    if (const DialectParam* in = FindParam(*type, "inputs")) {
      for (const DialectParam& t : in->list) sig.inputs.push_back(t.type);
    }
    if (const DialectParam* out = FindParam(*type, "outputs")) {
      for (const DialectParam& t : out->list) sig.results.push_back(t.type);
    }
    return sig;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("expected a function type, got ", PrintType(*type)));
}

namespace {

// Fills file/line/column from the innermost file location: a call site's callee (the frame
// the op was traced in) before its caller, a fused location's first child that has one.
bool FindFileLocation(const Attribute* loc, ir::Location* out, int depth) {
  if (loc == nullptr || depth > 256) return false;
  switch (loc->kind) {
    case AttrKind::kFileLineColLoc:
      out->file = loc->str;
      out->line = static_cast<int64_t>(loc->line);
      out->column = static_cast<int64_t>(loc->column);
      return true;
    case AttrKind::kNameLoc:
      return !loc->elements.empty() && FindFileLocation(loc->elements[0].get(), out, depth + 1);
    case AttrKind::kCallSiteLoc:
    case AttrKind::kFusedLoc:
      for (const AttrPtr& child : loc->elements) {
        if (FindFileLocation(child.get(), out, depth + 1)) return true;
      }
      return false;
    default: return false;
  }
}

// The outermost NameLoc's name (JAX: "jit(f)/jit(main)/add"), searching the same way.
bool FindName(const Attribute* loc, std::string* name, int depth) {
  if (loc == nullptr || depth > 256) return false;
  switch (loc->kind) {
    case AttrKind::kNameLoc: *name = loc->str; return true;
    case AttrKind::kCallSiteLoc:
    case AttrKind::kFusedLoc:
      for (const AttrPtr& child : loc->elements) {
        if (FindName(child.get(), name, depth + 1)) return true;
      }
      return false;
    default: return false;
  }
}

}  // namespace

ir::Location ConvertLocation(const AttrPtr& loc) {
  ir::Location out;
  FindFileLocation(loc.get(), &out, 0);
  FindName(loc.get(), &out.name, 0);
  return out;
}

std::string DescribeOp(const std::string& name, const ir::Location& loc) {
  return loc.known() ? absl::StrCat(name, " at ", loc.ToString()) : name;
}

std::string DescribeOp(const Operation& op) {
  return DescribeOp(op.name, ConvertLocation(op.loc));
}

}  // namespace ember::frontend::importer
