// The f32 widening and rounding of the fast dot and convolution (widen_to_f32.h) against the
// exact generic conversions of base/float_formats.h: every f16 value, every rounding midpoint of
// f16 and bf16 and its f32 neighbours, random f32 bit patterns, and every byte of the one-byte
// formats.
#include "compiler/host/widen_to_f32.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "base/float_formats.h"
#include "compiler/ir/float_conversions.h"

namespace ember::host::fast {
namespace {

// Equal bits, or both NaN with the same sign (NaN payloads are not part of the contract).
bool SameFloat(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) {
    return std::isnan(a) && std::isnan(b) && std::signbit(a) == std::signbit(b);
  }
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

TEST(WidenToF32Test, EveryF16ValueWidensAndRoundTrips) {
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    const float want = F16ToFloat(static_cast<uint16_t>(h));
    const float got = WidenF16(static_cast<uint16_t>(h));
    ASSERT_TRUE(SameFloat(want, got)) << std::hex << h << ": " << want << " vs " << got;
    if (!std::isnan(got)) {
      ASSERT_EQ(NarrowF16(got), h) << std::hex << h;
    } else {
      ASSERT_EQ(NarrowF16(got), FloatToF16(got)) << std::hex << h;
    }
  }
}

// f32 values around every halfway point between neighbouring f16 (or bf16) values: the point
// itself (ties to even) and one f32 ulp either side.
// `largest`: the bits of the format's largest finite value.
template <typename Widen>
std::vector<float> Midpoints(Widen widen, uint32_t largest) {
  std::vector<float> out;
  for (uint32_t h = 0; h < largest; ++h) {
    const double lo = widen(static_cast<uint16_t>(h));
    const double hi = widen(static_cast<uint16_t>(h + 1));
    const float mid = static_cast<float>((lo + hi) / 2);  // exact: one more bit than the format
    for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f)}) {
      out.push_back(x);
      out.push_back(-x);
    }
  }
  return out;
}

TEST(WidenToF32Test, F16RoundingMatchesTheGenericEncoder) {
  std::vector<float> inputs = Midpoints([](uint16_t h) { return F16ToFloat(h); }, 0x7BFFu);
  for (float x : {65504.0f, 65519.99f, 65520.0f, 65536.0f, 1e30f, INFINITY, 0x1p-25f,
                  0x1.8p-25f, 0x1p-26f, 0x1p-14f, 0x1.ffcp-15f, 0.0f}) {
    inputs.push_back(x);
    inputs.push_back(-x);
  }
  std::mt19937 rng(3);
  for (int i = 0; i < 2000000; ++i) inputs.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
  for (float x : inputs) {
    ASSERT_EQ(NarrowF16(x), FloatToF16(x)) << x << " (" << std::hex << std::bit_cast<uint32_t>(x)
                                           << ")";
  }
}

TEST(WidenToF32Test, Bf16MatchesTheGenericConversions) {
  std::vector<float> inputs = Midpoints([](uint16_t h) { return BF16ToFloat(h); }, 0x7F7Fu);
  std::mt19937 rng(4);
  for (int i = 0; i < 2000000; ++i) inputs.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
  for (float x : inputs) {
    ASSERT_EQ(NarrowBF16(x), FloatToBF16(x)) << x;
    ASSERT_EQ(NarrowBF16(x), EncodeFloat(kBF16Format, x)) << x;
  }
  for (uint32_t h = 0; h < 0x10000u; ++h) {
    ASSERT_TRUE(SameFloat(WidenBF16(static_cast<uint16_t>(h)),
                          DecodeFloat(kBF16Format, h)))
        << std::hex << h;
  }
}

