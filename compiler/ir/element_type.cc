// One table describes every element type; the functions below read it.
#include "compiler/ir/element_type.h"

#include <array>
#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ember::ir {
namespace {

enum Kind : uint8_t { kNone, kPredKind, kSigned, kUnsigned, kFloatKind, kComplexKind, kTokenKind };

struct TypeInfo {
  ElementType type;
  Kind kind;
  int bits;
  int storage_bytes;
  std::string_view name;      // StableHLO / MLIR
  std::string_view xla_name;  // HLO text
  int32_t primitive_type;     // xla.PrimitiveType (xla/xla_data.proto)
};

// Proto numbers checked against openxla/xla xla/xla_data.proto (F6E3M2FN 35 and F6E2M3FN 36 are
// the newest additions; 13 TUPLE, 14 OPAQUE_TYPE and 34 BUFFER are not element types).
constexpr std::array<TypeInfo, 34> kTypes = {{
    {ElementType::kInvalid, kNone, 0, 0, "invalid", "invalid", 0},
    {ElementType::kPred, kPredKind, 1, 1, "i1", "pred", 1},
    {ElementType::kS1, kSigned, 1, 1, "si1", "s1", 30},
    {ElementType::kS2, kSigned, 2, 1, "i2", "s2", 26},
    {ElementType::kS4, kSigned, 4, 1, "i4", "s4", 21},
    {ElementType::kS8, kSigned, 8, 1, "i8", "s8", 2},
    {ElementType::kS16, kSigned, 16, 2, "i16", "s16", 3},
    {ElementType::kS32, kSigned, 32, 4, "i32", "s32", 4},
    {ElementType::kS64, kSigned, 64, 8, "i64", "s64", 5},
    {ElementType::kU1, kUnsigned, 1, 1, "ui1", "u1", 31},
    {ElementType::kU2, kUnsigned, 2, 1, "ui2", "u2", 27},
    {ElementType::kU4, kUnsigned, 4, 1, "ui4", "u4", 22},
    {ElementType::kU8, kUnsigned, 8, 1, "ui8", "u8", 6},
    {ElementType::kU16, kUnsigned, 16, 2, "ui16", "u16", 7},
    {ElementType::kU32, kUnsigned, 32, 4, "ui32", "u32", 8},
    {ElementType::kU64, kUnsigned, 64, 8, "ui64", "u64", 9},
    {ElementType::kF16, kFloatKind, 16, 2, "f16", "f16", 10},
    {ElementType::kBF16, kFloatKind, 16, 2, "bf16", "bf16", 16},
    {ElementType::kF32, kFloatKind, 32, 4, "f32", "f32", 11},
    {ElementType::kF64, kFloatKind, 64, 8, "f64", "f64", 12},
    {ElementType::kC64, kComplexKind, 64, 8, "complex<f32>", "c64", 15},
    {ElementType::kC128, kComplexKind, 128, 16, "complex<f64>", "c128", 18},
    {ElementType::kF4E2M1FN, kFloatKind, 4, 1, "f4E2M1FN", "f4e2m1fn", 32},
    {ElementType::kF6E2M3FN, kFloatKind, 6, 1, "f6E2M3FN", "f6e2m3fn", 36},
    {ElementType::kF6E3M2FN, kFloatKind, 6, 1, "f6E3M2FN", "f6e3m2fn", 35},
    {ElementType::kF8E3M4, kFloatKind, 8, 1, "f8E3M4", "f8e3m4", 29},
    {ElementType::kF8E4M3, kFloatKind, 8, 1, "f8E4M3", "f8e4m3", 28},
    {ElementType::kF8E4M3FN, kFloatKind, 8, 1, "f8E4M3FN", "f8e4m3fn", 20},
    {ElementType::kF8E4M3FNUZ, kFloatKind, 8, 1, "f8E4M3FNUZ", "f8e4m3fnuz", 25},
    {ElementType::kF8E4M3B11FNUZ, kFloatKind, 8, 1, "f8E4M3B11FNUZ", "f8e4m3b11fnuz", 23},
    {ElementType::kF8E5M2, kFloatKind, 8, 1, "f8E5M2", "f8e5m2", 19},
    {ElementType::kF8E5M2FNUZ, kFloatKind, 8, 1, "f8E5M2FNUZ", "f8e5m2fnuz", 24},
    {ElementType::kF8E8M0FNU, kFloatKind, 8, 1, "f8E8M0FNU", "f8e8m0fnu", 33},
    {ElementType::kToken, kTokenKind, 0, 0, "token", "token", 17},
}};

constexpr bool TableIsInEnumOrder() {
  for (size_t i = 0; i < kTypes.size(); ++i) {
    if (static_cast<size_t>(kTypes[i].type) != i) return false;
  }
  return true;
}
static_assert(TableIsInEnumOrder(), "kTypes must list ElementType enumerators in order");

const TypeInfo& Info(ElementType type) {
  size_t index = static_cast<size_t>(type);
  // An out-of-range value can only come from a bad cast; treat it as kInvalid.
  return index < kTypes.size() ? kTypes[index] : kTypes[0];
}

constexpr std::array<ElementType, kTypes.size() - 1> MakeAllTypes() {
  std::array<ElementType, kTypes.size() - 1> all{};
  for (size_t i = 1; i < kTypes.size(); ++i) all[i - 1] = kTypes[i].type;
  return all;
}
constexpr std::array<ElementType, kTypes.size() - 1> kAllTypes = MakeAllTypes();

}  // namespace

