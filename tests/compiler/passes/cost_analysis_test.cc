// The cost analysis (compiler/passes/cost_analysis.h) on hand-written programs: the counts XLA's
// HloCostAnalysis gives for the same programs (checked against jaxlib's XLA:CPU for these shapes
// by tests/jax/test_cost_analysis.py), and bytes per kernel when a fusion plan is given.
#include "compiler/passes/cost_analysis.h"

#include <gtest/gtest.h>

#include <memory>

#include "compiler/passes/fusion_plan.h"
#include "tests/compiler/parse_module.h"

namespace ember::passes {
namespace {

using ::ember::test_util::Parse;

ProgramCost Cost(const char* text, const FusionPlan* plan = nullptr) {
  std::unique_ptr<ir::Module> module = Parse(text);
  EXPECT_NE(module, nullptr);
  if (module == nullptr) return {};
  return AnalyzeCost(*module->entry(), plan);
}

TEST(CostAnalysisTest, DotCountsTwoFlopsPerMultiplyAdd) {
  ProgramCost c = Cost(R"(
func.func @main(%a: tensor<4x64x32xf32>, %b: tensor<4x32x16xf32>) -> tensor<4x64x16xf32> {
  %d = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x64x32xf32>, tensor<4x32x16xf32>) -> tensor<4x64x16xf32>
  return %d : tensor<4x64x16xf32>
})");
  EXPECT_EQ(c.flops, 2.0 * 4 * 64 * 16 * 32);
  EXPECT_EQ(c.transcendentals, 0);
  EXPECT_EQ(c.bytes_accessed, 4.0 * (4 * 64 * 32 + 4 * 32 * 16 + 4 * 64 * 16));
}

TEST(CostAnalysisTest, ElementwiseTranscendentalsAndReductions) {
  ProgramCost c = Cost(R"(
func.func @main(%x: tensor<64x32xf32>) -> tensor<64xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %two = stablehlo.constant dense<2.0> : tensor<64x32xf32>
  %e = stablehlo.exponential %x : tensor<64x32xf32>
  %t = stablehlo.tanh %e : tensor<64x32xf32>
  %m = stablehlo.multiply %t, %two : tensor<64x32xf32>
  %p = stablehlo.compare GT, %m, %x : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xi1>
  %s = stablehlo.select %p, %m, %x : tensor<64x32xi1>, tensor<64x32xf32>
  %r = stablehlo.reduce(%s init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x32xf32>, tensor<f32>) -> tensor<64xf32>
  return %r : tensor<64xf32>
})");
  EXPECT_EQ(c.transcendentals, 2.0 * 2048);        // exp, tanh
  EXPECT_EQ(c.flops, 3.0 * 2048 + 64 * (32 - 1));  // multiply, compare, select; the adds
}

TEST(CostAnalysisTest, WhileBodyCountsOnceAndIfTakesTheCostlierBranch) {
  ProgramCost c = Cost(R"(
func.func @main(%x: tensor<8xf32>, %p: tensor<i1>) -> tensor<8xf32> {
  %i0 = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %ten = stablehlo.constant dense<10> : tensor<i32>
  %w:2 = stablehlo.while(%i = %i0, %v = %x) : tensor<i32>, tensor<8xf32>
    cond {
      %c = stablehlo.compare LT, %i, %ten : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %n = stablehlo.add %i, %one : tensor<i32>
      %m = stablehlo.multiply %v, %v : tensor<8xf32>
      stablehlo.return %n, %m : tensor<i32>, tensor<8xf32>
    }
  %r = "stablehlo.if"(%p) ({
    %s = stablehlo.sine %w#1 : tensor<8xf32>
    %a = stablehlo.add %s, %s : tensor<8xf32>
    stablehlo.return %a : tensor<8xf32>
  }, {
    stablehlo.return %w#1 : tensor<8xf32>
  }) : (tensor<i1>) -> tensor<8xf32>
  return %r : tensor<8xf32>
})");
  EXPECT_EQ(c.flops, 1 + 1 + 8 + 8);  // compare, add, multiply (once); the true branch's add
  EXPECT_EQ(c.transcendentals, 8);
}

TEST(CostAnalysisTest, ConvolutionCountsOnlyTapsOnTheInput) {
  // 1x1x6x5 input, 2 output features, 3x3 window, SAME padding: per spatial dim the
  // (output, tap) pairs inside the input are 3n - 2.
  ProgramCost c = Cost(R"(
func.func @main(%x: tensor<1x1x6x5xf32>, %k: tensor<2x1x3x3xf32>) -> tensor<1x2x6x5xf32> {
  %y = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x6x5xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x6x5xf32>
  return %y : tensor<1x2x6x5xf32>
})");
  EXPECT_EQ(c.flops, 2.0 * (3 * 6 - 2) * (3 * 5 - 2) * 2);
}

TEST(CostAnalysisTest, BytesPerKernelWithAPlan) {
  const char* text = R"(
func.func @main(%x: tensor<256xf32>, %y: tensor<256xf32>) -> tensor<256xf32> {
  %a = stablehlo.add %x, %y : tensor<256xf32>
  %m = stablehlo.multiply %a, %a : tensor<256xf32>
  %s = stablehlo.subtract %m, %x : tensor<256xf32>
  return %s : tensor<256xf32>
})";
  std::unique_ptr<ir::Module> module = Parse(text);
  ASSERT_NE(module, nullptr);
  auto loop = [](const ir::Instruction& i) {
    return i.opcode() == ir::Opcode::kAdd || i.opcode() == ir::Opcode::kMultiply ||
           i.opcode() == ir::Opcode::kSubtract;
  };
  auto none = [](const ir::Instruction&) { return false; };
  FusionPlan plan = PlanFusion(*module->entry(), loop, none, none);
  ASSERT_EQ(plan.kernels.size(), 1u);
  ProgramCost fused = AnalyzeCost(*module->entry(), &plan);
  EXPECT_EQ(fused.bytes_accessed, 3.0 * 1024);  // x, y in; s out
  ProgramCost unfused = AnalyzeCost(*module->entry());
  EXPECT_EQ(unfused.bytes_accessed, 9.0 * 1024);  // three ops, three arrays each
  EXPECT_EQ(fused.flops, 3.0 * 256);
}

}  // namespace
}  // namespace ember::passes
