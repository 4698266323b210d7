// spmd-partition on hand-written SPMD programs: the local shapes of the per-device program and
// the number and kind of collectives for the standard patterns (data parallel, Megatron column
// then row, reductions over split dimensions), what stays whole and why (named in the report),
// and the programs it gives to spmd-replicate. (Values on devices, next to XLA:CPU:
// tests/jax/test_multidevice.py.)
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/unify_meshes.h"
#include "gtest/gtest.h"
#include "tests/compiler/parse_module.h"

namespace ember::passes {
namespace {

using test_util::Parse;

int Count(const ir::Computation& c, ir::Opcode op) { return test_util::CountOps(c, op); }

// The first instruction with opcode `op`, or null.
const ir::Instruction* First(const ir::Computation& c, ir::Opcode op) {
  for (const auto& inst : c.instructions()) {
    if (inst->opcode() == op) return inst.get();
  }
  return nullptr;
}

// The type of the first instruction with opcode `op`.
std::string TypeOf(const ir::Computation& c, ir::Opcode op) {
  const ir::Instruction* inst = First(c, op);
  return inst == nullptr ? "none" : inst->result(0)->type().ToString();
}

std::string Report(const ir::Module& m) {
  const ir::Attribute* a = m.attributes().Find(kSpmdReportAttribute);
  return a == nullptr ? "" : a->s;
}

absl::Status RunPass(ir::Module& module, int64_t devices) {
  absl::StatusOr<bool> changed = CreateSpmdPartitionPass(devices)->Run(module);
  if (!changed.ok()) return changed.status();
  return ir::Verify(module);
}

TEST(SpmdPartitionTest, DataParallelStepRunsOnLocalBatchesAndAllReducesWeightGradients) {
  // The batch is split four ways; the weights are replicated. The forward dot runs on 2 rows
  // per device, and the weight gradient (a sum over the batch) is one all-reduce.
  auto m = Parse(R"(
module @jit_step {
  sdy.mesh @mesh = <["b"=4]>
  func.func public @main(%x: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>},
                         %w: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
      -> (tensor<8x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>},
          tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %h = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    %t = stablehlo.tanh %h : tensor<8x6xf32>
    %g = stablehlo.dot_general %x, %t, contracting_dims = [0] x [0] : (tensor<8x4xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
    return %t, %g : tensor<8x6xf32>, tensor<4x6xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(RunPass(*m, 4).ok());
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(main.parameter(0)->type().ToString(), "tensor<2x4xf32>");
  EXPECT_EQ(main.parameter(1)->type().ToString(), "tensor<4x6xf32>");
  EXPECT_EQ(main.result_types()[0].ToString(), "tensor<2x6xf32>");
  EXPECT_EQ(main.result_types()[1].ToString(), "tensor<4x6xf32>");
  EXPECT_EQ(TypeOf(main, ir::Opcode::kTanh), "tensor<2x6xf32>");
  EXPECT_EQ(Count(main, ir::Opcode::kAllGather), 0) << m->ToString();
  EXPECT_EQ(Count(main, ir::Opcode::kAllReduce), 1) << m->ToString();
  EXPECT_EQ(Count(main, ir::Opcode::kDynamicSlice), 0) << m->ToString();
  EXPECT_NE(m->ToString().find("replica_groups = s64[1,4]{1,0} {{0, 1, 2, 3}}"), std::string::npos);
  const std::string report = Report(*m);
  EXPECT_TRUE(absl::StrContains(report, "1 collectives inserted, 0 ops on global values"))
      << report;
  EXPECT_TRUE(absl::StrContains(report, "unreduced over {\"b\"}")) << report;
  // Propagation's attributes do not outlive the pass.
  EXPECT_FALSE(absl::StrContains(m->ToString(), "ember.sharding")) << m->ToString();
}

TEST(SpmdPartitionTest, MegatronColumnThenRowNeedsOneAllReduceOverTheModelAxis) {
  auto m = Parse(R"(
module @jit_mlp {
  sdy.mesh @mesh = <["d"=2, "m"=2]>
  func.func public @main(%x: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>},
                         %w1: tensor<4x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"m"}]>},
                         %w2: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"m"}, {}]>})
      -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"d"}, {}]>}) {
    %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<8x4xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
    %a = stablehlo.tanh %h : tensor<8x16xf32>
    %y = stablehlo.dot_general %a, %w2, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    return %y : tensor<8x4xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(RunPass(*m, 4).ok());
  const ir::Computation& main = *m->entry();
  // Each device: 4 rows, 8 of the 16 hidden units.
  EXPECT_EQ(TypeOf(main, ir::Opcode::kTanh), "tensor<4x8xf32>");
  EXPECT_EQ(main.result_types()[0].ToString(), "tensor<4x4xf32>");
  EXPECT_EQ(Count(main, ir::Opcode::kAllGather), 0) << m->ToString();
  EXPECT_EQ(Count(main, ir::Opcode::kAllReduce), 1) << m->ToString();
  // Summed over the devices that differ only in "m".
  EXPECT_NE(m->ToString().find("replica_groups = s64[2,2]{1,0} {{0, 1}, {2, 3}}"),
            std::string::npos)
      << m->ToString();
}

