// Attribute syntax: builtin attributes (numbers, strings, arrays, dictionaries, symbols, types,
// unit, array<>, affine maps), locations, aliases and the dispatch of `#dialect...` attributes.
// Dense elements live in text_dense.cc.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/text/text_parser_internal.h"

namespace ember::frontend::text {
namespace {

std::shared_ptr<Attribute> NewAttr(AttrKind kind) {
  auto a = std::make_shared<Attribute>();
  a->kind = kind;
  return a;
}

uint64_t MaskToWidth(uint64_t v, unsigned width) {
  return width >= 64 ? v : (v & ((uint64_t{1} << width) - 1));
}

// Decimal or 0x-hex integer token text -> value; false on overflow.
bool ParseUnsignedText(std::string_view t, uint64_t* v) {
  *v = 0;
  if (t.size() > 2 && t[0] == '0' && t[1] == 'x') {
    if (t.size() > 18) return false;
    for (char c : t.substr(2)) {
      *v = *v * 16 + (absl::ascii_isdigit(c) ? c - '0' : (absl::ascii_tolower(c) - 'a' + 10));
    }
    return true;
  }
  for (char c : t) {
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (*v > (UINT64_MAX - d) / 10) return false;
    *v = *v * 10 + d;
  }
  return true;
}

}  // namespace

// ---- constructors ----

AttrPtr MakeIntAttr(int64_t v, unsigned width, Signedness s) {
  auto a = NewAttr(AttrKind::kInteger);
  a->type = MakeIntegerType(width, s);
  a->words = {MaskToWidth(static_cast<uint64_t>(v), width)};
  return a;
}
AttrPtr MakeI64Attr(int64_t v) { return MakeIntAttr(v, 64); }
AttrPtr MakeI32Attr(int64_t v) { return MakeIntAttr(v, 32); }
AttrPtr MakeBoolAttr(bool v) { return MakeIntAttr(v ? 1 : 0, 1); }
AttrPtr MakeF64Attr(double v) {
  auto a = NewAttr(AttrKind::kFloat);
  a->type = MakeFloatType(FloatKind::kF64);
  a->words = {EncodeFloat(v, FloatKind::kF64)};
  return a;
}
AttrPtr MakeStringAttr(std::string s) {
  auto a = NewAttr(AttrKind::kString);
  a->str = std::move(s);
  return a;
}
AttrPtr MakeTypeAttr(TypePtr t) {
  auto a = NewAttr(AttrKind::kType);
  a->type = std::move(t);
  return a;
}
AttrPtr MakeUnitAttr() { return NewAttr(AttrKind::kUnit); }
AttrPtr MakeSymbolRefAttr(std::string root, std::vector<std::string> nested) {
  auto a = NewAttr(AttrKind::kSymbolRef);
  a->str = std::move(root);
  a->strings = std::move(nested);
  return a;
}
AttrPtr MakeArrayAttr(std::vector<AttrPtr> elements) {
  auto a = NewAttr(AttrKind::kArray);
  a->elements = std::move(elements);
  return a;
}
AttrPtr MakeDictAttr(std::vector<NamedAttribute> entries) {
  auto a = NewAttr(AttrKind::kDictionary);
  for (NamedAttribute& e : entries) e.inherent = false;
  std::stable_sort(entries.begin(), entries.end(),
                   [](const NamedAttribute& x, const NamedAttribute& y) { return x.name < y.name; });
  a->entries = std::move(entries);
  return a;
}
namespace {
AttrPtr MakeDenseIntArray(const std::vector<int64_t>& values, unsigned width) {
  auto a = NewAttr(AttrKind::kDenseArray);
  a->type = MakeIntegerType(width);
  a->count = values.size();
  const unsigned bytes = width == 1 ? 1 : width / 8;
  for (int64_t v : values) {
    for (unsigned b = 0; b < bytes; ++b) a->data.push_back(static_cast<uint8_t>(v >> (8 * b)));
  }
  return a;
}
}  // namespace
AttrPtr MakeDenseI64Array(const std::vector<int64_t>& values) { return MakeDenseIntArray(values, 64); }
AttrPtr MakeDenseI32Array(const std::vector<int64_t>& values) { return MakeDenseIntArray(values, 32); }
AttrPtr MakeDenseBoolArray(const std::vector<bool>& values) {
  std::vector<int64_t> v(values.begin(), values.end());
  return MakeDenseIntArray(v, 1);
}
AttrPtr MakeDenseI64Elements(const std::vector<int64_t>& shape, const std::vector<int64_t>& v) {
  auto a = NewAttr(AttrKind::kDenseElements);
  a->type = MakeTensorType(shape, MakeIntegerType(64));
  bool splat = v.size() > 1;
  for (int64_t x : v) splat = splat && x == v[0];
  const size_t n = splat ? 1 : v.size();
  for (size_t i = 0; i < n; ++i) {
    for (int b = 0; b < 8; ++b) a->data.push_back(static_cast<uint8_t>(v[i] >> (8 * b)));
  }
  return a;
}
AttrPtr MakeDialectAttr(std::string dialect, std::string name, std::vector<DialectParam> params) {
  auto a = NewAttr(AttrKind::kDialect);
  a->dialect = std::move(dialect);
  a->name = std::move(name);
  a->params = std::move(params);
  return a;
}
AttrPtr MakeEnumAttr(std::string dialect, std::string mnemonic, std::string value) {
  return MakeDialectAttr(std::move(dialect), std::move(mnemonic),
                         {StringParam("value", std::move(value))});
}
DialectParam IntParam(std::string name, int64_t v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kInt;
  p.i = v;
  return p;
}
DialectParam BoolParam(std::string name, bool v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kBool;
  p.u = v ? 1 : 0;
  return p;
}
DialectParam StringParam(std::string name, std::string v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kString;
  p.s = std::move(v);
  return p;
}
DialectParam TypeParam(std::string name, TypePtr t) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kType;
  p.type = std::move(t);
  return p;
}
DialectParam AttrParam(std::string name, AttrPtr a) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kAttr;
  p.attr = std::move(a);
  return p;
}
DialectParam IntListParam(std::string name, const std::vector<int64_t>& v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kList;
  for (int64_t x : v) p.list.push_back(IntParam("", x));
  return p;
}
DialectParam AttrListParam(std::string name, const std::vector<AttrPtr>& v) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kList;
  for (const AttrPtr& x : v) p.list.push_back(AttrParam("", x));
  return p;
}
DialectParam FloatBitsParam(std::string name, uint64_t bits) {
  DialectParam p;
  p.name = std::move(name);
  p.kind = DialectParam::Kind::kFloatBits;
  p.words = {bits};
  return p;
}

