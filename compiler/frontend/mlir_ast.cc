// Printer and structural equality for the generic MLIR tree (mlir_ast.h).
#include "compiler/frontend/mlir_ast.h"

#include <cstdio>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace ember::frontend {

const char* FloatKindName(FloatKind kind) {
  switch (kind) {
    case FloatKind::kBF16: return "bf16";
    case FloatKind::kF16: return "f16";
    case FloatKind::kF32: return "f32";
    case FloatKind::kF64: return "f64";
    case FloatKind::kF80: return "f80";
    case FloatKind::kF128: return "f128";
    case FloatKind::kTF32: return "tf32";
    case FloatKind::kF8E5M2: return "f8E5M2";
    case FloatKind::kF8E4M3: return "f8E4M3";
    case FloatKind::kF8E4M3FN: return "f8E4M3FN";
    case FloatKind::kF8E5M2FNUZ: return "f8E5M2FNUZ";
    case FloatKind::kF8E4M3FNUZ: return "f8E4M3FNUZ";
    case FloatKind::kF8E4M3B11FNUZ: return "f8E4M3B11FNUZ";
    case FloatKind::kF8E3M4: return "f8E3M4";
    case FloatKind::kF4E2M1FN: return "f4E2M1FN";
    case FloatKind::kF6E2M3FN: return "f6E2M3FN";
    case FloatKind::kF6E3M2FN: return "f6E3M2FN";
    case FloatKind::kF8E8M0FNU: return "f8E8M0FNU";
  }
  return "f?";
}

unsigned FloatKindBitWidth(FloatKind kind) {
  switch (kind) {
    case FloatKind::kBF16: case FloatKind::kF16: return 16;
    case FloatKind::kF32: return 32;
    case FloatKind::kF64: return 64;
    case FloatKind::kF80: return 80;
    case FloatKind::kF128: return 128;
    case FloatKind::kTF32: return 19;
    case FloatKind::kF4E2M1FN: return 4;
    case FloatKind::kF6E2M3FN: case FloatKind::kF6E3M2FN: return 6;
    default: return 8;
  }
}

int64_t Attribute::IntValue() const {
  if (words.empty()) return 0;
  uint64_t v = words[0];
  unsigned width = 64;
  if (type && type->kind == TypeKind::kInteger) width = type->width;
  if (width > 0 && width < 64) {
    const uint64_t sign = uint64_t{1} << (width - 1);
    v &= (sign << 1) - 1;
    if (type->signedness != Signedness::kUnsigned && (v & sign)) v |= ~((sign << 1) - 1);
  }
  return static_cast<int64_t>(v);
}

const Attribute* Operation::FindAttribute(const std::string& attr_name) const {
  for (const NamedAttribute& a : attributes) {
    if (a.name == attr_name) return a.value.get();
  }
  return nullptr;
}

namespace {

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      out += absl::StrFormat("\\%02X", c);
    }
  }
  return out + "\"";
}

std::string Hex(const std::vector<uint8_t>& data) {
  std::string out = "0x";
  for (uint8_t b : data) out += absl::StrFormat("%02X", b);
  return out;
}

std::string HexWords(const std::vector<uint64_t>& words) {
  if (words.empty()) return "0x0";
  std::string out = "0x";
  for (size_t i = words.size(); i-- > 0;) {
    out += (i + 1 == words.size()) ? absl::StrFormat("%X", words[i])
                                   : absl::StrFormat("%016X", words[i]);
  }
  return out;
}

std::string PrintShape(const std::vector<int64_t>& shape, const std::vector<bool>* scalable) {
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) {
    const bool sc = scalable != nullptr && i < scalable->size() && (*scalable)[i];
    if (sc) out += "[";
    out += shape[i] == kDynamicDim ? "?" : absl::StrCat(shape[i]);
    if (sc) out += "]";
    out += "x";
  }
  return out;
}

std::string PrintTypeOrNull(const TypePtr& t) { return t ? PrintType(*t) : "<<null type>>"; }
std::string PrintAttrOrNull(const AttrPtr& a) { return a ? PrintAttribute(*a) : "<<absent>>"; }