TEST(SpmdPartitionTest, ReductionsOverSplitDimensionsAllReduceOnlyWhenTheInitIsTheIdentity) {
  auto m = Parse(R"(
module @jit_reduce {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>})
      -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %one = stablehlo.constant dense<1.0> : tensor<f32>
    %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %s = stablehlo.reduce(%a init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    %m = stablehlo.reduce(%a init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    %o = stablehlo.reduce(%a init: %one) applies stablehlo.add across dimensions = [1] : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
    return %s, %m, %o : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(RunPass(*m, 4).ok());
  const ir::Computation& main = *m->entry();
  // The sum and the max reduce their blocks and all-reduce; a sum starting at 1 would count the
  // 1 four times, so that reduce gathers its operand first.
  EXPECT_EQ(Count(main, ir::Opcode::kAllReduce), 2) << m->ToString();
  EXPECT_EQ(Count(main, ir::Opcode::kAllGather), 1) << m->ToString();
  const std::string report = Report(*m);
  EXPECT_TRUE(absl::StrContains(report,
                                "gathered tensor<4x8xf32> along dimension 1 (split "
                                "{\"x\"}) for stablehlo.reduce"))
      << report;
}

TEST(SpmdPartitionTest, WhatStaysWholeIsGatheredAndReported) {
  auto m = Parse(R"(
module @jit_whole {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>},
                         %t: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
      -> (tensor<32xf32>, tensor<16x4xf32>) {
    %r = stablehlo.reshape %a : (tensor<8x4xf32>) -> tensor<32xf32>
    %u = stablehlo.custom_call @ember_test_opaque(%t) : (tensor<16x4xf32>) -> tensor<16x4xf32>
    return %r, %u : tensor<32xf32>, tensor<16x4xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(RunPass(*m, 4).ok());
  const std::string report = Report(*m);
  // A reshape merging a split minor dimension cannot keep it as contiguous blocks.
  EXPECT_TRUE(absl::StrContains(report,
                                "gathered tensor<8x4xf32> along dimension 1 (split "
                                "{\"x\"}) for stablehlo.reshape"))
      << report;
  // An op with no sharding rule runs on the whole value, and says so with the bytes.
  EXPECT_TRUE(absl::StrContains(report,
                                "on global values (no sharding rule): "
                                "stablehlo.custom_call"))
      << report;
  EXPECT_TRUE(absl::StrContains(report, "256 bytes of split operands gathered")) << report;
  EXPECT_TRUE(absl::StrContains(report, "2 collectives inserted, 1 ops on global values"))
      << report;
}

TEST(SpmdPartitionTest, WhileLoopsRunTheirBodyOnTheCarriedBlocks) {
  auto m = Parse(R"(
module @jit_loop {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%t: tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                         %w: tensor<4x4xf32>)
      -> (tensor<16x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %l:2 = stablehlo.while(%i = %c, %v = %t) : tensor<i32>, tensor<16x4xf32>
      cond {
        %k = stablehlo.constant dense<3> : tensor<i32>
        %p = stablehlo.compare LT, %i, %k : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %p : tensor<i1>
      } do {
        %one = stablehlo.constant dense<1> : tensor<i32>
        %n = stablehlo.add %i, %one : tensor<i32>
        %d = stablehlo.dot_general %v, %w, contracting_dims = [1] x [0] : (tensor<16x4xf32>, tensor<4x4xf32>) -> tensor<16x4xf32>
        %u = stablehlo.tanh %d : tensor<16x4xf32>
        stablehlo.return %n, %u : tensor<i32>, tensor<16x4xf32>
      }
    return %l#1 : tensor<16x4xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(RunPass(*m, 4).ok());
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(main.result_types()[0].ToString(), "tensor<4x4xf32>");
  EXPECT_EQ(Count(main, ir::Opcode::kAllGather), 0) << m->ToString();
  // The body's dot and tanh run on the device's 4 rows; the captured weights are read whole.
  bool found = false;
  for (const auto& c : m->computations()) {
    if (c.get() == &main || Count(*c, ir::Opcode::kTanh) == 0) continue;
    found = true;
    EXPECT_EQ(TypeOf(*c, ir::Opcode::kTanh), "tensor<4x4xf32>") << m->ToString();
    EXPECT_EQ(TypeOf(*c, ir::Opcode::kDotGeneral), "tensor<4x4xf32>") << m->ToString();
    EXPECT_EQ(Count(*c, ir::Opcode::kAllGather), 0) << m->ToString();
  }
  EXPECT_TRUE(found) << m->ToString();
  EXPECT_TRUE(absl::StrContains(Report(*m), "0 collectives inserted, 0 ops on global values"))
      << Report(*m);
}

TEST(SpmdPartitionTest, ManualComputationsTakeTheirBlocksWithoutCollectives) {
  auto m = Parse(R"(
module @jit_body {
  sdy.mesh @mesh = <["i"=4]>
  func.func public @main(%arg0: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}]>})
      -> (tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {}]>}) {
    %e = stablehlo.exponential %arg0 : tensor<8x2xf32>
    %0 = sdy.manual_computation(%e) in_shardings=[<@mesh, [{"i"}, {}]>] out_shardings=[<@mesh, [{"i"}, {}]>] manual_axes={"i"} (%arg1: tensor<2x2xf32>) {
      %1 = stablehlo.negate %arg1 : tensor<2x2xf32>
      sdy.return %1 : tensor<2x2xf32>
    } : (tensor<8x2xf32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(RunPass(*m, 4).ok());
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(main.parameter(0)->type().ToString(), "tensor<2x2xf32>");
  EXPECT_EQ(TypeOf(main, ir::Opcode::kExponential), "tensor<2x2xf32>");
  EXPECT_EQ(Count(main, ir::Opcode::kCall), 1);
  EXPECT_EQ(Count(main, ir::Opcode::kAllGather), 0) << m->ToString();
  EXPECT_EQ(Count(main, ir::Opcode::kDynamicSlice), 0) << m->ToString();
  EXPECT_EQ(main.result_types()[0].ToString(), "tensor<2x2xf32>");
}

TEST(SpmdPartitionTest, IotaAndConstantsKeepTheirBlockAndReshardsCut) {
  auto m = Parse(R"(
module @jit_gen {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
      -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>}) {
    %i = stablehlo.iota dim = 0 : tensor<8x4xf32>
    %h = stablehlo.constant dense<0.5> : tensor<8x4xf32>
    %k = stablehlo.constant dense<[[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0], [5.0, 2.0, 3.0, 4.0]]> : tensor<8x4xf32>
    %s = stablehlo.add %a, %i : tensor<8x4xf32>
    %t = stablehlo.multiply %s, %h : tensor<8x4xf32>
    %u = stablehlo.subtract %t, %k : tensor<8x4xf32>
    return %u : tensor<8x4xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(RunPass(*m, 4).ok());
  const ir::Computation& main = *m->entry();
  const std::string text = m->ToString();
  // The ops take the result's split (propagated back from it): the argument is cut further
  // along "y", rows 0-1 or 2-3 of the device's 4, so the offsets are 0, 2, 0, 2 (y minor).
  EXPECT_EQ(TypeOf(main, ir::Opcode::kSubtract), "tensor<2x4xf32>");
  EXPECT_EQ(main.result_types()[0].ToString(), "tensor<2x4xf32>");
  EXPECT_NE(text.find("s64[4]{0} {0, 2, 0, 2}"), std::string::npos) << text;
  // The iota is a local s64 iota plus the block's offset (rows 0, 2, 4, 6 in device order),
  // converted once; the splat is a smaller splat; the other constant is made whole and cut.
  EXPECT_EQ(TypeOf(main, ir::Opcode::kIota), "tensor<2x4xi64>");
  EXPECT_NE(text.find("s64[4]{0} {0, 2, 4, 6}"), std::string::npos) << text;
  EXPECT_NE(text.find("f32[2,4]{1,0} {{0.5, 0.5"), std::string::npos) << text;
  EXPECT_NE(text.find("f32[8,4]{1,0} {{1, 2, 3, 4}"), std::string::npos) << text;
  EXPECT_EQ(Count(main, ir::Opcode::kAllGather), 0) << text;
}

TEST(SpmdPartitionTest, UnreducedResultsStayPartialAndUnreducedArgumentsAreSummedFirst) {
  auto m = Parse(R"(
module @jit_unreduced {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>},
                         %b: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                         %p: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced={"x"}>})
      -> (tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced={"x"}>},
          tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
          tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced={"x"}>}) {
    %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
    %e = stablehlo.exponential %p : tensor<4x2xf32>
    return %d, %e, %e : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(RunPass(*m, 4).ok());
  const ir::Computation& main = *m->entry();
  // The dot's partial sum is returned as it is; the unreduced argument is summed (one
  // all-reduce) before exp; exp's whole result returned unreduced is kept on the first device
  // of the group and zero elsewhere.
  EXPECT_EQ(Count(main, ir::Opcode::kAllReduce), 1) << m->ToString();
  EXPECT_EQ(Count(main, ir::Opcode::kAllGather), 0) << m->ToString();
  EXPECT_EQ(Count(main, ir::Opcode::kSelect), 1) << m->ToString();
  const ir::Instruction* ret = main.return_instruction();
  ASSERT_NE(ret, nullptr);
  EXPECT_EQ(ret->operand(0)->producer()->opcode(), ir::Opcode::kDotGeneral) << m->ToString();
  EXPECT_EQ(ret->operand(2)->producer()->opcode(), ir::Opcode::kSelect) << m->ToString();
}

TEST(SpmdPartitionTest, OpsLinearInPartialSumsKeepThemPartial) {
  // %s (a sum of two partial dots, transposed) stays partial: returned unreduced with no
  // all-reduce, and summed once for the replicated result. %m adds a whole value to a partial
  // one: that would add it once per device, so the partial dot is summed first.
  auto m = Parse(R"(
module @jit_linear {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>},
                         %b: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                         %c: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                         %w: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
      -> (tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced={"x"}>},
          tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
          tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced={"x"}>}) {
    %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
    %e = stablehlo.dot_general %a, %c, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
    %f = stablehlo.subtract %d, %e : tensor<4x2xf32>
    %s = stablehlo.transpose %f, dims = [1, 0] : (tensor<4x2xf32>) -> tensor<2x4xf32>
    %m = stablehlo.add %d, %w : tensor<4x2xf32>
    return %s, %s, %m : tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x2xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  absl::Status status = RunPass(*m, 4);
  ASSERT_TRUE(status.ok()) << status;
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(Count(main, ir::Opcode::kAllReduce), 2) << m->ToString();
  const ir::Instruction* ret = main.return_instruction();
  ASSERT_NE(ret, nullptr);
  EXPECT_EQ(ret->operand(0)->producer()->opcode(), ir::Opcode::kTranspose) << m->ToString();
  EXPECT_EQ(ret->operand(1)->producer()->opcode(), ir::Opcode::kAllReduce) << m->ToString();
  const ir::Instruction* add = First(main, ir::Opcode::kAdd);
  ASSERT_NE(add, nullptr) << m->ToString();
  EXPECT_EQ(add->operand(0)->producer()->opcode(), ir::Opcode::kAllReduce) << m->ToString();
  EXPECT_EQ(ret->operand(2)->producer()->opcode(), ir::Opcode::kSelect) << m->ToString();
}

TEST(SpmdPartitionTest, ConversionsAndDynamicSlicesAndUpdatesKeepPartialSumsPartial) {
  // A bf16 partial dot made f32 (each device converts its part, as JAX types it), stacked into
  // a partial accumulator at a whole index (dynamic_update_slice) and read back at one
  // (dynamic_slice): no all-reduce; the stack is returned unreduced as it is. A narrowing or
  // integer conversion of a partial sum is not taken (the dot is summed first, once).
  auto m = Parse(R"(
module @jit_stack {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%a: tensor<4x8xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>},
                         %b: tensor<8x2xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                         %acc: tensor<3x4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}], unreduced={"x"}>},
                         %i: tensor<i32> {sdy.sharding = #sdy.sharding<@mesh, []>})
      -> (tensor<3x4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}], unreduced={"x"}>},
          tensor<1x4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}, {}], unreduced={"x"}>},
          tensor<4x2xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
          tensor<4x2xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced={"x"}>}) {
    %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
    %f = stablehlo.convert %d : (tensor<4x2xbf16>) -> tensor<4x2xf32>
    %u = stablehlo.reshape %f : (tensor<4x2xf32>) -> tensor<1x4x2xf32>
    %z = stablehlo.constant dense<0> : tensor<i32>
    %s = stablehlo.dynamic_update_slice %acc, %u, %i, %z, %z : (tensor<3x4x2xf32>, tensor<1x4x2xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<3x4x2xf32>
    %r = stablehlo.dynamic_slice %s, %i, %z, %z, sizes = [1, 4, 2] : (tensor<3x4x2xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x2xf32>
    %n = stablehlo.convert %d : (tensor<4x2xbf16>) -> tensor<4x2xi32>
    %h = stablehlo.convert %f : (tensor<4x2xf32>) -> tensor<4x2xbf16>
    return %s, %r, %n, %h : tensor<3x4x2xf32>, tensor<1x4x2xf32>, tensor<4x2xi32>, tensor<4x2xbf16>
  }
})");
  ASSERT_NE(m, nullptr);
  absl::Status status = RunPass(*m, 4);
  ASSERT_TRUE(status.ok()) << status;
  const ir::Computation& main = *m->entry();
  // Two sums: the bf16 dot's (for the integers) and the f32 conversion's (for the narrowing).
  EXPECT_EQ(Count(main, ir::Opcode::kAllReduce), 2) << m->ToString();
  const ir::Instruction* ret = main.return_instruction();
  ASSERT_NE(ret, nullptr);
  EXPECT_EQ(ret->operand(0)->producer()->opcode(), ir::Opcode::kDynamicUpdateSlice)
      << m->ToString();
  EXPECT_EQ(ret->operand(1)->producer()->opcode(), ir::Opcode::kDynamicSlice) << m->ToString();
  const ir::Instruction* to_int = ret->operand(2)->producer();
  ASSERT_EQ(to_int->opcode(), ir::Opcode::kConvert) << m->ToString();
  EXPECT_EQ(to_int->operand(0)->producer()->opcode(), ir::Opcode::kAllReduce) << m->ToString();
  // f32 -> bf16 of the partial f32: summed first (in f32), then narrowed; returned unreduced,
  // the whole value is kept on the first device (a select).
  const ir::Instruction* keep = ret->operand(3)->producer();
  ASSERT_EQ(keep->opcode(), ir::Opcode::kSelect) << m->ToString();
  const ir::Instruction* narrow = keep->operand(1)->producer();
  ASSERT_EQ(narrow->opcode(), ir::Opcode::kConvert) << m->ToString();
  EXPECT_EQ(narrow->operand(0)->producer()->opcode(), ir::Opcode::kAllReduce) << m->ToString();
}

