#include "tests/virtual_gpu/ptx/float_format.h"

#include <cfenv>
#include <limits>

// This file is compiled with -frounding-math: the directed-rounding helpers below change the FPU
// rounding mode around one operation and the compiler must not fold or move it across.

namespace ember::vgpu::ptx {
namespace {

int FenvMode(Rounding r) {
  switch (r) {
    case Rounding::kZero:
      return FE_TOWARDZERO;
    case Rounding::kDown:
      return FE_DOWNWARD;
    case Rounding::kUp:
      return FE_UPWARD;
    default:
      return FE_TONEAREST;
  }
}

class ScopedRounding {
 public:
  explicit ScopedRounding(Rounding r) : active_(r != Rounding::kNearest) {
    if (active_) std::fesetround(FenvMode(r));
  }
  ~ScopedRounding() {
    if (active_) std::fesetround(FE_TONEAREST);
  }

 private:
  bool active_;
};

}  // namespace

uint64_t RoundToFormat(long double value, Format format, Rounding rounding) {
  const int bias = (1 << (format.exponent_bits - 1)) - 1;
  const int emin = 1 - bias;  // exponent of the smallest normal
  const int emax = bias;
  const int total_bits = 1 + format.exponent_bits + format.mantissa_bits;
  const bool tf32 = format.mantissa_bits == kTF32Format.mantissa_bits &&
                    format.exponent_bits == kTF32Format.exponent_bits;
  auto encode = [&](uint64_t sign, uint64_t exponent_field, uint64_t fraction) -> uint64_t {
    const uint64_t bits = (sign << (total_bits - 1)) | (exponent_field << format.mantissa_bits) |
                          fraction;
    return tf32 ? bits << 13 : bits;
  };
  const uint64_t exp_all_ones = (uint64_t{1} << format.exponent_bits) - 1;
  if (std::isnan(value)) {
    if (tf32) return kCanonicalNanF32;
    return encode(0, exp_all_ones, (uint64_t{1} << format.mantissa_bits) - 1);
  }
  const uint64_t sign = std::signbit(value) ? 1 : 0;
  if (std::isinf(value)) return encode(sign, exp_all_ones, 0);
  if (value == 0) return encode(sign, 0, 0);

  int e = 0;
  long double f = std::frexp(std::fabs(value), &e);  // |value| = f * 2^e, f in [0.5, 1)
  // 64 significant bits: long double holds the value exactly.
  const uint64_t m = static_cast<uint64_t>(std::ldexp(f, 64));
  const int unbiased = e - 1;                      // value = 1.xxx * 2^unbiased
  const int quantum = (unbiased < emin ? emin : unbiased) - format.mantissa_bits;
  // units = value / 2^quantum = m * 2^(e - 64 - quantum)
  const int shift = 64 - e + quantum;  // right shift of m, >= 64 - mantissa_bits - 1 > 0
  uint64_t units;
  bool half = false, sticky = false;
  if (shift >= 64) {
    units = 0;
    half = shift == 64 && (m >> 63) != 0;
    sticky = shift == 64 ? (m << 1) != 0 : m != 0;
  } else {
    units = m >> shift;
    const uint64_t rest = m & ((uint64_t{1} << shift) - 1);
    half = (rest >> (shift - 1)) & 1;
    sticky = (rest & ((uint64_t{1} << (shift - 1)) - 1)) != 0;
  }
  bool round_up = false;
  switch (rounding) {
    case Rounding::kNearest:
      round_up = half && (sticky || (units & 1));
      break;
    case Rounding::kNearestAway:
      round_up = half;
      break;
    case Rounding::kZero:
      break;
    case Rounding::kDown:
      round_up = sign && (half || sticky);
      break;
    case Rounding::kUp:
      round_up = !sign && (half || sticky);
      break;
  }
  if (round_up) ++units;
  int exponent = quantum + format.mantissa_bits;  // exponent of the leading unit bit position
  if (units >> (format.mantissa_bits + 1)) {      // carry out of the significand
    units >>= 1;
    ++exponent;
  }
  if (units == 0) return encode(sign, 0, 0);
  if ((units >> format.mantissa_bits) == 0) {  // subnormal
    return encode(sign, 0, units);
  }
  if (exponent > emax) {
    const bool to_inf = rounding == Rounding::kNearest || rounding == Rounding::kNearestAway ||
                        (rounding == Rounding::kUp && !sign) ||
                        (rounding == Rounding::kDown && sign);
    if (to_inf) return encode(sign, exp_all_ones, 0);
    return encode(sign, exp_all_ones - 1, (uint64_t{1} << format.mantissa_bits) - 1);
  }
  return encode(sign, static_cast<uint64_t>(exponent + bias),
                units & ((uint64_t{1} << format.mantissa_bits) - 1));
}

float F16ToF32(uint16_t bits) {
  const uint32_t sign = (bits >> 15) & 1;
  const uint32_t exponent = (bits >> 10) & 0x1f;
  const uint32_t fraction = bits & 0x3ff;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(fraction), -24);
  } else if (exponent == 0x1f) {
    magnitude = fraction == 0 ? std::numeric_limits<float>::infinity()
                              : std::bit_cast<float>(0x7fc00000u | (fraction << 13));
  } else {
    magnitude = std::ldexp(static_cast<float>(fraction | 0x400), static_cast<int>(exponent) - 25);
  }
  return sign ? -magnitude : magnitude;
}

namespace {

// Evaluates `op` with the FPU in rounding mode `r`; `volatile` keeps the result computed there.
template <class F>
auto InMode(Rounding r, F op) {
  ScopedRounding scope(r);
  volatile auto result = op();
  return result;
}

}  // namespace

float AddF32(float a, float b, Rounding r) { return InMode(r, [&] { return a + b; }); }
float MulF32(float a, float b, Rounding r) { return InMode(r, [&] { return a * b; }); }
float FmaF32(float a, float b, float c, Rounding r) { return InMode(r, [&] { return std::fma(a, b, c); }); }
float DivF32(float a, float b, Rounding r) { return InMode(r, [&] { return a / b; }); }
float SqrtF32(float a, Rounding r) { return InMode(r, [&] { return std::sqrt(a); }); }
double AddF64(double a, double b, Rounding r) { return InMode(r, [&] { return a + b; }); }
double MulF64(double a, double b, Rounding r) { return InMode(r, [&] { return a * b; }); }
double FmaF64(double a, double b, double c, Rounding r) { return InMode(r, [&] { return std::fma(a, b, c); }); }
double DivF64(double a, double b, Rounding r) { return InMode(r, [&] { return a / b; }); }
double SqrtF64(double a, Rounding r) { return InMode(r, [&] { return std::sqrt(a); }); }
float IntToF32(long double exact, Rounding r) {
  return std::bit_cast<float>(static_cast<uint32_t>(RoundToFormat(exact, kF32Format, r)));
}
double IntToF64(long double exact, Rounding r) {
  ScopedRounding scope(r);
  volatile double result = static_cast<double>(exact);  // exact: a 64-bit integer fits long double
  return result;
}
double RoundIntegral(double v, Rounding r) {
  switch (r) {
    case Rounding::kZero:
      return std::trunc(v);
    case Rounding::kDown:
      return std::floor(v);
    case Rounding::kUp:
      return std::ceil(v);
    default:
      return std::nearbyint(v);  // the default environment rounds to nearest even
  }
}

}  // namespace ember::vgpu::ptx
