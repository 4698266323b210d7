// The C++ type that holds one stored element of each element type, and the two-way mapping
// between them, so typed access to literals can check that the type asked for is the type held.
// Every element type has its own C++ type; narrow floats and sub-byte integers are thin wrappers
// around their stored bits.
#ifndef EMBER_COMPILER_IR_NATIVE_TYPES_H_
#define EMBER_COMPILER_IR_NATIVE_TYPES_H_

#include <complex>
#include <cstdint>
#include <type_traits>

#include "compiler/ir/element_type.h"
#include "compiler/ir/float_conversions.h"

namespace ember::ir {

// One stored element of a narrow float type: its raw bits, in the low bits of a byte (or of a
// uint16_t for f16/bf16). Equality compares bits, so -0 != +0 and a NaN equals itself.
template <ElementType kType>
struct NarrowFloat {
  using Rep = std::conditional_t<kType == ElementType::kF16 || kType == ElementType::kBF16,
                                 uint16_t, uint8_t>;
  static constexpr const FloatFormat& kFormat = *NarrowFloatFormat(kType);
  static_assert(kFormat.total_bits() <= 8 * static_cast<int>(sizeof(Rep)));

  Rep bits = 0;

  static NarrowFloat FromBits(Rep bits) { return NarrowFloat{bits}; }
  static NarrowFloat FromDouble(double value) {
    return NarrowFloat{static_cast<Rep>(EncodeFloat(kFormat, value))};
  }
  static NarrowFloat FromFloat(float value) {
    if constexpr (kType == ElementType::kBF16) return NarrowFloat{FloatToBF16(value)};
    return FromDouble(static_cast<double>(value));
  }
  float ToFloat() const {
    if constexpr (kType == ElementType::kBF16) return BF16ToFloat(bits);
    return DecodeFloat(kFormat, bits);
  }
  friend bool operator==(NarrowFloat a, NarrowFloat b) { return a.bits == b.bits; }
};

// One stored element of a sub-byte integer type: the value's low kBits bits (two's complement
// for signed types), high bits zero, exactly as ml_dtypes and XLA lay out unpacked int4 data.
template <ElementType kType>
struct SubByteInt {
  static constexpr int kBits = (kType == ElementType::kS1 || kType == ElementType::kU1)   ? 1
                               : (kType == ElementType::kS2 || kType == ElementType::kU2) ? 2
                                                                                          : 4;
  static constexpr bool kSigned =
      kType == ElementType::kS1 || kType == ElementType::kS2 || kType == ElementType::kS4;
  static constexpr uint8_t kMask = static_cast<uint8_t>((1u << kBits) - 1);
  static constexpr int kMin = kSigned ? -(1 << (kBits - 1)) : 0;
  static constexpr int kMax = kSigned ? (1 << (kBits - 1)) - 1 : (1 << kBits) - 1;

  uint8_t bits = 0;

