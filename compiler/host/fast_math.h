// Internal to compiler/host: f32 exp / log / tanh / logistic over arrays for the fused loop
// kernels. Branch-free polynomial cores (Cephes-style range reduction and minimax polynomials,
// written from the usual textbook derivations) that the compiler vectorizes; lanes outside the
// cores' ranges (NaN, infinities, overflow, results in the subnormal range, non-positive log
// arguments) are redone with libm in double, as the evaluator computes them. Accuracy against the
// evaluator's correctly rounded double computation: a few ulp (fast_math_test checks the bounds
// over wide ranges).
#ifndef EMBER_COMPILER_HOST_FAST_MATH_H_
#define EMBER_COMPILER_HOST_FAST_MATH_H_

#include <cmath>
#include <cstdint>
#include <cstring>

namespace ember::host::fast {

// Also built for AVX2 + FMA (fast_math_avx2.cc); call these only when the CPU has both. FMA
// contraction changes the last bits, within the same bounds.
namespace avx2 {
void ExpF32(const float* a, float* o, int64_t n);
void LogF32(const float* a, float* o, int64_t n);
void TanhF32(const float* a, float* o, int64_t n);
void LogisticF32(const float* a, float* o, int64_t n);
}  // namespace avx2

// Internal linkage: each translation unit (fast_loop.cc at the baseline ISA, fast_math_avx2.cc
// for AVX2) gets its own copy, so no two builds of these functions ever share a symbol.
namespace {

namespace math_internal {

inline float BitsToFloat(int32_t i) {
  float f;
  std::memcpy(&f, &i, sizeof f);
  return f;
}
inline int32_t FloatToBits(float f) {
  int32_t i;
  std::memcpy(&i, &f, sizeof i);
  return i;
}

// exp(x) for x in [kExpLo, kExpHi] (x already clamped there).
inline constexpr float kExpLo = -87.0f;
inline constexpr float kExpHi = 88.0f;
inline float ExpCore(float x) {
  // x = n ln2 + r, |r| <= ln2 / 2; ln2 split in two so n * kLn2Hi is exact.
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  constexpr float kLn2Hi = 0.693359375f;
  constexpr float kLn2Lo = -2.12194440e-4f;
  const float fn = (x * kLog2e + kRound) - kRound;
  const float r = (x - fn * kLn2Hi) - fn * kLn2Lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * (r * r) + r + 1.0f;
  // n is in [-126, 127]: 2^n is a normal float.
  const int32_t n = static_cast<int32_t>(fn);
  return y * BitsToFloat((n + 127) << 23);
}

inline float Clamp(float x, float lo, float hi) {
  x = x < lo ? lo : x;
  return x > hi ? hi : x;
}

// log(x) for positive normal finite x.
inline float LogCore(float x) {
  constexpr float kSqrtHalf = 0.707106781186547524f;
  const int32_t bits = FloatToBits(x);
  int32_t e = ((bits >> 23) & 0xff) - 126;                       // x = m * 2^e, m in [0.5, 1)
  float m = BitsToFloat((bits & 0x007fffff) | 0x3f000000);
  const bool small = m < kSqrtHalf;
  e -= small ? 1 : 0;
  m = (small ? m + m : m) - 1.0f;  // m in [sqrt(1/2) - 1, sqrt(2) - 1)
  const float z = m * m;
  float p = 7.0376836292e-2f;
  p = p * m - 1.1514610310e-1f;
  p = p * m + 1.1676998740e-1f;
  p = p * m - 1.2420140846e-1f;
  p = p * m + 1.4249322787e-1f;
  p = p * m - 1.6668057665e-1f;
  p = p * m + 2.0000714765e-1f;
  p = p * m - 2.4999993993e-1f;
  p = p * m + 3.3333331174e-1f;
  const float fe = static_cast<float>(e);
  float y = p * m * z;
  y += -2.12194440e-4f * fe;
  y += -0.5f * z;
  return (m + y) + 0.693359375f * fe;
}

// tanh(x) for finite x.
inline float TanhCore(float x) {
  const float ax = std::fabs(x);
  // Small |x|: odd polynomial; otherwise 1 - 2 / (exp(2|x|) + 1) (clamped: tanh is 1 there).
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * ax + ax;
  const float e = ExpCore(Clamp(ax + ax, kExpLo, kExpHi));
  const float big = 1.0f - 2.0f / (e + 1.0f);
  return std::copysign(ax < 0.625f ? small : big, x);
}

inline constexpr int64_t kBlock = 64;

// Whether some x[i] is outside [lo, hi] or NaN (a vectorizable scan; then the block's slow lanes
// are redone one by one).
inline bool AnyOut(const float* x, int64_t n, float lo, float hi) {
  int bad = 0;
  for (int64_t i = 0; i < n; ++i) bad |= !(x[i] >= lo && x[i] <= hi);
  return bad != 0;
}

}  // namespace math_internal

// o[i] = exp(a[i]); o may alias a.
inline void ExpF32(const float* a, float* o, int64_t n) {
  using namespace math_internal;
  float x[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = n - b < kBlock ? n - b : kBlock;
    std::memcpy(x, a + b, static_cast<size_t>(m) * sizeof(float));
    for (int64_t i = 0; i < m; ++i) o[b + i] = ExpCore(Clamp(x[i], kExpLo, kExpHi));
    if (!AnyOut(x, m, kExpLo, kExpHi)) continue;
    for (int64_t i = 0; i < m; ++i) {
      if (!(x[i] >= kExpLo && x[i] <= kExpHi)) {
        o[b + i] = static_cast<float>(std::exp(static_cast<double>(x[i])));
      }
    }
  }
}

// o[i] = log(a[i]); o may alias a.
inline void LogF32(const float* a, float* o, int64_t n) {
  using namespace math_internal;
  constexpr float kMin = 1.17549435e-38f;  // smallest normal
  constexpr float kMax = 3.40282347e+38f;
  float x[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = n - b < kBlock ? n - b : kBlock;
    std::memcpy(x, a + b, static_cast<size_t>(m) * sizeof(float));
    for (int64_t i = 0; i < m; ++i) o[b + i] = LogCore(Clamp(x[i], kMin, kMax));
    if (!AnyOut(x, m, kMin, kMax)) continue;
    for (int64_t i = 0; i < m; ++i) {
      if (!(x[i] >= kMin && x[i] <= kMax)) {
        o[b + i] = static_cast<float>(std::log(static_cast<double>(x[i])));
      }
    }
  }
}

// o[i] = tanh(a[i]); o may alias a.
inline void TanhF32(const float* a, float* o, int64_t n) {
  using namespace math_internal;
  constexpr float kMax = 3.40282347e+38f;
  float x[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = n - b < kBlock ? n - b : kBlock;
    std::memcpy(x, a + b, static_cast<size_t>(m) * sizeof(float));
    for (int64_t i = 0; i < m; ++i) o[b + i] = TanhCore(Clamp(x[i], -kMax, kMax));
    if (!AnyOut(x, m, -kMax, kMax)) continue;
    for (int64_t i = 0; i < m; ++i) {
      if (!(std::fabs(x[i]) <= kMax)) {
        o[b + i] = static_cast<float>(std::tanh(static_cast<double>(x[i])));
      }
    }
  }
}

// o[i] = 1 / (1 + exp(-a[i])); o may alias a.
inline void LogisticF32(const float* a, float* o, int64_t n) {
  using namespace math_internal;
  float x[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = n - b < kBlock ? n - b : kBlock;
    std::memcpy(x, a + b, static_cast<size_t>(m) * sizeof(float));
    for (int64_t i = 0; i < m; ++i) {
      o[b + i] = 1.0f / (1.0f + ExpCore(Clamp(-x[i], kExpLo, kExpHi)));
    }
    if (!AnyOut(x, m, -kExpHi, -kExpLo)) continue;
    for (int64_t i = 0; i < m; ++i) {
      if (!(-x[i] >= kExpLo && -x[i] <= kExpHi)) {
        o[b + i] = static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(x[i]))));
      }
    }
  }
}

}  // namespace

}  // namespace ember::host::fast

#endif  // EMBER_COMPILER_HOST_FAST_MATH_H_
