// The fast host kernels' f32 exp / log / tanh / logistic (compiler/host/fast_math.h) against the
// evaluator's definition (libm in double, rounded once to f32) over wide ranges: every float of
// a dense sweep plus the special values. The bound is in ulp of the f32 result.
#include "compiler/host/fast_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <vector>

namespace ember::host::fast {
namespace {

int64_t Ordered(float f) {
  int32_t i;
  std::memcpy(&i, &f, sizeof i);
  return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : i;
}

// Distance in ulp (NaN matches NaN only).
int64_t UlpDistance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  const int64_t d = Ordered(a) - Ordered(b);
  return d < 0 ? -d : d;
}

// Floats from lo to hi, about `count` of them evenly spread in bit patterns (so every binade is
// covered), plus the specials.
std::vector<float> Sweep(float lo, float hi, int64_t count) {
  std::vector<float> xs;
  const int64_t a = Ordered(lo), b = Ordered(hi);
  const int64_t step = std::max<int64_t>(1, (b - a) / count);
  for (int64_t o = a; o <= b; o += step) {
    const int32_t bits = o < 0 ? static_cast<int32_t>((-o) | 0x80000000u) : static_cast<int32_t>(o);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    xs.push_back(f);
  }
  for (float s : {0.0f, -0.0f, 1.0f, -1.0f, std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                  std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()}) {
    xs.push_back(s);
  }
  return xs;
}

int64_t MaxUlp(const std::vector<float>& xs, void (*fast)(const float*, float*, int64_t),
               const std::function<double(double)>& exact, float* worst) {
  std::vector<float> got(xs.size());
  fast(xs.data(), got.data(), static_cast<int64_t>(xs.size()));
  // In place too: the kernels may write over their operand.
  std::vector<float> in_place = xs;
  fast(in_place.data(), in_place.data(), static_cast<int64_t>(in_place.size()));
  int64_t max_ulp = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const float want = static_cast<float>(exact(static_cast<double>(xs[i])));
    EXPECT_EQ(UlpDistance(got[i], in_place[i]), 0) << "x = " << xs[i];
    const int64_t d = UlpDistance(got[i], want);
    if (d > max_ulp) {
      max_ulp = d;
      *worst = xs[i];
    }
  }
  return max_ulp;
}

using Kernel = void (*)(const float*, float*, int64_t);

// The baseline build, and the AVX2 + FMA build where the CPU runs it.
std::vector<Kernel> Builds(Kernel base, Kernel avx2) {
  std::vector<Kernel> out = {base};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) out.push_back(avx2);
  return out;
}

TEST(FastMathTest, ExpWithinTwoUlp) {
  for (Kernel k : Builds(ExpF32, avx2::ExpF32)) {
    float worst = 0;
    const int64_t ulp = MaxUlp(Sweep(-120.0f, 120.0f, 1000000), k,
                               [](double x) { return std::exp(x); }, &worst);
    EXPECT_LE(ulp, 2) << "worst at x = " << worst;
  }
}

TEST(FastMathTest, LogWithinTwoUlp) {
  for (Kernel k : Builds(LogF32, avx2::LogF32)) {
    float worst = 0;
    const int64_t ulp = MaxUlp(Sweep(-1.0f, std::numeric_limits<float>::max(), 1000000), k,
                               [](double x) { return std::log(x); }, &worst);
    EXPECT_LE(ulp, 2) << "worst at x = " << worst;
  }
}

TEST(FastMathTest, TanhWithinFourUlp) {
  for (Kernel k : Builds(TanhF32, avx2::TanhF32)) {
    float worst = 0;
    const int64_t ulp = MaxUlp(Sweep(-std::numeric_limits<float>::max(),
                                     std::numeric_limits<float>::max(), 1000000),
                               k, [](double x) { return std::tanh(x); }, &worst);
    EXPECT_LE(ulp, 4) << "worst at x = " << worst;
  }
}

TEST(FastMathTest, LogisticWithinFourUlp) {
  for (Kernel k : Builds(LogisticF32, avx2::LogisticF32)) {
    float worst = 0;
    const int64_t ulp = MaxUlp(Sweep(-120.0f, 120.0f, 1000000), k,
                               [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, &worst);
    EXPECT_LE(ulp, 4) << "worst at x = " << worst;
  }
}

TEST(FastMathTest, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float in[] = {inf, -inf, nan, 0.0f, -0.0f};
  float out[5];
  ExpF32(in, out, 5);
  EXPECT_EQ(out[0], inf);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_EQ(out[3], 1.0f);
  LogF32(in, out, 5);
  EXPECT_EQ(out[0], inf);
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_EQ(out[3], -inf);
  EXPECT_EQ(out[4], -inf);
  TanhF32(in, out, 5);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -1.0f);
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_EQ(out[3], 0.0f);
  EXPECT_TRUE(std::signbit(out[4]));
  LogisticF32(in, out, 5);
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_TRUE(std::isnan(out[2]));
  EXPECT_EQ(out[3], 0.5f);
}

}  // namespace
}  // namespace ember::host::fast
