// Type syntax: builtin types (integers, floats, index, none, complex, tensor, vector, memref,
// tuple, function types), type aliases and dialect types (`!stablehlo.token`, kept-verbatim others).
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/frontend/text/text_parser_internal.h"

namespace ember::frontend::text {
namespace {

struct FloatName {
  const char* name;
  FloatKind kind;
};
constexpr FloatName kFloatNames[] = {
    {"bf16", FloatKind::kBF16},          {"f16", FloatKind::kF16},
    {"f32", FloatKind::kF32},            {"f64", FloatKind::kF64},
    {"f80", FloatKind::kF80},            {"f128", FloatKind::kF128},
    {"tf32", FloatKind::kTF32},          {"f8E5M2", FloatKind::kF8E5M2},
    {"f8E4M3", FloatKind::kF8E4M3},      {"f8E4M3FN", FloatKind::kF8E4M3FN},
    {"f8E5M2FNUZ", FloatKind::kF8E5M2FNUZ}, {"f8E4M3FNUZ", FloatKind::kF8E4M3FNUZ},
    {"f8E4M3B11FNUZ", FloatKind::kF8E4M3B11FNUZ}, {"f8E3M4", FloatKind::kF8E3M4},
    {"f4E2M1FN", FloatKind::kF4E2M1FN},  {"f6E2M3FN", FloatKind::kF6E2M3FN},
    {"f6E3M2FN", FloatKind::kF6E3M2FN},  {"f8E8M0FNU", FloatKind::kF8E8M0FNU},
};

// iN / siN / uiN -> integer type; null if `name` is not one.
TypePtr IntegerTypeByName(std::string_view name) {
  Signedness s = Signedness::kSignless;
  std::string_view digits;
  if (name.substr(0, 2) == "si") {
    s = Signedness::kSigned;
    digits = name.substr(2);
  } else if (name.substr(0, 2) == "ui") {
    s = Signedness::kUnsigned;
    digits = name.substr(2);
  } else if (name.substr(0, 1) == "i") {
    digits = name.substr(1);
  } else {
    return nullptr;
  }
  if (digits.empty() || digits.size() > 8) return nullptr;
  for (char c : digits) {
    if (!absl::ascii_isdigit(c)) return nullptr;
  }
  uint32_t width = 0;
  if (!absl::SimpleAtoi(std::string(digits), &width) || width == 0 || width > (1u << 24)) {
    return nullptr;
  }
  return MakeIntegerType(width, s);
}

}  // namespace

TypePtr MakeIntegerType(unsigned width, Signedness s) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kInteger;
  t->width = width;
  t->signedness = s;
  return t;
}

TypePtr MakeFloatType(FloatKind kind) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kFloat;
  t->float_kind = kind;
  return t;
}

TypePtr MakeTensorType(std::vector<int64_t> shape, TypePtr element) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kRankedTensor;
  t->shape = std::move(shape);
  t->element = std::move(element);
  return t;
}

bool Parser::AtTypeStart() const {
  if (Is(TokKind::kLParen) || Is(TokKind::kBangIdent)) return true;
  if (!Is(TokKind::kBareIdent)) return false;
  std::string_view t = tok_.text;
  if (t == "index" || t == "none" || t == "tensor" || t == "vector" || t == "memref" ||
      t == "complex" || t == "tuple") {
    return true;
  }
  for (const FloatName& f : kFloatNames) {
    if (t == f.name) return true;
  }
  return IntegerTypeByName(t) != nullptr;
}

