// Host references for the virtual GPU's tests, written independently of the interpreter's own
// float code: rounding to f16/bf16 by scaling and nearbyint, and float operations in directed
// rounding modes by exact comparison in long double.
#ifndef EMBER_TESTS_VIRTUAL_GPU_REFERENCE_MATH_H_
#define EMBER_TESTS_VIRTUAL_GPU_REFERENCE_MATH_H_

#include <bit>
#include <cmath>
#include <cstdint>

namespace ember::vgpu::testing {

// Rounds a finite double to a binary format with `mantissa` fraction bits, minimum normal
// exponent `emin` and largest finite value `max_finite` (nearest even), and encodes it.
inline uint16_t RefRoundHalf(double v, int mantissa, int emin, int exponent_bits) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  double a = std::fabs(v);
  if (a == 0) return sign;
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
  const int exponent = std::max(e - 1, emin);
  const double quantum = std::ldexp(1.0, exponent - mantissa);
  const double units = std::nearbyint(a / quantum);
  double r = units * quantum;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  const double max_finite = std::ldexp(2.0 - std::ldexp(1.0, -mantissa), bias);
  if (r > max_finite) return static_cast<uint16_t>(sign | (((1 << exponent_bits) - 1) << mantissa));
  std::frexp(r, &e);
  if (e - 1 < emin) {  // subnormal
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(r / std::ldexp(1.0, emin - mantissa)));
  }
  const uint16_t field = static_cast<uint16_t>(e - 1 + bias);
  const uint16_t fraction =
      static_cast<uint16_t>((r / std::ldexp(1.0, e - 1) - 1.0) * std::ldexp(1.0, mantissa));
  return static_cast<uint16_t>(sign | field << mantissa | fraction);
}
inline uint16_t RefToF16(double v) { return RefRoundHalf(v, 10, -14, 5); }
inline uint16_t RefToBF16(double v) { return RefRoundHalf(v, 7, -126, 8); }
inline double RefFromF16(uint16_t h) {
  const int e = (h >> 10) & 0x1f;
  const int f = h & 0x3ff;
  double v = e == 0 ? std::ldexp(f, -24) : std::ldexp(1024 + f, e - 25);
  return (h & 0x8000) ? -v : v;
}
inline double RefFromBF16(uint16_t h) { return std::bit_cast<float>(uint32_t{h} << 16); }

// Directed rounding of an exact value to float: the nearest float, then stepped toward the
// rounding direction while it is on the wrong side.
enum class RefRounding { kZero, kDown, kUp };
inline float RefRoundFloat(long double exact, RefRounding mode) {
  float f = static_cast<float>(exact);
  auto wrong = [&](float g) {
    switch (mode) {
      case RefRounding::kZero: return std::fabs(static_cast<long double>(g)) > std::fabs(exact);
      case RefRounding::kDown: return static_cast<long double>(g) > exact;
      default: return static_cast<long double>(g) < exact;
    }
  };
  while (wrong(f)) {
    const float toward = mode == RefRounding::kUp ? INFINITY
                         : mode == RefRounding::kDown ? -INFINITY : 0.0f;
    f = std::nextafter(f, toward);
  }
  return f;
}

}  // namespace ember::vgpu::testing

#endif  // EMBER_TESTS_VIRTUAL_GPU_REFERENCE_MATH_H_