// ---- parsing ----

absl::StatusOr<std::vector<NamedAttribute>> Parser::ParseAttrDict() {
  EMBER_RETURN_IF_ERROR(EnterNested());
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kLBrace, "to start an attribute dictionary"));
  std::vector<NamedAttribute> out;
  if (!ConsumeIf(TokKind::kRBrace)) {
    while (true) {
      NamedAttribute e;
      const size_t at = tok_.offset;
      if (Is(TokKind::kString)) {
        EMBER_ASSIGN_OR_RETURN(e.name, ParseStringLiteral());
      } else if (Is(TokKind::kBareIdent)) {
        e.name = std::string(tok_.text);
        Advance();
      } else {
        return ExpectedError("attribute name");
      }
      for (const NamedAttribute& prev : out) {
        if (prev.name == e.name) return ErrorAt(at, "duplicate attribute '" + e.name + "'");
      }
      if (ConsumeIf(TokKind::kEqual)) {
        EMBER_ASSIGN_OR_RETURN(e.value, ParseAttribute());
      } else {
        e.value = MakeUnitAttr();
      }
      out.push_back(std::move(e));
      if (ConsumeIf(TokKind::kRBrace)) break;
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kComma, "or '}' in attribute dictionary"));
    }
  }
  ExitNested();
  return out;
}