TEST(SpmdPartitionTest, ManualComputationsTakeUnreducedOperandsAsTheirPartialSums) {
  // shard_map(in_specs=P(unreduced={"x"})): the body gets each device's part of the sum (it
  // sums it itself), so the dot's partial result goes in as it is; a whole operand becomes a
  // sum by staying on the first device (zeros elsewhere).
  auto m = Parse(R"(
module @jit_unreduced_in {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%a: tensor<4x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>},
                         %b: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                         %w: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
      -> (tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>},
          tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
    %0:2 = sdy.manual_computation(%d, %w) in_shardings=[<@mesh, [{}, {}], unreduced={"x"}>, <@mesh, [{}, {}], unreduced={"x"}>] out_shardings=[<@mesh, [{}, {}]>, <@mesh, [{}, {}]>] manual_axes={"x"} (%arg1: tensor<4x2xf32>, %arg2: tensor<4x2xf32>) {
      %1 = stablehlo.negate %arg1 : tensor<4x2xf32>
      %2 = stablehlo.negate %arg2 : tensor<4x2xf32>
      sdy.return %1, %2 : tensor<4x2xf32>, tensor<4x2xf32>
    } : (tensor<4x2xf32>, tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>)
    return %0#0, %0#1 : tensor<4x2xf32>, tensor<4x2xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  absl::Status status = RunPass(*m, 4);
  ASSERT_TRUE(status.ok()) << status;
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(Count(main, ir::Opcode::kAllReduce), 0) << m->ToString();
  EXPECT_EQ(Count(main, ir::Opcode::kSelect), 1) << m->ToString();
  const ir::Instruction* call = First(main, ir::Opcode::kCall);
  ASSERT_NE(call, nullptr) << m->ToString();
  EXPECT_EQ(call->operand(0)->producer()->opcode(), ir::Opcode::kDotGeneral) << m->ToString();
  EXPECT_EQ(call->operand(1)->producer()->opcode(), ir::Opcode::kSelect) << m->ToString();
}

TEST(SpmdPartitionTest, ShardingsOverTheEmptyMeshFitTheProgramsMesh) {
  // JAX puts scalars on a mesh with no axes next to the program's mesh: still one mesh.
  auto m = Parse(R"(
module @jit_select {
  sdy.mesh @empty_mesh = <[]>
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%s: tensor<i1> {sdy.sharding = #sdy.sharding<@empty_mesh, []>},
                         %p: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced={"x"}>},
                         %q: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced={"x"}>})
      -> (tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced={"x"}>}) {
    %0 = stablehlo.select %s, %p, %q : tensor<i1>, tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  absl::Status status = RunPass(*m, 4);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_TRUE(absl::StrContains(Report(*m), "spmd-partition over")) << Report(*m);
  EXPECT_EQ(Count(*m->entry(), ir::Opcode::kAllGather), 0) << m->ToString();
}

TEST(SpmdPartitionTest, PartiallyManualAndNestedManualComputations) {
  // shard_map over "i" with "j" free, and inside its body a shard_map over "j".
  auto m = Parse(R"(
module @jit_nested {
  sdy.mesh @mesh = <["i"=2, "j"=2]>
  func.func public @main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {"j"}]>})
      -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"i"}, {"j"}]>}) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"i"}, {"j"}]>] out_shardings=[<@mesh, [{"i"}, {"j"}]>] manual_axes={"i"} (%arg1: tensor<4x4xf32>) {
      %1 = stablehlo.negate %arg1 : tensor<4x4xf32>
      %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{}, {"j"}]>] out_shardings=[<@mesh, [{}, {"j"}]>] manual_axes={"j"} (%arg2: tensor<4x2xf32>) {
        %3 = stablehlo.exponential %arg2 : tensor<4x2xf32>
        sdy.return %3 : tensor<4x2xf32>
      } : (tensor<4x4xf32>) -> tensor<4x4xf32>
      sdy.return %2 : tensor<4x4xf32>
    } : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %0 : tensor<8x4xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  absl::Status status = RunPass(*m, 4);
  ASSERT_TRUE(status.ok()) << status;
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(main.parameter(0)->type().ToString(), "tensor<4x2xf32>");
  EXPECT_EQ(main.result_types()[0].ToString(), "tensor<4x2xf32>");
  // No manual computation is left; the outer body takes its 4x2 block (split over the free "j"
  // too), and the inner body its 4x2 block.
  for (const auto& c : m->computations()) {
    for (const auto& inst : c->instructions()) {
      EXPECT_NE(inst->opcode(), ir::Opcode::kCustomCall) << inst->Describe();
    }
  }
  EXPECT_EQ(Count(main, ir::Opcode::kCall), 1) << m->ToString();
}

