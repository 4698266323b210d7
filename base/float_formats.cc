// One generic encoder and decoder driven by FloatFormat. Encoding works on the integer
// significand of the double, so rounding does not depend on the FPU rounding mode.
#include "base/float_formats.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace ember {
namespace {

// Rounds v / 2^shift to the nearest integer, ties to even.
uint64_t RoundShiftRightEven(uint64_t v, int shift) {
  // Callers pass a double's significand (< 2^53), so any shift of 64 or more rounds to 0.
  if (shift >= 64) return 0;
  if (shift <= 0) return v << -shift;
  uint64_t quotient = v >> shift;
  uint64_t remainder = v & ((uint64_t{1} << shift) - 1);
  uint64_t half = uint64_t{1} << (shift - 1);
  if (remainder > half || (remainder == half && (quotient & 1) != 0)) ++quotient;
  return quotient;
}

struct Fields {
  uint32_t sign_bit;  // 0 for unsigned formats
  uint32_t exp_max;   // all-ones exponent field
  uint32_t mant_max;  // all-ones mantissa field
};

Fields FieldsOf(const FloatFormat& f) {
  Fields fields;
  fields.sign_bit = f.encoding == FloatEncoding::kExponentOnly
                        ? 0
                        : uint32_t{1} << (f.exponent_bits + f.mantissa_bits);
  fields.exp_max = (uint32_t{1} << f.exponent_bits) - 1;
  fields.mant_max = (uint32_t{1} << f.mantissa_bits) - 1;
  return fields;
}

uint32_t AllOnes(const FloatFormat& f, const Fields& fields) {
  return (fields.exp_max << f.mantissa_bits) | fields.mant_max;
}

uint32_t NanBits(const FloatFormat& f, bool negative) {
  Fields fields = FieldsOf(f);
  uint32_t sign = negative ? fields.sign_bit : 0;
  switch (f.encoding) {
    case FloatEncoding::kIeee:  // quiet NaN: top mantissa bit set
      return sign | (fields.exp_max << f.mantissa_bits) | (uint32_t{1} << (f.mantissa_bits - 1));
    case FloatEncoding::kFiniteAndNan:
      return sign | AllOnes(f, fields);
    case FloatEncoding::kFnuz:
      return fields.sign_bit;
    case FloatEncoding::kFiniteOnly:
      // ml_dtypes' stand-in NaN is -0, negated for a negative NaN.
      return negative ? 0 : fields.sign_bit;
    case FloatEncoding::kExponentOnly:
      return 0xFF;
  }
  return 0;
}

uint32_t OverflowBits(const FloatFormat& f, bool negative) {
  Fields fields = FieldsOf(f);
  uint32_t sign = negative ? fields.sign_bit : 0;
  switch (f.encoding) {
    case FloatEncoding::kIeee:
      return sign | (fields.exp_max << f.mantissa_bits);
    case FloatEncoding::kFiniteAndNan:
      return sign | AllOnes(f, fields);
    case FloatEncoding::kFnuz:
      return fields.sign_bit;
    case FloatEncoding::kFiniteOnly:
      return sign | AllOnes(f, fields);
    case FloatEncoding::kExponentOnly:
      return 0xFF;
  }
  return 0;
}

uint32_t ZeroBits(const FloatFormat& f, bool negative) {
  if (f.encoding == FloatEncoding::kFnuz) return 0;
  if (f.encoding == FloatEncoding::kExponentOnly) return 0xFF;
  return negative ? FieldsOf(f).sign_bit : 0;
}

}  // namespace

