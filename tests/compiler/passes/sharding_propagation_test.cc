// sharding-propagation on hand-written SPMD programs: for each rule family a small program with
// stated shardings and the sharding every value must get (data-parallel and Megatron MLPs,
// reshape splits and merges, transpose, reduce, conflicts, closed dimensions, a while loop's
// carries, constraints, manual computations), and the errors for malformed shardings.
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/ir/sharding.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/sharding_propagation.h"
#include "gtest/gtest.h"
#include "tests/compiler/parse_module.h"

namespace ember::passes {
namespace {

using test_util::Parse;

std::string Text(const ir::Attribute* a, size_t result) {
  if (a == nullptr) return "<none>";
  if (a->kind == ir::Attribute::Kind::kList) {
    if (result >= a->list.size()) return "<no such result>";
    a = &a->list[result];
  }
  if (a->kind != ir::Attribute::Kind::kSharding || a->sharding == nullptr) return a->ToString();
  return a->sharding->ToString();
}

// The propagated sharding of result `result` of the `nth` op `op` in `c`.
std::string Of(const ir::Computation& c, ir::Opcode op, int nth = 0, size_t result = 0) {
  for (const auto& inst : c.instructions()) {
    if (inst->opcode() != op || nth-- > 0) continue;
    return Text(inst->attribute(kShardingsAttribute), result);
  }
  return "<no such op>";
}

std::string OfParam(const ir::Computation& c, size_t i) {
  if (i >= c.arg_attributes().size()) return "<none>";
  return Text(c.arg_attributes()[i].Find(kShardingAttribute), 0);
}

std::string OfResult(const ir::Computation& c, size_t r) {
  if (r >= c.result_attributes().size()) return "<none>";
  return Text(c.result_attributes()[r].Find(kShardingAttribute), 0);
}

absl::Status Propagate(ir::Module& module) {
  absl::StatusOr<bool> changed = CreateShardingPropagationPass()->Run(module);
  if (!changed.ok()) return changed.status();
  if (!*changed) return absl::FailedPreconditionError("the pass changed nothing");
  return ir::Verify(module);
}

TEST(ShardingPropagationTest, DataParallelMlpSplitsActivationsAndLeavesWeightGradientsPartial) {
  auto m = Parse(R"(
module @jit_step {
  sdy.mesh @mesh = <["b"=4]>
  func.func public @main(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>},
                         %w1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
                         %w2: tensor<32x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
                         %dy: tensor<8x4xf32>) -> (tensor<16x32xf32>, tensor<32x4xf32>, tensor<8x4xf32>) {
    %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %zb = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<8x32xf32>
    %a = stablehlo.maximum %h, %zb : tensor<8x32xf32>
    %y = stablehlo.dot_general %a, %w2, contracting_dims = [1] x [0] : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
    %dw2 = stablehlo.dot_general %a, %dy, contracting_dims = [0] x [0] : (tensor<8x32xf32>, tensor<8x4xf32>) -> tensor<32x4xf32>
    %da = stablehlo.dot_general %dy, %w2, contracting_dims = [1] x [1] : (tensor<8x4xf32>, tensor<32x4xf32>) -> tensor<8x32xf32>
    %dh = stablehlo.multiply %da, %a : tensor<8x32xf32>
    %dw1 = stablehlo.dot_general %x, %dh, contracting_dims = [0] x [0] : (tensor<8x16xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
    return %dw1, %dw2, %y : tensor<16x32xf32>, tensor<32x4xf32>, tensor<8x4xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Propagate(*m).ok()) << Propagate(*m);
  const ir::Computation& main = *m->entry();
  const std::string batch = R"(#sdy.sharding<@mesh, [{"b"}, {}]>)";
  EXPECT_EQ(Of(main, ir::Opcode::kDotGeneral, 0), batch);  // h
  EXPECT_EQ(Of(main, ir::Opcode::kBroadcastInDim), batch);  // taken back from the maximum
  EXPECT_EQ(Of(main, ir::Opcode::kMaximum), batch);
  EXPECT_EQ(Of(main, ir::Opcode::kDotGeneral, 1), batch);  // y
  EXPECT_EQ(OfParam(main, 3), batch);                       // dy: from the backward dots
  EXPECT_EQ(OfParam(main, 1), R"(#sdy.sharding<@mesh, [{}, {}]>)");
  // Weight gradients sum over the batch: partial over "b" until an all-reduce.
  EXPECT_EQ(Of(main, ir::Opcode::kDotGeneral, 2), R"(#sdy.sharding<@mesh, [{}, {}], unreduced={"b"}>)");
  EXPECT_EQ(Of(main, ir::Opcode::kDotGeneral, 3), batch);  // da
  EXPECT_EQ(Of(main, ir::Opcode::kMultiply), batch);
  EXPECT_EQ(Of(main, ir::Opcode::kDotGeneral, 4), R"(#sdy.sharding<@mesh, [{}, {}], unreduced={"b"}>)");
  // The results: what the returned values give (unreduced axes are not passed on).
  EXPECT_EQ(OfResult(main, 0), R"(#sdy.sharding<@mesh, [{}, {}]>)");
  EXPECT_EQ(OfResult(main, 2), batch);
  // The constant scalar has no dimensions to split.
  EXPECT_EQ(Of(main, ir::Opcode::kConstant), R"(#sdy.sharding<@mesh, []>)");
}

TEST(ShardingPropagationTest, MegatronMlpColumnThenRowParallel) {
  auto m = Parse(R"(
module @jit_mlp {
  sdy.mesh @mesh = <["data"=2, "model"=2]>
  func.func public @main(%x: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>},
                         %w1: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>},
                         %w2: tensor<32x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>})
      -> tensor<8x16xf32> {
    %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %a = stablehlo.tanh %h : tensor<8x32xf32>
    %y = stablehlo.dot_general %a, %w2, contracting_dims = [1] x [0] : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
    return %y : tensor<8x16xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Propagate(*m).ok()) << Propagate(*m);
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(Of(main, ir::Opcode::kDotGeneral, 0), R"(#sdy.sharding<@mesh, [{"data"}, {"model"}]>)");
  EXPECT_EQ(Of(main, ir::Opcode::kTanh), R"(#sdy.sharding<@mesh, [{"data"}, {"model"}]>)");
  EXPECT_EQ(Of(main, ir::Opcode::kDotGeneral, 1),
            R"(#sdy.sharding<@mesh, [{"data"}, {}], unreduced={"model"}>)");
}

TEST(ShardingPropagationTest, ReshapeSplitsAndMergesKeepMajorAxes) {
  auto m = Parse(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%a: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                         %b: tensor<6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>},
                         %c: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>},
                         %d: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>})
      -> (tensor<48xf32>, tensor<48xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<6x4xf32>) {
    %0 = stablehlo.reshape %a : (tensor<8x6xf32>) -> tensor<48xf32>
    %1 = stablehlo.reshape %b : (tensor<6x8xf32>) -> tensor<48xf32>
    %2 = stablehlo.reshape %c : (tensor<16xf32>) -> tensor<4x4xf32>
    %3 = stablehlo.reshape %d : (tensor<8xf32>) -> tensor<2x4xf32>
    %4 = stablehlo.reshape %a : (tensor<8x6xf32>) -> tensor<6x8xf32>
    %5 = stablehlo.slice %4 [0:6, 0:4] : (tensor<6x8xf32>) -> tensor<6x4xf32>
    return %0, %1, %2, %3, %5 : tensor<48xf32>, tensor<48xf32>, tensor<4x4xf32>, tensor<2x4xf32>, tensor<6x4xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Propagate(*m).ok()) << Propagate(*m);
  const ir::Computation& main = *m->entry();
  // Merge: the split of the major dimension stays major.
  EXPECT_EQ(Of(main, ir::Opcode::kReshape, 0), R"(#sdy.sharding<@mesh, [{"x"}]>)");
  // Merge: a split of the minor dimension is not contiguous in the merged one.
  EXPECT_EQ(Of(main, ir::Opcode::kReshape, 1), R"(#sdy.sharding<@mesh, [{}]>)");
  // Split: both axes fit the major factor of 4.
  EXPECT_EQ(Of(main, ir::Opcode::kReshape, 2), R"(#sdy.sharding<@mesh, [{"x", "y"}, {}]>)");
  // Split: "x" fills the major factor of 2, "y" goes on to the minor one.
  EXPECT_EQ(Of(main, ir::Opcode::kReshape, 3), R"(#sdy.sharding<@mesh, [{"x"}, {"y"}]>)");
  // 8x6 -> 6x8 has no common factors: nothing passes.
  EXPECT_EQ(Of(main, ir::Opcode::kReshape, 4), R"(#sdy.sharding<@mesh, [{}, {}]>)");
}

