#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "compiler/frontend/import/import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/buffer_assignment.h"
#include "compiler/passes/fusion_plan.h"
#include "compiler/passes/pass.h"
#include "tests/compiler/parse_module.h"

namespace ember::passes {
namespace {

using ::ember::test_util::Parse;

// Random arguments for the entry's parameters (f32 in [-2, 2], integers in [-50, 50]).
std::vector<eval::EvalValue> RandomArgs(const ir::Computation& entry, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<eval::EvalValue> args;
  for (const auto& p : entry.parameters()) {
    ir::Literal lit = ir::Literal::Create(p->type().shape()).value();
    if (p->type().element_type() == ir::ElementType::kF32) {
      std::uniform_real_distribution<float> d(-2, 2);
      const absl::Span<float> data = lit.mutable_data<float>().value();
      for (float& x : data) x = d(rng);
    } else if (p->type().element_type() == ir::ElementType::kS32) {
      std::uniform_int_distribution<int32_t> d(-50, 50);
      const absl::Span<int32_t> data = lit.mutable_data<int32_t>().value();
      for (int32_t& x : data) x = d(rng);
    }
    args.push_back(eval::EvalValue::Array(std::move(lit)));
  }
  return args;
}

std::vector<eval::EvalValue> Evaluate(const ir::Module& module, uint32_t seed) {
  eval::Evaluator evaluator;
  auto out = evaluator.Run(*module.entry(), RandomArgs(*module.entry(), seed));
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *std::move(out) : std::vector<eval::EvalValue>{};
}

int CountOps(const ir::Computation& c, ir::Opcode opcode) {
  int n = 0;
  for (const auto& inst : c.instructions()) n += inst->opcode() == opcode;
  return n;
}

// Runs `pass` on the program and checks the results did not change (bit for bit).
std::unique_ptr<ir::Module> RunPassChecked(const std::string& text, std::unique_ptr<Pass> pass,
                                           bool expect_changed = true) {
  std::unique_ptr<ir::Module> module = Parse(text);
  if (module == nullptr) return nullptr;
  std::vector<eval::EvalValue> before = Evaluate(*module, 7);
  absl::StatusOr<bool> changed = pass->Run(*module);
  EXPECT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(changed.value_or(false), expect_changed) << module->ToString();
  absl::Status verified = ir::Verify(*module);
  EXPECT_TRUE(verified.ok()) << verified << "\n" << module->ToString();
  std::vector<eval::EvalValue> after = Evaluate(*module, 7);
  EXPECT_EQ(before.size(), after.size());
  for (size_t i = 0; i < before.size() && i < after.size(); ++i) {
    EXPECT_TRUE(before[i].array == after[i].array)
        << "result " << i << ": " << before[i].array.ToString() << " vs " << after[i].array.ToString();
  }
  return module;
}

TEST(PassesTest, InlineCall) {
  auto m = RunPassChecked(R"(
func.func private @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = stablehlo.add %a, %b : tensor<4xf32>
  %1 = stablehlo.multiply %0, %a : tensor<4xf32>
  return %1, %0 : tensor<4xf32>, tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0:2 = func.call @f(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %1:2 = func.call @f(%0#0, %0#1) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %2 = stablehlo.subtract %1#0, %1#1 : tensor<4xf32>
  return %2 : tensor<4xf32>
})", CreateInlinePass());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kCall), 0);
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kAdd), 2);
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kMultiply), 2);
  // The callee is untouched.
  EXPECT_EQ(m->FindFunction("f")->instructions().size(), 3u);
}

TEST(PassesTest, InlineNestedCallsAndComposite) {
  auto m = RunPassChecked(R"(
func.func private @g(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.exponential %a : tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @f(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @g(%a) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = stablehlo.negate %0 : tensor<3xf32>
  return %1 : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.composite"(%x) {name = "my.op", decomposition = @f} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
})", CreateInlinePass());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kComposite), 0);
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kCall), 0);
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kExponential), 1);
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kNegate), 1);
}

