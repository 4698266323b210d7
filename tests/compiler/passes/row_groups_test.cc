// Row groups (compiler/passes/row_groups.h) on hand-written plans, and the buffer assignment of
// grouped kernels.
#include "compiler/passes/row_groups.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/frontend/import/import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/buffer_assignment.h"
#include "compiler/passes/fusion_plan.h"
#include "tests/compiler/parse_module.h"

namespace ember::passes {
namespace {

using ::ember::test_util::Parse;

bool Loop(const ir::Instruction& inst) {
  switch (inst.opcode()) {
    case ir::Opcode::kAdd:
    case ir::Opcode::kSubtract:
    case ir::Opcode::kMultiply:
    case ir::Opcode::kDivide:
    case ir::Opcode::kMaximum:
    case ir::Opcode::kExponential:
    case ir::Opcode::kRsqrt:
    case ir::Opcode::kBroadcastInDim:
    case ir::Opcode::kTranspose:
    case ir::Opcode::kReshape:
      return true;
    default:
      return false;
  }
}
bool Reduce(const ir::Instruction& inst) { return inst.opcode() == ir::Opcode::kReduce; }
bool Dot(const ir::Instruction& inst) { return inst.opcode() == ir::Opcode::kDotGeneral; }

// Without multi-output merges: these tests are about grouping single-output kernels
// (kernel_merge_test.cc has row groups over merged kernels).
FusionPlan Plan(const ir::Module& m, std::vector<bool> by_rows = {}) {
  FusionPlan plan = PlanFusion(*m.entry(), Loop, Reduce, Dot, {.multi_output = false});
  if (by_rows.empty()) by_rows.assign(plan.kernels.size(), true);
  PlanRowGroups(plan, by_rows, /*min_rows=*/16);
  return plan;
}

constexpr char kSoftmax[] = R"(
func.func @main(%x: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<64x32xf32>, tensor<f32>) -> tensor<64xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<64xf32>) -> tensor<64x32xf32>
  %d = stablehlo.subtract %x, %mb : tensor<64x32xf32>
  %e = stablehlo.exponential %d : tensor<64x32xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x32xf32>, tensor<f32>) -> tensor<64xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<64xf32>) -> tensor<64x32xf32>
  %r = stablehlo.divide %e, %sb : tensor<64x32xf32>
  return %r : tensor<64x32xf32>
})";

TEST(RowGroupsTest, SoftmaxIsOneGroup) {
  std::unique_ptr<ir::Module> m = Parse(kSoftmax);
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Plan(*m);
  ASSERT_EQ(plan.kernels.size(), 4u) << plan.CostReport();
  ASSERT_EQ(plan.row_groups.size(), 1u) << plan.CostReport();
  EXPECT_EQ(plan.row_groups[0].first, 0);
  EXPECT_EQ(plan.row_groups[0].last, 3);
  EXPECT_EQ(plan.row_groups[0].rows, 64);
  EXPECT_GT(plan.row_groups[0].row_bytes, 0);
  EXPECT_NE(plan.CostReport().find("row group: kernels 0-3 over 64 rows"), std::string::npos)
      << plan.CostReport();
}

TEST(RowGroupsTest, LayernormWithRowShapedEpiloguesIsOneGroup) {
  // The statistics pass through [64x1] shapes and per-column scale/offset broadcasts (parameters,
  // read at any row) join too.
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<64x32xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>) -> tensor<64x32xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %n = stablehlo.constant dense<32.0> : tensor<64x1xf32>
  %eps = stablehlo.constant dense<1.0e-5> : tensor<64x1xf32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x32xf32>, tensor<f32>) -> tensor<64xf32>
  %s1 = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<64xf32>) -> tensor<64x1xf32>
  %mean = stablehlo.divide %s1, %n : tensor<64x1xf32>
  %mb = stablehlo.broadcast_in_dim %mean, dims = [0, 1] : (tensor<64x1xf32>) -> tensor<64x32xf32>
  %c = stablehlo.subtract %x, %mb : tensor<64x32xf32>
  %sq = stablehlo.multiply %c, %c : tensor<64x32xf32>
  %v = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x32xf32>, tensor<f32>) -> tensor<64xf32>
  %v1 = stablehlo.broadcast_in_dim %v, dims = [0] : (tensor<64xf32>) -> tensor<64x1xf32>
  %var = stablehlo.divide %v1, %n : tensor<64x1xf32>
  %ve = stablehlo.add %var, %eps : tensor<64x1xf32>
  %r = stablehlo.rsqrt %ve : tensor<64x1xf32>
  %rb = stablehlo.broadcast_in_dim %r, dims = [0, 1] : (tensor<64x1xf32>) -> tensor<64x32xf32>
  %y = stablehlo.multiply %c, %rb : tensor<64x32xf32>
  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : (tensor<32xf32>) -> tensor<64x32xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<32xf32>) -> tensor<64x32xf32>
  %yg = stablehlo.multiply %y, %gb : tensor<64x32xf32>
  %out = stablehlo.add %yg, %bb : tensor<64x32xf32>
  return %out : tensor<64x32xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Plan(*m);
  ASSERT_EQ(plan.row_groups.size(), 1u) << plan.CostReport();
  EXPECT_EQ(plan.row_groups[0].first, 0);
  EXPECT_EQ(plan.row_groups[0].last, static_cast<int>(plan.kernels.size()) - 1)
      << plan.CostReport();
}