TEST(ShardingPropagationTest, TransposeSliceConcatenateAndBatchedDot) {
  auto m = Parse(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%a: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                         %p: tensor<2x4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}, {}]>},
                         %q: tensor<2x8x4xf32>)
      -> (tensor<6x4xf32>, tensor<4x3xf32>, tensor<4x12xf32>, tensor<2x4x4xf32>) {
    %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
    %1 = stablehlo.slice %a [0:4, 0:3] : (tensor<4x6xf32>) -> tensor<4x3xf32>
    %2 = stablehlo.concatenate %a, %a, dim = 1 : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x12xf32>
    %3 = stablehlo.dot_general %p, %q, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
    return %0, %1, %2, %3 : tensor<6x4xf32>, tensor<4x3xf32>, tensor<4x12xf32>, tensor<2x4x4xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Propagate(*m).ok()) << Propagate(*m);
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(Of(main, ir::Opcode::kTranspose), R"(#sdy.sharding<@mesh, [{"y"}, {"x"}]>)");
  EXPECT_EQ(Of(main, ir::Opcode::kSlice), R"(#sdy.sharding<@mesh, [{"x"}, {}]>)");
  EXPECT_EQ(Of(main, ir::Opcode::kConcatenate), R"(#sdy.sharding<@mesh, [{"x"}, {}]>)");
  EXPECT_EQ(Of(main, ir::Opcode::kDotGeneral), R"(#sdy.sharding<@mesh, [{"x"}, {"y"}, {}]>)");
  EXPECT_EQ(OfParam(main, 2), R"(#sdy.sharding<@mesh, [{"x"}, {}, {}]>)");  // the batch
}