// Inlining a callee with a loop copies the loop's regions into new computations: the calls in
// them (a scan body calling a jitted function, as JAX writes lax.scan inside jax.grad) are
// inlined too, so that later passes (spmd-partition splits loop bodies) see no call at any depth.
TEST(PassesTest, InlineCallsInTheLoopsOfInlinedCallees) {
  auto m = RunPassChecked(R"(
func.func private @step(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.exponential %a : tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @loop(%a: tensor<3xf32>) -> tensor<3xf32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %c0, %x = %a) : tensor<i32>, tensor<3xf32>
  cond {
    %n = stablehlo.constant dense<2> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    %y = func.call @step(%x) : (tensor<3xf32>) -> tensor<3xf32>
    stablehlo.return %next, %y : tensor<i32>, tensor<3xf32>
  }
  return %0#1 : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @loop(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
})", CreateInlinePass());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kCall), 0);
  const ir::Instruction* loop = nullptr;
  for (const auto& inst : m->entry()->instructions()) {
    if (inst->opcode() == ir::Opcode::kWhile) loop = inst.get();
  }
  ASSERT_NE(loop, nullptr) << m->ToString();
  ASSERT_EQ(loop->regions().size(), 2u);
  EXPECT_EQ(CountOps(*loop->regions()[1], ir::Opcode::kCall), 0) << m->ToString();
  EXPECT_EQ(CountOps(*loop->regions()[1], ir::Opcode::kExponential), 1) << m->ToString();
}

// A composite with regions (they model an op with a body) keeps them: it stays a composite,
// and runs its decomposition, which the regions do not change.
TEST(PassesTest, CompositeWithRegionsStaysACallOfItsDecomposition) {
  auto m = RunPassChecked(R"(
func.func private @f(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.negate %a : tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "stablehlo.composite"(%x) ({
    ^bb0(%b: tensor<3xf32>):
      %1 = stablehlo.exponential %b : tensor<3xf32>
      "stablehlo.return"(%1) : (tensor<3xf32>) -> ()
  }) {name = "my.op", decomposition = @f, version = 1 : i32} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
})", CreateInlinePass(), /*expect_changed=*/false);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kComposite), 1);
  ASSERT_EQ(m->entry()->instructions().front()->regions().size(), 1u);
  // Its result is the decomposition's: the negation of the argument.
  std::vector<eval::EvalValue> args = RandomArgs(*m->entry(), 3);
  const ir::Literal x = *args[0].array.Clone();
  eval::Evaluator evaluator;
  auto out = evaluator.Run(*m->entry(), std::move(args));
  ASSERT_TRUE(out.ok()) << out.status();
  const absl::Span<const float> in = x.data<float>().value();
  const absl::Span<const float> got = (*out)[0].array.data<float>().value();
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(got[i], -in[i]);
}

TEST(PassesTest, InlineCopiesRegionsOfTheCallee) {
  // An op region belongs to one op: each inlined reduce gets its own copy of the body.
  auto m = RunPassChecked(R"(
func.func private @sum(%a: tensor<4x3xf32>) -> tensor<4xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x3xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @main(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>) -> tensor<4xf32> {
  %0 = func.call @sum(%x) : (tensor<4x3xf32>) -> tensor<4xf32>
  %1 = func.call @sum(%y) : (tensor<4x3xf32>) -> tensor<4xf32>
  %2 = stablehlo.subtract %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
})", CreateInlinePass());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kReduce), 2);
  std::vector<const ir::Computation*> bodies;
  for (const auto& inst : m->entry()->instructions()) {
    if (inst->opcode() == ir::Opcode::kReduce) bodies.push_back(inst->regions()[0]);
  }
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_NE(bodies[0], bodies[1]);
}

TEST(PassesTest, DceRemovesUnusedChainsKeepsUsed) {
  auto m = RunPassChecked(R"(
func.func @main(%x: tensor<5xf32>) -> tensor<5xf32> {
  %0 = stablehlo.exponential %x : tensor<5xf32>
  %1 = stablehlo.log %0 : tensor<5xf32>
  %2 = stablehlo.negate %x : tensor<5xf32>
  return %2 : tensor<5xf32>
})", CreateDcePass());
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kExponential), 0);
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kLog), 0);
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kNegate), 1);
  auto again = CreateDcePass()->Run(*m);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
}