TEST(RowGroupsTest, ColumnReductionStartsNoGroup) {
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<32x64xf32>, tensor<f32>) -> tensor<64xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<64xf32>) -> tensor<32x64xf32>
  %r = stablehlo.divide %x, %sb : tensor<32x64xf32>
  return %r : tensor<32x64xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Plan(*m);
  EXPECT_EQ(plan.kernels.size(), 2u) << plan.CostReport();
  EXPECT_TRUE(plan.row_groups.empty()) << plan.CostReport();
}

TEST(RowGroupsTest, AReadAcrossRowsEndsTheGroup) {
  // Row sums broadcast along the columns ([64] -> [64x64] with dims = [1]) are read by row r at
  // every other row's index: that kernel must not join; the one before it does.
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>
  %rows = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<64xf32>) -> tensor<64x64xf32>
  %a = stablehlo.divide %x, %rows : tensor<64x64xf32>
  %cols = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<64xf32>) -> tensor<64x64xf32>
  %b = stablehlo.multiply %a, %cols : tensor<64x64xf32>
  return %a, %b : tensor<64x64xf32>, tensor<64x64xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Plan(*m);
  ASSERT_EQ(plan.kernels.size(), 3u) << plan.CostReport();
  ASSERT_EQ(plan.row_groups.size(), 1u) << plan.CostReport();
  EXPECT_EQ(plan.row_groups[0].first, 0);
  EXPECT_EQ(plan.row_groups[0].last, 1);
}

TEST(RowGroupsTest, TransposedReadEndsTheGroup) {
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<64x64xf32>, tensor<f32>) -> tensor<64xf32>
  %rows = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<64xf32>) -> tensor<64x64xf32>
  %a = stablehlo.divide %x, %rows : tensor<64x64xf32>
  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %e = stablehlo.exponential %t : tensor<64x64xf32>
  return %a, %e : tensor<64x64xf32>, tensor<64x64xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Plan(*m);
  ASSERT_EQ(plan.kernels.size(), 3u) << plan.CostReport();
  ASSERT_EQ(plan.row_groups.size(), 1u) << plan.CostReport();
  EXPECT_EQ(plan.row_groups[0].last, 1);
}

TEST(RowGroupsTest, FewRowsOrKernelsTheBackendCannotSplitFormNoGroup) {
  std::unique_ptr<ir::Module> few = Parse(R"(
func.func @main(%x: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<8x32xf32>, tensor<f32>) -> tensor<8xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<8xf32>) -> tensor<8x32xf32>
  %r = stablehlo.divide %x, %sb : tensor<8x32xf32>
  return %r : tensor<8x32xf32>
})");
  ASSERT_NE(few, nullptr);
  EXPECT_TRUE(Plan(*few).row_groups.empty());
  std::unique_ptr<ir::Module> m = Parse(kSoftmax);
  ASSERT_NE(m, nullptr);
  // Kernel 2 (the row sum) cannot run by rows: the group stops before it, and no group starts at
  // a loop kernel.
  FusionPlan plan = Plan(*m, {true, true, false, true});
  ASSERT_EQ(plan.row_groups.size(), 1u) << plan.CostReport();
  EXPECT_EQ(plan.row_groups[0].first, 0);
  EXPECT_EQ(plan.row_groups[0].last, 1);
}