TEST(ShardingPropagationTest, ReduceOverASplitDimensionIsPartial) {
  auto m = Parse(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%a: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<6xf32> {
    %c = stablehlo.constant dense<0.0> : tensor<f32>
    %0 = stablehlo.reduce(%a init: %c) applies stablehlo.add across dimensions = [0] : (tensor<8x6xf32>, tensor<f32>) -> tensor<6xf32>
    %1 = stablehlo.negate %0 : tensor<6xf32>
    return %1 : tensor<6xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Propagate(*m).ok()) << Propagate(*m);
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(Of(main, ir::Opcode::kReduce), R"(#sdy.sharding<@mesh, [{"y"}], unreduced={"x"}>)");
  EXPECT_EQ(Of(main, ir::Opcode::kNegate), R"(#sdy.sharding<@mesh, [{"y"}]>)");
}

TEST(ShardingPropagationTest, ConflictsGoToPriorityThenLargerSplitThenEarlierOperand) {
  auto m = Parse(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=2, "y"=4, "z"=2]>
  func.func public @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                         %b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>},
                         %c: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}, {}]>},
                         %d: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}p0, {}]>})
      -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
    %0 = stablehlo.add %a, %b : tensor<8x8xf32>
    %1 = stablehlo.add %a, %c : tensor<8x8xf32>
    %2 = stablehlo.subtract %b, %d : tensor<8x8xf32>
    return %0, %1, %2 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Propagate(*m).ok()) << Propagate(*m);
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(Of(main, ir::Opcode::kAdd, 0), R"(#sdy.sharding<@mesh, [{"y"}, {}]>)");  // 4 > 2
  EXPECT_EQ(Of(main, ir::Opcode::kAdd, 1), R"(#sdy.sharding<@mesh, [{"x"}, {}]>)");  // earlier
  EXPECT_EQ(Of(main, ir::Opcode::kSubtract), R"(#sdy.sharding<@mesh, [{"z"}, {}]>)");  // p0
  // The stated (closed) arguments keep their own splits.
  EXPECT_EQ(OfParam(main, 0), R"(#sdy.sharding<@mesh, [{"x"}, {}]>)");
  EXPECT_EQ(OfParam(main, 1), R"(#sdy.sharding<@mesh, [{"y"}, {}]>)");
}

TEST(ShardingPropagationTest, ClosedDimensionsKeepTheirSplitOpenOnesTakeMore) {
  auto m = Parse(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                         %b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>},
                         %d: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{?}, {}]>},
                         %e: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x", ?}]>})
      -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
    %0 = stablehlo.add %a, %b : tensor<8x8xf32>
    %1 = stablehlo.add %d, %a : tensor<8x8xf32>
    %2 = stablehlo.multiply %e, %b : tensor<8x8xf32>
    return %0, %1, %2 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Propagate(*m).ok()) << Propagate(*m);
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(Of(main, ir::Opcode::kAdd, 0), R"(#sdy.sharding<@mesh, [{"x"}, {"y"}]>)");
  EXPECT_EQ(OfParam(main, 0), R"(#sdy.sharding<@mesh, [{"x"}, {}]>)");  // closed: no "y"
  EXPECT_EQ(OfParam(main, 1), R"(#sdy.sharding<@mesh, [{}, {"y"}]>)");  // closed: no "x"
  EXPECT_EQ(OfParam(main, 2), R"(#sdy.sharding<@mesh, [{"x"}, {}]>)");  // open: takes "x"
  // e's open dimension 1 keeps its "x" and cannot take b's "y" ("y" does not extend it: the
  // larger split is "x" from the earlier operand), and the product is x alone.
  EXPECT_EQ(OfParam(main, 3), R"(#sdy.sharding<@mesh, [{}, {"x"}]>)");
  EXPECT_EQ(Of(main, ir::Opcode::kMultiply), R"(#sdy.sharding<@mesh, [{}, {"x"}]>)");
}

