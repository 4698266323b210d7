// dot_general with bf16, f16 and f8 operands and results on the compiled host path (widened to
// f32, the Eigen GEMM with f32 accumulation, one rounding: fast_dot.cc) against the reference
// evaluator, which computes the same f32 accumulation in another order; the tolerance and why
// it holds are at the top of narrow_float_compare.h. Every case must run as the fast dot kernel,
// not through the evaluator's op table (the cost report says which).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "tests/compiler/host/dot_cases.h"
#include "tests/compiler/host/narrow_float_compare.h"

namespace ember::host {
namespace {

using testing::CloneArgs;
using testing::CompileDotBothWays;
using testing::CompiledDot;
using testing::DotCase;
using testing::DotProgram;

void Check(const DotCase& c) {
  SCOPED_TRACE(c.name);
  CompiledDot both = CompileDotBothWays(DotProgram(c));
  if (both.compiled == nullptr) return;
  const std::vector<eval::EvalValue> args = testing::RandomFloatArgs(*both.module->entry(), 5);
  auto want = both.evaluator->Run(CloneArgs(args));
  ASSERT_TRUE(want.ok()) << want.status();
  auto abs_sums = both.evaluator->Run(testing::AbsoluteArgs(args));
  ASSERT_TRUE(abs_sums.ok()) << abs_sums.status();
  // Twice: the second run reuses the arena and the per-thread f32 scratch.
  for (int run = 0; run < 2; ++run) {
    auto got = both.compiled->Run(CloneArgs(args));
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 1u);
    testing::ExpectWithinF32AccumulationBound((*want)[0].array, (*got)[0].array,
                                              (*abs_sums)[0].array, static_cast<double>(c.depth));
  }
}

TEST(NarrowDotTest, Bf16AndF16MatchTheEvaluator) {
  const std::vector<DotCase> cases = {
      {"bf16 matmul", "tensor<8x40xbf16>", "tensor<40x16xbf16>", "tensor<8x16xbf16>",
       "contracting_dims = [1] x [0]", 40},
      {"f16 matmul", "tensor<9x33xf16>", "tensor<33x14xf16>", "tensor<9x14xf16>",
       "contracting_dims = [1] x [0]", 33},
      {"bf16 batched", "tensor<3x5x24xbf16>", "tensor<3x24x7xbf16>", "tensor<3x5x7xbf16>",
       "batching_dims = [0] x [0], contracting_dims = [2] x [1]", 24},
      {"f16 batched, rhs contracting last (q k^T)", "tensor<4x6x16xf16>", "tensor<4x10x16xf16>",
       "tensor<4x6x10xf16>", "batching_dims = [0] x [0], contracting_dims = [2] x [2]", 16},
      {"bf16 both transposed (x^T w^T)", "tensor<30x6xbf16>", "tensor<11x30xbf16>",
       "tensor<6x11xbf16>", "contracting_dims = [0] x [1]", 30},
      {"f16 contracting dims needing a permutation", "tensor<16x3x5xf16>", "tensor<5x16x7xf16>",
       "tensor<3x7xf16>", "contracting_dims = [0, 2] x [1, 0]", 80},
      {"bf16 batch dim not leading: permuted", "tensor<6x3x20xbf16>", "tensor<20x3x4xbf16>",
       "tensor<3x6x4xbf16>", "batching_dims = [1] x [1], contracting_dims = [2] x [0]", 20},
      {"bf16 operands, f32 result (preferred_element_type)", "tensor<12x64xbf16>",
       "tensor<64x9xbf16>", "tensor<12x9xf32>", "contracting_dims = [1] x [0]", 64},
      {"f16 operands, f32 result, batched", "tensor<2x7x18xf16>", "tensor<2x18x5xf16>",
       "tensor<2x7x5xf32>", "batching_dims = [0] x [0], contracting_dims = [2] x [1]", 18},
      {"bf16 with f32 operand, bf16 result", "tensor<10x24xbf16>", "tensor<24x6xf32>",
       "tensor<10x6xbf16>", "contracting_dims = [1] x [0]", 24},
      {"f32 operands, f16 result", "tensor<5x17xf32>", "tensor<17x8xf32>", "tensor<5x8xf16>",
       "contracting_dims = [1] x [0]", 17},
      {"f8E4M3FN operands, f32 result", "tensor<6x32xf8E4M3FN>", "tensor<32x5xf8E4M3FN>",
       "tensor<6x5xf32>", "contracting_dims = [1] x [0]", 32},
      {"f8E5M2 operands and result", "tensor<4x12xf8E5M2>", "tensor<12x6xf8E5M2>",
       "tensor<4x6xf8E5M2>", "contracting_dims = [1] x [0]", 12},
      {"bf16 vector dot", "tensor<50xbf16>", "tensor<50xbf16>", "tensor<bf16>",
       "contracting_dims = [0] x [0]", 50},
      // Operands above 64Ki elements: widening and rounding split across the pool.
      {"bf16 large enough to widen in parallel", "tensor<96x700xbf16>", "tensor<700x100xbf16>",
       "tensor<96x100xbf16>", "contracting_dims = [1] x [0]", 700},
  };
  for (const DotCase& c : cases) Check(c);
}

// NaN in an operand gives NaN in every result it reaches, and f16 sums past 65504 round to inf,
// on both paths (f32 accumulation: the sum itself does not overflow before the rounding).
TEST(NarrowDotTest, NanAndOverflowFollowTheEvaluator) {
  const std::string text = R"(
func.func @main(%a: tensor<4x8xf16>, %b: tensor<8x3xf16>) -> tensor<4x3xf16> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf16>, tensor<8x3xf16>) -> tensor<4x3xf16>
  return %0 : tensor<4x3xf16>
})";
  CompiledDot both = CompileDotBothWays(text);
  ASSERT_NE(both.compiled, nullptr);
  auto make_args = [&] {
    std::vector<eval::EvalValue> args = testing::RandomFloatArgs(*both.module->entry(), 9);
    ir::Literal& a = args[0].array;
    // Row 0: a NaN. Row 1: 8 * 200 * 200 = 320000 in f32, inf in f16 (when b is all 200).
    testing::SetFloatElement(a, 3, std::numeric_limits<double>::quiet_NaN());
    for (int64_t k = 0; k < 8; ++k) testing::SetFloatElement(a, 8 + k, 200);
    ir::Literal& b = args[1].array;
    for (int64_t i = 0; i < 8; ++i) testing::SetFloatElement(b, i * 3, 200);
    return args;
  };
  auto want = both.evaluator->Run(make_args());
  auto got = both.compiled->Run(make_args());
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  const ir::Literal& w = (*want)[0].array;
  const ir::Literal& g = (*got)[0].array;
  for (int64_t j = 0; j < 3; ++j) {
    EXPECT_TRUE(std::isnan(testing::FloatElement(w, j)));
    EXPECT_TRUE(std::isnan(testing::FloatElement(g, j))) << "column " << j;
  }
  EXPECT_EQ(testing::FloatElement(w, 3), std::numeric_limits<double>::infinity());
  EXPECT_EQ(testing::FloatElement(g, 3), std::numeric_limits<double>::infinity());
  auto abs_sums = both.evaluator->Run(testing::AbsoluteArgs(make_args()));
  ASSERT_TRUE(abs_sums.ok()) << abs_sums.status();
  testing::ExpectWithinF32AccumulationBound(w, g, (*abs_sums)[0].array, 8);
}

}  // namespace
}  // namespace ember::host
