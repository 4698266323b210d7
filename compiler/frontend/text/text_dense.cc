// Dense element literals (`dense<[[1, 2], [3, 4]]>`, splats, complex `(re, im)`, hex
// `dense<"0x...">`, `dense_resource<key>`) and float encoding into every MLIR float format.
// Data is little-endian raw bytes, one element when all are equal (MLIR's splat canonical form).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string_view>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/frontend/text/text_parser_internal.h"

namespace ember::frontend::text {
namespace {

enum class FloatStyle : uint8_t {
  kIeee,        // infinities and NaNs in the all-ones exponent
  kFn,          // no infinities; NaN is the all-ones pattern (f8E4M3FN)
  kFnuz,        // no infinities, no negative zero; NaN is 0x80
  kFiniteOnly,  // no infinities, no NaNs (f4E2M1FN, f6*)
};

struct FloatFormat {
  int exp_bits;
  int man_bits;
  int bias;
  FloatStyle style;
};

FloatFormat FormatOf(FloatKind kind) {
  switch (kind) {
    case FloatKind::kF16: return {5, 10, 15, FloatStyle::kIeee};
    case FloatKind::kBF16: return {8, 7, 127, FloatStyle::kIeee};
    case FloatKind::kTF32: return {8, 10, 127, FloatStyle::kIeee};
    case FloatKind::kF8E5M2: return {5, 2, 15, FloatStyle::kIeee};
    case FloatKind::kF8E4M3: return {4, 3, 7, FloatStyle::kIeee};
    case FloatKind::kF8E3M4: return {3, 4, 3, FloatStyle::kIeee};
    case FloatKind::kF8E4M3FN: return {4, 3, 7, FloatStyle::kFn};
    case FloatKind::kF8E5M2FNUZ: return {5, 2, 16, FloatStyle::kFnuz};
    case FloatKind::kF8E4M3FNUZ: return {4, 3, 8, FloatStyle::kFnuz};
    case FloatKind::kF8E4M3B11FNUZ: return {4, 3, 11, FloatStyle::kFnuz};
    case FloatKind::kF4E2M1FN: return {2, 1, 1, FloatStyle::kFiniteOnly};
    case FloatKind::kF6E2M3FN: return {2, 3, 1, FloatStyle::kFiniteOnly};
    case FloatKind::kF6E3M2FN: return {3, 2, 3, FloatStyle::kFiniteOnly};
    default: return {11, 52, 1023, FloatStyle::kIeee};
  }
}

uint64_t EncodeSmallFloat(double v, const FloatFormat& f) {
  const uint64_t sign_bit = uint64_t{1} << (f.exp_bits + f.man_bits);
  const uint64_t exp_all = (uint64_t{1} << f.exp_bits) - 1;
  const uint64_t man_all = (uint64_t{1} << f.man_bits) - 1;
  const bool negative = std::signbit(v);
  const uint64_t sign = negative ? sign_bit : 0;
  uint64_t nan = 0, max_finite = 0;
  switch (f.style) {
    case FloatStyle::kIeee:
      nan = (exp_all << f.man_bits) | (uint64_t{1} << (f.man_bits - 1));
      max_finite = ((exp_all - 1) << f.man_bits) | man_all;
      break;
    case FloatStyle::kFn:
      nan = (exp_all << f.man_bits) | man_all;
      max_finite = (exp_all << f.man_bits) | (man_all - 1);
      break;
    case FloatStyle::kFnuz:
      nan = sign_bit;
      max_finite = (exp_all << f.man_bits) | man_all;
      break;
    case FloatStyle::kFiniteOnly:
      nan = (exp_all << f.man_bits) | man_all;  // no NaN: saturate
      max_finite = nan;
      break;
  }
  if (std::isnan(v)) return nan;
  const double a = std::fabs(v);
  auto overflow = [&]() -> uint64_t {
    switch (f.style) {
      case FloatStyle::kIeee: return sign | (exp_all << f.man_bits);
      case FloatStyle::kFn: return sign | nan;
      case FloatStyle::kFnuz: return nan;
      case FloatStyle::kFiniteOnly: return sign | max_finite;
    }
    return nan;
  };
  if (std::isinf(a)) return overflow();
  if (a == 0) return f.style == FloatStyle::kFnuz ? 0 : sign;
  int e = 0;
  std::frexp(a, &e);
  int exponent = e - 1;  // a = 1.m * 2^exponent
  int biased = exponent + f.bias;
  uint64_t bits = 0;
  if (biased >= 1) {
    const double scaled = std::ldexp(a, f.man_bits - exponent);  // in [2^m, 2^(m+1))
    uint64_t q = static_cast<uint64_t>(std::nearbyint(scaled));
    if (q >> (f.man_bits + 1)) {
      q >>= 1;
      ++biased;
    }
    bits = (static_cast<uint64_t>(biased) << f.man_bits) | (q & man_all);
  } else {
    // Subnormal: a carry into the exponent field yields the smallest normal, as it should.
    const double scaled = std::ldexp(a, f.man_bits - (1 - f.bias));
    bits = static_cast<uint64_t>(std::nearbyint(scaled));
  }
  if (bits > max_finite) return overflow();
  if (bits == 0 && f.style == FloatStyle::kFnuz) return 0;
  return sign | bits;
}

}  // namespace

uint64_t EncodeFloat(double value, FloatKind kind) {
  switch (kind) {
    case FloatKind::kF64: {
      uint64_t bits = 0;
      std::memcpy(&bits, &value, 8);
      return bits;
    }
    case FloatKind::kF32: {
      const float f = static_cast<float>(value);
      uint32_t bits = 0;
      std::memcpy(&bits, &f, 4);
      return bits;
    }
    case FloatKind::kF8E8M0FNU: {
      if (!(value > 0) || std::isinf(value)) return 0xFF;
      const double e = std::nearbyint(std::log2(value));
      if (e < -127) return 0;
      if (e > 127) return 0xFF;
      return static_cast<uint64_t>(e + 127);
    }
    case FloatKind::kF80:
    case FloatKind::kF128:
      return 0;  // callers reject these before encoding
    default:
      return EncodeSmallFloat(value, FormatOf(kind));
  }
}

absl::StatusOr<uint64_t> DenseElementBytes(const Type& element) {
  switch (element.kind) {
    case TypeKind::kInteger:
      if (element.width > 64) break;
      return element.width == 1 ? 1 : (element.width + 7) / 8;
    case TypeKind::kIndex: return 8;
    case TypeKind::kFloat:
      if (element.float_kind == FloatKind::kF80 || element.float_kind == FloatKind::kF128) break;
      return (FloatKindBitWidth(element.float_kind) + 7) / 8;
    case TypeKind::kComplex: {
      if (!element.element) break;
      EMBER_ASSIGN_OR_RETURN(uint64_t inner, DenseElementBytes(*element.element));
      return 2 * inner;
    }
    default: break;
  }
  return absl::InvalidArgumentError("type " + PrintType(element) +
                                    " is not supported as a dense element type");
}

namespace {

struct Scalar {
  enum Kind : uint8_t { kNumber, kBool, kString } kind = kNumber;
  bool negative = false;
  bool is_float_token = false;
  std::string_view text;  // number token
  bool bool_value = false;
  std::string str;
  size_t offset = 0;
};

struct Element {
  bool complex = false;
  Scalar re, im;
};

struct Literal {
  std::vector<Element> elements;
  std::vector<int64_t> shape;
  int leaf_depth = -1;
  bool is_list = false;
};

bool ParseUnsigned(std::string_view t, uint64_t* v) {
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

void PutLE(std::vector<uint8_t>& out, uint64_t v, uint64_t bytes) {
  for (uint64_t b = 0; b < bytes; ++b) out.push_back(static_cast<uint8_t>(v >> (8 * b)));
}

}  // namespace

absl::StatusOr<AttrPtr> Parser::ParseDenseElements(const TypePtr& type_hint) {
  const size_t start = tok_.offset;
  const bool is_resource = IsKeyword("dense_resource");
  Advance();
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kLess, is_resource ? "after 'dense_resource'" : "after 'dense'"));
  auto parse_type = [&]() -> absl::StatusOr<TypePtr> {
    if (ConsumeIf(TokKind::kColon)) return ParseType();
    if (type_hint) return type_hint;
    return ExpectedError("':' and the type of the dense elements");
  };
  if (is_resource) {
    auto a = std::make_shared<Attribute>();
    a->kind = AttrKind::kDenseResource;
    if (Is(TokKind::kString)) {
      EMBER_ASSIGN_OR_RETURN(a->str, ParseStringLiteral());
    } else {
      EMBER_ASSIGN_OR_RETURN(a->str, ParseKeyword("resource key"));
    }
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close dense_resource<...>"));
    EMBER_ASSIGN_OR_RETURN(a->type, parse_type());
    pending_resources_.push_back({a, start});
    return AttrPtr(a);
  }