TEST(PassesTest, CseMergesEqualInstructionsOnly) {
  auto m = RunPassChecked(R"(
func.func @main(%x: tensor<5xf32>, %y: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>) {
  %c0 = stablehlo.constant dense<2.0> : tensor<5xf32>
  %c1 = stablehlo.constant dense<2.0> : tensor<5xf32>
  %c2 = stablehlo.constant dense<3.0> : tensor<5xf32>
  %0 = stablehlo.multiply %x, %c0 : tensor<5xf32>
  %1 = stablehlo.multiply %x, %c1 : tensor<5xf32>
  %2 = stablehlo.multiply %x, %c2 : tensor<5xf32>
  %3 = stablehlo.add %0, %y : tensor<5xf32>
  %4 = stablehlo.add %1, %y : tensor<5xf32>
  %5 = stablehlo.add %3, %2 : tensor<5xf32>
  return %5, %4 : tensor<5xf32>, tensor<5xf32>
})", CreateCsePass());
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(CreateDcePass()->Run(*m).ok());
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kConstant), 2);
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kMultiply), 2);
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kAdd), 2);
}

TEST(PassesTest, AlgebraicSimplifierExactRewrites) {
  auto m = RunPassChecked(R"(
func.func @main(%x: tensor<2x3xf32>, %i: tensor<2x3xi32>) -> (tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>) {
  %one = stablehlo.constant dense<1.0> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %izero = stablehlo.constant dense<0> : tensor<2x3xi32>
  %b1 = stablehlo.broadcast_in_dim %one, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %b0 = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %0 = stablehlo.multiply %x, %b1 : tensor<2x3xf32>
  %1 = stablehlo.subtract %0, %b0 : tensor<2x3xf32>
  %2 = stablehlo.reshape %1 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = stablehlo.transpose %2, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = stablehlo.convert %3 : tensor<2x3xf32>
  %5 = stablehlo.add %i, %izero : tensor<2x3xi32>
  %6 = stablehlo.add %x, %b0 : tensor<2x3xf32>
  return %4, %5, %6 : tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xf32>
})", CreateAlgebraicSimplifierPass());
  ASSERT_NE(m, nullptr);
  const ir::Instruction* ret = m->entry()->return_instruction();
  EXPECT_TRUE(ret->operand(0)->is_parameter());
  EXPECT_TRUE(ret->operand(1)->is_parameter());
  // x + (+0.0) is not x for x = -0.0: kept.
  EXPECT_FALSE(ret->operand(2)->is_parameter());
}

TEST(PassesTest, AlgebraicSimplifierDropsShardingConstraintsLeftAfterPartitioning) {
  // A constraint spmd-partition left in place (nothing split) is the value itself.
  auto m = RunPassChecked(R"(
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.custom_call @Sharding(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
})", CreateAlgebraicSimplifierPass());
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->entry()->return_instruction()->operand(0)->is_parameter()) << m->ToString();
  // Other custom calls stay.
  auto kept = RunPassChecked(R"(
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.custom_call @LayoutConstraint(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
})", CreateAlgebraicSimplifierPass(), /*expect_changed=*/false);
  ASSERT_NE(kept, nullptr);
}

TEST(PassesTest, AlgebraicSimplifierFoldsTransposeIntoItsOnlyDot) {
  // transpose(x^T . y) = y^T . x, the gradient-of-weights pattern: same products, same order.
  std::unique_ptr<ir::Module> m = RunPassChecked(R"(
func.func @main(%x: tensor<6x4xf32>, %y: tensor<6x5xf32>) -> tensor<5x4xf32> {
  %d = stablehlo.dot_general %x, %y, contracting_dims = [0] x [0] : (tensor<6x4xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
  %t = stablehlo.transpose %d, dims = [1, 0] : (tensor<4x5xf32>) -> tensor<5x4xf32>
  return %t : tensor<5x4xf32>
})", CreateAlgebraicSimplifierPass());
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(CreateDcePass()->Run(*m).ok());
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kTranspose), 0) << m->ToString();
  // A product read elsewhere too keeps its transpose.
  std::unique_ptr<ir::Module> kept = RunPassChecked(R"(
func.func @main(%x: tensor<6x4xf32>, %y: tensor<6x5xf32>) -> (tensor<5x4xf32>, tensor<4x5xf32>) {
  %d = stablehlo.dot_general %x, %y, contracting_dims = [0] x [0] : (tensor<6x4xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
  %t = stablehlo.transpose %d, dims = [1, 0] : (tensor<4x5xf32>) -> tensor<5x4xf32>
  return %t, %d : tensor<5x4xf32>, tensor<4x5xf32>
})", CreateAlgebraicSimplifierPass(), /*expect_changed=*/false);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(CountOps(*kept->entry(), ir::Opcode::kTranspose), 1);
  // A transpose of that transpose (a partitioned loop body's gradient had one) folds once: the
  // first transpose, left an identity until DCE, still reads the product, so the second must not
  // swap the product back (RunPassChecked verifies the module and compares the results).
  std::unique_ptr<ir::Module> twice = RunPassChecked(R"(
func.func @main(%x: tensor<6x4xf32>, %y: tensor<6x5xf32>) -> tensor<4x5xf32> {
  %d = stablehlo.dot_general %x, %y, contracting_dims = [0] x [0] : (tensor<6x4xf32>, tensor<6x5xf32>) -> tensor<4x5xf32>
  %t = stablehlo.transpose %d, dims = [1, 0] : (tensor<4x5xf32>) -> tensor<5x4xf32>
  %u = stablehlo.transpose %t, dims = [1, 0] : (tensor<5x4xf32>) -> tensor<4x5xf32>
  return %u : tensor<4x5xf32>
})", CreateAlgebraicSimplifierPass());
  ASSERT_NE(twice, nullptr);
}