TEST(SpmdPartitionTest, AnAxisThatChangesDimensionMovesByAllToAll) {
  auto m = Parse(R"(
module @jit_move {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%a: tensor<8x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>})
      -> (tensor<8x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
    %e = stablehlo.exponential %a : tensor<8x12xf32>
    %c = stablehlo.custom_call @Sharding(%e) {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>} : (tensor<8x12xf32>) -> tensor<8x12xf32>
    %n = stablehlo.negate %c : tensor<8x12xf32>
    return %n : tensor<8x12xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  absl::Status status = RunPass(*m, 4);
  ASSERT_TRUE(status.ok()) << status;
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(TypeOf(main, ir::Opcode::kExponential), "tensor<2x12xf32>");
  EXPECT_EQ(TypeOf(main, ir::Opcode::kNegate), "tensor<8x3xf32>");
  EXPECT_EQ(Count(main, ir::Opcode::kAllToAll), 1) << m->ToString();
  EXPECT_EQ(Count(main, ir::Opcode::kAllGather), 0) << m->ToString();
  EXPECT_TRUE(absl::StrContains(Report(*m), "resharded tensor<8x12xf32> along dimension 0"))
      << Report(*m);
}

TEST(SpmdPartitionTest, APartialSumWantedSplitOverItsAxesIsReduceScattered) {
  // Row-parallel dot (contracting dimension split over "y") whose result is wanted split over
  // "y" along dimension 1, within its split over "x" along dimension 0: each device sums only its
  // block (one reduce_scatter over "y" along dimension 1), no all-reduce, no cut. The same sum
  // wanted whole over "y" still takes the all-reduce.
  auto m = Parse(R"(
module @jit_rs {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                         %w: tensor<16x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>})
      -> (tensor<8x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
          tensor<8x12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {
    %d = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x12xf32>) -> tensor<8x12xf32>
    %n = stablehlo.negate %d : tensor<8x12xf32>
    %e = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<8x16xf32>, tensor<16x12xf32>) -> tensor<8x12xf32>
    %f = stablehlo.exponential %e : tensor<8x12xf32>
    return %n, %f : tensor<8x12xf32>, tensor<8x12xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  absl::Status status = RunPass(*m, 4);
  ASSERT_TRUE(status.ok()) << status;
  const ir::Computation& main = *m->entry();
  ASSERT_EQ(Count(main, ir::Opcode::kReduceScatter), 1) << m->ToString();
  const ir::Instruction* rs = First(main, ir::Opcode::kReduceScatter);
  EXPECT_EQ(rs->result(0)->type().ToString(), "tensor<4x6xf32>");
  EXPECT_EQ(rs->operand(0)->type().ToString(), "tensor<4x12xf32>");
  EXPECT_EQ(rs->attribute("scatter_dimension")->i, 1);
  // Devices (x, y) = 2x + y: the "y" groups are {0, 1} and {2, 3}, in block order.
  EXPECT_TRUE(absl::StrContains(m->ToString(), "{{0, 1}, {2, 3}}")) << m->ToString();
  EXPECT_EQ(TypeOf(main, ir::Opcode::kNegate), "tensor<4x6xf32>");
  EXPECT_EQ(Count(main, ir::Opcode::kAllReduce), 1) << m->ToString();
  EXPECT_EQ(TypeOf(main, ir::Opcode::kExponential), "tensor<4x12xf32>");
}

TEST(SpmdPartitionTest, AScatterAddIntoZerosRunsOnEachDevicesUpdates) {
  // segment_sum over rows split four ways: each device scatters its 2 rows into zeros (a partial
  // sum), and the whole result is one all-reduce; no gather of the updates or indices. A scatter
  // into a non-zero operand still runs whole.
  constexpr char kSegmentSum[] = R"(
module @jit_segment_sum {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%v: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>},
                         %i: tensor<8x1xi32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>},
                         %init: tensor<4xf32>)
      -> (tensor<4xf32>, tensor<4xf32>) {
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %zeros = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %s = "stablehlo.scatter"(%zeros, %i, %v) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %t = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %t : tensor<f32>
    }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<4xf32>, tensor<8x1xi32>, tensor<8xf32>) -> tensor<4xf32>
    %u = "stablehlo.scatter"(%init, %i, %v) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %t = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %t : tensor<f32>
    }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<4xf32>, tensor<8x1xi32>, tensor<8xf32>) -> tensor<4xf32>
    return %s, %u : tensor<4xf32>, tensor<4xf32>
  }
})";
  auto m = Parse(kSegmentSum);
  ASSERT_NE(m, nullptr);
  absl::Status status = RunPass(*m, 4);
  ASSERT_TRUE(status.ok()) << status;
  const ir::Computation& main = *m->entry();
  std::vector<std::string> updates;
  for (const auto& inst : main.instructions()) {
    if (inst->opcode() == ir::Opcode::kScatter) {
      updates.push_back(inst->operand(2)->type().ToString());
    }
  }
  // The zeros' scatter on 2 rows; the other on all 8 (its updates and indices gathered).
  EXPECT_EQ(updates, (std::vector<std::string>{"tensor<2xf32>", "tensor<8xf32>"}))
      << m->ToString();
  EXPECT_EQ(Count(main, ir::Opcode::kAllReduce), 1) << m->ToString();
}