absl::StatusOr<AttrPtr> Parser::ParseNumberAttribute(const TypePtr& type_hint) {
  const size_t at = tok_.offset;
  const bool negative = ConsumeIf(TokKind::kMinus);
  if (!Is(TokKind::kInteger) && !Is(TokKind::kFloat)) return ExpectedError("number");
  const Token number = tok_;
  Advance();
  // With a known type (ODS-typed attributes) no `: type` suffix follows the number.
  TypePtr type = type_hint;
  if (!type && ConsumeIf(TokKind::kColon)) {
    EMBER_ASSIGN_OR_RETURN(type, ParseType());
  }
  if (!type) {
    type = number.kind == TokKind::kFloat ? MakeFloatType(FloatKind::kF64) : MakeIntegerType(64);
  }
  const std::string text(number.text);
  if (type->kind == TypeKind::kFloat) {
    auto a = NewAttr(AttrKind::kFloat);
    a->type = type;
    const unsigned width = FloatKindBitWidth(type->float_kind);
    if (number.kind == TokKind::kInteger && text.size() > 2 && text[1] == 'x') {
      // Hex integers spell a float's bit pattern.
      if (negative) return ErrorAt(at, "hexadecimal float bit patterns cannot be negated");
      if (width > 64) return ErrorAt(at, "hex bits for floats wider than 64 bits are not supported");
      uint64_t bits = 0;
      if (!ParseUnsignedText(number.text, &bits)) return ErrorAt(at, "float bit pattern too wide");
      if (width < 64 && (bits >> width) != 0) return ErrorAt(at, "float bit pattern too wide for " + PrintType(*type));
      a->words = {bits};
      return AttrPtr(a);
    }
    if (width > 64) return ErrorAt(at, "decimal literals of " + PrintType(*type) + " are not supported");
    const double v = std::strtod(text.c_str(), nullptr);
    uint64_t bits = EncodeFloat(negative ? -v : v, type->float_kind);
    if (type->float_kind == FloatKind::kF32) {
      // Round the decimal directly to f32 (decimal -> double -> float can double-round).
      float f = std::strtof(text.c_str(), nullptr);
      if (negative) f = -f;
      uint32_t b32 = 0;
      std::memcpy(&b32, &f, 4);
      bits = b32;
    }
    a->words = {bits};
    return AttrPtr(a);
  }
  if (type->kind == TypeKind::kInteger || type->kind == TypeKind::kIndex) {
    if (number.kind == TokKind::kFloat) return ErrorAt(at, "floating point literal of integer type");
    uint64_t magnitude = 0;
    if (!ParseUnsignedText(number.text, &magnitude)) return ErrorAt(at, "integer out of range");
    const unsigned width = type->kind == TypeKind::kIndex ? 64 : type->width;
    if (width > 64) return ErrorAt(at, "integer attributes wider than 64 bits are not supported");
    uint64_t v = negative ? ~magnitude + 1 : magnitude;
    auto a = NewAttr(AttrKind::kInteger);
    a->type = type;
    a->words = {MaskToWidth(v, width)};
    return AttrPtr(a);
  }
  return ErrorAt(at, "number of non-numeric type " + PrintType(*type));
}

