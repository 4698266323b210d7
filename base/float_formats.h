// Exact bit-level conversions between float/double and the narrow float formats Ember stores as
// raw bits (f16, bf16, the f8 family, f6, f4). Rounding is round-to-nearest-even; NaN, infinity,
// overflow and underflow follow ml_dtypes (what JAX and XLA produce), so the evaluator, constant
// folding and collectives agree bit for bit with XLA:CPU. Independent of the IR's element types
// (compiler/ir/float_conversions.h maps those to formats).
#ifndef EMBER_BASE_FLOAT_FORMATS_H_
#define EMBER_BASE_FLOAT_FORMATS_H_

#include <cstdint>

namespace ember {

// How a format spends its top exponent, its sign and its zero.
enum class FloatEncoding : uint8_t {
  // IEEE 754 style: all-ones exponent is inf (mantissa 0) or NaN. Overflow gives inf.
  // f16, bf16, f8E5M2, f8E4M3, f8E3M4.
  kIeee,
  // No inf; only all-ones exponent and mantissa is NaN (either sign). Overflow and inf give NaN
  // with the input's sign. f8E4M3FN.
  kFiniteAndNan,
  // No inf, no -0: the single NaN is the sign bit alone (0x80). Overflow, inf and NaN give 0x80;
  // negative values that round to zero give +0. f8E4M3FNUZ, f8E5M2FNUZ, f8E4M3B11FNUZ.
  kFnuz,
  // OCP MX: no inf, no NaN. Overflow and inf saturate to +-max. NaN has no encoding; like
  // ml_dtypes we give -0 for +NaN and +0 for -NaN. f4E2M1FN, f6E2M3FN, f6E3M2FN.
  kFiniteOnly,
  // Unsigned, exponent only, no zero: value 2^(bits - 127), 0xFF is NaN. Negative numbers, zero,
  // inf and NaN give NaN; positive values below 2^-127 give 2^-127. f8E8M0FNU.
  kExponentOnly,
};

struct FloatFormat {
  int exponent_bits;
  int mantissa_bits;
  int exponent_bias;
  FloatEncoding encoding;

  constexpr int total_bits() const {
    return exponent_bits + mantissa_bits + (encoding == FloatEncoding::kExponentOnly ? 0 : 1);
  }
};

inline constexpr FloatFormat kF16Format{5, 10, 15, FloatEncoding::kIeee};
inline constexpr FloatFormat kBF16Format{8, 7, 127, FloatEncoding::kIeee};
inline constexpr FloatFormat kF8E5M2Format{5, 2, 15, FloatEncoding::kIeee};
inline constexpr FloatFormat kF8E4M3Format{4, 3, 7, FloatEncoding::kIeee};
inline constexpr FloatFormat kF8E3M4Format{3, 4, 3, FloatEncoding::kIeee};
inline constexpr FloatFormat kF8E4M3FNFormat{4, 3, 7, FloatEncoding::kFiniteAndNan};
inline constexpr FloatFormat kF8E4M3FNUZFormat{4, 3, 8, FloatEncoding::kFnuz};
inline constexpr FloatFormat kF8E5M2FNUZFormat{5, 2, 16, FloatEncoding::kFnuz};
inline constexpr FloatFormat kF8E4M3B11FNUZFormat{4, 3, 11, FloatEncoding::kFnuz};
inline constexpr FloatFormat kF8E8M0FNUFormat{8, 0, 127, FloatEncoding::kExponentOnly};
inline constexpr FloatFormat kF6E2M3FNFormat{2, 3, 1, FloatEncoding::kFiniteOnly};
inline constexpr FloatFormat kF6E3M2FNFormat{3, 2, 3, FloatEncoding::kFiniteOnly};
inline constexpr FloatFormat kF4E2M1FNFormat{2, 1, 1, FloatEncoding::kFiniteOnly};

// Bits of the format's value nearest to `value`, in the low total_bits() bits. Exact: one
// rounding from double. (numpy/ml_dtypes casts from float64 round to float32 first, so a double
// within an f32 ulp of a midpoint can differ; pass static_cast<float>(x) to reproduce them.
// From float inputs the results equal ml_dtypes', except that ml_dtypes rounds f32 subnormals
// strictly between 2^-127 and 1.5 * 2^-127 up to 2^-126 in f8E8M0FNU; we give the nearest,
// 2^-127.)
uint32_t EncodeFloat(const FloatFormat& format, double value);
// The value of `bits` (high bits above total_bits() are ignored). Every narrow value is exactly
// a float, so nothing is lost.
float DecodeFloat(const FloatFormat& format, uint32_t bits);

// Fast paths for the two 16-bit types; identical results to EncodeFloat / DecodeFloat.
uint16_t FloatToBF16(float value);
float BF16ToFloat(uint16_t bits);
uint16_t FloatToF16(float value);
float F16ToFloat(uint16_t bits);

}  // namespace ember

#endif  // EMBER_BASE_FLOAT_FORMATS_H_
