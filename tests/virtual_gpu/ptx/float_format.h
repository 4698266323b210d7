// Bit-exact floating-point formats for the PTX interpreter: f16, bf16, tf32 and f32 encodings,
// rounding of an exact value to each of them in any of PTX's four rounding modes, flush-to-zero
// and the canonical NaN results of NVIDIA GPUs (PTX ISA "Floating Point Instructions").
#ifndef EMBER_TESTS_VIRTUAL_GPU_PTX_FLOAT_FORMAT_H_
#define EMBER_TESTS_VIRTUAL_GPU_PTX_FLOAT_FORMAT_H_

#include <bit>
#include <cmath>
#include <cstdint>

namespace ember::vgpu::ptx {

// .rn (nearest even), .rz (toward zero), .rm (toward -inf), .rp (toward +inf); .rna (nearest,
// ties away from zero) exists only for conversions to tf32.
enum class Rounding : uint8_t { kNearest, kZero, kDown, kUp, kNearestAway };

struct Format {
  int mantissa_bits;  // stored fraction bits
  int exponent_bits;
};
inline constexpr Format kF16Format{10, 5};
inline constexpr Format kBF16Format{7, 8};
inline constexpr Format kF32Format{23, 8};
inline constexpr Format kTF32Format{10, 8};  // encoded as f32 with the low 13 fraction bits zero
inline constexpr Format kF64Format{52, 11};

// Rounds `value` (exact) to `format` and returns its bit pattern (for tf32: the f32 bits).
// NaN becomes the format's canonical NaN (0x7fff / 0x7fff / 0x7fffffff / 0x7fffffffffffffff).
uint64_t RoundToFormat(long double value, Format format, Rounding rounding);

inline uint16_t F32ToF16(float v, Rounding r = Rounding::kNearest) {
  return static_cast<uint16_t>(RoundToFormat(v, kF16Format, r));
}
inline uint16_t F32ToBF16(float v, Rounding r = Rounding::kNearest) {
  return static_cast<uint16_t>(RoundToFormat(v, kBF16Format, r));
}
float F16ToF32(uint16_t bits);
inline float BF16ToF32(uint16_t bits) { return std::bit_cast<float>(uint32_t{bits} << 16); }

inline constexpr uint32_t kCanonicalNanF32 = 0x7fffffffu;
inline constexpr uint64_t kCanonicalNanF64 = 0x7fffffffffffffffull;
inline constexpr uint16_t kCanonicalNanF16 = 0x7fff;
inline constexpr uint16_t kCanonicalNanBF16 = 0x7fff;

inline float CanonicalF32(float v) {
  return std::isnan(v) ? std::bit_cast<float>(kCanonicalNanF32) : v;
}
inline double CanonicalF64(double v) {
  return std::isnan(v) ? std::bit_cast<double>(kCanonicalNanF64) : v;
}
// Subnormal -> zero of the same sign (.ftz on f32 operands and results).
inline float FlushF32(float v) {
  return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(0.0f, v) : v;
}
inline uint16_t FlushF16(uint16_t bits) {
  return (bits & 0x7c00) == 0 ? static_cast<uint16_t>(bits & 0x8000) : bits;
}
inline bool IsNanF16(uint16_t bits) { return (bits & 0x7c00) == 0x7c00 && (bits & 0x03ff) != 0; }
inline bool IsNanBF16(uint16_t bits) { return (bits & 0x7f80) == 0x7f80 && (bits & 0x007f) != 0; }

// Arithmetic on f32/f64 in a directed rounding mode (compiled with -frounding-math).
float AddF32(float a, float b, Rounding r);
float MulF32(float a, float b, Rounding r);
float FmaF32(float a, float b, float c, Rounding r);
float DivF32(float a, float b, Rounding r);
float SqrtF32(float a, Rounding r);
double AddF64(double a, double b, Rounding r);
double MulF64(double a, double b, Rounding r);
double FmaF64(double a, double b, double c, Rounding r);
double DivF64(double a, double b, Rounding r);
double SqrtF64(double a, Rounding r);
// Integer -> float in a rounding mode.
float IntToF32(long double exact, Rounding r);
double IntToF64(long double exact, Rounding r);
// Rounds to an integral value in the same format (cvt.rni/rzi/rmi/rpi).
double RoundIntegral(double v, Rounding r);

}  // namespace ember::vgpu::ptx

#endif  // EMBER_TESTS_VIRTUAL_GPU_PTX_FLOAT_FORMAT_H_