absl::StatusOr<AttrPtr> Parser::ParseDenseArray() {
  // array<i64: 1, 2>, array<i1: true>, array<f32: 1.0>, array<i64>
  Advance();  // 'array'
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kLess, "after 'array'"));
  EMBER_ASSIGN_OR_RETURN(TypePtr element, ParseType());
  auto a = NewAttr(AttrKind::kDenseArray);
  a->type = element;
  if (element->kind != TypeKind::kInteger && element->kind != TypeKind::kFloat) {
    return Error("array<> element type must be an integer or float type");
  }
  const unsigned width = element->kind == TypeKind::kInteger ? element->width
                                                              : FloatKindBitWidth(element->float_kind);
  if (width > 64) return Error("array<> elements wider than 64 bits are not supported");
  const unsigned bytes = width == 1 ? 1 : (width + 7) / 8;
  if (ConsumeIf(TokKind::kColon)) {
    while (true) {
      uint64_t bits = 0;
      if (element->kind == TypeKind::kInteger && element->width == 1 &&
          (IsKeyword("true") || IsKeyword("false"))) {
        EMBER_ASSIGN_OR_RETURN(bool b, ParseBoolKeyword());
        bits = b;
      } else {
        EMBER_ASSIGN_OR_RETURN(AttrPtr n, ParseNumberAttribute(element));
        bits = n->words.empty() ? 0 : n->words[0];
      }
      for (unsigned b = 0; b < bytes; ++b) a->data.push_back(static_cast<uint8_t>(bits >> (8 * b)));
      ++a->count;
      if (!ConsumeIf(TokKind::kComma)) break;
    }
  }
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close array<...>"));
  return AttrPtr(a);
}

absl::StatusOr<AttrPtr> Parser::ParseAffineLike(AttrKind kind) {
  Advance();  // affine_map / affine_set
  EMBER_ASSIGN_OR_RETURN(std::string body, ScanVerbatim(tok_.offset));
  auto a = NewAttr(kind);
  a->str = body.substr(1, body.size() - 2);
  return AttrPtr(a);
}

absl::StatusOr<AttrPtr> Parser::ParseLocationBody() {
  EMBER_RETURN_IF_ERROR(EnterNested());
  absl::StatusOr<AttrPtr> result = [&]() -> absl::StatusOr<AttrPtr> {
    if (ConsumeKeyword("unknown")) return AttrPtr(NewAttr(AttrKind::kUnknownLoc));
    if (Is(TokKind::kHashIdent)) return ParseHashAttribute(/*in_location=*/true);
    if (ConsumeKeyword("callsite")) {
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kLParen, "after 'callsite'"));
      EMBER_ASSIGN_OR_RETURN(AttrPtr callee, ParseLocationBody());
      EMBER_RETURN_IF_ERROR(ExpectKeyword("at", "in callsite location"));
      EMBER_ASSIGN_OR_RETURN(AttrPtr caller, ParseLocationBody());
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kRParen, "to close callsite location"));
      auto a = NewAttr(AttrKind::kCallSiteLoc);
      a->elements = {callee, caller};
      return AttrPtr(a);
    }
    if (ConsumeKeyword("fused")) {
      auto a = NewAttr(AttrKind::kFusedLoc);
      if (ConsumeIf(TokKind::kLess)) {
        EMBER_ASSIGN_OR_RETURN(a->metadata, ParseAttribute());
        EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close fused location metadata"));
      }
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kLSquare, "in fused location"));
      if (!ConsumeIf(TokKind::kRSquare)) {
        while (true) {
          EMBER_ASSIGN_OR_RETURN(AttrPtr e, ParseLocationBody());
          a->elements.push_back(std::move(e));
          if (ConsumeIf(TokKind::kRSquare)) break;
          EMBER_RETURN_IF_ERROR(Expect(TokKind::kComma, "or ']' in fused location"));
        }
      }
      return AttrPtr(a);
    }
    if (!Is(TokKind::kString)) return ExpectedError("location");
    EMBER_ASSIGN_OR_RETURN(std::string str, ParseStringLiteral());
    if (ConsumeIf(TokKind::kColon)) {
      auto a = NewAttr(AttrKind::kFileLineColLoc);
      a->str = std::move(str);
      EMBER_ASSIGN_OR_RETURN(a->line, ParseUInt64());
      a->loc_fields = 1;
      if (ConsumeIf(TokKind::kColon)) {
        EMBER_ASSIGN_OR_RETURN(a->column, ParseUInt64());
        a->loc_fields = 2;
      }
      if (ConsumeKeyword("to")) {
        a->loc_fields = 4;
        a->end_line = a->line;
        if (ConsumeIf(TokKind::kColon)) {
          EMBER_ASSIGN_OR_RETURN(a->end_column, ParseUInt64());
        } else {
          EMBER_ASSIGN_OR_RETURN(a->end_line, ParseUInt64());
          EMBER_RETURN_IF_ERROR(Expect(TokKind::kColon, "in location range"));
          EMBER_ASSIGN_OR_RETURN(a->end_column, ParseUInt64());
        }
      }
      return AttrPtr(a);
    }
    auto a = NewAttr(AttrKind::kNameLoc);
    a->str = std::move(str);
    if (ConsumeIf(TokKind::kLParen)) {
      EMBER_ASSIGN_OR_RETURN(AttrPtr child, ParseLocationBody());
      a->elements = {child};
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kRParen, "to close name location"));
    } else {
      a->elements = {NewAttr(AttrKind::kUnknownLoc)};
    }
    return AttrPtr(a);
  }();
  ExitNested();
  return result;
}

