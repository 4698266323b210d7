// spmd-replicate on hand-written SPMD programs: the per-device signature, the collectives and
// cuts it adds, the shardings it leaves alone, and the clear errors for what it cannot do yet.
// (Results on real devices: tests/runtime/executable_test.cc.)
#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/pass.h"
#include "gtest/gtest.h"
#include "tests/compiler/parse_module.h"

namespace ember::passes {
namespace {

using test_util::Parse;

int Count(const ir::Computation& c, ir::Opcode op) { return test_util::CountOps(c, op); }

absl::Status RunPass(ir::Module& module, int64_t devices) {
  absl::StatusOr<bool> changed = CreateSpmdReplicatePass(devices)->Run(module);
  if (!changed.ok()) return changed.status();
  return ir::Verify(module);
}

TEST(SpmdReplicateTest, SplitArgumentsAreGatheredAndSplitResultsCut) {
  auto m = Parse(R"(
module @jit_f {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%a: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>},
                         %b: tensor<6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>})
      -> (tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x", "y"}]>}) {
    %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x6xf32>, tensor<6x4xf32>) -> tensor<4x4xf32>
    return %0 : tensor<4x4xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(RunPass(*m, 4).ok());
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(main.parameter(0)->type().ToString(), "tensor<2x3xf32>");
  EXPECT_EQ(main.parameter(1)->type().ToString(), "tensor<6x4xf32>");  // replicated: unchanged
  ASSERT_EQ(main.result_types().size(), 1u);
  EXPECT_EQ(main.result_types()[0].ToString(), "tensor<4x1xf32>");
  // One all_gather per split dimension of %a, then the dot on the global values, then a cut.
  EXPECT_EQ(Count(main, ir::Opcode::kAllGather), 2);
  EXPECT_EQ(Count(main, ir::Opcode::kDotGeneral), 1);
  EXPECT_EQ(Count(main, ir::Opcode::kPartitionId), 1);
  EXPECT_EQ(Count(main, ir::Opcode::kDynamicSlice), 2);  // the offset lookup and the cut
  const std::string text = m->ToString();
  // Rows are gathered over the devices that differ only in x, columns over y.
  EXPECT_NE(text.find("all_gather_dim = 0, replica_groups = s64[2,2]{1,0} {{0, 2}, {1, 3}}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("all_gather_dim = 1, replica_groups = s64[2,2]{1,0} {{0, 1}, {2, 3}}"),
            std::string::npos)
      << text;
  // The result's column block of device p is p (x major, then y): offsets 0, 1, 2, 3.
  EXPECT_NE(text.find("s64[4]{0} {0, 1, 2, 3}"), std::string::npos) << text;
}

TEST(SpmdReplicateTest, GspmdShardingsAndDeviceOrder) {
  auto m = Parse(R"(
func.func public @main(%a: tensor<8xf32> {mhlo.sharding = "{devices=[4]3,2,1,0}"}) -> (tensor<8xf32> {mhlo.sharding = "{devices=[2,2]<=[4] last_tile_dim_replicate}"}) {
  %0 = stablehlo.negate %a : tensor<8xf32>
  return %0 : tensor<8xf32>
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(RunPass(*m, 4).ok());
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(main.parameter(0)->type().ToString(), "tensor<2xf32>");
  EXPECT_EQ(main.result_types()[0].ToString(), "tensor<4xf32>");
  const std::string text = m->ToString();
  // Gathered in tile order: device 3 holds block 0.
  EXPECT_NE(text.find("replica_groups = s64[1,4]{1,0} {{3, 2, 1, 0}}"), std::string::npos) << text;
  // Devices 0, 1 hold the first half of the result, 2, 3 the second.
  EXPECT_NE(text.find("s64[4]{0} {0, 0, 4, 4}"), std::string::npos) << text;
}

TEST(SpmdReplicateTest, ManualComputationsCallTheirBodyOnSlices) {
  auto m = Parse(R"(
module @jit_body {
  sdy.mesh @mesh = <["i"=4]>
  func.func public @main(%arg0: tensor<8x2xf32>) -> (tensor<8x2xf32>) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"i"}, {}]>] out_shardings=[<@mesh, [{"i"}, {}]>] manual_axes={"i"} (%arg1: tensor<2x2xf32>) {
      %1 = stablehlo.negate %arg1 : tensor<2x2xf32>
      sdy.return %1 : tensor<2x2xf32>
    } : (tensor<8x2xf32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(RunPass(*m, 4).ok());
  const ir::Computation& main = *m->entry();
  EXPECT_EQ(main.parameter(0)->type().ToString(), "tensor<8x2xf32>");  // unannotated: whole
  EXPECT_EQ(Count(main, ir::Opcode::kCustomCall), 0);
  EXPECT_EQ(Count(main, ir::Opcode::kCall), 1);
  EXPECT_EQ(Count(main, ir::Opcode::kAllGather), 1);
  EXPECT_EQ(main.result_types()[0].ToString(), "tensor<8x2xf32>");
}

TEST(SpmdReplicateTest, ReplicatedProgramsAreLeftAlone) {
  auto m = Parse(R"(
module @jit_f {
  sdy.mesh @one = <["x"=1]>
  func.func public @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@one, [{"x"}]>}) -> tensor<4xf32> {
    %0 = stablehlo.negate %a : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
})");
  ASSERT_NE(m, nullptr);
  const std::string before = m->ToString();
  absl::StatusOr<bool> changed = CreateSpmdReplicatePass(4)->Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(m->ToString(), before);
}

std::string ErrorOf(const std::string& text, int64_t devices = 4) {
  auto m = Parse(text);
  if (m == nullptr) return "parse failed";
  absl::Status s = RunPass(*m, devices);
  return s.ok() ? "OK" : std::string(s.message());
}

TEST(SpmdReplicateTest, WhatItCannotDoYetIsAClearError) {
  const std::string mesh = R"(
module @m {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%a: tensor<4x6xf32> {sdy.sharding = )";
  const std::string body = R"(}) -> tensor<4x6xf32> {
    return %a : tensor<4x6xf32>
  }
})";
  EXPECT_EQ(ErrorOf(mesh + R"(#sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>)" + body),
            "argument 0 (tensor<4x6xf32>): the sharding #sdy.sharding<@mesh, [{\"x\"}, {}], "
            "unreduced={\"y\"}> has unreduced axes, which are not supported yet");
  EXPECT_EQ(ErrorOf(mesh + R"(#sdy.sharding<@mesh, [{}, {"x", "y"}]>)" + body),
            "argument 0 (tensor<4x6xf32>): dimension 1 of size 6 does not split evenly into 4 "
            "shards (uneven shardings are not supported yet)");
  EXPECT_EQ(ErrorOf(mesh + R"(#sdy.sharding<@mesh, [{"x"}, {}]>)" + body, 8),
            "argument 0 (tensor<4x6xf32>): it is sharded over a mesh of 4 devices; the program "
            "runs on 8");
  EXPECT_EQ(ErrorOf(R"(
func.func public @main(%a: tensor<4xf32> {mhlo.sharding = "{maximal device=1}"}) -> tensor<4xf32> {
  return %a : tensor<4xf32>
})"),
            "argument 0 (tensor<4xf32>): the sharding {maximal device=1} is not supported yet");
  // A manual computation that leaves a mesh axis free.
  EXPECT_NE(ErrorOf(R"(
module @m {
  sdy.mesh @mesh = <["i"=2, "j"=2]>
  func.func public @main(%arg0: tensor<8x2xf32>) -> (tensor<8x2xf32>) {
    %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"i"}, {}]>] out_shardings=[<@mesh, [{"i"}, {}]>] manual_axes={"i"} (%arg1: tensor<4x2xf32>) {
      sdy.return %arg1 : tensor<4x2xf32>
    } : (tensor<8x2xf32>) -> tensor<8x2xf32>
    return %0 : tensor<8x2xf32>
  }
})").find("mesh axis \"j\" is not manual; partially manual computations are not supported yet"),
            std::string::npos);
}

}  // namespace
}  // namespace ember::passes