TEST(ShardingPropagationTest, WhileLoopCarriesReachAFixedPoint) {
  auto m = Parse(R"(
module @jit_loop {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
    %z = stablehlo.constant dense<0> : tensor<i32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %three = stablehlo.constant dense<3> : tensor<i32>
    %acc0 = stablehlo.constant dense<0.0> : tensor<8xf32>
    %r:3 = stablehlo.while(%k = %z, %v = %a, %acc = %acc0) : tensor<i32>, tensor<8xf32>, tensor<8xf32>
      cond {
        %ck = stablehlo.compare LT, %k, %three : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %ck : tensor<i1>
      } do {
        %t = stablehlo.tanh %v : tensor<8xf32>
        %s = stablehlo.add %acc, %t : tensor<8xf32>
        %k1 = stablehlo.add %k, %one : tensor<i32>
        stablehlo.return %k1, %t, %s : tensor<i32>, tensor<8xf32>, tensor<8xf32>
      }
    return %r#2 : tensor<8xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Propagate(*m).ok()) << Propagate(*m);
  const ir::Computation& main = *m->entry();
  const std::string x = R"(#sdy.sharding<@mesh, [{"x"}]>)";
  // The accumulator's initial value is split like the values added to it in the body.
  EXPECT_EQ(Of(main, ir::Opcode::kConstant, 3), x);
  EXPECT_EQ(Of(main, ir::Opcode::kWhile, 0, 1), x);
  EXPECT_EQ(Of(main, ir::Opcode::kWhile, 0, 2), x);
  EXPECT_EQ(OfResult(main, 0), x);
  const ir::Instruction* loop = nullptr;
  for (const auto& inst : main.instructions()) {
    if (inst->opcode() == ir::Opcode::kWhile) loop = inst.get();
  }
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->regions().size(), 2u);
  const ir::Computation& body = *loop->regions()[1];
  EXPECT_EQ(OfParam(body, 1), x);
  EXPECT_EQ(OfParam(body, 2), x);
  EXPECT_EQ(Of(body, ir::Opcode::kTanh), x);
  EXPECT_EQ(Of(body, ir::Opcode::kAdd, 0), x);
  EXPECT_EQ(OfParam(*loop->regions()[0], 2), x);
}

TEST(ShardingPropagationTest, ConstraintsManualComputationsAndOpsWithoutRules) {
  auto m = Parse(R"(
module @jit_f {
  sdy.mesh @mesh = <["i"=2]>
  func.func public @main(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
    %n = stablehlo.negate %a : tensor<8x4xf32>
    %c = sdy.sharding_constraint %n <@mesh, [{}, {"i"}]> : tensor<8x4xf32>
    %e = stablehlo.exponential %c : tensor<8x4xf32>
    %m = sdy.manual_computation(%b) in_shardings=[<@mesh, [{"i"}, {}]>] out_shardings=[<@mesh, [{"i"}, {}]>] manual_axes={"i"} (%arg1: tensor<4x4xf32>) {
      %1 = stablehlo.negate %arg1 : tensor<4x4xf32>
      sdy.return %1 : tensor<4x4xf32>
    } : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %t = stablehlo.tanh %m : tensor<8x4xf32>
    %u = stablehlo.custom_call @opaque(%t) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %e, %t, %u : tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Propagate(*m).ok()) << Propagate(*m);
  const ir::Computation& main = *m->entry();
  const std::string cols = R"(#sdy.sharding<@mesh, [{}, {"i"}]>)";
  const std::string rows = R"(#sdy.sharding<@mesh, [{"i"}, {}]>)";
  EXPECT_EQ(OfParam(main, 0), cols);  // backward through the negate
  EXPECT_EQ(Of(main, ir::Opcode::kNegate), cols);
  EXPECT_EQ(Of(main, ir::Opcode::kExponential), cols);
  EXPECT_EQ(OfParam(main, 1), rows);  // what the manual computation takes
  EXPECT_EQ(Of(main, ir::Opcode::kTanh), rows);
  // An unknown custom call: replicated, whatever its operand.
  EXPECT_EQ(Of(main, ir::Opcode::kCustomCall, 2), R"(#sdy.sharding<@mesh, [{}, {}]>)");
}

TEST(ShardingPropagationTest, PartiallyManualBodiesAreSplitAlongTheFreeAxes) {
  // Manual over "x" only: a constraint over the free "y" inside the body splits the body's
  // values, the operand's and result's blocks (in_shardings, out_shardings) and what the caller
  // passes and gets; the psum over "x" keeps the split; "x" never splits a value of the body.
  auto m = Parse(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%b: tensor<8x4xf32>) -> tensor<8x4xf32> {
    %m = sdy.manual_computation(%b) in_shardings=[<@mesh, [{"x", ?}, {?}]>] out_shardings=[<@mesh, [{?}, {?}]>] manual_axes={"x"} (%arg1: tensor<4x4xf32>) {
      %c = sdy.sharding_constraint %arg1 <@mesh, [{}, {"y"}]> : tensor<4x4xf32>
      %1 = stablehlo.negate %c : tensor<4x4xf32>
      %2 = "stablehlo.all_reduce"(%1) ({
        ^bb0(%p: tensor<f32>, %q: tensor<f32>):
          %s = stablehlo.add %p, %q : tensor<f32>
          stablehlo.return %s : tensor<f32>
      }) {replica_groups = dense<[[0, 2], [1, 3]]> : tensor<2x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids} : (tensor<4x4xf32>) -> tensor<4x4xf32>
      %3 = stablehlo.tanh %2 : tensor<4x4xf32>
      sdy.return %3 : tensor<4x4xf32>
    } : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %m : tensor<8x4xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Propagate(*m).ok()) << Propagate(*m);
  const ir::Computation& main = *m->entry();
  const ir::Instruction* manual = nullptr;
  for (const auto& inst : main.instructions()) {
    if (inst->opcode() == ir::Opcode::kCustomCall && inst->callee() != nullptr) manual = inst.get();
  }
  ASSERT_NE(manual, nullptr);
  const ir::Computation& body = *manual->callee();
  const std::string y = R"(#sdy.sharding<@mesh, [{}, {"y"}]>)";
  EXPECT_EQ(Of(body, ir::Opcode::kNegate), y);
  EXPECT_EQ(Of(body, ir::Opcode::kAllReduce), y);
  EXPECT_EQ(Of(body, ir::Opcode::kTanh), y);
  EXPECT_EQ(OfParam(main, 0), R"(#sdy.sharding<@mesh, [{"x"}, {"y"}]>)");
  // The blocks' dimensions stay open, as JAX stated them.
  EXPECT_EQ(Text(manual->attribute("in_shardings"), 0),
            R"(#sdy.sharding<@mesh, [{"x", ?}, {"y", ?}]>)");
  EXPECT_EQ(Text(manual->attribute("out_shardings"), 0), R"(#sdy.sharding<@mesh, [{?}, {"y", ?}]>)");
  EXPECT_EQ(OfResult(main, 0), y);
}

TEST(ShardingPropagationTest, BroadcastPadDynamicSliceReverseSortIotaAndAxisOnce) {
  auto m = Parse(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%a: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                         %v: tensor<6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>},
                         %i: tensor<i32>,
                         %b: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>},
                         %c: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
      -> (tensor<8x6xf32>, tensor<8x8xf32>, tensor<8x2xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>) {
    %0 = stablehlo.broadcast_in_dim %v, dims = [1] : (tensor<6xf32>) -> tensor<8x6xf32>
    %p0 = stablehlo.constant dense<0.0> : tensor<f32>
    %1 = "stablehlo.pad"(%a, %p0) {edge_padding_low = array<i64: 0, 1>, edge_padding_high = array<i64: 0, 1>, interior_padding = array<i64: 0, 0>} : (tensor<8x6xf32>, tensor<f32>) -> tensor<8x8xf32>
    %2 = stablehlo.dynamic_slice %a, %i, %i, sizes = [8, 2] : (tensor<8x6xf32>, tensor<i32>, tensor<i32>) -> tensor<8x2xf32>
    %3 = "stablehlo.reverse"(%a) {dimensions = array<i64: 0>} : (tensor<8x6xf32>) -> tensor<8x6xf32>
    %4:2 = "stablehlo.sort"(%a, %a) ({
      ^bb0(%l0: tensor<f32>, %r0: tensor<f32>, %l1: tensor<f32>, %r1: tensor<f32>):
        %cmp = stablehlo.compare LT, %l0, %r0 : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %cmp : tensor<i1>
    }) {dimension = 1 : i64, is_stable = false} : (tensor<8x6xf32>, tensor<8x6xf32>) -> (tensor<8x6xf32>, tensor<8x6xf32>)
    %5 = "stablehlo.iota"() {iota_dimension = 0 : i64} : () -> tensor<8x6xf32>
    %6 = stablehlo.add %5, %a : tensor<8x6xf32>
    %7 = stablehlo.multiply %c, %b : tensor<8x6xf32>
    return %0, %1, %2, %3, %4#1, %6, %7 : tensor<8x6xf32>, tensor<8x8xf32>, tensor<8x2xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Propagate(*m).ok()) << Propagate(*m);
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(Of(main, ir::Opcode::kBroadcastInDim), R"(#sdy.sharding<@mesh, [{}, {"y"}]>)");
  EXPECT_EQ(Of(main, ir::Opcode::kPad), R"(#sdy.sharding<@mesh, [{"x"}, {}]>)");  // padded: no split
  EXPECT_EQ(Of(main, ir::Opcode::kDynamicSlice), R"(#sdy.sharding<@mesh, [{"x"}, {}]>)");
  EXPECT_EQ(Of(main, ir::Opcode::kReverse), R"(#sdy.sharding<@mesh, [{}, {"y"}]>)");
  EXPECT_EQ(Of(main, ir::Opcode::kSort, 0, 1), R"(#sdy.sharding<@mesh, [{"x"}, {}]>)");  // not the sort dim
  EXPECT_EQ(Of(main, ir::Opcode::kIota), R"(#sdy.sharding<@mesh, [{"x"}, {"y"}]>)");
  // c splits dim 0 by "x", b dim 1 by "x": the product may use "x" once, for the first factor.
  EXPECT_EQ(Of(main, ir::Opcode::kMultiply), R"(#sdy.sharding<@mesh, [{"x"}, {}]>)");
}

TEST(ShardingPropagationTest, ConvolutionAndGather) {
  auto m = Parse(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%in: tensor<4x8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {"y"}]>},
                         %k: tensor<3x6x10xf32>,
                         %table: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>},
                         %idx: tensor<4x1xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
      -> (tensor<4x6x10xf32>, tensor<4x8xf32>) {
    %0 = stablehlo.convolution(%in, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<4x8x6xf32>, tensor<3x6x10xf32>) -> tensor<4x6x10xf32>
    %1 = "stablehlo.gather"(%table, %idx) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 8>, indices_are_sorted = false} : (tensor<16x8xf32>, tensor<4x1xi32>) -> tensor<4x8xf32>
    return %0, %1 : tensor<4x6x10xf32>, tensor<4x8xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Propagate(*m).ok()) << Propagate(*m);
  const ir::Computation& main = *m->entry();
  // Batch split passes on, the split input feature makes the output partial, the kernel takes it.
  EXPECT_EQ(Of(main, ir::Opcode::kConvolution),
            R"(#sdy.sharding<@mesh, [{"x"}, {}, {}], unreduced={"y"}>)");
  EXPECT_EQ(OfParam(main, 1), R"(#sdy.sharding<@mesh, [{}, {"y"}, {}]>)");
  // The indices' batch and the table's whole feature dimension pass to the rows gathered.
  EXPECT_EQ(Of(main, ir::Opcode::kGather), R"(#sdy.sharding<@mesh, [{"x"}, {"y"}]>)");
}

