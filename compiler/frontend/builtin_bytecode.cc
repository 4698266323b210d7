// Builtin dialect attribute and type encodings in MLIR bytecode (codes = position in upstream's
// BuiltinDialectBytecode.td lists; facts in shared/reference/mlir_bytecode.md §2).
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/frontend/bytecode_internal.h"

namespace ember::frontend::bytecode {
namespace {

std::shared_ptr<Attribute> NewAttr(AttrKind kind) {
  auto a = std::make_shared<Attribute>();
  a->kind = kind;
  return a;
}

std::shared_ptr<Type> NewType(TypeKind kind) {
  auto t = std::make_shared<Type>();
  t->kind = kind;
  return t;
}

std::shared_ptr<Type> FloatType(FloatKind kind) {
  auto t = NewType(TypeKind::kFloat);
  t->float_kind = kind;
  return t;
}

absl::StatusOr<std::string> StringOf(const AttrPtr& a, EntryReader& r) {
  if (!a || a->kind != AttrKind::kString) return r.Error("expected a string attribute");
  return a->str;
}

// Affine expressions (code 23) are rendered to MLIR text; nesting is bounded.
absl::StatusOr<std::string> ReadAffineExpr(EntryReader& r, int depth) {
  if (depth > 64) return r.Error("affine expression nests too deeply");
  EMBER_ASSIGN_OR_RETURN(uint64_t kind, r.VarInt());
  switch (kind) {
    case 0: {
      EMBER_ASSIGN_OR_RETURN(uint64_t pos, r.VarInt());
      return absl::StrCat("d", pos);
    }
    case 1: {
      EMBER_ASSIGN_OR_RETURN(uint64_t pos, r.VarInt());
      return absl::StrCat("s", pos);
    }
    case 2: {
      EMBER_ASSIGN_OR_RETURN(int64_t c, r.SignedVarInt());
      return absl::StrCat(c);
    }
    case 3: case 4: case 5: case 6: case 7: {
      static const char* kOps[] = {" + ", " * ", " mod ", " floordiv ", " ceildiv "};
      EMBER_ASSIGN_OR_RETURN(std::string lhs, ReadAffineExpr(r, depth + 1));
      EMBER_ASSIGN_OR_RETURN(std::string rhs, ReadAffineExpr(r, depth + 1));
      return "(" + lhs + kOps[kind - 3] + rhs + ")";
    }
    default: return r.Error(absl::StrCat("unknown affine expression kind ", kind));
  }
}

absl::StatusOr<unsigned> IntegerAttrWidth(const TypePtr& type, EntryReader& r) {
  if (type && type->kind == TypeKind::kInteger) return type->width;
  if (type && type->kind == TypeKind::kIndex) return 64u;
  return r.Error("integer attribute of non-integer type " + (type ? PrintType(*type) : "?"));
}

}  // namespace

absl::StatusOr<AttrPtr> DecodeBuiltinAttribute(EntryReader& r) {
  EMBER_ASSIGN_OR_RETURN(uint64_t code, r.VarInt());
  switch (code) {
    case 0: {  // ArrayAttr
      auto a = NewAttr(AttrKind::kArray);
      EMBER_ASSIGN_OR_RETURN(a->elements, r.AttrList());
      return AttrPtr(a);
    }
    case 1: {  // DictionaryAttr
      auto a = NewAttr(AttrKind::kDictionary);
      EMBER_ASSIGN_OR_RETURN(uint64_t n, r.Count());
      for (uint64_t i = 0; i < n; ++i) {
        EMBER_ASSIGN_OR_RETURN(AttrPtr name, r.Attr());
        EMBER_ASSIGN_OR_RETURN(std::string key, StringOf(name, r));
        EMBER_ASSIGN_OR_RETURN(AttrPtr value, r.Attr());
        a->entries.push_back({std::move(key), std::move(value), false});
      }
      return AttrPtr(a);
    }
    case 2:    // StringAttr
    case 3: {  // StringAttr with type
      auto a = NewAttr(AttrKind::kString);
      EMBER_ASSIGN_OR_RETURN(a->str, r.String());
      if (code == 3) {
        EMBER_ASSIGN_OR_RETURN(a->type, r.TypeRef());
      }
      return AttrPtr(a);
    }
    case 4:    // FlatSymbolRefAttr
    case 5: {  // SymbolRefAttr
      auto a = NewAttr(AttrKind::kSymbolRef);
      EMBER_ASSIGN_OR_RETURN(AttrPtr root, r.Attr());
      EMBER_ASSIGN_OR_RETURN(a->str, StringOf(root, r));
      if (code == 5) {
        EMBER_ASSIGN_OR_RETURN(std::vector<AttrPtr> nested, r.AttrList());
        for (const AttrPtr& n : nested) {
          if (!n || n->kind != AttrKind::kSymbolRef || !n->strings.empty()) {
            return r.Error("nested symbol reference is not a flat symbol reference");
          }
          a->strings.push_back(n->str);
        }
      }
      return AttrPtr(a);
    }
    case 6: {  // TypeAttr
      auto a = NewAttr(AttrKind::kType);
      EMBER_ASSIGN_OR_RETURN(a->type, r.TypeRef());
      return AttrPtr(a);
    }
    case 7: return AttrPtr(NewAttr(AttrKind::kUnit));
    case 8: {  // IntegerAttr
      auto a = NewAttr(AttrKind::kInteger);
      EMBER_ASSIGN_OR_RETURN(a->type, r.TypeRef());
      EMBER_ASSIGN_OR_RETURN(unsigned width, IntegerAttrWidth(a->type, r));
      EMBER_ASSIGN_OR_RETURN(a->words, r.APInt(width));
      return AttrPtr(a);
    }
    case 9: {  // FloatAttr
      auto a = NewAttr(AttrKind::kFloat);
      EMBER_ASSIGN_OR_RETURN(a->type, r.TypeRef());
      if (!a->type || a->type->kind != TypeKind::kFloat) {
        return r.Error("float attribute of non-float type");
      }
      EMBER_ASSIGN_OR_RETURN(a->words, r.APInt(FloatKindBitWidth(a->type->float_kind)));
      return AttrPtr(a);
    }
    case 10: {  // CallSiteLoc
      auto a = NewAttr(AttrKind::kCallSiteLoc);
      EMBER_ASSIGN_OR_RETURN(AttrPtr callee, r.Attr());
      EMBER_ASSIGN_OR_RETURN(AttrPtr caller, r.Attr());
      a->elements = {std::move(callee), std::move(caller)};
      return AttrPtr(a);
    }
    case 11: {  // FileLineColLoc
      auto a = NewAttr(AttrKind::kFileLineColLoc);
      EMBER_ASSIGN_OR_RETURN(AttrPtr file, r.Attr());
      EMBER_ASSIGN_OR_RETURN(a->str, StringOf(file, r));
      EMBER_ASSIGN_OR_RETURN(a->line, r.VarInt());
      EMBER_ASSIGN_OR_RETURN(a->column, r.VarInt());
      a->loc_fields = 2;
      return AttrPtr(a);
    }
    case 12:    // FusedLoc
    case 13: {  // FusedLoc with metadata
      auto a = NewAttr(AttrKind::kFusedLoc);
      EMBER_ASSIGN_OR_RETURN(a->elements, r.AttrList());
      if (code == 13) {
        EMBER_ASSIGN_OR_RETURN(a->metadata, r.Attr());
      }
      return AttrPtr(a);
    }
    case 14: {  // NameLoc
      auto a = NewAttr(AttrKind::kNameLoc);
      EMBER_ASSIGN_OR_RETURN(AttrPtr name, r.Attr());
      EMBER_ASSIGN_OR_RETURN(a->str, StringOf(name, r));
      EMBER_ASSIGN_OR_RETURN(AttrPtr child, r.Attr());
      a->elements = {std::move(child)};
      return AttrPtr(a);
    }
    case 15: return AttrPtr(NewAttr(AttrKind::kUnknownLoc));
    case 16: {  // DenseResourceElementsAttr
      auto a = NewAttr(AttrKind::kDenseResource);
      EMBER_ASSIGN_OR_RETURN(a->type, r.TypeRef());
      EMBER_ASSIGN_OR_RETURN(uint64_t handle, r.VarInt());
      const auto& resources = r.state().dialect_resources;
      if (handle >= resources.size()) {
        return r.Error(absl::StrCat("resource handle ", handle, " out of range (",
                                    resources.size(), " dialect resources)"));
      }
      a->str = resources[handle].key;
      a->data = resources[handle].blob;
      return AttrPtr(a);
    }
    case 17: {  // DenseArrayAttr
      auto a = NewAttr(AttrKind::kDenseArray);
      EMBER_ASSIGN_OR_RETURN(a->type, r.TypeRef());
      EMBER_ASSIGN_OR_RETURN(a->count, r.VarInt());
      EMBER_ASSIGN_OR_RETURN(a->data, r.Blob());
      if (!a->type) return r.Error("dense array without element type");
      EMBER_ASSIGN_OR_RETURN(uint64_t bytes, ElementStorageBytes(*a->type));
      if (bytes == 0) bytes = 1;  // bools are one byte each in dense arrays
      if (a->count > a->data.size() || a->count * bytes != a->data.size()) {
        return r.Error(absl::StrCat("dense array of ", a->count, " elements has ",
                                    a->data.size(), " bytes"));
      }
      return AttrPtr(a);
    }
    case 18: {  // DenseIntOrFPElementsAttr
      auto a = NewAttr(AttrKind::kDenseElements);
      EMBER_ASSIGN_OR_RETURN(a->type, r.TypeRef());
      EMBER_ASSIGN_OR_RETURN(a->data, r.Blob());
      if (!a->type) return r.Error("dense elements without type");
      absl::Status s = ValidateDenseData(*a->type, a->data.size(), r.bytes());
      if (!s.ok()) return s;
      return AttrPtr(a);
    }
    case 19: {  // DenseStringElementsAttr
      auto a = NewAttr(AttrKind::kDenseString);
      EMBER_ASSIGN_OR_RETURN(a->type, r.TypeRef());
      EMBER_ASSIGN_OR_RETURN(uint64_t is_splat, r.VarInt());
      uint64_t n = 1;
      if (!is_splat) {
        if (!a->type || a->type->kind != TypeKind::kRankedTensor) {
          return r.Error("dense strings need a ranked tensor type");
        }
        absl::StatusOr<uint64_t> count = StaticElementCount(a->type->shape);
        if (!count.ok()) return r.Error(count.status().message());
        n = *count;
      }
      if (n > r.bytes().remaining()) return r.Error("dense string count exceeds the entry");
      for (uint64_t i = 0; i < n; ++i) {
        EMBER_ASSIGN_OR_RETURN(std::string s, r.String());
        a->strings.push_back(std::move(s));
      }
      return AttrPtr(a);
    }
    case 20: {  // SparseElementsAttr
      auto a = NewAttr(AttrKind::kSparseElements);
      EMBER_ASSIGN_OR_RETURN(a->type, r.TypeRef());
      EMBER_ASSIGN_OR_RETURN(AttrPtr indices, r.Attr());
      EMBER_ASSIGN_OR_RETURN(AttrPtr values, r.Attr());
      a->elements = {std::move(indices), std::move(values)};
      return AttrPtr(a);
    }
    case 21: {  // DistinctAttr
      auto a = NewAttr(AttrKind::kDistinct);
      EMBER_ASSIGN_OR_RETURN(AttrPtr referenced, r.Attr());
      a->elements = {std::move(referenced)};
      return AttrPtr(a);
    }
    case 22: {  // FileLineColRange
      auto a = NewAttr(AttrKind::kFileLineColLoc);
      EMBER_ASSIGN_OR_RETURN(AttrPtr file, r.Attr());
      EMBER_ASSIGN_OR_RETURN(a->str, StringOf(file, r));
      EMBER_ASSIGN_OR_RETURN(uint64_t k, r.VarInt());
      if (k > 4) return r.Error(absl::StrCat("file range with ", k, " fields"));
      uint64_t v[4] = {0, 0, 0, 0};
      for (uint64_t i = 0; i < k; ++i) {
        EMBER_ASSIGN_OR_RETURN(v[i], r.VarInt());
      }
      a->line = v[0];
      a->column = v[1];
      a->loc_fields = static_cast<uint8_t>(k);
      if (k == 3) {
        a->end_line = v[0];
        a->end_column = v[2];
        a->loc_fields = 4;
      } else if (k == 4) {
        a->end_line = v[2];
        a->end_column = v[3];
      }
      return AttrPtr(a);
    }
    case 23: {  // AffineMapAttr
      auto a = NewAttr(AttrKind::kAffineMap);
      EMBER_ASSIGN_OR_RETURN(uint64_t num_dims, r.VarInt());
      EMBER_ASSIGN_OR_RETURN(uint64_t num_symbols, r.VarInt());
      EMBER_ASSIGN_OR_RETURN(uint64_t num_results, r.Count());
      if (num_dims > r.bytes().file().size() || num_symbols > r.bytes().file().size()) {
        return r.Error("affine map dimension count is implausible");
      }
      std::vector<std::string> dims, syms, results;
      for (uint64_t i = 0; i < num_dims; ++i) dims.push_back(absl::StrCat("d", i));
      for (uint64_t i = 0; i < num_symbols; ++i) syms.push_back(absl::StrCat("s", i));
      for (uint64_t i = 0; i < num_results; ++i) {
        EMBER_ASSIGN_OR_RETURN(std::string e, ReadAffineExpr(r, 0));
        results.push_back(std::move(e));
      }
      a->str = "(" + absl::StrJoin(dims, ", ") + ")" +
               (syms.empty() ? "" : "[" + absl::StrJoin(syms, ", ") + "]") + " -> (" +
               absl::StrJoin(results, ", ") + ")";
      return AttrPtr(a);
    }
    default:
      // 24 (IntegerSetAttr) is staged upstream and not written by any producer we accept.
      return r.Error(absl::StrCat("unsupported builtin attribute code ", code));
  }
}

absl::StatusOr<TypePtr> DecodeBuiltinType(EntryReader& r) {
  EMBER_ASSIGN_OR_RETURN(uint64_t code, r.VarInt());
  switch (code) {
    case 0: {  // IntegerType
      EMBER_ASSIGN_OR_RETURN(uint64_t v, r.VarInt());
      const uint64_t sign = v & 3;
      const uint64_t width = v >> 2;
      if (sign == 3) return r.Error("invalid integer signedness");
      if (width == 0 || width > (1u << 24)) {
        return r.Error(absl::StrCat("invalid integer width ", width));
      }
      auto t = NewType(TypeKind::kInteger);
      t->width = static_cast<unsigned>(width);
      t->signedness = static_cast<Signedness>(sign);
      return TypePtr(t);
    }
    case 1: return TypePtr(NewType(TypeKind::kIndex));
    case 2: {  // FunctionType
      auto t = NewType(TypeKind::kFunction);
      EMBER_ASSIGN_OR_RETURN(t->types, r.TypeList());
      EMBER_ASSIGN_OR_RETURN(t->results, r.TypeList());
      return TypePtr(t);
    }
    case 3: return TypePtr(FloatType(FloatKind::kBF16));
    case 4: return TypePtr(FloatType(FloatKind::kF16));
    case 5: return TypePtr(FloatType(FloatKind::kF32));
    case 6: return TypePtr(FloatType(FloatKind::kF64));
    case 7: return TypePtr(FloatType(FloatKind::kF80));
    case 8: return TypePtr(FloatType(FloatKind::kF128));
    case 9: {  // ComplexType
      auto t = NewType(TypeKind::kComplex);
      EMBER_ASSIGN_OR_RETURN(t->element, r.TypeRef());
      return TypePtr(t);
    }
    case 10:    // MemRefType
    case 11: {  // MemRefType with memory space
      auto t = NewType(TypeKind::kMemRef);
      if (code == 11) {
        EMBER_ASSIGN_OR_RETURN(t->memory_space, r.Attr());
      }
      EMBER_ASSIGN_OR_RETURN(t->shape, r.SignedVarIntList());
      EMBER_ASSIGN_OR_RETURN(t->element, r.TypeRef());
      EMBER_ASSIGN_OR_RETURN(t->encoding, r.Attr());
      return TypePtr(t);
    }
    case 12: return TypePtr(NewType(TypeKind::kNone));
    case 13:    // RankedTensorType
    case 14: {  // RankedTensorType with encoding
      auto t = NewType(TypeKind::kRankedTensor);
      if (code == 14) {
        EMBER_ASSIGN_OR_RETURN(t->encoding, r.Attr());
      }
      EMBER_ASSIGN_OR_RETURN(t->shape, r.SignedVarIntList());
      EMBER_ASSIGN_OR_RETURN(t->element, r.TypeRef());
      return TypePtr(t);
    }
    case 15: {  // TupleType
      auto t = NewType(TypeKind::kTuple);
      EMBER_ASSIGN_OR_RETURN(t->types, r.TypeList());
      return TypePtr(t);
    }
    case 16:    // UnrankedMemRefType
    case 17: {  // UnrankedMemRefType with memory space
      auto t = NewType(TypeKind::kUnrankedMemRef);
      if (code == 17) {
        EMBER_ASSIGN_OR_RETURN(t->memory_space, r.Attr());
      }
      EMBER_ASSIGN_OR_RETURN(t->element, r.TypeRef());
      return TypePtr(t);
    }
    case 18: {  // UnrankedTensorType
      auto t = NewType(TypeKind::kUnrankedTensor);
      EMBER_ASSIGN_OR_RETURN(t->element, r.TypeRef());
      return TypePtr(t);
    }
    case 19:    // VectorType
    case 20: {  // VectorType with scalable dims
      auto t = NewType(TypeKind::kVector);
      if (code == 20) {
        EMBER_ASSIGN_OR_RETURN(uint64_t n, r.Count());
        for (uint64_t i = 0; i < n; ++i) {
          EMBER_ASSIGN_OR_RETURN(bool b, r.Bool());
          t->scalable_dims.push_back(b);
        }
      }
      EMBER_ASSIGN_OR_RETURN(t->shape, r.SignedVarIntList());
      EMBER_ASSIGN_OR_RETURN(t->element, r.TypeRef());
      if (!t->scalable_dims.empty() && t->scalable_dims.size() != t->shape.size()) {
        return r.Error("scalable dims do not match the vector rank");
      }
      return TypePtr(t);
    }
    case 21: return TypePtr(FloatType(FloatKind::kTF32));
    case 22: return TypePtr(FloatType(FloatKind::kF8E5M2));
    case 23: return TypePtr(FloatType(FloatKind::kF8E4M3));
    case 24: return TypePtr(FloatType(FloatKind::kF8E4M3FN));
    case 25: return TypePtr(FloatType(FloatKind::kF8E5M2FNUZ));
    case 26: return TypePtr(FloatType(FloatKind::kF8E4M3FNUZ));
    case 27: return TypePtr(FloatType(FloatKind::kF8E4M3B11FNUZ));
    case 28: return TypePtr(FloatType(FloatKind::kF8E3M4));
    case 29: return TypePtr(FloatType(FloatKind::kF4E2M1FN));
    case 30: return TypePtr(FloatType(FloatKind::kF6E2M3FN));
    case 31: return TypePtr(FloatType(FloatKind::kF6E3M2FN));
    case 32: return TypePtr(FloatType(FloatKind::kF8E8M0FNU));
    default: return r.Error(absl::StrCat("unknown builtin type code ", code));
  }
}

}  // namespace ember::frontend::bytecode