TEST(PassesTest, AlgebraicSimplifierDropsTheReshapesAroundAnAllReduce) {
  // pmap's psum: [1, n] -> [n], all-reduce, broadcast back to [1, n]. The all-reduce runs on the
  // argument itself and both copies go (RunPassChecked verifies the module after the pass and
  // compares its values on one device, whose all-reduce is the identity).
  constexpr char kPsum[] = R"(
func.func @main(%x: tensor<1x6xf32>) -> tensor<1x6xf32> {
  %r = stablehlo.reshape %x : (tensor<1x6xf32>) -> tensor<6xf32>
  %s = "stablehlo.all_reduce"(%r) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
  }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<6xf32>) -> tensor<6xf32>
  %o = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<6xf32>) -> tensor<1x6xf32>
  return %o : tensor<1x6xf32>
})";
  std::unique_ptr<ir::Module> m = RunPassChecked(kPsum, CreateAlgebraicSimplifierPass());
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(CreateDcePass()->Run(*m).ok());
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kReshape), 0) << m->ToString();
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kBroadcastInDim), 0) << m->ToString();
  const ir::Instruction* reduce = m->entry()->return_instruction()->operand(0)->producer();
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(reduce->opcode(), ir::Opcode::kAllReduce);
  EXPECT_TRUE(reduce->operand(0)->is_parameter());
  // A reshaped value read elsewhere too, or a broadcast that repeats elements, stays.
  std::unique_ptr<ir::Module> kept = RunPassChecked(R"(
func.func @main(%x: tensor<1x6xf32>) -> (tensor<2x6xf32>, tensor<6xf32>) {
  %r = stablehlo.reshape %x : (tensor<1x6xf32>) -> tensor<6xf32>
  %s = "stablehlo.all_reduce"(%r) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
  }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<6xf32>) -> tensor<6xf32>
  %o = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<6xf32>) -> tensor<2x6xf32>
  return %o, %r : tensor<2x6xf32>, tensor<6xf32>
})", CreateAlgebraicSimplifierPass(), /*expect_changed=*/false);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(CountOps(*kept->entry(), ir::Opcode::kReshape), 1);
}

TEST(PassesTest, AlgebraicSimplifierComposesBroadcasts) {
  auto m = RunPassChecked(R"(
func.func @main(%x: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %0 = stablehlo.broadcast_in_dim %x, dims = [0] : (tensor<3xf32>) -> tensor<3x4xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [1, 2] : (tensor<3x4xf32>) -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
})", CreateAlgebraicSimplifierPass());
  ASSERT_NE(m, nullptr);
  const ir::Instruction* root = m->entry()->return_instruction()->operand(0)->producer();
  ASSERT_NE(root, nullptr);
  EXPECT_TRUE(root->operand(0)->is_parameter());
  EXPECT_EQ(root->attribute("broadcast_dimensions")->ints, (std::vector<int64_t>{1}));
}