absl::Span<const ElementType> AllElementTypes() { return kAllTypes; }

int BitWidth(ElementType type) { return Info(type).bits; }
int StorageBytes(ElementType type) { return Info(type).storage_bytes; }

bool IsInteger(ElementType type) {
  Kind kind = Info(type).kind;
  return kind == kSigned || kind == kUnsigned;
}
bool IsSignedInteger(ElementType type) { return Info(type).kind == kSigned; }
bool IsUnsignedInteger(ElementType type) { return Info(type).kind == kUnsigned; }
bool IsFloat(ElementType type) { return Info(type).kind == kFloatKind; }
bool IsComplex(ElementType type) { return Info(type).kind == kComplexKind; }
bool IsSubByte(ElementType type) {
  const TypeInfo& info = Info(type);
  return info.bits > 0 && info.bits < 8;
}

std::string_view ElementTypeName(ElementType type) { return Info(type).name; }
std::string_view ElementTypeXlaName(ElementType type) { return Info(type).xla_name; }

absl::StatusOr<ElementType> ElementTypeFromName(std::string_view name) {
  for (size_t i = 1; i < kTypes.size(); ++i) {
    if (kTypes[i].name == name) return kTypes[i].type;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown element type name \"", absl::string_view(name.data(), name.size()),
                   "\" (expected a StableHLO spelling such as i1, i32, ui8, f32, bf16, "
                   "complex<f32>, f8E4M3FN or token)"));
}

int32_t ElementTypeToPrimitiveType(ElementType type) { return Info(type).primitive_type; }

absl::StatusOr<ElementType> ElementTypeFromPrimitiveType(int32_t primitive_type) {
  switch (primitive_type) {
    case 0:
      return absl::InvalidArgumentError(
          "xla.PrimitiveType 0 (PRIMITIVE_TYPE_INVALID) is not an "
          "element type");
    case 13:
      return absl::InvalidArgumentError("xla.PrimitiveType 13 (TUPLE) is not an element type");
    case 14:
      return absl::InvalidArgumentError("xla.PrimitiveType 14 (OPAQUE_TYPE) is not supported");
    case 34:
      return absl::InvalidArgumentError("xla.PrimitiveType 34 (BUFFER) is not supported");
    default:
      break;
  }
  for (size_t i = 1; i < kTypes.size(); ++i) {
    if (kTypes[i].primitive_type == primitive_type) return kTypes[i].type;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown xla.PrimitiveType number ", primitive_type));
}

}  // namespace ember::ir