std::string PrintParam(const DialectParam& p) {
  std::string value;
  switch (p.kind) {
    case DialectParam::Kind::kInt: value = absl::StrCat(p.i); break;
    case DialectParam::Kind::kUInt: value = absl::StrCat(p.u); break;
    case DialectParam::Kind::kBool: value = p.u ? "true" : "false"; break;
    case DialectParam::Kind::kString: value = Quote(p.s); break;
    case DialectParam::Kind::kBytes:
      value = Hex(std::vector<uint8_t>(p.s.begin(), p.s.end()));
      value = "\"" + value + "\"";
      break;
    case DialectParam::Kind::kFloatBits: value = HexWords(p.words); break;
    case DialectParam::Kind::kType: value = PrintTypeOrNull(p.type); break;
    case DialectParam::Kind::kAttr: value = PrintAttrOrNull(p.attr); break;
    case DialectParam::Kind::kList: {
      std::vector<std::string> parts;
      for (const DialectParam& e : p.list) parts.push_back(PrintParam(e));
      value = "[" + absl::StrJoin(parts, ", ") + "]";
      break;
    }
  }
  return p.name.empty() ? value : p.name + " = " + value;
}

std::string PrintParams(const std::vector<DialectParam>& params) {
  if (params.empty()) return "";
  std::vector<std::string> parts;
  for (const DialectParam& p : params) parts.push_back(PrintParam(p));
  return "<" + absl::StrJoin(parts, ", ") + ">";
}

}  // namespace

std::string PrintType(const Type& t) {
  switch (t.kind) {
    case TypeKind::kInteger:
      return absl::StrCat(t.signedness == Signedness::kSigned     ? "si"
                          : t.signedness == Signedness::kUnsigned ? "ui"
                                                                  : "i",
                          t.width);
    case TypeKind::kIndex: return "index";
    case TypeKind::kFloat: return FloatKindName(t.float_kind);
    case TypeKind::kComplex: return "complex<" + PrintTypeOrNull(t.element) + ">";
    case TypeKind::kRankedTensor:
      return "tensor<" + PrintShape(t.shape, nullptr) + PrintTypeOrNull(t.element) +
             (t.encoding ? ", " + PrintAttribute(*t.encoding) : "") + ">";
    case TypeKind::kUnrankedTensor: return "tensor<*x" + PrintTypeOrNull(t.element) + ">";
    case TypeKind::kVector:
      return "vector<" + PrintShape(t.shape, &t.scalable_dims) + PrintTypeOrNull(t.element) + ">";
    case TypeKind::kMemRef:
      return "memref<" + PrintShape(t.shape, nullptr) + PrintTypeOrNull(t.element) +
             (t.encoding ? ", " + PrintAttribute(*t.encoding) : "") +
             (t.memory_space ? ", " + PrintAttribute(*t.memory_space) : "") + ">";
    case TypeKind::kUnrankedMemRef:
      return "memref<*x" + PrintTypeOrNull(t.element) +
             (t.memory_space ? ", " + PrintAttribute(*t.memory_space) : "") + ">";
    case TypeKind::kTuple: {
      std::vector<std::string> parts;
      for (const TypePtr& e : t.types) parts.push_back(PrintTypeOrNull(e));
      return "tuple<" + absl::StrJoin(parts, ", ") + ">";
    }
    case TypeKind::kFunction: {
      std::vector<std::string> in, out;
      for (const TypePtr& e : t.types) in.push_back(PrintTypeOrNull(e));
      for (const TypePtr& e : t.results) out.push_back(PrintTypeOrNull(e));
      return "(" + absl::StrJoin(in, ", ") + ") -> (" + absl::StrJoin(out, ", ") + ")";
    }
    case TypeKind::kNone: return "none";
    case TypeKind::kDialect: return "!" + t.dialect + "." + t.name + PrintParams(t.params);
    case TypeKind::kOpaque: return t.name;
  }
  return "<<bad type>>";
}