TEST(SpmdPartitionTest, ShardingsOverAnotherMeshOfTheSameDevicesAreWrittenOverTheProgramsMesh) {
  // JAX's use_abstract_mesh(mesh.update(axis_sizes=(4, 1), axis_names=("a", "b"))) over a 2x2
  // mesh ("x", "y"): "a" is ("x", "y") and "b" (size 1) no axis. The constraint splits rows four
  // ways like the argument's ("x", "y") rows: nothing moves, and the result is split as "a" says.
  auto m = Parse(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  sdy.mesh @mesh_0 = <["a"=4, "b"=1]>
  func.func public @main(%p: tensor<8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {}]>})
      -> tensor<8x2xf32> {
    %s = stablehlo.sine %p : tensor<8x2xf32>
    %c = sdy.sharding_constraint %s <@mesh_0, [{"a", "b"}, {}]> : tensor<8x2xf32>
    %t = stablehlo.multiply %c, %c : tensor<8x2xf32>
    return %t : tensor<8x2xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(RunPass(*m, 4).ok());
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(Count(main, ir::Opcode::kAllGather), 0) << m->ToString();
  EXPECT_EQ(Count(main, ir::Opcode::kAllToAll), 0) << m->ToString();
  EXPECT_EQ(TypeOf(main, ir::Opcode::kMultiply), "tensor<2x2xf32>") << m->ToString();
  EXPECT_FALSE(absl::StrContains(Report(*m), "spmd-replicate")) << Report(*m);
  // Axis by axis over the same devices, whole or in part; a size-1 axis is none.
  ir::Mesh two_by_two{{"x", "y"}, {2, 2}, {}}, four_one{{"a", "b"}, {4, 1}, {}};
  ir::Mesh four{{"z"}, {4}, {}};
  auto refs = [](const std::optional<std::vector<ir::MeshAxisRef>>& r) {
    if (!r.has_value()) return std::string("none");
    std::string out;
    for (const ir::MeshAxisRef& a : *r) {
      absl::StrAppend(&out, a.name, a.whole() ? "" : absl::StrCat(":(", a.pre_size, ")", a.size),
                      " ");
    }
    return out;
  };
  EXPECT_EQ(refs(AxisOnMesh(four_one, "a", two_by_two)), "x y ");
  EXPECT_EQ(refs(AxisOnMesh(four_one, "b", two_by_two)), "");
  EXPECT_EQ(refs(AxisOnMesh(two_by_two, "x", four)), "z:(1)2 ");
  EXPECT_EQ(refs(AxisOnMesh(two_by_two, "y", four)), "z:(2)2 ");
  ir::Mesh reversed{{"a", "b"}, {4, 1}, {3, 2, 1, 0}};
  EXPECT_EQ(refs(AxisOnMesh(reversed, "a", two_by_two)), "none");
  ir::Mesh three{{"t"}, {3}, {}}, six{{"u", "v"}, {2, 3}, {}}, six_r{{"p", "q"}, {3, 2}, {}};
  EXPECT_EQ(refs(AxisOnMesh(three, "t", six)), "none");  // other devices
  EXPECT_EQ(refs(AxisOnMesh(six_r, "p", six)), "none");  // 3 straddles u=2 unevenly
}