TEST(ShardingPropagationTest, ConvolutionSpatialSplitsPassOnlyWhereOutputsKeepTheirLength) {
  // A split image's rows pass to the output of a stride-1 convolution padded to the input's
  // length (each device's rows then need halos, which the partitioner exchanges); a strided one
  // (output half as long) and an unpadded one (output shorter) take nothing from the split.
  auto m = Parse(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%in: tensor<2x16x3xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}, {}]>},
                         %k: tensor<3x3x4xf32>)
      -> (tensor<2x16x4xf32>, tensor<2x8x4xf32>, tensor<2x14x4xf32>) {
    %0 = stablehlo.convolution(%in, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {pad = [[1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x16x3xf32>, tensor<3x3x4xf32>) -> tensor<2x16x4xf32>
    %1 = stablehlo.convolution(%in, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {stride = [2], pad = [[1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x16x3xf32>, tensor<3x3x4xf32>) -> tensor<2x8x4xf32>
    %2 = stablehlo.convolution(%in, %k) dim_numbers = [b, 0, f]x[0, i, o]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x16x3xf32>, tensor<3x3x4xf32>) -> tensor<2x14x4xf32>
    return %0, %1, %2 : tensor<2x16x4xf32>, tensor<2x8x4xf32>, tensor<2x14x4xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Propagate(*m).ok()) << Propagate(*m);
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(Of(main, ir::Opcode::kConvolution, 0), R"(#sdy.sharding<@mesh, [{}, {"x"}, {}]>)");
  EXPECT_EQ(Of(main, ir::Opcode::kConvolution, 1), R"(#sdy.sharding<@mesh, [{}, {}, {}]>)");
  EXPECT_EQ(Of(main, ir::Opcode::kConvolution, 2), R"(#sdy.sharding<@mesh, [{}, {}, {}]>)");
}

TEST(ShardingPropagationTest, TablesSplitByRowsAreLookedUpAndUpdatedWhereTheRowsAre) {
  // A gather of rows from a table split by rows is a partial sum over the rows' axis (each
  // device gathers its rows, zeros for the others); a scatter into the table keeps its split.
  auto m = Parse(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%table: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                         %idx: tensor<4x1xi32>, %upd: tensor<4x8xf32>)
      -> (tensor<4x8xf32>, tensor<16x8xf32>) {
    %g = "stablehlo.gather"(%table, %idx) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 8>, indices_are_sorted = false} : (tensor<16x8xf32>, tensor<4x1xi32>) -> tensor<4x8xf32>
    %s = "stablehlo.scatter"(%table, %idx, %upd) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        stablehlo.return %b : tensor<f32>
    }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false} : (tensor<16x8xf32>, tensor<4x1xi32>, tensor<4x8xf32>) -> tensor<16x8xf32>
    return %g, %s : tensor<4x8xf32>, tensor<16x8xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Propagate(*m).ok()) << Propagate(*m);
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(Of(main, ir::Opcode::kGather), R"(#sdy.sharding<@mesh, [{}, {}], unreduced={"x"}>)");
  EXPECT_EQ(Of(main, ir::Opcode::kScatter), R"(#sdy.sharding<@mesh, [{"x"}, {}]>)");
}

TEST(ShardingPropagationTest, ScatterWindowsAndReduceWindowUnitWindows) {
  auto m = Parse(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%op: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"y"}]>},
                         %idx: tensor<4x1xi32>, %upd: tensor<4x8xf32>,
                         %a: tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})
      -> (tensor<16x8xf32>, tensor<8x4xf32>) {
    %s = "stablehlo.scatter"(%op, %idx, %upd) ({
      ^bb0(%x0: tensor<f32>, %y0: tensor<f32>):
        %sum = stablehlo.add %x0, %y0 : tensor<f32>
        stablehlo.return %sum : tensor<f32>
    }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false} : (tensor<16x8xf32>, tensor<4x1xi32>, tensor<4x8xf32>) -> tensor<16x8xf32>
    %c = stablehlo.constant dense<0.0> : tensor<f32>
    %rw = "stablehlo.reduce_window"(%a, %c) ({
      ^bb0(%p: tensor<f32>, %q: tensor<f32>):
        %mx = stablehlo.maximum %p, %q : tensor<f32>
        stablehlo.return %mx : tensor<f32>
    }) {window_dimensions = array<i64: 1, 3>} : (tensor<8x6xf32>, tensor<f32>) -> tensor<8x4xf32>
    return %s, %rw : tensor<16x8xf32>, tensor<8x4xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Propagate(*m).ok()) << Propagate(*m);
  const ir::Computation& main = *m->entry();
  // The window dimension covers the operand's whole dimension 1: split alike everywhere; the
  // scattered dimension 0 and the indices get nothing.
  EXPECT_EQ(Of(main, ir::Opcode::kScatter), R"(#sdy.sharding<@mesh, [{}, {"y"}]>)");
  EXPECT_EQ(OfParam(main, 2), R"(#sdy.sharding<@mesh, [{}, {"y"}]>)");
  EXPECT_EQ(OfParam(main, 1), R"(#sdy.sharding<@mesh, [{}, {}]>)");
  // Only the dimension with a one-element window keeps its split.
  EXPECT_EQ(Of(main, ir::Opcode::kReduceWindow), R"(#sdy.sharding<@mesh, [{"x"}, {}]>)");
}