std::string PrintAttribute(const Attribute& a) {
  switch (a.kind) {
    case AttrKind::kInteger: {
      if (a.type && a.type->kind == TypeKind::kInteger && a.type->width == 1 &&
          a.type->signedness == Signedness::kSignless) {
        return (!a.words.empty() && (a.words[0] & 1)) ? "true" : "false";
      }
      std::string v;
      const bool wide = a.type && a.type->kind == TypeKind::kInteger && a.type->width > 64;
      if (wide) {
        v = HexWords(a.words);
      } else if (a.type && a.type->kind == TypeKind::kInteger &&
                 a.type->signedness == Signedness::kUnsigned) {
        v = absl::StrCat(a.words.empty() ? 0 : a.words[0]);
      } else {
        v = absl::StrCat(a.IntValue());
      }
      return v + " : " + PrintTypeOrNull(a.type);
    }
    case AttrKind::kFloat: return HexWords(a.words) + " : " + PrintTypeOrNull(a.type);
    case AttrKind::kString:
      return Quote(a.str) + (a.type && a.type->kind != TypeKind::kNone
                                 ? " : " + PrintType(*a.type)
                                 : "");
    case AttrKind::kArray: {
      std::vector<std::string> parts;
      for (const AttrPtr& e : a.elements) parts.push_back(PrintAttrOrNull(e));
      return "[" + absl::StrJoin(parts, ", ") + "]";
    }
    case AttrKind::kDictionary: {
      std::vector<std::string> parts;
      for (const NamedAttribute& e : a.entries) {
        parts.push_back(e.name + " = " + PrintAttrOrNull(e.value));
      }
      return "{" + absl::StrJoin(parts, ", ") + "}";
    }
    case AttrKind::kDenseElements:
      return "dense<\"" + Hex(a.data) + "\"> : " + PrintTypeOrNull(a.type);
    case AttrKind::kDenseResource:
      return "dense_resource<" + a.str + "> : " + PrintTypeOrNull(a.type) +
             (a.data.empty() ? "" : " /*" + Hex(a.data) + "*/");
    case AttrKind::kDenseArray:
      return "array<" + PrintTypeOrNull(a.type) + ": " + absl::StrCat(a.count) + " x \"" +
             Hex(a.data) + "\">";
    case AttrKind::kDenseString: {
      std::vector<std::string> parts;
      for (const std::string& s : a.strings) parts.push_back(Quote(s));
      return "dense<[" + absl::StrJoin(parts, ", ") + "]> : " + PrintTypeOrNull(a.type);
    }
    case AttrKind::kSparseElements:
      return "sparse<" + PrintAttrOrNull(a.elements.size() > 0 ? a.elements[0] : nullptr) +
             ", " + PrintAttrOrNull(a.elements.size() > 1 ? a.elements[1] : nullptr) + "> : " +
             PrintTypeOrNull(a.type);
    case AttrKind::kType: return PrintTypeOrNull(a.type);
    case AttrKind::kUnit: return "unit";
    case AttrKind::kSymbolRef: {
      std::string out = "@" + Quote(a.str);
      for (const std::string& s : a.strings) out += "::@" + Quote(s);
      return out;
    }
    case AttrKind::kDistinct:
      return absl::StrCat("distinct[", a.count, "]<",
                          PrintAttrOrNull(a.elements.empty() ? nullptr : a.elements[0]), ">");
    case AttrKind::kAffineMap: return "affine_map<" + a.str + ">";
    case AttrKind::kIntegerSet: return "affine_set<" + a.str + ">";
    case AttrKind::kUnknownLoc: return "loc(unknown)";
    case AttrKind::kFileLineColLoc:
      if (a.loc_fields == 0) return "loc(" + Quote(a.str) + ")";
      if (a.loc_fields == 1) return absl::StrCat("loc(", Quote(a.str), ":", a.line, ")");
      if (a.loc_fields == 2) {
        return absl::StrCat("loc(", Quote(a.str), ":", a.line, ":", a.column, ")");
      }
      return absl::StrCat("loc(", Quote(a.str), ":", a.line, ":", a.column, " to ", a.end_line,
                          ":", a.end_column, ")");
    case AttrKind::kNameLoc:
      return "loc(" + Quote(a.str) + "(" +
             PrintAttrOrNull(a.elements.empty() ? nullptr : a.elements[0]) + "))";
    case AttrKind::kCallSiteLoc:
      return "loc(callsite(" + PrintAttrOrNull(a.elements.size() > 0 ? a.elements[0] : nullptr) +
             " at " + PrintAttrOrNull(a.elements.size() > 1 ? a.elements[1] : nullptr) + "))";
    case AttrKind::kFusedLoc: {
      std::vector<std::string> parts;
      for (const AttrPtr& e : a.elements) parts.push_back(PrintAttrOrNull(e));
      return "loc(fused" + (a.metadata ? "<" + PrintAttribute(*a.metadata) + ">" : "") + "[" +
             absl::StrJoin(parts, ", ") + "])";
    }
    case AttrKind::kDialect: return "#" + a.dialect + "." + a.name + PrintParams(a.params);
    case AttrKind::kOpaque: return a.str;
  }
  return "<<bad attribute>>";
}

