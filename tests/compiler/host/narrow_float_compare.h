// Test helpers for dots and convolutions with narrow float types (bf16, f16, f8) on the compiled
// host path: random arguments of any float type, and the comparison with the evaluator.
//
// Both sides compute the same thing, f32 accumulation of exactly widened operands and one
// rounding to the result type (eval_dot.cc / eval_convolution.cc say so for the evaluator;
// widen_to_f32.h for the compiled path), but in different orders: Eigen blocks and
// reassociates the sums. Any order of a depth-K f32 sum of products is within K*u*S of the exact
// value (u = 2^-24, S = sum of |products|), so the two f32 accumulators differ by at most
// 2*K*u*S. Rounding both to the result type then adds at most one ulp of that type (they can sit
// on either side of a rounding boundary). The bound per element is therefore
//   2*K*u*S + ulp_result(max(|evaluator|, |compiled|)),
// with S computed by the evaluator on the absolute values of the arguments (rounded to the
// result type, so scaled back up by its relative rounding error). A wrong index or a missing
// term moves results by O(sqrt(K)) of the inputs' size, far outside this bound.
#ifndef EMBER_TESTS_COMPILER_HOST_NARROW_FLOAT_COMPARE_H_
#define EMBER_TESTS_COMPILER_HOST_NARROW_FLOAT_COMPARE_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/float_formats.h"
#include "compiler/evaluator/eval_value.h"
#include "compiler/ir/float_conversions.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/module.h"

namespace ember::host::testing {

// Element `i` of a float literal (f64, f32 or a narrow float) as a double.
inline double FloatElement(const ir::Literal& lit, int64_t i) {
  const ir::ElementType type = lit.shape().element_type();
  const uint8_t* bytes = lit.bytes().data();
  if (type == ir::ElementType::kF64) {
    double v;
    std::memcpy(&v, bytes + 8 * i, 8);
    return v;
  }
  if (type == ir::ElementType::kF32) {
    float v;
    std::memcpy(&v, bytes + 4 * i, 4);
    return v;
  }
  const FloatFormat& format = *ir::NarrowFloatFormat(type);
  if (ir::StorageBytes(type) == 2) {
    uint16_t bits;
    std::memcpy(&bits, bytes + 2 * i, 2);
    return DecodeFloat(format, bits);
  }
  return DecodeFloat(format, bytes[i]);
}

// Sets element `i` of a float literal to the value nearest `value`.
inline void SetFloatElement(ir::Literal& lit, int64_t i, double value) {
  const ir::ElementType type = lit.shape().element_type();
  uint8_t* bytes = lit.mutable_bytes().data();
  if (type == ir::ElementType::kF64) {
    std::memcpy(bytes + 8 * i, &value, 8);
  } else if (type == ir::ElementType::kF32) {
    const float v = static_cast<float>(value);
    std::memcpy(bytes + 4 * i, &v, 4);
  } else if (ir::StorageBytes(type) == 2) {
    const uint16_t bits =
        static_cast<uint16_t>(EncodeFloat(*ir::NarrowFloatFormat(type), value));
    std::memcpy(bytes + 2 * i, &bits, 2);
  } else {
    bytes[i] = static_cast<uint8_t>(EncodeFloat(*ir::NarrowFloatFormat(type), value));
  }
}

// Uniform values in (-2, 2) rounded to each parameter's float type.
inline std::vector<eval::EvalValue> RandomFloatArgs(const ir::Computation& entry, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-2, 2);
  std::vector<eval::EvalValue> args;
  for (const auto& p : entry.parameters()) {
    ir::Literal lit = ir::Literal::Create(p->type().shape()).value();
    for (int64_t i = 0; i < lit.shape().element_count(); ++i) SetFloatElement(lit, i, d(rng));
    args.push_back(eval::EvalValue::Array(std::move(lit)));
  }
  return args;
}

// The same arguments with every element replaced by its absolute value.
inline std::vector<eval::EvalValue> AbsoluteArgs(const std::vector<eval::EvalValue>& args) {
  std::vector<eval::EvalValue> out;
  for (const eval::EvalValue& a : args) {
    ir::Literal lit = ir::Literal::Create(a.array.shape()).value();
    for (int64_t i = 0; i < lit.shape().element_count(); ++i) {
      SetFloatElement(lit, i, std::fabs(FloatElement(a.array, i)));
    }
    out.push_back(eval::EvalValue::Array(std::move(lit)));
  }
  return out;
}

// (mantissa bits, smallest normal exponent) of a float type.
inline std::pair<int, int> Precision(ir::ElementType type) {
  if (type == ir::ElementType::kF64) return {52, -1022};
  if (type == ir::ElementType::kF32) return {23, -126};
  const FloatFormat& f = *ir::NarrowFloatFormat(type);
  return {f.mantissa_bits, 1 - f.exponent_bias};
}

// One ulp of `type` at magnitude `x` (the subnormal step below the normal range).
inline double Ulp(ir::ElementType type, double x) {
  const auto [mantissa, min_exp] = Precision(type);
  const int e = x > 0 ? std::max(static_cast<int>(std::floor(std::log2(x))), min_exp) : min_exp;
  return std::ldexp(1.0, e - mantissa);
}

// The comparison described at the top: `want` from the evaluator, `got` compiled, `abs_sums`
// the evaluator's result on the absolute values of the arguments, `depth` the number of
// products summed per element.
inline void ExpectWithinF32AccumulationBound(const ir::Literal& want, const ir::Literal& got,
                                             const ir::Literal& abs_sums, double depth) {
  ASSERT_TRUE(want.shape() == got.shape()) << want.shape().ToString() << " vs "
                                           << got.shape().ToString();
  const ir::ElementType type = want.shape().element_type();
  const double u = std::ldexp(1.0, -24);
  const double rounding = 1 + std::ldexp(1.0, -Precision(type).first);
  int64_t bad = 0;
  for (int64_t i = 0; i < want.shape().element_count(); ++i) {
    const double a = FloatElement(want, i), b = FloatElement(got, i);
    if (!std::isfinite(a) || !std::isfinite(b)) {
      EXPECT_TRUE((std::isnan(a) && std::isnan(b)) || a == b)
          << "element " << i << ": evaluator " << a << ", compiled " << b;
      continue;
    }
    const double s = FloatElement(abs_sums, i) * rounding;
    const double bound = 2 * depth * u * s + Ulp(type, std::max(std::fabs(a), std::fabs(b)));
    if (std::fabs(a - b) > bound && ++bad <= 10) {
      ADD_FAILURE() << "element " << i << ": evaluator " << a << ", compiled " << b
                    << ", bound " << bound;
    }
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace ember::host::testing

#endif  // EMBER_TESTS_COMPILER_HOST_NARROW_FLOAT_COMPARE_H_