absl::StatusOr<AttrPtr> Parser::ParseOptionalLocation() {
  if (!IsKeyword("loc") || Peek().kind != TokKind::kLParen) return AttrPtr();
  Advance();
  Advance();
  EMBER_ASSIGN_OR_RETURN(AttrPtr loc, ParseLocationBody());
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kRParen, "to close the location"));
  return loc;
}

absl::StatusOr<AttrPtr> Parser::ParseHashAttribute(bool in_location) {
  const size_t start = tok_.offset;
  const std::string name(tok_.text.substr(1));
  const size_t name_end = EndOfToken();
  auto alias = attr_aliases_.find(name);
  if (alias != attr_aliases_.end()) {
    Advance();
    return alias->second;
  }
  const size_t dot = name.find('.');
  Advance();
  const bool angle = Is(TokKind::kLess) && tok_.offset == name_end;
  if (dot == std::string::npos && !angle) {
    if (in_location) {
      // Location aliases may be defined after their use (at the end of the file).
      auto placeholder = NewAttr(AttrKind::kUnknownLoc);
      pending_locs_.push_back({placeholder, name, start});
      return AttrPtr(placeholder);
    }
    return ErrorAt(start, "undefined attribute alias #" + name);
  }
  std::string dialect = dot == std::string::npos ? name : name.substr(0, dot);
  const bool pretty = dot == std::string::npos;  // #dialect<mnemonic ...>
  const bool structured =
      dialect == "stablehlo" || dialect == "chlo" || (dialect == "sdy" && !pretty);
  if (structured) {
    std::string mnemonic;
    if (pretty) {
      Advance();  // '<'
      EMBER_ASSIGN_OR_RETURN(mnemonic, ParseKeyword("attribute mnemonic"));
    } else {
      mnemonic = name.substr(dot + 1);
    }
    absl::StatusOr<AttrPtr> a = dialect == "sdy" ? ParseSdyAttr(mnemonic, start)
                                                 : ParseStablehloAttr(dialect, mnemonic, start);
    if (!a.ok()) return a.status();
    if (pretty) EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close the dialect attribute"));
    return a;
  }
  // Other dialects (mhlo, vhlo, tpu, ...) are kept verbatim.
  std::string text = "#" + name;
  if (angle) {
    EMBER_ASSIGN_OR_RETURN(std::string body, ScanVerbatim(tok_.offset));
    text += body;
  }
  auto a = NewAttr(AttrKind::kOpaque);
  a->dialect = std::move(dialect);
  a->str = std::move(text);
  return AttrPtr(a);
}