absl::StatusOr<TypePtr> Parser::ParseType() {
  EMBER_RETURN_IF_ERROR(EnterNested());
  absl::StatusOr<TypePtr> result = [&]() -> absl::StatusOr<TypePtr> {
    if (Is(TokKind::kLParen)) return ParseFunctionType();
    if (Is(TokKind::kBangIdent)) {
      const size_t start = tok_.offset;
      const std::string name(tok_.text.substr(1));
      const size_t name_end = EndOfToken();
      auto alias = type_aliases_.find(name);
      if (alias != type_aliases_.end()) {
        Advance();
        return alias->second;
      }
      const size_t dot = name.find('.');
      if (dot == std::string::npos) return Error(absl::StrCat("undefined type alias !", name));
      const std::string dialect = name.substr(0, dot);
      const std::string mnemonic = name.substr(dot + 1);
      Advance();
      const bool has_body = Is(TokKind::kLess) && tok_.offset == name_end;
      if (dialect == "stablehlo" && mnemonic == "token" && !has_body) {
        auto t = std::make_shared<Type>();
        t->kind = TypeKind::kDialect;
        t->dialect = "stablehlo";
        t->name = "token";
        return TypePtr(t);
      }
      if (dialect == "stablehlo" && mnemonic == "future" && has_body) {
        Advance();
        auto t = std::make_shared<Type>();
        t->kind = TypeKind::kDialect;
        t->dialect = "stablehlo";
        t->name = "future";
        DialectParam types;
        types.name = "types";
        types.kind = DialectParam::Kind::kList;
        if (!Is(TokKind::kGreater)) {
          EMBER_ASSIGN_OR_RETURN(std::vector<TypePtr> list, ParseTypeList());
          for (TypePtr& e : list) types.list.push_back(TypeParam("", std::move(e)));
        }
        EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close !stablehlo.future"));
        t->params.push_back(std::move(types));
        return TypePtr(t);
      }
      // Other dialect types (quant.uniform, vhlo, ...) are kept verbatim, so nothing is lost.
      std::string text = "!" + name;
      if (has_body) {
        EMBER_ASSIGN_OR_RETURN(std::string body, ScanVerbatim(tok_.offset));
        text += body;
      }
      (void)start;
      auto t = std::make_shared<Type>();
      t->kind = TypeKind::kOpaque;
      t->dialect = dialect;
      t->name = std::move(text);
      return TypePtr(t);
    }
    if (!Is(TokKind::kBareIdent)) return ExpectedError("type");
    const std::string_view word = tok_.text;
    if (word == "index") {
      Advance();
      auto t = std::make_shared<Type>();
      t->kind = TypeKind::kIndex;
      return TypePtr(t);
    }
    if (word == "none") {
      Advance();
      return TypePtr(std::make_shared<Type>());
    }
    for (const FloatName& f : kFloatNames) {
      if (word == f.name) {
        Advance();
        return MakeFloatType(f.kind);
      }
    }
    if (TypePtr t = IntegerTypeByName(word)) {
      Advance();
      return t;
    }
    if (word == "complex") {
      Advance();
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kLess, "after 'complex'"));
      auto t = std::make_shared<Type>();
      t->kind = TypeKind::kComplex;
      EMBER_ASSIGN_OR_RETURN(t->element, ParseType());
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close complex<...>"));
      return TypePtr(t);
    }
    if (word == "tuple") {
      Advance();
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kLess, "after 'tuple'"));
      auto t = std::make_shared<Type>();
      t->kind = TypeKind::kTuple;
      if (!Is(TokKind::kGreater)) {
        EMBER_ASSIGN_OR_RETURN(t->types, ParseTypeList());
      }
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close tuple<...>"));
      return TypePtr(t);
    }
    if (word == "tensor") return ParseShapedType(TypeKind::kRankedTensor);
    if (word == "vector") return ParseShapedType(TypeKind::kVector);
    if (word == "memref") return ParseShapedType(TypeKind::kMemRef);
    return ExpectedError("type");
  }();
  ExitNested();
  return result;
}

// tensor<2x?x3xf32(, encoding)?>, tensor<*xf32>, vector<[4]x8xf32>, memref<4xf32(, layout)?(, space)?>
absl::StatusOr<TypePtr> Parser::ParseShapedType(TypeKind kind) {
  const std::string_view what = tok_.text;
  Advance();
  if (!Is(TokKind::kLess)) return ExpectedError(absl::StrCat("'<' after '", std::string(what), "'"));
  const std::string_view src = source();
  size_t pos = lexer().SkipTrivia(EndOfToken());
  auto t = std::make_shared<Type>();
  t->kind = kind;
  if (pos < src.size() && src[pos] == '*' && kind != TypeKind::kVector) {
    ++pos;
    if (pos >= src.size() || src[pos] != 'x') return ErrorAt(pos, "expected 'x' after '*'");
    t->kind = kind == TypeKind::kMemRef ? TypeKind::kUnrankedMemRef : TypeKind::kUnrankedTensor;
    ResetTo(pos + 1);
  } else {
    // Dimensions are scanned character by character: `2x3xf32` is not a sequence of MLIR tokens.
    while (true) {
      pos = lexer().SkipTrivia(pos);
      if (pos >= src.size()) return ErrorAt(pos, "unterminated shaped type");
      const char c = src[pos];
      bool scalable = false;
      int64_t dim = 0;
      if (c == '?') {
        dim = kDynamicDim;
        ++pos;
      } else if (absl::ascii_isdigit(c) || (c == '[' && kind == TypeKind::kVector)) {
        if (c == '[') {
          scalable = true;
          ++pos;
        }
        size_t end = pos;
        while (end < src.size() && absl::ascii_isdigit(src[end])) ++end;
        if (end == pos || end - pos > 18 ||
            !absl::SimpleAtoi(std::string(src.substr(pos, end - pos)), &dim)) {
          return ErrorAt(pos, "invalid dimension size");
        }
        pos = end;
        if (scalable) {
          if (pos >= src.size() || src[pos] != ']') return ErrorAt(pos, "expected ']'");
          ++pos;
        }
      } else {
        break;
      }
      if (pos >= src.size() || src[pos] != 'x') {
        return ErrorAt(pos, "expected 'x' after a dimension size");
      }
      ++pos;
      if (t->shape.size() >= 4096) return ErrorAt(pos, "too many dimensions");
      t->shape.push_back(dim);
      t->scalable_dims.push_back(scalable);
    }
    ResetTo(pos);
  }
  bool any_scalable = false;
  for (bool b : t->scalable_dims) any_scalable |= b;
  if (kind != TypeKind::kVector || !any_scalable) t->scalable_dims.clear();
  EMBER_ASSIGN_OR_RETURN(t->element, ParseType());
  if (ConsumeIf(TokKind::kComma)) {
    EMBER_ASSIGN_OR_RETURN(AttrPtr a, ParseAttribute());
    if (kind == TypeKind::kMemRef && !Is(TokKind::kComma) && a->kind == AttrKind::kInteger) {
      t->memory_space = std::move(a);
    } else if (t->kind == TypeKind::kUnrankedMemRef) {
      t->memory_space = std::move(a);
    } else {
      t->encoding = std::move(a);
    }
    if (kind == TypeKind::kMemRef && ConsumeIf(TokKind::kComma)) {
      EMBER_ASSIGN_OR_RETURN(t->memory_space, ParseAttribute());
    }
  }
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close the shaped type"));
  return TypePtr(t);
}