uint32_t EncodeFloat(const FloatFormat& f, double value) {
  const int m = f.mantissa_bits;
  const Fields fields = FieldsOf(f);
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  const bool negative = (bits >> 63) != 0;
  const uint64_t double_exp = (bits >> 52) & 0x7FF;
  const uint64_t double_mant = bits & ((uint64_t{1} << 52) - 1);

  if (double_exp == 0x7FF) {
    return double_mant != 0 ? NanBits(f, negative) : OverflowBits(f, negative);
  }
  const bool is_zero = double_exp == 0 && double_mant == 0;
  if (f.encoding == FloatEncoding::kExponentOnly && (negative || is_zero)) return 0xFF;
  if (is_zero) return ZeroBits(f, negative);

  // |value| = significand * 2^q exactly, and 2^e <= |value| < 2^(e+1).
  uint64_t significand;
  int q;
  if (double_exp == 0) {
    significand = double_mant;
    q = -1074;
  } else {
    significand = double_mant | (uint64_t{1} << 52);
    q = static_cast<int>(double_exp) - 1075;
  }
  const int e = q + std::bit_width(significand) - 1;
  // Smallest exponent of a normal value; below it the format has subnormals, except the
  // exponent-only format, whose exponent field 0 is already its smallest value.
  const int e_min =
      f.encoding == FloatEncoding::kExponentOnly ? -f.exponent_bias : 1 - f.exponent_bias;
  if (f.encoding == FloatEncoding::kExponentOnly && e < e_min) return 0;

  int scale_e = std::max(e, e_min);
  // n = |value| / 2^(scale_e - m), rounded: the significand including the implicit bit.
  uint64_t n = RoundShiftRightEven(significand, scale_e - m - q);
  if (n == 0) return ZeroBits(f, negative);
  if ((n >> (m + 1)) != 0) {  // rounding carried into the next binade
    n >>= 1;
    ++scale_e;
  }
  uint32_t exp_field;
  uint32_t mant_field;
  if (n < (uint64_t{1} << m)) {  // subnormal
    exp_field = 0;
    mant_field = static_cast<uint32_t>(n);
  } else {
    exp_field = static_cast<uint32_t>(scale_e + f.exponent_bias);
    mant_field = static_cast<uint32_t>(n - (uint64_t{1} << m));
  }

  bool overflow = false;
  switch (f.encoding) {
    case FloatEncoding::kIeee:
    case FloatEncoding::kExponentOnly:
      overflow = exp_field >= fields.exp_max;
      break;
    case FloatEncoding::kFiniteAndNan:
      overflow = exp_field > fields.exp_max ||
                 (exp_field == fields.exp_max && mant_field == fields.mant_max);
      break;
    case FloatEncoding::kFnuz:
    case FloatEncoding::kFiniteOnly:
      overflow = exp_field > fields.exp_max;
      break;
  }
  if (overflow) return OverflowBits(f, negative);
  return (negative ? fields.sign_bit : 0) | (exp_field << m) | mant_field;
}

float DecodeFloat(const FloatFormat& f, uint32_t bits) {
  const int m = f.mantissa_bits;
  const Fields fields = FieldsOf(f);
  bits &= (uint32_t{1} << f.total_bits()) - 1;
  const float nan = std::numeric_limits<float>::quiet_NaN();

  if (f.encoding == FloatEncoding::kExponentOnly) {
    if (bits == 0xFF) return nan;
    return std::ldexp(1.0f, static_cast<int>(bits) - f.exponent_bias);
  }
  const bool negative = (bits & fields.sign_bit) != 0;
  const uint32_t exp_field = (bits >> m) & fields.exp_max;
  const uint32_t mant_field = bits & fields.mant_max;
  switch (f.encoding) {
    case FloatEncoding::kIeee:
      if (exp_field == fields.exp_max) {
        float special = mant_field == 0 ? std::numeric_limits<float>::infinity() : nan;
        return negative ? -special : special;
      }
      break;
    case FloatEncoding::kFiniteAndNan:
      if (exp_field == fields.exp_max && mant_field == fields.mant_max) {
        return negative ? -nan : nan;
      }
      break;
    case FloatEncoding::kFnuz:
      if (bits == fields.sign_bit) return -nan;
      break;
    default:
      break;
  }
  float magnitude;
  if (exp_field == 0) {
    magnitude = std::ldexp(static_cast<float>(mant_field), 1 - f.exponent_bias - m);
  } else {
    magnitude = std::ldexp(static_cast<float>((uint32_t{1} << m) | mant_field),
                           static_cast<int>(exp_field) - f.exponent_bias - m);
  }
  return negative ? -magnitude : magnitude;
}

uint16_t FloatToBF16(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) {  // NaN: quiet, sign kept (as ml_dtypes)
    return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x7FC0u);
  }
  // Adding 0x7FFF plus the kept LSB rounds to nearest even; overflow carries into inf.
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float BF16ToFloat(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

uint16_t FloatToF16(float value) {
  return static_cast<uint16_t>(EncodeFloat(kF16Format, static_cast<double>(value)));
}

float F16ToFloat(uint16_t bits) { return DecodeFloat(kF16Format, bits); }

}  // namespace ember