absl::StatusOr<AttrPtr> Parser::ParseAttribute(const TypePtr& type_hint) {
  EMBER_RETURN_IF_ERROR(EnterNested());
  absl::StatusOr<AttrPtr> result = [&]() -> absl::StatusOr<AttrPtr> {
    switch (tok_.kind) {
      case TokKind::kLSquare: {
        Advance();
        std::vector<AttrPtr> elements;
        if (!ConsumeIf(TokKind::kRSquare)) {
          while (true) {
            EMBER_ASSIGN_OR_RETURN(AttrPtr e, ParseAttribute());
            elements.push_back(std::move(e));
            if (ConsumeIf(TokKind::kRSquare)) break;
            EMBER_RETURN_IF_ERROR(Expect(TokKind::kComma, "or ']' in array attribute"));
          }
        }
        return MakeArrayAttr(std::move(elements));
      }
      case TokKind::kLBrace: {
        EMBER_ASSIGN_OR_RETURN(std::vector<NamedAttribute> entries, ParseAttrDict());
        return MakeDictAttr(std::move(entries));
      }
      case TokKind::kString: {
        EMBER_ASSIGN_OR_RETURN(std::string s, ParseStringLiteral());
        auto a = NewAttr(AttrKind::kString);
        a->str = std::move(s);
        if (ConsumeIf(TokKind::kColon)) {
          EMBER_ASSIGN_OR_RETURN(a->type, ParseType());
        }
        return AttrPtr(a);
      }
      case TokKind::kAtIdent: {
        EMBER_ASSIGN_OR_RETURN(std::string root, ParseSymbolName());
        std::vector<std::string> nested;
        while (Is(TokKind::kColon) && Peek().kind == TokKind::kColon) {
          Advance();
          Advance();
          EMBER_ASSIGN_OR_RETURN(std::string n, ParseSymbolName());
          nested.push_back(std::move(n));
        }
        return MakeSymbolRefAttr(std::move(root), std::move(nested));
      }
      case TokKind::kMinus:
      case TokKind::kInteger:
      case TokKind::kFloat:
        return ParseNumberAttribute(type_hint);
      case TokKind::kHashIdent:
        return ParseHashAttribute(/*in_location=*/false);
      case TokKind::kLParen:
      case TokKind::kBangIdent: {
        EMBER_ASSIGN_OR_RETURN(TypePtr t, ParseType());
        return MakeTypeAttr(std::move(t));
      }
      case TokKind::kBareIdent: {
        const std::string_view w = tok_.text;
        if (w == "true" || w == "false") {
          Advance();
          return MakeBoolAttr(w == "true");
        }
        if (w == "unit") {
          Advance();
          return MakeUnitAttr();
        }
        if (w == "dense" || w == "dense_resource") return ParseDenseElements(type_hint);
        if (w == "array") return ParseDenseArray();
        if (w == "affine_map") return ParseAffineLike(AttrKind::kAffineMap);
        if (w == "affine_set") return ParseAffineLike(AttrKind::kIntegerSet);
        if (w == "loc" && Peek().kind == TokKind::kLParen) return ParseOptionalLocation();
        if (w == "distinct") {
          Advance();
          EMBER_RETURN_IF_ERROR(Expect(TokKind::kLSquare, "after 'distinct'"));
          EMBER_ASSIGN_OR_RETURN(uint64_t id, ParseUInt64());
          EMBER_RETURN_IF_ERROR(Expect(TokKind::kRSquare, "after distinct id"));
          EMBER_RETURN_IF_ERROR(Expect(TokKind::kLess, "in distinct attribute"));
          auto a = NewAttr(AttrKind::kDistinct);
          a->count = id;
          EMBER_ASSIGN_OR_RETURN(AttrPtr inner, ParseAttribute());
          a->elements = {inner};
          EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close distinct attribute"));
          return AttrPtr(a);
        }
        if (AtTypeStart()) {
          EMBER_ASSIGN_OR_RETURN(TypePtr t, ParseType());
          return MakeTypeAttr(std::move(t));
        }
        return ExpectedError("attribute");
      }
      default:
        return ExpectedError("attribute");
    }
  }();
  ExitNested();
  return result;
}

}  // namespace ember::frontend::text