// Arena ranges of two slots overlap.
bool Overlap(const BufferSlot& a, const BufferSlot& b) {
  return a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}

TEST(RowGroupsTest, ValuesAGroupUsesUpLiveInTileScratch) {
  std::unique_ptr<ir::Module> m = Parse(kSoftmax);
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Plan(*m);
  ASSERT_EQ(plan.row_groups.size(), 1u);
  auto arena_values = [](const BufferAssignment& a) {
    std::vector<BufferSlot> out;
    for (const auto& [v, slot] : a.slots) {
      if (slot.kind == BufferSlot::Kind::kArena) out.push_back(slot);
    }
    return out;
  };
  auto any_overlap = [&](const BufferAssignment& a) {
    std::vector<BufferSlot> slots = arena_values(a);
    for (size_t i = 0; i < slots.size(); ++i) {
      for (size_t j = i + 1; j < slots.size(); ++j) {
        if (Overlap(slots[i], slots[j])) return true;
      }
    }
    return false;
  };
  // Kernel by kernel, the row sum reuses the row max's memory (dead after the exponential).
  FusionPlan ungrouped = plan;
  ungrouped.row_groups.clear();
  BufferAssignment plain = AssignBuffers(*m->entry(), ungrouped);
  EXPECT_TRUE(any_overlap(plain)) << plain.ToString(*m->entry());
  // Tile by tile, the values the group makes and uses up (row max, exponentials, row sum) live
  // in each tile's scratch: no arena memory at all.
  BufferAssignment grouped = AssignBuffers(*m->entry(), plan);
  EXPECT_TRUE(arena_values(grouped).empty()) << grouped.ToString(*m->entry());
  EXPECT_EQ(grouped.arena_bytes, 0);
  int tiles = 0;
  for (const auto& [v, slot] : grouped.slots) {
    if (slot.kind != BufferSlot::Kind::kTile) continue;
    ++tiles;
    EXPECT_EQ(slot.index, 0);
  }
  EXPECT_EQ(tiles, 3) << grouped.ToString(*m->entry());
  EXPECT_NE(grouped.ToString(*m->entry()).find(" tile size="), std::string::npos);
}

TEST(RowGroupsTest, GroupValuesReadAfterTheGroupKeepTheirOwnArenaMemory) {
  // The exponentials are also read by a product after the group: they stay in the arena, live
  // over the whole group, and overlap nothing; the row max and sum stay tile scratch.
  std::string program = kSoftmax;
  const std::string signature = "-> tensor<64x32xf32> {";
  program.replace(program.find(signature), signature.size(),
                  "-> (tensor<64x32xf32>, tensor<64x64xf32>) {");
  const std::string ret = "  return %r : tensor<64x32xf32>";
  program.replace(program.find(ret), ret.size(),
                  "  %p = stablehlo.dot_general %e, %x, contracting_dims = [1] x [1] : "
                  "(tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x64xf32>\n"
                  "  return %r, %p : tensor<64x32xf32>, tensor<64x64xf32>");
  std::unique_ptr<ir::Module> m = Parse(program);
  ASSERT_NE(m, nullptr);
  FusionPlan plan = PlanFusion(*m->entry(), Loop, Reduce, Dot, {.multi_output = false});
  std::vector<bool> by_rows;
  for (const Kernel& k : plan.kernels) by_rows.push_back(k.kind != KernelKind::kDot);
  PlanRowGroups(plan, by_rows, /*min_rows=*/16);
  ASSERT_EQ(plan.row_groups.size(), 1u) << plan.CostReport();
  const BufferAssignment buffers = AssignBuffers(*m->entry(), plan);
  int arena = 0, tiles = 0;
  for (const auto& [v, slot] : buffers.slots) {
    if (slot.kind == BufferSlot::Kind::kTile) ++tiles;
    if (slot.kind != BufferSlot::Kind::kArena) continue;
    ++arena;
    EXPECT_EQ(v->producer()->opcode(), ir::Opcode::kExponential) << buffers.ToString(*m->entry());
    EXPECT_EQ(slot.defined_at, plan.row_groups[0].first);
    EXPECT_GE(slot.last_use, plan.row_groups[0].last + 1);
  }
  EXPECT_EQ(arena, 1) << buffers.ToString(*m->entry());
  EXPECT_EQ(tiles, 2) << buffers.ToString(*m->entry());
}

}  // namespace
}  // namespace ember::passes