  // Wraps modulo 2^kBits, like a C++ conversion to a narrower integer.
  static constexpr SubByteInt FromValue(int64_t value) {
    return SubByteInt{static_cast<uint8_t>(static_cast<uint64_t>(value) & kMask)};
  }
  constexpr int value() const {
    int v = bits & kMask;
    if (kSigned && (v >> (kBits - 1)) != 0) v -= 1 << kBits;
    return v;
  }
  friend constexpr bool operator==(SubByteInt a, SubByteInt b) {
    return (a.bits & kMask) == (b.bits & kMask);
  }
};

using S1 = SubByteInt<ElementType::kS1>;
using S2 = SubByteInt<ElementType::kS2>;
using S4 = SubByteInt<ElementType::kS4>;
using U1 = SubByteInt<ElementType::kU1>;
using U2 = SubByteInt<ElementType::kU2>;
using U4 = SubByteInt<ElementType::kU4>;
using F16 = NarrowFloat<ElementType::kF16>;
using BF16 = NarrowFloat<ElementType::kBF16>;
using F4E2M1FN = NarrowFloat<ElementType::kF4E2M1FN>;
using F6E2M3FN = NarrowFloat<ElementType::kF6E2M3FN>;
using F6E3M2FN = NarrowFloat<ElementType::kF6E3M2FN>;
using F8E3M4 = NarrowFloat<ElementType::kF8E3M4>;
using F8E4M3 = NarrowFloat<ElementType::kF8E4M3>;
using F8E4M3FN = NarrowFloat<ElementType::kF8E4M3FN>;
using F8E4M3FNUZ = NarrowFloat<ElementType::kF8E4M3FNUZ>;
using F8E4M3B11FNUZ = NarrowFloat<ElementType::kF8E4M3B11FNUZ>;
using F8E5M2 = NarrowFloat<ElementType::kF8E5M2>;
using F8E5M2FNUZ = NarrowFloat<ElementType::kF8E5M2FNUZ>;
using F8E8M0FNU = NarrowFloat<ElementType::kF8E8M0FNU>;

// NativeType<ElementType::kF32> is float, and so on. Token and invalid have none.
template <ElementType kType>
struct NativeTypeOf;
template <ElementType kType>
using NativeType = typename NativeTypeOf<kType>::type;

// kElementTypeOf<float> is ElementType::kF32, and so on.
template <typename T>
struct ElementTypeOf;
template <typename T>
inline constexpr ElementType kElementTypeOf = ElementTypeOf<std::remove_cv_t<T>>::value;

#define EMBER_IR_NATIVE_TYPE_(enumerator, cpp_type)               \
  template <>                                                     \
  struct NativeTypeOf<ElementType::enumerator> {                  \
    using type = cpp_type;                                        \
  };                                                              \
  template <>                                                     \
  struct ElementTypeOf<cpp_type> {                                \
    static constexpr ElementType value = ElementType::enumerator; \
  }

EMBER_IR_NATIVE_TYPE_(kPred, bool);
EMBER_IR_NATIVE_TYPE_(kS1, S1);
EMBER_IR_NATIVE_TYPE_(kS2, S2);
EMBER_IR_NATIVE_TYPE_(kS4, S4);
EMBER_IR_NATIVE_TYPE_(kS8, int8_t);
EMBER_IR_NATIVE_TYPE_(kS16, int16_t);
EMBER_IR_NATIVE_TYPE_(kS32, int32_t);
EMBER_IR_NATIVE_TYPE_(kS64, int64_t);
EMBER_IR_NATIVE_TYPE_(kU1, U1);
EMBER_IR_NATIVE_TYPE_(kU2, U2);
EMBER_IR_NATIVE_TYPE_(kU4, U4);
EMBER_IR_NATIVE_TYPE_(kU8, uint8_t);
EMBER_IR_NATIVE_TYPE_(kU16, uint16_t);
EMBER_IR_NATIVE_TYPE_(kU32, uint32_t);
EMBER_IR_NATIVE_TYPE_(kU64, uint64_t);
EMBER_IR_NATIVE_TYPE_(kF16, F16);
EMBER_IR_NATIVE_TYPE_(kBF16, BF16);
EMBER_IR_NATIVE_TYPE_(kF32, float);
EMBER_IR_NATIVE_TYPE_(kF64, double);
EMBER_IR_NATIVE_TYPE_(kC64, std::complex<float>);
EMBER_IR_NATIVE_TYPE_(kC128, std::complex<double>);
EMBER_IR_NATIVE_TYPE_(kF4E2M1FN, F4E2M1FN);
EMBER_IR_NATIVE_TYPE_(kF6E2M3FN, F6E2M3FN);
EMBER_IR_NATIVE_TYPE_(kF6E3M2FN, F6E3M2FN);
EMBER_IR_NATIVE_TYPE_(kF8E3M4, F8E3M4);
EMBER_IR_NATIVE_TYPE_(kF8E4M3, F8E4M3);
EMBER_IR_NATIVE_TYPE_(kF8E4M3FN, F8E4M3FN);
EMBER_IR_NATIVE_TYPE_(kF8E4M3FNUZ, F8E4M3FNUZ);
EMBER_IR_NATIVE_TYPE_(kF8E4M3B11FNUZ, F8E4M3B11FNUZ);
EMBER_IR_NATIVE_TYPE_(kF8E5M2, F8E5M2);
EMBER_IR_NATIVE_TYPE_(kF8E5M2FNUZ, F8E5M2FNUZ);
EMBER_IR_NATIVE_TYPE_(kF8E8M0FNU, F8E8M0FNU);

#undef EMBER_IR_NATIVE_TYPE_

// Calls fn(std::type_identity<T>{}) with T = NativeType of `type`, or T = void for kToken and
// kInvalid, and returns what fn returns (every call must return the same type). This is how
// code switches on an element type once and then runs typed loops.
template <typename Fn>
decltype(auto) VisitElementType(ElementType type, Fn&& fn) {
  switch (type) {
#define EMBER_IR_VISIT_CASE_(enumerator) \
  case ElementType::enumerator:          \
    return fn(std::type_identity<NativeType<ElementType::enumerator>>{});
    EMBER_IR_VISIT_CASE_(kPred)
    EMBER_IR_VISIT_CASE_(kS1)
    EMBER_IR_VISIT_CASE_(kS2)
    EMBER_IR_VISIT_CASE_(kS4)
    EMBER_IR_VISIT_CASE_(kS8)
    EMBER_IR_VISIT_CASE_(kS16)
    EMBER_IR_VISIT_CASE_(kS32)
    EMBER_IR_VISIT_CASE_(kS64)
    EMBER_IR_VISIT_CASE_(kU1)
    EMBER_IR_VISIT_CASE_(kU2)
    EMBER_IR_VISIT_CASE_(kU4)
    EMBER_IR_VISIT_CASE_(kU8)
    EMBER_IR_VISIT_CASE_(kU16)
    EMBER_IR_VISIT_CASE_(kU32)
    EMBER_IR_VISIT_CASE_(kU64)
    EMBER_IR_VISIT_CASE_(kF16)
    EMBER_IR_VISIT_CASE_(kBF16)
    EMBER_IR_VISIT_CASE_(kF32)
    EMBER_IR_VISIT_CASE_(kF64)
    EMBER_IR_VISIT_CASE_(kC64)
    EMBER_IR_VISIT_CASE_(kC128)
    EMBER_IR_VISIT_CASE_(kF4E2M1FN)
    EMBER_IR_VISIT_CASE_(kF6E2M3FN)
    EMBER_IR_VISIT_CASE_(kF6E3M2FN)
    EMBER_IR_VISIT_CASE_(kF8E3M4)
    EMBER_IR_VISIT_CASE_(kF8E4M3)
    EMBER_IR_VISIT_CASE_(kF8E4M3FN)
    EMBER_IR_VISIT_CASE_(kF8E4M3FNUZ)
    EMBER_IR_VISIT_CASE_(kF8E4M3B11FNUZ)
    EMBER_IR_VISIT_CASE_(kF8E5M2)
    EMBER_IR_VISIT_CASE_(kF8E5M2FNUZ)
    EMBER_IR_VISIT_CASE_(kF8E8M0FNU)
#undef EMBER_IR_VISIT_CASE_
    case ElementType::kToken:
    case ElementType::kInvalid:
      break;
  }
  return fn(std::type_identity<void>{});
}

// True when T is the C++ type that stores elements of `type`.
template <typename T>
constexpr bool IsNativeTypeOf(ElementType type) {
  return kElementTypeOf<T> == type;
}

}  // namespace ember::ir

#endif  // EMBER_COMPILER_IR_NATIVE_TYPES_H_