TEST(ShardingPropagationTest, IfBranchesAndCalls) {
  auto m = Parse(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=2]>
  func.func private @helper(%h: tensor<8xf32>) -> tensor<8xf32> {
    %0 = stablehlo.sine %h : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func public @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}, %p: tensor<i1>,
                         %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
    %c = func.call @helper(%a) : (tensor<8xf32>) -> tensor<8xf32>
    %r = "stablehlo.if"(%p) ({
      %s = stablehlo.cosine %b : tensor<8xf32>
      stablehlo.return %s : tensor<8xf32>
    }, {
      %t = stablehlo.tanh %c : tensor<8xf32>
      stablehlo.return %t : tensor<8xf32>
    }) : (tensor<i1>) -> tensor<8xf32>
    return %c, %r : tensor<8xf32>, tensor<8xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Propagate(*m).ok()) << Propagate(*m);
  const ir::Computation& main = *m->entry();
  const std::string x = R"(#sdy.sharding<@mesh, [{"x"}]>)";
  const ir::Computation* helper = m->FindFunction("helper");
  ASSERT_NE(helper, nullptr);
  EXPECT_EQ(OfParam(*helper, 0), x);
  EXPECT_EQ(Of(*helper, ir::Opcode::kSine), x);
  EXPECT_EQ(Of(main, ir::Opcode::kCall), x);
  // The false branch returns a split value, so the if's result and the true branch's are split,
  // and so is the value the true branch reads.
  EXPECT_EQ(Of(main, ir::Opcode::kIf), x);
  EXPECT_EQ(OfParam(main, 2), x);
}