namespace {

using ValueKey = std::pair<const void*, uint32_t>;

ValueKey KeyOf(const ValueRef& v) {
  return v.op != nullptr ? ValueKey{v.op, v.index} : ValueKey{v.block, v.index};
}

// Numbers every value in pre-order: an op's results, then its regions' block arguments and ops.
void NumberValues(const Operation& op, absl::flat_hash_map<ValueKey, int64_t>& ids) {
  for (uint32_t i = 0; i < op.result_types.size(); ++i) {
    ids.emplace(ValueKey{&op, i}, static_cast<int64_t>(ids.size()));
  }
  for (const Region& r : op.regions) {
    for (const auto& b : r.blocks) {
      for (uint32_t i = 0; i < b->arguments.size(); ++i) {
        ids.emplace(ValueKey{b.get(), i}, static_cast<int64_t>(ids.size()));
      }
      for (const auto& o : b->operations) NumberValues(*o, ids);
    }
  }
}

int64_t BlockIndex(const Block* b) {
  if (b == nullptr || b->parent == nullptr) return -1;
  for (size_t i = 0; i < b->parent->blocks.size(); ++i) {
    if (b->parent->blocks[i].get() == b) return static_cast<int64_t>(i);
  }
  return -1;
}

TypePtr ValueType(const ValueRef& v) {
  if (v.op != nullptr && v.index < v.op->result_types.size()) return v.op->result_types[v.index];
  if (v.block != nullptr && v.index < v.block->arguments.size()) {
    return v.block->arguments[v.index].type;
  }
  return nullptr;
}

class Printer {
 public:
  Printer(const Operation& root, bool with_locations) : with_locations_(with_locations) {
    NumberValues(root, ids_);
  }

  void Print(const Operation& op, int indent) {
    out_ += std::string(indent, ' ');
    if (!op.result_types.empty()) {
      std::vector<std::string> res;
      for (uint32_t i = 0; i < op.result_types.size(); ++i) res.push_back(Name({&op, i}));
      out_ += absl::StrJoin(res, ", ") + " = ";
    }
    out_ += Quote(op.name) + "(";
    std::vector<std::string> operands, operand_types;
    for (const ValueRef& v : op.operands) {
      operands.push_back(Name(KeyOf(v)));
      operand_types.push_back(PrintTypeOrNull(ValueType(v)));
    }
    out_ += absl::StrJoin(operands, ", ") + ")";
    if (!op.successors.empty()) {
      std::vector<std::string> succ;
      for (const Block* b : op.successors) succ.push_back(absl::StrCat("^bb", BlockIndex(b)));
      out_ += "[" + absl::StrJoin(succ, ", ") + "]";
    }
    if (!op.regions.empty()) {
      out_ += " (";
      for (size_t r = 0; r < op.regions.size(); ++r) {
        if (r > 0) out_ += ", ";
        out_ += "{\n";
        for (size_t bi = 0; bi < op.regions[r].blocks.size(); ++bi) {
          const Block& b = *op.regions[r].blocks[bi];
          out_ += std::string(indent, ' ') + absl::StrCat("^bb", bi);
          if (!b.arguments.empty()) {
            std::vector<std::string> args;
            for (uint32_t i = 0; i < b.arguments.size(); ++i) {
              std::string arg = Name({&b, i}) + ": " + PrintTypeOrNull(b.arguments[i].type);
              if (with_locations_ && b.arguments[i].loc) {
                arg += " " + PrintAttribute(*b.arguments[i].loc);
              }
              args.push_back(arg);
            }
            out_ += "(" + absl::StrJoin(args, ", ") + ")";
          }
          out_ += ":\n";
          for (const auto& o : b.operations) Print(*o, indent + 2);
        }
        out_ += std::string(indent, ' ') + "}";
      }
      out_ += ")";
    }
    if (!op.attributes.empty()) {
      std::vector<std::string> attrs;
      for (const NamedAttribute& a : op.attributes) {
        attrs.push_back(a.name + " = " + PrintAttrOrNull(a.value));
      }
      out_ += " {" + absl::StrJoin(attrs, ", ") + "}";
    }
    std::vector<std::string> results;
    for (const TypePtr& t : op.result_types) results.push_back(PrintTypeOrNull(t));
    out_ += " : (" + absl::StrJoin(operand_types, ", ") + ") -> (" +
            absl::StrJoin(results, ", ") + ")";
    if (with_locations_ && op.loc) out_ += " " + PrintAttribute(*op.loc);
    out_ += "\n";
  }

  std::string Take() { return std::move(out_); }

