// Types (builtin and VHLO) and locations (FileLineCol, Name, CallSite, Fused) of the generic MLIR
// tree, converted to Ember's ValueType and Location.
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
  if (type.kind == TypeKind::kRankedTensor) {
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
             type.name == "tensor_v1") {
    const DialectParam* shape = FindParam(type, "shape");
    const DialectParam* e = FindParam(type, "element");
    if (shape == nullptr || e == nullptr || !e->type) {
      return absl::InvalidArgumentError("malformed !vhlo.tensor_v1");
    }
    for (const DialectParam& d : shape->list) dims.push_back(d.i);
    element = e->type.get();
    if (const DialectParam* enc = FindParam(type, "encoding")) encoding = enc->attr.get();
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
                     "tokens and tuples)"));
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
  if (encoding != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor encoding ", PrintAttribute(*encoding), " is not supported"));
  }
  if (element == nullptr) return absl::InvalidArgumentError("tensor type without element type");
  EMBER_ASSIGN_OR_RETURN(ir::ElementType et, ConvertElementType(*element));
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::MakeDynamic(et, dims));
  return ir::ValueType::Tensor(std::move(shape));
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