TEST(WidenToF32Test, Bf16ArraysRoundAsTheScalarConversion) {
  // NarrowAll's vector lanes (AVX2) against NarrowBF16 over random bit patterns (every NaN
  // payload, rounding carries into the exponent and to inf), with a tail shorter than a vector.
  ThreadPool pool(3);
  std::mt19937 rng(6);
  std::vector<float> values(200003);
  for (float& v : values) v = std::bit_cast<float>(static_cast<uint32_t>(rng()));
  const float edges[] = {0x1.fefffep127f, 0x1.ff0000p127f, 0x1.ff0002p127f, 0x1.010000p0f,
                         0x1.018000p0f, 0x1.008000p0f, 0x1p-133f};
  for (size_t i = 0; i < std::size(edges); ++i) {
    values[2 * i] = edges[i];
    values[2 * i + 1] = -edges[i];
  }
  std::vector<uint16_t> narrow(values.size());
  F32Converter(ir::ElementType::kBF16)
      .NarrowAll(values.data(), static_cast<int64_t>(values.size()), narrow.data(), pool);
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(narrow[i], NarrowBF16(values[i])) << i << " " << std::hex
                                                << std::bit_cast<uint32_t>(values[i]);
  }
}

TEST(WidenToF32Test, ConvertersOfEveryWidenedTypeMatchTheGenericConversions) {
  ThreadPool pool(3);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-600, 600);
  int tested = 0;
  for (ir::ElementType type : ir::AllElementTypes()) {
    if (!WidensToF32(type) || type == ir::ElementType::kF32) continue;
    ++tested;
    SCOPED_TRACE(ir::ElementTypeName(type));
    const FloatFormat& format = *ir::NarrowFloatFormat(type);
    const int bytes = ir::StorageBytes(type);
    // Widening: every encoding (all 2^16 for the 16-bit types), in one parallel call.
    const int64_t n = bytes == 2 ? 0x10000 : int64_t{1} << format.total_bits();
    std::vector<uint8_t> src(static_cast<size_t>(n * bytes));
    for (int64_t i = 0; i < n; ++i) {
      if (bytes == 2) {
        const uint16_t v = static_cast<uint16_t>(i);
        std::memcpy(src.data() + 2 * i, &v, 2);
      } else {
        src[static_cast<size_t>(i)] = static_cast<uint8_t>(i);
      }
    }
    const F32Converter conv(type);
    std::vector<float> wide(static_cast<size_t>(n));
    conv.WidenAll(src.data(), n, wide.data(), pool);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_TRUE(SameFloat(wide[i], DecodeFloat(format, static_cast<uint32_t>(i)))) << i;
      ASSERT_TRUE(SameFloat(conv.Widen(src.data(), i), wide[i])) << i;
    }
    // Rounding: random values across and beyond the range, NaN and inf, over 64Ki elements so
    // the pool splits them.
    std::vector<float> values(100000);
    for (float& v : values) v = d(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 40) - 30);
    values[0] = NAN;
    values[1] = -INFINITY;
    values[2] = 0.0f;
    values[3] = -0.0f;
    // NaNs with payloads and signs, quiet and signalling, and the f16 rounding boundaries (ties
    // at the overflow edge, the subnormal steps), also in whole vectors of the F16C path.
    const uint32_t nans[] = {0xFFC12345u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu};
    const float edges[] = {65504.0f, 65519.996f, 65520.0f, 0x1p-24f, 0x1p-25f, 0x1.0002p-25f,
                           0x1.8p-24f, 0x1.fffffcp-15f, 0x1p-14f, 0x1.ffep-1f, 0x1.fffp-1f};
    for (size_t i = 0; i < 4; ++i) values[8 + i] = values[16 + i] = std::bit_cast<float>(nans[i]);
    for (size_t i = 0; i < std::size(edges); ++i) {
      values[24 + 2 * i] = edges[i];
      values[25 + 2 * i] = -edges[i];
    }
    std::vector<uint8_t> narrow(values.size() * static_cast<size_t>(bytes));
    conv.NarrowAll(values.data(), static_cast<int64_t>(values.size()), narrow.data(), pool);
    for (size_t i = 0; i < values.size(); ++i) {
      uint32_t got = narrow[i * bytes];
      if (bytes == 2) got |= uint32_t{narrow[i * bytes + 1]} << 8;
      ASSERT_EQ(got, EncodeFloat(format, values[i])) << values[i];
    }
  }
  EXPECT_GE(tested, 12);  // bf16, f16, the f8 family, f6 and f4
  EXPECT_FALSE(WidensToF32(ir::ElementType::kF64));
  EXPECT_FALSE(WidensToF32(ir::ElementType::kS8));
  EXPECT_FALSE(WidensToF32(ir::ElementType::kC64));
}

}  // namespace
}  // namespace ember::host::fast
