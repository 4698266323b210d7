// Element types of Ember arrays: the types StableHLO and PJRT share, their sizes, their
// StableHLO/MLIR and XLA spellings, and the xla.PrimitiveType proto numbers that
// CompileOptionsProto and HloModuleProto use.
#ifndef EMBER_COMPILER_IR_ELEMENT_TYPE_H_
#define EMBER_COMPILER_IR_ELEMENT_TYPE_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace ember::ir {

enum class ElementType : uint8_t {
  kInvalid,
  kPred,
  kS1,
  kS2,
  kS4,
  kS8,
  kS16,
  kS32,
  kS64,
  kU1,
  kU2,
  kU4,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kC64,
  kC128,
  kF4E2M1FN,
  kF6E2M3FN,
  kF6E3M2FN,
  kF8E3M4,
  kF8E4M3,
  kF8E4M3FN,
  kF8E4M3FNUZ,
  kF8E4M3B11FNUZ,
  kF8E5M2,
  kF8E5M2FNUZ,
  kF8E8M0FNU,
  kToken,
};

// Every enumerator except kInvalid, in declaration order (for tests and exhaustive tables).
absl::Span<const ElementType> AllElementTypes();

// Logical width in bits: pred 1, s4 4, f6E2M3FN 6, c64 64, token 0, invalid 0.
int BitWidth(ElementType type);

// Bytes one element takes in memory. Ember stores sub-byte types unpacked, one element per byte
// (the low bits hold the value, the high bits are zero, as ml_dtypes and numpy lay them out), so
// pred, s1/s2/s4, u1/u2/u4, f4 and f6 all take one byte. Token and invalid take 0.
int StorageBytes(ElementType type);

bool IsInteger(ElementType type);  // signed or unsigned integers; not pred
bool IsSignedInteger(ElementType type);
bool IsUnsignedInteger(ElementType type);
bool IsFloat(ElementType type);  // real floating point of any width; not complex
bool IsComplex(ElementType type);
bool IsSubByte(ElementType type);  // BitWidth < 8, pred included

// StableHLO/MLIR spelling: "i1" (pred), "si1" (s1: MLIR's signless i1 is pred, so s1 needs the
// explicitly signed form), "i4", "ui8", "f32", "bf16", "complex<f32>", "f8E4M3FN", "token".
// kInvalid gives "invalid".
std::string_view ElementTypeName(ElementType type);
absl::StatusOr<ElementType> ElementTypeFromName(std::string_view name);

// XLA's lowercase spelling, as in HLO text and XLA shape strings: "pred", "s4", "u8", "f32",
// "bf16", "c64", "f8e4m3fn", "token". kInvalid gives "invalid".
std::string_view ElementTypeXlaName(ElementType type);

// xla.PrimitiveType numbers (xla/xla_data.proto). kInvalid maps to PRIMITIVE_TYPE_INVALID (0).
int32_t ElementTypeToPrimitiveType(ElementType type);
// Rejects 0, TUPLE (13), OPAQUE_TYPE (14), BUFFER (34) and unknown numbers: none is an element
// type.
absl::StatusOr<ElementType> ElementTypeFromPrimitiveType(int32_t primitive_type);

}  // namespace ember::ir

#endif  // EMBER_COMPILER_IR_ELEMENT_TYPE_H_