TEST(PassesTest, ConstantFoldingFoldsSmallKeepsBroadcasts) {
  auto m = RunPassChecked(R"(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = stablehlo.constant dense<1.0> : tensor<f32>
  %b = stablehlo.constant dense<100.0> : tensor<f32>
  %0 = stablehlo.negate %a : tensor<f32>
  %1 = stablehlo.divide %0, %b : tensor<f32>
  %2 = stablehlo.broadcast_in_dim %1, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %3 = stablehlo.multiply %x, %2 : tensor<4xf32>
  return %3 : tensor<4xf32>
})", CreateConstantFoldingPass());
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(CreateDcePass()->Run(*m).ok());
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kNegate), 0);
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kDivide), 0);
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kBroadcastInDim), 1);
  EXPECT_TRUE(absl::StrContains(m->ToString(), "-0.01")) << m->ToString();
}

TEST(PassesTest, BatchGroupedConvolutionsBecomeFeatureGrouped) {
  // JAX's kernel gradient of a grouped convolution (batch and feature dims of the input at its
  // ends, as the transpose rule lays them out), and an NHWC one with 2 batch groups: the same
  // values (integers: exact in any order), no batch groups left.
  for (const char* text : {R"(
func.func @main(%x: tensor<2x11x10x4xi32>, %g: tensor<2x6x5x6xi32>) -> tensor<3x3x2x6xi32> {
  %0 = stablehlo.convolution(%x, %g) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f], window = {stride = [1, 1], pad = [[1, 1], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [2, 2]} {batch_group_count = 2 : i64, feature_group_count = 1 : i64} : (tensor<2x11x10x4xi32>, tensor<2x6x5x6xi32>) -> tensor<3x3x2x6xi32>
  return %0 : tensor<3x3x2x6xi32>
})",
                           R"(
func.func @main(%x: tensor<4x6x6x3xi32>, %w: tensor<3x3x3x4xi32>) -> tensor<2x4x4x4xi32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[0, 0], [0, 0]]} {batch_group_count = 2 : i64, feature_group_count = 1 : i64} : (tensor<4x6x6x3xi32>, tensor<3x3x3x4xi32>) -> tensor<2x4x4x4xi32>
  return %0 : tensor<2x4x4x4xi32>
})"}) {
    std::unique_ptr<ir::Module> m = RunPassChecked(text, CreateConvolutionBatchGroupsPass());
    ASSERT_NE(m, nullptr);
    for (const auto& inst : m->entry()->instructions()) {
      if (inst->opcode() != ir::Opcode::kConvolution) continue;
      EXPECT_EQ(inst->attribute("batch_group_count")->i, 1);
      EXPECT_EQ(inst->attribute("feature_group_count")->i, 2);
    }
  }
}

TEST(PassesTest, PipelineReportsEachPass) {
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func private @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.exponential %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = func.call @f(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = stablehlo.add %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
})");
  ASSERT_NE(m, nullptr);
  std::vector<eval::EvalValue> before = Evaluate(*m, 3);
  PassPipeline pipeline = CreateDefaultPipeline();
  std::vector<std::string> names;
  pipeline.set_after_pass([&](int index, const std::string& name, bool, const ir::Module&) {
    EXPECT_EQ(index, static_cast<int>(names.size()));
    names.push_back(name);
    return absl::OkStatus();
  });
  auto changed = pipeline.Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(names.size(), pipeline.passes().size());
  EXPECT_EQ(names.front(), "inline");
  EXPECT_EQ(CountOps(*m->entry(), ir::Opcode::kExponential), 1);  // CSE after inlining
  std::vector<eval::EvalValue> after = Evaluate(*m, 3);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_TRUE(before[0].array == after[0].array);
}

// Plan predicates for the tests: the elementwise / shape ops fuse, reduce is a reduction root,
// dot_general a dot kernel.
bool TestLoopFusible(const ir::Instruction& inst) {
  switch (inst.opcode()) {
    case ir::Opcode::kAdd:
    case ir::Opcode::kMultiply:
    case ir::Opcode::kExponential:
    case ir::Opcode::kNegate:
    case ir::Opcode::kBroadcastInDim:
    case ir::Opcode::kTranspose:
    case ir::Opcode::kReshape:
      return true;
    default:
      return false;
  }
}
bool TestReduceFusible(const ir::Instruction& inst) { return inst.opcode() == ir::Opcode::kReduce; }
bool TestDot(const ir::Instruction& inst) { return inst.opcode() == ir::Opcode::kDotGeneral; }