TEST(ShardingPropagationTest, GspmdShardingsUseTheirInlineMesh) {
  auto m = Parse(R"(
func.func public @main(%a: tensor<8x4xf32> {mhlo.sharding = "{devices=[2,1]<=[2]}"}) -> tensor<8x4xf32> {
  %0 = stablehlo.negate %a : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(Propagate(*m).ok()) << Propagate(*m);
  const ir::Computation& main = *m->entry();
  const ir::Attribute* a = main.instructions()[0]->attribute(kShardingsAttribute);
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->kind, ir::Attribute::Kind::kList);
  ASSERT_EQ(a->list.size(), 1u);
  ASSERT_NE(a->list[0].sharding, nullptr);
  const ir::TensorSharding& s = *a->list[0].sharding;
  ASSERT_TRUE(s.inline_mesh.has_value());
  ASSERT_EQ(s.dims.size(), 2u);
  ASSERT_EQ(s.dims[0].axes.size(), 1u);
  EXPECT_EQ(s.dims[0].axes[0].name, s.inline_mesh->axes[0]);
  EXPECT_TRUE(s.dims[1].axes.empty());
}

TEST(ShardingPropagationTest, ProgramsWithoutSplitsAreLeftAlone) {
  auto m = Parse(R"(
func.func public @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = stablehlo.negate %a : tensor<8xf32>
  return %0 : tensor<8xf32>
})");
  ASSERT_NE(m, nullptr);
  const std::string before = m->ToString();
  absl::StatusOr<bool> changed = CreateShardingPropagationPass()->Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(m->ToString(), before);
}