absl::StatusOr<std::vector<TypePtr>> Parser::ParseTypeList() {
  std::vector<TypePtr> out;
  while (true) {
    EMBER_ASSIGN_OR_RETURN(TypePtr t, ParseType());
    out.push_back(std::move(t));
    if (!ConsumeIf(TokKind::kComma)) return out;
  }
}

absl::StatusOr<std::vector<TypePtr>> Parser::ParseFunctionResultTypes() {
  if (Is(TokKind::kLParen)) {
    // `(T, U)` is a result list, but `(T) -> U` would be one function-typed result.
    const size_t save = tok_.offset;
    Advance();
    std::vector<TypePtr> out;
    if (!Is(TokKind::kRParen)) {
      EMBER_ASSIGN_OR_RETURN(out, ParseTypeList());
    }
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kRParen, "to close the result types"));
    if (Is(TokKind::kArrow)) {
      ResetTo(save);
      EMBER_ASSIGN_OR_RETURN(TypePtr f, ParseFunctionType());
      return std::vector<TypePtr>{f};
    }
    return out;
  }
  EMBER_ASSIGN_OR_RETURN(TypePtr t, ParseType());
  return std::vector<TypePtr>{t};
}

absl::StatusOr<TypePtr> Parser::ParseFunctionType() {
  EMBER_RETURN_IF_ERROR(EnterNested());
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kLParen, "to start a function type"));
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kFunction;
  if (!Is(TokKind::kRParen)) {
    EMBER_ASSIGN_OR_RETURN(t->types, ParseTypeList());
  }
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kRParen, "to close the function inputs"));
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kArrow, "in function type"));
  EMBER_ASSIGN_OR_RETURN(t->results, ParseFunctionResultTypes());
  ExitNested();
  return TypePtr(t);
}

absl::StatusOr<std::string> Parser::ScanVerbatim(size_t start) {
  const std::string_view src = source();
  size_t pos = lexer().SkipTrivia(start);
  if (pos >= src.size() || src[pos] != '<') return ErrorAt(pos, "expected '<'");
  int depth = 0;
  std::string out;
  bool pending_space = false;
  for (; pos < src.size(); ++pos) {
    const char c = src[pos];
    if (c == '"') {
      const size_t begin = pos;
      ++pos;
      while (pos < src.size() && src[pos] != '"') {
        if (src[pos] == '\\') ++pos;
        ++pos;
      }
      if (pos >= src.size()) return ErrorAt(begin, "unterminated string");
      if (pending_space) out.push_back(' ');
      pending_space = false;
      out.append(src.substr(begin, pos - begin + 1));
      continue;
    }
    if (absl::ascii_isspace(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out.push_back(' ');
    pending_space = false;
    out.push_back(c);
    if (c == '<') {
      if (++depth > kMaxNestingDepth) return ErrorAt(pos, "nesting too deep");
    } else if (c == '>' && !(pos > 0 && src[pos - 1] == '-')) {
      if (--depth == 0) {
        ResetTo(pos + 1);
        return out;
      }
    }
  }
  return ErrorAt(start, "unterminated '<...>'");
}

}  // namespace ember::frontend::text