TEST(SpmdPartitionTest, ProgramsOverSeveralMeshesGoToSpmdReplicateAndSayWhy) {
  // The second mesh orders the devices otherwise: its shardings cannot be written over the first.
  auto m = Parse(R"(
module @jit_two {
  sdy.mesh @a = <["x"=4]>
  sdy.mesh @b = <["y"=4], device_ids=[3, 2, 1, 0]>
  func.func public @main(%p: tensor<8xf32> {sdy.sharding = #sdy.sharding<@a, [{"x"}]>},
                         %q: tensor<8xf32> {sdy.sharding = #sdy.sharding<@b, [{"y"}]>})
      -> tensor<8xf32> {
    %s = stablehlo.add %p, %q : tensor<8xf32>
    return %s : tensor<8xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(RunPass(*m, 4).ok());
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(Count(main, ir::Opcode::kAllGather), 2);
  EXPECT_TRUE(absl::StrContains(Report(*m), "spmd-replicate (every device runs the whole program)"))
      << Report(*m);
}

TEST(SpmdPartitionTest, ProgramsWithoutSplitsAreLeftAlone) {
  auto m = Parse(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> tensor<4xf32> {
    %0 = stablehlo.negate %a : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  absl::StatusOr<bool> changed = CreateSpmdPartitionPass(4)->Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_FALSE(absl::StrContains(m->ToString(), "ember.sharding")) << m->ToString();
}

}  // namespace
}  // namespace ember::passes