 private:
  std::string Name(ValueKey key) {
    auto it = ids_.find(key);
    return it == ids_.end() ? "%<undefined>" : absl::StrCat("%", it->second);
  }

  bool with_locations_;
  absl::flat_hash_map<ValueKey, int64_t> ids_;
  std::string out_;
};

}  // namespace

std::string PrintOperation(const Operation& op, bool with_locations) {
  Printer p(op, with_locations);
  p.Print(op, 0);
  return p.Take();
}

namespace {

bool ParamsEqual(const std::vector<DialectParam>& a, const std::vector<DialectParam>& b);

bool ParamEqual(const DialectParam& a, const DialectParam& b) {
  return a.name == b.name && a.kind == b.kind && a.i == b.i && a.u == b.u && a.s == b.s &&
         a.words == b.words && TypesEqual(a.type, b.type) && AttributesEqual(a.attr, b.attr) &&
         ParamsEqual(a.list, b.list);
}

bool ParamsEqual(const std::vector<DialectParam>& a, const std::vector<DialectParam>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!ParamEqual(a[i], b[i])) return false;
  }
  return true;
}

bool TypeListsEqual(const std::vector<TypePtr>& a, const std::vector<TypePtr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!TypesEqual(a[i], b[i])) return false;
  }
  return true;
}

bool AttrListsEqual(const std::vector<AttrPtr>& a, const std::vector<AttrPtr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!AttributesEqual(a[i], b[i])) return false;
  }
  return true;
}

bool NamedListsEqual(const std::vector<NamedAttribute>& a, const std::vector<NamedAttribute>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || !AttributesEqual(a[i].value, b[i].value)) return false;
  }
  return true;
}

}  // namespace

bool TypesEqual(const TypePtr& a, const TypePtr& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return TypesEqual(*a, *b);
}

bool AttributesEqual(const AttrPtr& a, const AttrPtr& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return AttributesEqual(*a, *b);
}

bool TypesEqual(const Type& a, const Type& b) {
  return a.kind == b.kind && a.width == b.width && a.signedness == b.signedness &&
         a.float_kind == b.float_kind && a.shape == b.shape && a.scalable_dims == b.scalable_dims &&
         TypesEqual(a.element, b.element) && TypeListsEqual(a.types, b.types) &&
         TypeListsEqual(a.results, b.results) && AttributesEqual(a.encoding, b.encoding) &&
         AttributesEqual(a.memory_space, b.memory_space) && a.dialect == b.dialect &&
         a.name == b.name && ParamsEqual(a.params, b.params);
}

bool AttributesEqual(const Attribute& a, const Attribute& b) {
  return a.kind == b.kind && TypesEqual(a.type, b.type) && a.words == b.words && a.str == b.str &&
         a.strings == b.strings && AttrListsEqual(a.elements, b.elements) &&
         NamedListsEqual(a.entries, b.entries) && a.data == b.data && a.count == b.count &&
         a.line == b.line && a.column == b.column && a.end_line == b.end_line &&
         a.end_column == b.end_column && a.loc_fields == b.loc_fields &&
         AttributesEqual(a.metadata, b.metadata) && a.dialect == b.dialect && a.name == b.name &&
         ParamsEqual(a.params, b.params);
}

namespace {

class Comparer {
 public:
  Comparer(const Operation& a, const Operation& b, const StructuralEqualityOptions& options)
      : options_(options) {
    NumberValues(a, ids_a_);
    NumberValues(b, ids_b_);
  }