// The error the pass gives for `text` ("<no error>" when it succeeds).
std::string ErrorOf(const std::string& text) {
  auto m = Parse(text);
  if (m == nullptr) return "<not parsed>";
  absl::StatusOr<bool> r = CreateShardingPropagationPass()->Run(*m);
  return r.ok() ? "<no error>" : std::string(r.status().message());
}

TEST(ShardingPropagationTest, MalformedShardingsAreErrorsNamingWhere) {
  const std::string unknown_axis = ErrorOf(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z"}]>}) -> tensor<8xf32> {
    %0 = stablehlo.negate %a : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
})");
  EXPECT_NE(unknown_axis.find("argument 0"), std::string::npos) << unknown_axis;
  EXPECT_NE(unknown_axis.find("\"z\""), std::string::npos) << unknown_axis;

  const std::string uneven = ErrorOf(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%a: tensor<6xf32>) -> tensor<6xf32> {
    %0 = stablehlo.negate %a : tensor<6xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}]> : tensor<6xf32>
    return %1 : tensor<6xf32>
  }
})");
  EXPECT_NE(uneven.find("custom_call"), std::string::npos) << uneven;

  const std::string two_meshes = ErrorOf(R"(
module @jit_f {
  sdy.mesh @m1 = <["x"=2]>
  sdy.mesh @m2 = <["y"=4]>
  func.func public @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m1, [{"x"}]>},
                         %b: tensor<8xf32> {sdy.sharding = #sdy.sharding<@m2, [{"y"}]>}) -> tensor<8xf32> {
    %0 = stablehlo.add %a, %b : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
})");
  EXPECT_NE(two_meshes.find("argument 1"), std::string::npos) << two_meshes;

  const std::string wrong_rank = ErrorOf(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=2]>
  func.func public @main(%a: tensor<8xf32>) -> (tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = stablehlo.negate %a : tensor<8xf32>
    return %0 : tensor<8xf32>
  }
})");
  EXPECT_NE(wrong_rank.find("result 0"), std::string::npos) << wrong_rank;
  EXPECT_NE(wrong_rank.find("rank 2"), std::string::npos) << wrong_rank;
}

}  // namespace
}  // namespace ember::passes