  // 1. The literal, independent of the type (which follows it).
  Literal lit;
  std::vector<uint8_t> hex_data;
  bool is_hex = false;
  auto parse_scalar = [&](Scalar& s) -> absl::Status {
    s.offset = tok_.offset;
    if (IsKeyword("true") || IsKeyword("false")) {
      s.kind = Scalar::kBool;
      s.bool_value = IsKeyword("true");
      Advance();
      return absl::OkStatus();
    }
    if (Is(TokKind::kString)) {
      s.kind = Scalar::kString;
      EMBER_ASSIGN_OR_RETURN(s.str, ParseStringLiteral());
      return absl::OkStatus();
    }
    s.negative = ConsumeIf(TokKind::kMinus);
    if (!Is(TokKind::kInteger) && !Is(TokKind::kFloat)) return ExpectedError("dense element");
    s.is_float_token = Is(TokKind::kFloat);
    s.text = tok_.text;
    Advance();
    return absl::OkStatus();
  };
  auto parse_element = [&](int depth) -> absl::Status {
    if (lit.leaf_depth < 0) {
      lit.leaf_depth = depth;
    } else if (lit.leaf_depth != depth) {
      return Error("dense literal mixes scalars and lists at different depths");
    }
    Element e;
    if (ConsumeIf(TokKind::kLParen)) {
      e.complex = true;
      EMBER_RETURN_IF_ERROR(parse_scalar(e.re));
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kComma, "in complex element"));
      EMBER_RETURN_IF_ERROR(parse_scalar(e.im));
      EMBER_RETURN_IF_ERROR(Expect(TokKind::kRParen, "to close complex element"));
    } else {
      EMBER_RETURN_IF_ERROR(parse_scalar(e.re));
    }
    lit.elements.push_back(std::move(e));
    return absl::OkStatus();
  };
  // Nesting is bounded by kMaxNestingDepth, so malformed input cannot exhaust the stack.
  std::function<absl::Status(int)> parse_list = [&](int depth) -> absl::Status {
    if (depth > kMaxNestingDepth) return Error("dense literal nests too deeply");
    if (!Is(TokKind::kLSquare)) return parse_element(depth);
    Advance();
    int64_t count = 0;
    if (!Is(TokKind::kRSquare)) {
      while (true) {
        EMBER_RETURN_IF_ERROR(parse_list(depth + 1));
        ++count;
        if (!ConsumeIf(TokKind::kComma)) break;
      }
    }
    EMBER_RETURN_IF_ERROR(Expect(TokKind::kRSquare, "or ',' in dense literal"));
    // Inner lists close first, so dimensions are recorded by depth, not in order.
    if (static_cast<int>(lit.shape.size()) <= depth) lit.shape.resize(depth + 1, -1);
    if (lit.shape[depth] < 0) {
      lit.shape[depth] = count;
    } else if (lit.shape[depth] != count) {
      return Error("dense literal has inconsistent nested list sizes");
    }
    return absl::OkStatus();
  };
  if (Is(TokKind::kString) && tok_.text.substr(0, 3) == "\"0x") {
    const size_t at = tok_.offset;
    EMBER_ASSIGN_OR_RETURN(std::string hex, ParseStringLiteral());
    if (hex.size() % 2 != 0) return ErrorAt(at, "hex dense data has an odd number of digits");
    hex_data.reserve(hex.size() / 2 - 1);
    for (size_t i = 2; i < hex.size(); i += 2) {
      int v = 0;
      for (int k = 0; k < 2; ++k) {
        const char c = hex[i + k];
        const int d = absl::ascii_isdigit(c) ? c - '0'
                      : (c >= 'a' && c <= 'f') ? c - 'a' + 10
                      : (c >= 'A' && c <= 'F') ? c - 'A' + 10
                                               : -1;
        if (d < 0) return ErrorAt(at, "invalid hex digit in dense data");
        v = v * 16 + d;
      }
      hex_data.push_back(static_cast<uint8_t>(v));
    }
    is_hex = true;
  } else if (Is(TokKind::kGreater)) {
    lit.is_list = true;  // `dense<>`: no elements
    lit.shape = {0};
  } else {
    lit.is_list = Is(TokKind::kLSquare);
    EMBER_RETURN_IF_ERROR(parse_list(0));
    for (int64_t d : lit.shape) {
      if (d < 0) return ErrorAt(start, "dense literal mixes scalars and lists at different depths");
    }
    if (lit.leaf_depth >= 0 && static_cast<size_t>(lit.leaf_depth) != lit.shape.size()) {
      return ErrorAt(start, "dense literal mixes scalars and lists at different depths");
    }
  }
  EMBER_RETURN_IF_ERROR(Expect(TokKind::kGreater, "to close dense<...>"));
  const size_t type_at = tok_.offset;
  EMBER_ASSIGN_OR_RETURN(TypePtr type, parse_type());

  // 2. Interpret it with the element type.
  if (type->kind != TypeKind::kRankedTensor && type->kind != TypeKind::kVector) {
    return ErrorAt(type_at, "dense elements need a ranked tensor or vector type, got " +
                                PrintType(*type));
  }
  uint64_t count = 1;
  for (int64_t d : type->shape) {
    if (d < 0) return ErrorAt(type_at, "dense elements need a static shape");
    if (d != 0 && count > (uint64_t{1} << 62) / static_cast<uint64_t>(d)) {
      return ErrorAt(type_at, "dense element count overflows");
    }
    count *= static_cast<uint64_t>(d);
  }
  const Type& element = *type->element;
  const bool strings = !is_hex && !lit.elements.empty() && lit.elements[0].re.kind == Scalar::kString;
  if (strings) {
    auto a = std::make_shared<Attribute>();
    a->kind = AttrKind::kDenseString;
    a->type = type;
    for (const Element& e : lit.elements) {
      if (e.complex || e.re.kind != Scalar::kString) return ErrorAt(start, "mixed dense string literal");
      a->strings.push_back(e.re.str);
    }
    if (lit.is_list && lit.elements.size() != count) {
      return ErrorAt(start, "dense string literal does not match its type's element count");
    }
    return AttrPtr(a);
  }
  absl::StatusOr<uint64_t> bytes_or = DenseElementBytes(element);
  if (!bytes_or.ok()) return ErrorAt(type_at, std::string(bytes_or.status().message()));
  const uint64_t bytes = *bytes_or;
  auto a = std::make_shared<Attribute>();
  a->kind = AttrKind::kDenseElements;
  a->type = type;
  if (is_hex) {
    const bool is_bool = element.kind == TypeKind::kInteger && element.width == 1;
    const uint64_t size = hex_data.size();
    const bool ok = size == bytes || (count <= (uint64_t{1} << 62) / bytes && size == count * bytes) ||
                    (is_bool && size == (count + 7) / 8);
    if (!ok) {
      return ErrorAt(start, absl::StrCat("hex dense data of ", size, " bytes does not match ",
                                         PrintType(*type)));
    }
    a->data = std::move(hex_data);
  } else {
    // Encode each element.
    auto encode_scalar = [&](const Scalar& s, const Type& t, std::vector<uint8_t>& out) -> absl::Status {
      if (s.kind == Scalar::kString) return ErrorAt(s.offset, "string element in numeric dense literal");
      if (t.kind == TypeKind::kInteger || t.kind == TypeKind::kIndex) {
        const unsigned width = t.kind == TypeKind::kIndex ? 64 : t.width;
        uint64_t v = 0;
        if (s.kind == Scalar::kBool) {
          if (width != 1) return ErrorAt(s.offset, "boolean element needs an i1 type");
          v = s.bool_value;
        } else {
          if (s.is_float_token) return ErrorAt(s.offset, "float element in integer dense literal");
          if (!ParseUnsigned(s.text, &v)) return ErrorAt(s.offset, "integer element out of range");
          if (s.negative) v = ~v + 1;
          if (width < 64) v &= (uint64_t{1} << width) - 1;
        }
        PutLE(out, v, width == 1 ? 1 : (width + 7) / 8);
        return absl::OkStatus();
      }
      if (t.kind == TypeKind::kFloat) {
        if (s.kind == Scalar::kBool) return ErrorAt(s.offset, "boolean element in float dense literal");
        const unsigned width = FloatKindBitWidth(t.float_kind);
        uint64_t bits = 0;
        if (!s.is_float_token && s.text.size() > 2 && s.text[1] == 'x') {
          if (!ParseUnsigned(s.text, &bits) || (width < 64 && (bits >> width) != 0)) {
            return ErrorAt(s.offset, "float bit pattern too wide");
          }
        } else if (t.float_kind == FloatKind::kF32) {
          float f = std::strtof(std::string(s.text).c_str(), nullptr);
          if (s.negative) f = -f;
          uint32_t b32 = 0;
          std::memcpy(&b32, &f, 4);
          bits = b32;
        } else {
          double d = std::strtod(std::string(s.text).c_str(), nullptr);
          bits = EncodeFloat(s.negative ? -d : d, t.float_kind);
        }
        PutLE(out, bits, (width + 7) / 8);
        return absl::OkStatus();
      }
      return ErrorAt(s.offset, "unsupported dense element type " + PrintType(t));
    };
    std::vector<uint8_t> data;
    for (const Element& e : lit.elements) {
      if (element.kind == TypeKind::kComplex) {
        if (!e.complex) return ErrorAt(e.re.offset, "complex dense element must be written (re, im)");
        EMBER_RETURN_IF_ERROR(encode_scalar(e.re, *element.element, data));
        EMBER_RETURN_IF_ERROR(encode_scalar(e.im, *element.element, data));
      } else {
        if (e.complex) return ErrorAt(e.re.offset, "complex element for a non-complex type");
        EMBER_RETURN_IF_ERROR(encode_scalar(e.re, element, data));
      }
    }
    if (lit.is_list && !(lit.elements.empty() && count == 0)) {
      std::vector<int64_t> expected = type->shape;
      if (lit.shape != expected) {
        auto dims = [](const std::vector<int64_t>& s) {
          return absl::StrCat("[", absl::StrJoin(s, ", "), "]");
        };
        return ErrorAt(start, absl::StrCat("dense literal of shape ", dims(lit.shape),
                                           " does not match type ", PrintType(*type)));
      }
    }
    a->data = std::move(data);
  }
  // Canonical splat: all elements equal -> keep one.
  if (count > 1 && a->data.size() == count * bytes) {
    bool splat = true;
    for (uint64_t i = 1; i < count && splat; ++i) {
      splat = std::memcmp(a->data.data(), a->data.data() + i * bytes, bytes) == 0;
    }
    if (splat) a->data.resize(bytes);
  }
  return AttrPtr(a);
}

}  // namespace ember::frontend::text