  bool Compare(const Operation& a, const Operation& b, const std::string& path, std::string* why) {
    const std::string here = path + "/" + a.name;
    auto fail = [&](const std::string& msg) {
      if (why != nullptr) *why = here + ": " + msg;
      return false;
    };
    if (a.name != b.name) return fail("op name " + a.name + " vs " + b.name);
    if (a.operands.size() != b.operands.size()) {
      return fail(absl::StrCat("operand count ", a.operands.size(), " vs ", b.operands.size()));
    }
    for (size_t i = 0; i < a.operands.size(); ++i) {
      auto ia = ids_a_.find(KeyOf(a.operands[i]));
      auto ib = ids_b_.find(KeyOf(b.operands[i]));
      const int64_t va = ia == ids_a_.end() ? -1 : ia->second;
      const int64_t vb = ib == ids_b_.end() ? -1 : ib->second;
      if (va != vb || va < 0) {
        return fail(absl::StrCat("operand ", i, " is value %", va, " vs %", vb));
      }
    }
    if (!TypeListsEqual(a.result_types, b.result_types)) {
      std::vector<std::string> ta, tb;
      for (const TypePtr& t : a.result_types) ta.push_back(PrintTypeOrNull(t));
      for (const TypePtr& t : b.result_types) tb.push_back(PrintTypeOrNull(t));
      return fail("result types (" + absl::StrJoin(ta, ", ") + ") vs (" +
                  absl::StrJoin(tb, ", ") + ")");
    }
    if (a.attributes.size() != b.attributes.size()) {
      std::vector<std::string> na, nb;
      for (const NamedAttribute& x : a.attributes) na.push_back(x.name);
      for (const NamedAttribute& x : b.attributes) nb.push_back(x.name);
      return fail("attributes {" + absl::StrJoin(na, ", ") + "} vs {" + absl::StrJoin(nb, ", ") +
                  "}");
    }
    for (size_t i = 0; i < a.attributes.size(); ++i) {
      const NamedAttribute& x = a.attributes[i];
      const NamedAttribute& y = b.attributes[i];
      if (x.name != y.name) return fail("attribute name " + x.name + " vs " + y.name);
      if (!AttributesEqual(x.value, y.value)) {
        return fail("attribute " + x.name + ": " + PrintAttrOrNull(x.value) + " vs " +
                    PrintAttrOrNull(y.value));
      }
      if (options_.compare_inherent_flags && x.inherent != y.inherent) {
        return fail("attribute " + x.name + " inherent flag differs");
      }
    }
    if (options_.compare_locations && !AttributesEqual(a.loc, b.loc)) {
      return fail("location " + PrintAttrOrNull(a.loc) + " vs " + PrintAttrOrNull(b.loc));
    }
    if (a.successors.size() != b.successors.size()) return fail("successor count differs");
    for (size_t i = 0; i < a.successors.size(); ++i) {
      if (BlockIndex(a.successors[i]) != BlockIndex(b.successors[i])) {
        return fail(absl::StrCat("successor ", i, " differs"));
      }
    }
    if (a.regions.size() != b.regions.size()) {
      return fail(absl::StrCat("region count ", a.regions.size(), " vs ", b.regions.size()));
    }
    for (size_t r = 0; r < a.regions.size(); ++r) {
      const Region& ra = a.regions[r];
      const Region& rb = b.regions[r];
      if (ra.blocks.size() != rb.blocks.size()) {
        return fail(absl::StrCat("region ", r, " block count ", ra.blocks.size(), " vs ",
                                 rb.blocks.size()));
      }
      for (size_t bi = 0; bi < ra.blocks.size(); ++bi) {
        const Block& ba = *ra.blocks[bi];
        const Block& bb = *rb.blocks[bi];
        const std::string bpath = absl::StrCat(here, "/region", r, "/bb", bi);
        if (ba.arguments.size() != bb.arguments.size()) {
          if (why != nullptr) *why = bpath + ": block argument count differs";
          return false;
        }
        for (size_t i = 0; i < ba.arguments.size(); ++i) {
          if (!TypesEqual(ba.arguments[i].type, bb.arguments[i].type) ||
              (options_.compare_locations &&
               !AttributesEqual(ba.arguments[i].loc, bb.arguments[i].loc))) {
            if (why != nullptr) *why = absl::StrCat(bpath, ": block argument ", i, " differs");
            return false;
          }
        }
        if (ba.operations.size() != bb.operations.size()) {
          if (why != nullptr) {
            *why = absl::StrCat(bpath, ": op count ", ba.operations.size(), " vs ",
                                bb.operations.size());
          }
          return false;
        }
        for (size_t i = 0; i < ba.operations.size(); ++i) {
          if (!Compare(*ba.operations[i], *bb.operations[i], absl::StrCat(bpath, "/op", i), why)) {
            return false;
          }
        }
      }
    }
    return true;
  }

 private:
  StructuralEqualityOptions options_;
  absl::flat_hash_map<ValueKey, int64_t> ids_a_, ids_b_;
};

}  // namespace

bool StructurallyEqual(const Operation& a, const Operation& b,
                       const StructuralEqualityOptions& options, std::string* why) {
  Comparer c(a, b, options);
  return c.Compare(a, b, "", why);
}

bool StructurallyEqual(const Operation& a, const Operation& b, std::string* why) {
  return StructurallyEqual(a, b, StructuralEqualityOptions{}, why);
}

}  // namespace ember::frontend
