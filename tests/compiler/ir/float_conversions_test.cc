// Narrow float conversions: known bit patterns, ties, specials, ml_dtypes reference values,
// exhaustive round trips and a brute-force nearest-value oracle.
#include "compiler/ir/float_conversions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "compiler/ir/native_types.h"

namespace ember::ir {
namespace {

std::vector<ElementType> NarrowFloatTypes() {
  std::vector<ElementType> types;
  for (ElementType type : AllElementTypes()) {
    if (NarrowFloatFormat(type) != nullptr) types.push_back(type);
  }
  return types;
}

uint32_t Encode(ElementType type, double value) {
  return EncodeFloat(*NarrowFloatFormat(type), value);
}
float Decode(ElementType type, uint32_t bits) {
  return DecodeFloat(*NarrowFloatFormat(type), bits);
}

TEST(FloatConversionsTest, FormatsExistExactlyForNarrowFloats) {
  EXPECT_EQ(NarrowFloatTypes().size(), 13u);
  EXPECT_EQ(NarrowFloatFormat(ElementType::kF32), nullptr);
  EXPECT_EQ(NarrowFloatFormat(ElementType::kF64), nullptr);
  EXPECT_EQ(NarrowFloatFormat(ElementType::kS8), nullptr);
  for (ElementType type : NarrowFloatTypes()) {
    EXPECT_EQ(NarrowFloatFormat(type)->total_bits(), BitWidth(type)) << ElementTypeName(type);
  }
}

TEST(FloatConversionsTest, KnownBitPatternsDecode) {
  EXPECT_EQ(BF16ToFloat(0x3F80), 1.0f);
  EXPECT_EQ(BF16ToFloat(0xC040), -3.0f);
  EXPECT_EQ(F16ToFloat(0x3C00), 1.0f);
  EXPECT_EQ(F16ToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(F16ToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isinf(F16ToFloat(0xFC00)) && F16ToFloat(0xFC00) < 0);
  EXPECT_EQ(Decode(ElementType::kF8E4M3FN, 0x7E), 448.0f);
  EXPECT_EQ(Decode(ElementType::kF8E4M3FN, 0xFE), -448.0f);
  EXPECT_TRUE(std::isnan(Decode(ElementType::kF8E4M3FN, 0x7F)));
  EXPECT_TRUE(std::isnan(Decode(ElementType::kF8E4M3FN, 0xFF)));
  EXPECT_EQ(Decode(ElementType::kF8E4M3FN, 0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(Decode(ElementType::kF8E5M2, 0x7B), 57344.0f);
  EXPECT_EQ(Decode(ElementType::kF8E5M2, 0x7C), std::numeric_limits<float>::infinity());
  EXPECT_EQ(Decode(ElementType::kF8E5M2, 0xFC), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(Decode(ElementType::kF8E5M2, 0x7D)));
  EXPECT_EQ(Decode(ElementType::kF8E4M3, 0x77), 240.0f);
  EXPECT_EQ(Decode(ElementType::kF8E4M3, 0x78), std::numeric_limits<float>::infinity());
  EXPECT_EQ(Decode(ElementType::kF8E3M4, 0x6F), 15.5f);
  EXPECT_EQ(Decode(ElementType::kF8E4M3FNUZ, 0x7F), 240.0f);
  EXPECT_TRUE(std::isnan(Decode(ElementType::kF8E4M3FNUZ, 0x80)));
  EXPECT_EQ(Decode(ElementType::kF8E4M3FNUZ, 0x08), std::ldexp(1.0f, -7));
  EXPECT_EQ(Decode(ElementType::kF8E4M3B11FNUZ, 0x7F), 30.0f);
  EXPECT_EQ(Decode(ElementType::kF8E5M2FNUZ, 0x7F), 57344.0f);
  EXPECT_TRUE(std::isnan(Decode(ElementType::kF8E5M2FNUZ, 0x80)));
  EXPECT_EQ(Decode(ElementType::kF8E8M0FNU, 0x7F), 1.0f);
  EXPECT_EQ(Decode(ElementType::kF8E8M0FNU, 0x00), std::ldexp(1.0f, -127));
  EXPECT_EQ(Decode(ElementType::kF8E8M0FNU, 0xFE), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(Decode(ElementType::kF8E8M0FNU, 0xFF)));
  const float f4_values[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (uint32_t b = 0; b < 8; ++b) {
    EXPECT_EQ(Decode(ElementType::kF4E2M1FN, b), f4_values[b]);
    EXPECT_EQ(Decode(ElementType::kF4E2M1FN, b | 8), -f4_values[b]);
  }
  EXPECT_EQ(Decode(ElementType::kF6E2M3FN, 0x1F), 7.5f);
  EXPECT_EQ(Decode(ElementType::kF6E2M3FN, 0x01), 0.125f);
  EXPECT_EQ(Decode(ElementType::kF6E3M2FN, 0x1F), 28.0f);
  EXPECT_EQ(Decode(ElementType::kF6E3M2FN, 0x3F), -28.0f);
  EXPECT_EQ(Decode(ElementType::kF6E3M2FN, 0x01), 0.0625f);
  // High bits above the format's width are ignored.
  EXPECT_EQ(Decode(ElementType::kF4E2M1FN, 0xF7), 6.0f);
  EXPECT_EQ(Decode(ElementType::kF4E2M1FN, 0xFF), -6.0f);
}

TEST(FloatConversionsTest, RoundToNearestEvenTies) {
  // bf16: ulp(1) = 2^-7; halfway cases go to the even mantissa.
  EXPECT_EQ(FloatToBF16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(FloatToBF16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82);
  EXPECT_EQ(FloatToBF16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3F81);
  // f16 integers above 2048 are spaced by 2.
  EXPECT_EQ(FloatToF16(2049.0f), 0x6800);
  EXPECT_EQ(FloatToF16(2051.0f), 0x6802);
  // f16 subnormal ties: 2^-25 is halfway between 0 and the smallest subnormal.
  EXPECT_EQ(FloatToF16(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(FloatToF16(-std::ldexp(1.0f, -25)), 0x8000);
  EXPECT_EQ(FloatToF16(3 * std::ldexp(1.0f, -25)), 0x0002);
  // f8E4M3FN: 17 lies halfway between 16 (0x58) and 18 (0x59); 19 between 18 and 20 (0x5A).
  EXPECT_EQ(Encode(ElementType::kF8E4M3FN, 17.0), 0x58u);
  EXPECT_EQ(Encode(ElementType::kF8E4M3FN, 19.0), 0x5Au);
  EXPECT_EQ(Encode(ElementType::kF8E4M3FN, -17.0), 0xD8u);
  // f4E2M1FN: 5 is halfway between 4 (0x6) and 6 (0x7); 2.5 between 2 (0x4) and 3 (0x5).
  EXPECT_EQ(Encode(ElementType::kF4E2M1FN, 5.0), 0x6u);
  EXPECT_EQ(Encode(ElementType::kF4E2M1FN, 2.5), 0x4u);
  EXPECT_EQ(Encode(ElementType::kF4E2M1FN, 3.5), 0x6u);
  // f8E8M0FNU has no mantissa: ties go to the larger power of two, as in ml_dtypes.
  EXPECT_EQ(Encode(ElementType::kF8E8M0FNU, 1.5), 0x80u);
  EXPECT_EQ(Encode(ElementType::kF8E8M0FNU, 3.0), 0x81u);
  EXPECT_EQ(Encode(ElementType::kF8E8M0FNU, 2.9), 0x80u);
}

TEST(FloatConversionsTest, OverflowInfinityAndNanPerFormat) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // IEEE-like: overflow and inf give inf; NaN is quiet with its sign.
  EXPECT_EQ(Encode(ElementType::kF8E5M2, 61440.0), 0x7Cu);  // tie above max rounds to inf
  EXPECT_EQ(Encode(ElementType::kF8E5M2, 61439.0), 0x7Bu);
  EXPECT_EQ(Encode(ElementType::kF8E5M2, -inf), 0xFCu);
  EXPECT_EQ(Encode(ElementType::kF8E5M2, nan), 0x7Eu);
  EXPECT_EQ(Encode(ElementType::kF8E5M2, -nan), 0xFEu);
  EXPECT_EQ(FloatToF16(65520.0f), 0x7C00);
  EXPECT_EQ(FloatToF16(65519.0f), 0x7BFF);
  EXPECT_EQ(FloatToBF16(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(FloatToBF16(-std::numeric_limits<float>::quiet_NaN()), 0xFFC0);
  // FN: no inf; overflow and inf give NaN with the sign; 464 still rounds to 448.
  EXPECT_EQ(Encode(ElementType::kF8E4M3FN, 464.0), 0x7Eu);
  EXPECT_EQ(Encode(ElementType::kF8E4M3FN, 465.0), 0x7Fu);
  EXPECT_EQ(Encode(ElementType::kF8E4M3FN, -1e6), 0xFFu);
  EXPECT_EQ(Encode(ElementType::kF8E4M3FN, inf), 0x7Fu);
  // FNUZ: one NaN (0x80); no -0.
  EXPECT_EQ(Encode(ElementType::kF8E4M3FNUZ, inf), 0x80u);
  EXPECT_EQ(Encode(ElementType::kF8E4M3FNUZ, -nan), 0x80u);
  EXPECT_EQ(Encode(ElementType::kF8E4M3FNUZ, 1e6), 0x80u);
  EXPECT_EQ(Encode(ElementType::kF8E4M3FNUZ, -0.0), 0x00u);
  EXPECT_EQ(Encode(ElementType::kF8E4M3FNUZ, -1e-30), 0x00u);
  EXPECT_EQ(Encode(ElementType::kF8E5M2FNUZ, 57344.0), 0x7Fu);
  // MX f4/f6: saturate; NaN has no encoding (ml_dtypes gives -0 for +NaN, +0 for -NaN).
  EXPECT_EQ(Encode(ElementType::kF4E2M1FN, 100.0), 0x7u);
  EXPECT_EQ(Encode(ElementType::kF4E2M1FN, -inf), 0xFu);
  EXPECT_EQ(Encode(ElementType::kF4E2M1FN, nan), 0x8u);
  EXPECT_EQ(Encode(ElementType::kF4E2M1FN, -nan), 0x0u);
  EXPECT_EQ(Encode(ElementType::kF6E3M2FN, 1e9), 0x1Fu);
  EXPECT_EQ(Encode(ElementType::kF6E2M3FN, -8.0), 0x3Fu);
  // E8M0: unsigned, no zero.
  EXPECT_EQ(Encode(ElementType::kF8E8M0FNU, 0.0), 0xFFu);
  EXPECT_EQ(Encode(ElementType::kF8E8M0FNU, -2.0), 0xFFu);
  EXPECT_EQ(Encode(ElementType::kF8E8M0FNU, inf), 0xFFu);
  EXPECT_EQ(Encode(ElementType::kF8E8M0FNU, 1e-300), 0x00u);
  EXPECT_EQ(Encode(ElementType::kF8E8M0FNU, std::ldexp(1.5, 127)), 0xFFu);
  EXPECT_EQ(Encode(ElementType::kF8E8M0FNU, std::ldexp(1.49, 127)), 0xFEu);
}

TEST(FloatConversionsTest, DoublesRoundOnce) {
  // Just above the bf16 tie at 1 + 2^-8: a double rounds up; going through f32 first would
  // lose the 2^-40 and round the resulting tie down to even.
  const double above_tie = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(Encode(ElementType::kBF16, above_tie), 0x3F81u);
  EXPECT_EQ(FloatToBF16(static_cast<float>(above_tie)), 0x3F80);
  EXPECT_EQ(Encode(ElementType::kF8E4M3FN, 17.0 - 1e-12), 0x58u);
  EXPECT_EQ(Encode(ElementType::kF8E4M3FN, 17.0 + 1e-12), 0x59u);
  // Double subnormals are inputs like any other.
  EXPECT_EQ(Encode(ElementType::kF16, 5e-324), 0x0000u);
  EXPECT_EQ(Encode(ElementType::kF16, -5e-324), 0x8000u);
}

struct ReferenceCase {
  ElementType type;
  uint32_t input_bits;  // a float
  uint32_t expected;
};
constexpr ReferenceCase kMlDtypesReference[] = {
#include "tests/compiler/ir/float_conversions_reference.inc"
};

TEST(FloatConversionsTest, MatchesMlDtypesReferenceValues) {
  int checked = 0;
  for (const ReferenceCase& c : kMlDtypesReference) {
    const float input = std::bit_cast<float>(c.input_bits);
    EXPECT_EQ(Encode(c.type, input), c.expected) << ElementTypeName(c.type) << " from " << input
                                                 << " (0x" << std::hex << c.input_bits << ")";
    ++checked;
  }
  EXPECT_GT(checked, 300);
}

// Encode(Decode(bits)) gives back bits for every non-NaN pattern of every format.
TEST(FloatConversionsTest, EveryBitPatternRoundTrips) {
  for (ElementType type : NarrowFloatTypes()) {
    const FloatFormat& format = *NarrowFloatFormat(type);
    int nans = 0;
    for (uint32_t bits = 0; bits < (1u << format.total_bits()); ++bits) {
      const float value = DecodeFloat(format, bits);
      if (std::isnan(value)) {
        ++nans;
        EXPECT_TRUE(std::isnan(DecodeFloat(format, EncodeFloat(format, value))));
        continue;
      }
      ASSERT_EQ(EncodeFloat(format, value), bits)
          << ElementTypeName(type) << " bits 0x" << std::hex << bits << " value " << value;
      ASSERT_EQ(EncodeFloat(format, static_cast<double>(value)), bits);
    }
    const int expected_nans = [&] {
      switch (format.encoding) {
        case FloatEncoding::kIeee:
          return 2 * ((1 << format.mantissa_bits) - 1);
        case FloatEncoding::kFiniteAndNan:
          return 2;
        case FloatEncoding::kFnuz:
        case FloatEncoding::kExponentOnly:
          return 1;
        case FloatEncoding::kFiniteOnly:
          return 0;
      }
      return -1;
    }();
    EXPECT_EQ(nans, expected_nans) << ElementTypeName(type);
  }
}

// Independent oracle: the nearest finite value by search over all values, ties to the even
// bit pattern (to the larger value for f8E8M0FNU, which has no mantissa).
TEST(FloatConversionsTest, RandomValuesRoundToTheNearestRepresentable) {
  std::mt19937_64 rng(20240601);
  for (ElementType type : NarrowFloatTypes()) {
    const FloatFormat& format = *NarrowFloatFormat(type);
    struct Entry {
      double value;
      uint32_t bits;
    };
    std::vector<Entry> table;
    for (uint32_t bits = 0; bits < (1u << format.total_bits()); ++bits) {
      const float v = DecodeFloat(format, bits);
      if (std::isfinite(v) && !(v == 0 && std::signbit(v))) table.push_back({v, bits});
    }
    std::sort(table.begin(), table.end(),
              [](const Entry& a, const Entry& b) { return a.value < b.value; });
    const double lowest = table.front().value;
    const double highest = table.back().value;
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (int i = 0; i < 3000; ++i) {
      double x;
      if (i % 3 == 0) {  // an exact midpoint between neighbours
        size_t k = rng() % (table.size() - 1);
        x = (table[k].value + table[k + 1].value) / 2;
      } else {  // log-uniform magnitude, random sign, inside the finite range
        double lo = std::max(std::abs(table[1].value) / 4, 1e-300);
        double magnitude = std::exp(std::log(lo) + unit(rng) * (std::log(highest) - std::log(lo)));
        x = (format.encoding == FloatEncoding::kExponentOnly || (rng() & 1)) ? magnitude
                                                                             : -magnitude;
      }
      if (x < lowest || x > highest) continue;
      auto upper = std::lower_bound(table.begin(), table.end(), x,
                                    [](const Entry& e, double v) { return e.value < v; });
      uint32_t expected;
      if (upper->value == x || upper == table.begin()) {
        expected = upper->bits;
      } else {
        auto lower = upper - 1;
        const double down = x - lower->value;
        const double up = upper->value - x;
        if (down < up) {
          expected = lower->bits;
        } else if (up < down) {
          expected = upper->bits;
        } else if (format.encoding == FloatEncoding::kExponentOnly) {
          expected = upper->bits;
        } else {
          expected = (lower->bits & 1) == 0 ? lower->bits : upper->bits;
        }
      }
      const uint32_t actual = EncodeFloat(format, x);
      // Values that round to zero from below keep their sign where the format has -0.
      if (DecodeFloat(format, expected) == 0 && x < 0 && format.encoding != FloatEncoding::kFnuz) {
        expected |= 1u << (format.exponent_bits + format.mantissa_bits);
      }
      ASSERT_EQ(actual, expected) << ElementTypeName(type) << " x=" << x;
    }
  }
}

TEST(FloatConversionsTest, FastPathsAgreeWithTheGenericCodec) {
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t bits = rng();
    const float value = std::bit_cast<float>(bits);
    ASSERT_EQ(FloatToBF16(value), Encode(ElementType::kBF16, value)) << std::hex << bits;
    ASSERT_EQ(FloatToF16(value), Encode(ElementType::kF16, value)) << std::hex << bits;
  }
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const float generic = Decode(ElementType::kBF16, bits);
    const float fast = BF16ToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(generic)) {
      ASSERT_TRUE(std::isnan(fast));
    } else {
      ASSERT_EQ(std::bit_cast<uint32_t>(fast), std::bit_cast<uint32_t>(generic)) << bits;
    }
  }
}

TEST(FloatConversionsTest, NativeWrappersConvert) {
  EXPECT_EQ(BF16::FromFloat(1.0f).bits, 0x3F80);
  EXPECT_EQ(BF16::FromBits(0x4049).ToFloat(), 3.140625f);
  EXPECT_EQ(F16::FromDouble(-2.5).bits, 0xC100);
  EXPECT_EQ(F8E4M3FN::FromFloat(448.0f).bits, 0x7E);
  EXPECT_EQ(F8E4M3FN::FromFloat(-0.3125f).ToFloat(), -0.3125f);
  EXPECT_EQ(F4E2M1FN::FromFloat(-6.0f).bits, 0xF);
  EXPECT_EQ(F8E8M0FNU::FromFloat(0.25f).bits, 125);
  EXPECT_TRUE(F8E5M2::FromFloat(1.0f) == F8E5M2::FromBits(0x3C));
}

}  // namespace
}  // namespace ember::ir