TEST(FusionPlanTest, LoopReduceDotAndSingleKernels) {
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> (tensor<8xf32>, tensor<8x4xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<4xf32>) -> tensor<8x4xf32>
  %2 = stablehlo.add %0, %1 : tensor<8x4xf32>
  %3 = stablehlo.exponential %2 : tensor<8x4xf32>
  %4 = stablehlo.negate %3 : tensor<8x4xf32>
  %5 = stablehlo.reduce(%4 init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<8x4xf32>, tensor<f32>) -> tensor<8xf32>
  %6 = stablehlo.multiply %2, %1 : tensor<8x4xf32>
  %7 = "stablehlo.sort"(%6) ({
  ^bb0(%a: tensor<f32>, %c: tensor<f32>):
    %8 = stablehlo.compare GT, %a, %c : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %8 : tensor<i1>
  }) {dimension = 1 : i64, is_stable = false} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %5, %7 : tensor<8xf32>, tensor<8x4xf32>
})");
  ASSERT_NE(m, nullptr);
  // The first stage alone (without multi-output merges, which would put the add into the
  // reduction kernel as a second output).
  FusionPlan plan = PlanFusion(*m->entry(), TestLoopFusible, TestReduceFusible, TestDot,
                               {.multi_output = false});
  // dot | add (shared by two kernels, so materialized) | reduce(neg(exp(add))) | multiply | sort
  ASSERT_EQ(plan.kernels.size(), 5u) << plan.CostReport();
  EXPECT_EQ(plan.kernels[0].kind, KernelKind::kDot);
  EXPECT_EQ(plan.kernels[1].kind, KernelKind::kLoop);
  EXPECT_EQ(plan.kernels[1].root()->opcode(), ir::Opcode::kAdd);
  EXPECT_EQ(plan.kernels[1].instructions.size(), 2u);  // add + broadcast
  EXPECT_EQ(plan.kernels[2].kind, KernelKind::kReduce);
  EXPECT_EQ(plan.kernels[2].instructions.size(), 3u);  // exp, negate, reduce
  EXPECT_EQ(plan.kernels[3].kind, KernelKind::kLoop);
  EXPECT_EQ(plan.kernels[3].instructions.size(), 2u);  // multiply + its own broadcast copy
  EXPECT_EQ(plan.kernels[4].kind, KernelKind::kSingle);
  EXPECT_EQ(plan.unfused_kernel_count, 8);
  // Reduce kernel: reads the add result (128 B) and the init scalar, writes 32 B.
  EXPECT_EQ(plan.kernels[2].bytes_minimum, 128 + 4 + 32);
  // The broadcast input of a loop kernel is counted once per output element.
  EXPECT_EQ(plan.kernels[1].bytes_moved, 128 + 128 + 128);
  EXPECT_EQ(plan.kernels[1].bytes_minimum, 128 + 16 + 128);
  const std::string dot = plan.ToDot("main");
  EXPECT_TRUE(absl::StrContains(dot, "cluster_4")) << dot;
  EXPECT_TRUE(absl::StrContains(plan.CostReport(), "total: 5 kernels")) << plan.CostReport();

  BufferAssignment buffers = AssignBuffers(*m->entry(), plan);
  const ir::Instruction* ret = m->entry()->return_instruction();
  EXPECT_EQ(buffers.slots.at(ret->operand(0)).kind, BufferSlot::Kind::kOutput);
  EXPECT_EQ(buffers.slots.at(ret->operand(1)).kind, BufferSlot::Kind::kOutput);
  EXPECT_EQ(buffers.slots.at(m->entry()->parameter(1)).kind, BufferSlot::Kind::kParameter);
  // Temporaries: dot (128 B, last read by kernel 1), add (128 B, last read by kernel 3) and
  // multiply (128 B, from kernel 3). Each elementwise kernel reads the value it outlives only at
  // the element it writes, so the add is written over the dot and the multiply over the add:
  // one buffer for the three.
  const ir::Value* dot_value = plan.kernels[0].root()->result();
  const ir::Value* add_value = plan.kernels[1].root()->result();
  const ir::Value* mul_value = plan.kernels[3].root()->result();
  const BufferSlot& dot_slot = buffers.slots.at(dot_value);
  EXPECT_EQ(dot_slot.kind, BufferSlot::Kind::kArena);
  EXPECT_EQ(buffers.slots.at(add_value).offset, dot_slot.offset);
  EXPECT_EQ(buffers.slots.at(mul_value).offset, dot_slot.offset);
  EXPECT_EQ(buffers.written_over.at(add_value), dot_value);
  EXPECT_EQ(buffers.written_over.at(mul_value), add_value);
  EXPECT_EQ(buffers.arena_bytes, 128);
  EXPECT_EQ(buffers.arena_bytes_no_reuse, 384);
  EXPECT_TRUE(absl::StrContains(buffers.ToString(*m->entry()), "arena: 128 bytes"));
  EXPECT_TRUE(absl::StrContains(buffers.ToString(*m->entry()), " over=%"));
}

TEST(FusionPlanTest, ElementwiseBelowAnExpandingBroadcastKeepsItsOwnKernel) {
  // exp of a row statistic feeds a broadcast to the full shape: fusing it would compute exp
  // 64 times per row element instead of once per row.
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<16x64xf32>, %s: tensor<16xf32>) -> tensor<16x64xf32> {
  %0 = stablehlo.exponential %s : tensor<16xf32>
  %1 = stablehlo.broadcast_in_dim %0, dims = [0] : (tensor<16xf32>) -> tensor<16x64xf32>
  %2 = stablehlo.multiply %x, %1 : tensor<16x64xf32>
  return %2 : tensor<16x64xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = PlanFusion(*m->entry(), TestLoopFusible, TestReduceFusible, TestDot);
  ASSERT_EQ(plan.kernels.size(), 2u) << plan.CostReport();
  EXPECT_EQ(plan.kernels[0].root()->opcode(), ir::Opcode::kExponential);
  EXPECT_EQ(plan.kernels[1].instructions.size(), 2u);  // broadcast + multiply
}

TEST(FusionPlanTest, AReluMaskIsComputedWithItsPreActivationNotKeptAsIt) {
  // A ReLU layer and its gradient: the mask z > 0 is read only by the backward select, z also
  // by the forward maximum. The compare joins the forward kernel, which writes the 1-byte mask;
  // z (4 bytes an element) dies there instead of living until the backward pass.
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>, %g: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<64x64xf32>
  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %z = stablehlo.add %d, %x : tensor<64x64xf32>
  %h = stablehlo.maximum %z, %zero : tensor<64x64xf32>
  %mask = stablehlo.compare GT, %z, %zero : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xi1>
  %y = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %dy = stablehlo.add %y, %g : tensor<64x64xf32>
  %dz = stablehlo.select %mask, %dy, %zero : (tensor<64x64xi1>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y, %dz : tensor<64x64xf32>, tensor<64x64xf32>
})");
  ASSERT_NE(m, nullptr);
  auto fusible = [](const ir::Instruction& inst) {
    return TestLoopFusible(inst) || inst.opcode() == ir::Opcode::kMaximum ||
           inst.opcode() == ir::Opcode::kCompare || inst.opcode() == ir::Opcode::kSelect;
  };
  FusionPlan plan = PlanFusion(*m->entry(), fusible, TestReduceFusible, TestDot);
  const ir::Instruction* z = nullptr;
  const ir::Instruction* mask = nullptr;
  for (const auto& inst : m->entry()->instructions()) {
    if (inst->opcode() == ir::Opcode::kAdd && z == nullptr) z = inst.get();
    if (inst->opcode() == ir::Opcode::kCompare) mask = inst.get();
  }
  ASSERT_NE(z, nullptr);
  ASSERT_NE(mask, nullptr);
  // dot | add, maximum, compare | dot | add, select
  ASSERT_EQ(plan.kernels.size(), 4u) << plan.CostReport();
  EXPECT_EQ(plan.kernel_of.at(mask), plan.kernel_of.at(z)) << plan.CostReport();
  const Kernel& forward = plan.kernels[plan.kernel_of.at(z)];
  EXPECT_EQ(std::count(forward.outputs.begin(), forward.outputs.end(), z->result()), 0);
  EXPECT_EQ(std::count(forward.outputs.begin(), forward.outputs.end(), mask->result()), 1);
  // The backward kernel reads the mask, not z.
  const Kernel& backward = plan.kernels.back();
  EXPECT_EQ(std::count(backward.inputs.begin(), backward.inputs.end(), z->result()), 0);
  EXPECT_EQ(std::count(backward.inputs.begin(), backward.inputs.end(), mask->result()), 1);
}

}  // namespace
}  // namespace ember::passes
