// Multi-output fusion in the fusion plan (compiler/passes/kernel_merge.h): sibling, producer into
// consumer and epilogue merges on hand-written programs, the merges that must not happen, and the
// outputs, costs and buffers of merged kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "compiler/frontend/import/import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/buffer_assignment.h"
#include "compiler/passes/fusion_plan.h"
#include "compiler/passes/row_groups.h"
#include "tests/compiler/parse_module.h"

namespace ember::passes {
namespace {

using ir::Opcode;

using ::ember::test_util::Parse;

bool Loop(const ir::Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide:
    case Opcode::kMaximum:
    case Opcode::kExponential:
    case Opcode::kRsqrt:
    case Opcode::kBroadcastInDim:
    case Opcode::kTranspose:
    case Opcode::kReshape:
      return true;
    default:
      return false;
  }
}
bool Reduce(const ir::Instruction& inst) { return inst.opcode() == Opcode::kReduce; }
bool Dot(const ir::Instruction& inst) { return inst.opcode() == Opcode::kDotGeneral; }

FusionPlan Plan(const ir::Module& m) { return PlanFusion(*m.entry(), Loop, Reduce, Dot); }

// The opcodes of a kernel's instructions, in order.
std::vector<Opcode> Ops(const Kernel& kernel) {
  std::vector<Opcode> ops;
  for (const ir::Instruction* inst : kernel.instructions) ops.push_back(inst->opcode());
  return ops;
}

int CountOp(const Kernel& kernel, Opcode op) {
  const std::vector<Opcode> ops = Ops(kernel);
  return static_cast<int>(std::count(ops.begin(), ops.end(), op));
}

// The instruction of the entry whose result is returned at `i`.
const ir::Value* Returned(const ir::Module& m, size_t i) {
  return m.entry()->return_instruction()->operand(i);
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

TEST(KernelMergeTest, SoftmaxExponentialJoinsTheRowSum) {
  std::unique_ptr<ir::Module> m = Parse(kSoftmax);
  ASSERT_NE(m, nullptr);
  FusionPlan unmerged = PlanFusion(*m->entry(), Loop, Reduce, Dot, {.multi_output = false});
  EXPECT_EQ(unmerged.kernels.size(), 4u) << unmerged.CostReport();
  FusionPlan plan = Plan(*m);
  // max | exp(x - max) and its row sum, exp written for the divide | divide
  ASSERT_EQ(plan.kernels.size(), 3u) << plan.CostReport();
  EXPECT_EQ(plan.kernels[0].kind, KernelKind::kReduce);
  EXPECT_EQ(plan.kernels[1].kind, KernelKind::kReduce);
  EXPECT_EQ(Ops(plan.kernels[1]),
            (std::vector<Opcode>{Opcode::kBroadcastInDim, Opcode::kSubtract, Opcode::kExponential,
                                 Opcode::kReduce}));
  ASSERT_EQ(plan.kernels[1].outputs.size(), 2u);
  EXPECT_EQ(plan.kernels[1].outputs[0]->producer()->opcode(), Opcode::kExponential);
  EXPECT_EQ(plan.kernels[1].outputs[1]->producer()->opcode(), Opcode::kReduce);
  EXPECT_EQ(plan.kernels[2].kind, KernelKind::kLoop);
  // exp is no longer read back by the sum: 64x32x4 bytes less.
  int64_t moved = 0, unmerged_moved = 0;
  for (const Kernel& k : plan.kernels) moved += k.bytes_moved;
  for (const Kernel& k : unmerged.kernels) unmerged_moved += k.bytes_moved;
  EXPECT_EQ(unmerged_moved - moved, 64 * 32 * 4);
  // Still one row group over all its kernels.
  PlanRowGroups(plan, std::vector<bool>(plan.kernels.size(), true), 16);
  ASSERT_EQ(plan.row_groups.size(), 1u);
  EXPECT_EQ(plan.row_groups[0].first, 0);
  EXPECT_EQ(plan.row_groups[0].last, 2);
}

TEST(KernelMergeTest, LayernormIsThreeKernelsWithEpilogues) {
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
  EXPECT_EQ(PlanFusion(*m->entry(), Loop, Reduce, Dot, {.multi_output = false}).kernels.size(), 6u);
  FusionPlan plan = Plan(*m);
  ASSERT_EQ(plan.kernels.size(), 3u) << plan.CostReport();
  // sum(x) and mean = sum / n: only the mean is written.
  EXPECT_EQ(Ops(plan.kernels[0]), (std::vector<Opcode>{Opcode::kReduce, Opcode::kBroadcastInDim,
                                                       Opcode::kDivide}));
  ASSERT_EQ(plan.kernels[0].outputs.size(), 1u);
  EXPECT_EQ(plan.kernels[0].outputs[0]->producer()->opcode(), Opcode::kDivide);
  // c = x - mean (written for the last kernel), sum(c * c), rsqrt(var / n + eps).
  EXPECT_EQ(plan.kernels[1].kind, KernelKind::kReduce);
  EXPECT_EQ(CountOp(plan.kernels[1], Opcode::kReduce), 1);
  EXPECT_EQ(CountOp(plan.kernels[1], Opcode::kRsqrt), 1);
  EXPECT_EQ(CountOp(plan.kernels[1], Opcode::kSubtract), 1);
  ASSERT_EQ(plan.kernels[1].outputs.size(), 2u);
  EXPECT_EQ(plan.kernels[1].outputs[0]->producer()->opcode(), Opcode::kSubtract);
  EXPECT_EQ(plan.kernels[1].outputs[1]->producer()->opcode(), Opcode::kRsqrt);
  EXPECT_EQ(plan.kernels[2].kind, KernelKind::kLoop);
  EXPECT_EQ(plan.kernels[2].root()->result(), Returned(*m, 0));
  // The statistics stay in the reduction kernels: kernel 1 reads x, the mean and the constants.
  EXPECT_EQ(plan.kernels[1].bytes_minimum,
            64 * 32 * 4 + 64 * 4 + 4 + 64 * 4 * 2 + 64 * 32 * 4 + 64 * 4);
  PlanRowGroups(plan, std::vector<bool>(plan.kernels.size(), true), 16);
  ASSERT_EQ(plan.row_groups.size(), 1u) << plan.CostReport();
  EXPECT_EQ(plan.row_groups[0].last, 2);
}

TEST(KernelMergeTest, SiblingReductionsOverTheSameRowsAreOneKernel) {
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<16x48xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<16x48xf32>, tensor<f32>) -> tensor<16xf32>
  %sq = stablehlo.multiply %x, %x : tensor<16x48xf32>
  %s2 = stablehlo.reduce(%sq init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<16x48xf32>, tensor<f32>) -> tensor<16xf32>
  return %s, %s2 : tensor<16xf32>, tensor<16xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Plan(*m);
  ASSERT_EQ(plan.kernels.size(), 1u) << plan.CostReport();
  EXPECT_EQ(plan.kernels[0].kind, KernelKind::kReduce);
  EXPECT_EQ(CountOp(plan.kernels[0], Opcode::kReduce), 2);
  ASSERT_EQ(plan.kernels[0].outputs.size(), 2u);
  EXPECT_EQ(plan.kernels[0].outputs[0], Returned(*m, 0));
  EXPECT_EQ(plan.kernels[0].outputs[1], Returned(*m, 1));
  // x is read once: input, init and two outputs.
  EXPECT_EQ(plan.kernels[0].bytes_moved, 16 * 48 * 4 + 4 + 16 * 4 * 2);
  EXPECT_EQ(plan.kernels[0].bytes_moved, plan.kernels[0].bytes_minimum);
  EXPECT_NE(plan.CostReport().find("total: 1 kernels"), std::string::npos) << plan.CostReport();
  // Both results are the program's: each gets its own output buffer.
  BufferAssignment buffers = AssignBuffers(*m->entry(), plan);
  EXPECT_EQ(buffers.slots.at(Returned(*m, 0)).kind, BufferSlot::Kind::kOutput);
  EXPECT_EQ(buffers.slots.at(Returned(*m, 1)).kind, BufferSlot::Kind::kOutput);
  EXPECT_EQ(buffers.slots.at(Returned(*m, 1)).index, 1);
}

TEST(KernelMergeTest, SiblingLoopsWithTheSameShapeAreOneKernel) {
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<8x32xf32>, %y: tensor<8x32xf32>) -> (tensor<8x32xf32>, tensor<8x32xf32>) {
  %a = stablehlo.exponential %x : tensor<8x32xf32>
  %b = stablehlo.multiply %x, %y : tensor<8x32xf32>
  return %a, %b : tensor<8x32xf32>, tensor<8x32xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Plan(*m);
  ASSERT_EQ(plan.kernels.size(), 1u) << plan.CostReport();
  EXPECT_EQ(plan.kernels[0].kind, KernelKind::kLoop);
  EXPECT_EQ(plan.kernels[0].outputs.size(), 2u);
  EXPECT_EQ(plan.kernels[0].inputs.size(), 2u);
  // Intermediate buffers of sibling outputs never share memory (both written by one kernel).
  std::unique_ptr<ir::Module> t = Parse(R"(
func.func @main(%x: tensor<8x32xf32>, %y: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %a = stablehlo.exponential %x : tensor<8x32xf32>
  %b = stablehlo.multiply %x, %y : tensor<8x32xf32>
  %za = "stablehlo.sort"(%a) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %lt = stablehlo.compare LT, %p, %q : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 1 : i64, is_stable = false} : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %zb = "stablehlo.sort"(%b) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %lt = stablehlo.compare LT, %p, %q : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 1 : i64, is_stable = false} : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = stablehlo.add %za, %zb : tensor<8x32xf32>
  return %r : tensor<8x32xf32>
})");
  ASSERT_NE(t, nullptr);
  FusionPlan tp = Plan(*t);
  ASSERT_FALSE(tp.kernels.empty());
  EXPECT_EQ(tp.kernels[0].outputs.size(), 2u) << tp.CostReport();
  BufferAssignment buffers = AssignBuffers(*t->entry(), tp);
  const BufferSlot& sa = buffers.slots.at(tp.kernels[0].outputs[0]);
  const BufferSlot& sb = buffers.slots.at(tp.kernels[0].outputs[1]);
  EXPECT_EQ(sa.kind, BufferSlot::Kind::kArena);
  EXPECT_TRUE(sa.offset + sa.size <= sb.offset || sb.offset + sb.size <= sa.offset)
      << buffers.ToString(*t->entry());
}

TEST(KernelMergeTest, EpilogueChainJoinsTheReduction) {
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<32x64xf32>) -> tensor<32xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %inv = stablehlo.constant dense<0.015625> : tensor<32xf32>
  %eps = stablehlo.constant dense<1.0e-5> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<32x64xf32>, tensor<f32>) -> tensor<32xf32>
  %mean = stablehlo.multiply %s, %inv : tensor<32xf32>
  %eb = stablehlo.broadcast_in_dim %eps, dims = [] : (tensor<f32>) -> tensor<32xf32>
  %ve = stablehlo.add %mean, %eb : tensor<32xf32>
  %r = stablehlo.rsqrt %ve : tensor<32xf32>
  return %r : tensor<32xf32>
})");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(PlanFusion(*m->entry(), Loop, Reduce, Dot, {.multi_output = false}).kernels.size(), 2u);
  FusionPlan plan = Plan(*m);
  ASSERT_EQ(plan.kernels.size(), 1u) << plan.CostReport();
  EXPECT_EQ(plan.kernels[0].kind, KernelKind::kReduce);
  // The reduce result stays inside: the rsqrt is the only output.
  ASSERT_EQ(plan.kernels[0].outputs.size(), 1u);
  EXPECT_EQ(plan.kernels[0].outputs[0], Returned(*m, 0));
  BufferAssignment buffers = AssignBuffers(*m->entry(), plan);
  EXPECT_EQ(buffers.arena_bytes, 0);
}

TEST(KernelMergeTest, SiblingsWithDifferentSpacesStayApart) {
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<16x48xf32>) -> (tensor<16xf32>, tensor<48xf32>, tensor<48x16xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %rows = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<16x48xf32>, tensor<f32>) -> tensor<16xf32>
  %cols = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<16x48xf32>, tensor<f32>) -> tensor<48xf32>
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<16x48xf32>) -> tensor<48x16xf32>
  %e = stablehlo.exponential %t : tensor<48x16xf32>
  return %rows, %cols, %e : tensor<16xf32>, tensor<48xf32>, tensor<48x16xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Plan(*m);
  EXPECT_EQ(plan.kernels.size(), 3u) << plan.CostReport();
}

TEST(KernelMergeTest, DependentReductionsStayApart) {
  // The second sum reads the first one's result: two passes over x.
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<16x48xf32>) -> tensor<16xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<16x48xf32>, tensor<f32>) -> tensor<16xf32>
  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<16xf32>) -> tensor<16x48xf32>
  %c = stablehlo.subtract %x, %sb : tensor<16x48xf32>
  %s2 = stablehlo.reduce(%c init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<16x48xf32>, tensor<f32>) -> tensor<16xf32>
  return %s2 : tensor<16xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Plan(*m);
  ASSERT_EQ(plan.kernels.size(), 2u) << plan.CostReport();
  EXPECT_EQ(CountOp(plan.kernels[0], Opcode::kReduce), 1);
  EXPECT_EQ(CountOp(plan.kernels[1], Opcode::kReduce), 1);
}

TEST(KernelMergeTest, SiblingsWithAPathBetweenThemStayApart) {
  // a and b both read x over the same space, but b reads a through a dot kernel.
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %a = stablehlo.exponential %x : tensor<16x16xf32>
  %d = stablehlo.dot_general %a, %w, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %b = stablehlo.add %x, %d : tensor<16x16xf32>
  return %a, %b : tensor<16x16xf32>, tensor<16x16xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Plan(*m);
  ASSERT_EQ(plan.kernels.size(), 3u) << plan.CostReport();
  EXPECT_EQ(plan.kernels[1].kind, KernelKind::kDot);
}

TEST(KernelMergeTest, EpilogueReadingAcrossOutputsStaysApart) {
  // The transpose reads the sums at other indices than its own: an epilogue run on a range of
  // outputs could not compute it.
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<8x8x4xf32>) -> tensor<8x8xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<8x8x4xf32>, tensor<f32>) -> tensor<8x8xf32>
  %t = stablehlo.transpose %s, dims = [1, 0] : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %e = stablehlo.exponential %t : tensor<8x8xf32>
  return %e : tensor<8x8xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Plan(*m);
  ASSERT_EQ(plan.kernels.size(), 2u) << plan.CostReport();
  EXPECT_EQ(plan.kernels[1].kind, KernelKind::kLoop);
}

TEST(KernelMergeTest, ReducesOverTheSameInputWithDifferentOutputsOrOpsMerge) {
  // A max and a sum over the same rows (different ops and inits) are still siblings; every
  // instruction maps to the merged kernel.
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<16x48xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<16x48xf32>, tensor<f32>) -> tensor<16xf32>
  %e = stablehlo.exponential %x : tensor<16x48xf32>
  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<16x48xf32>, tensor<f32>) -> tensor<16xf32>
  return %m, %s : tensor<16xf32>, tensor<16xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Plan(*m);
  ASSERT_EQ(plan.kernels.size(), 1u) << plan.CostReport();
  for (const auto& inst : m->entry()->instructions()) {
    if (inst->opcode() == Opcode::kConstant || inst->opcode() == Opcode::kReturn) continue;
    EXPECT_EQ(plan.kernel_of.at(inst.get()), 0) << inst->Describe();
  }
  EXPECT_EQ(plan.kernels[0].inputs.size(), 3u);  // x and the two inits
}


TEST(KernelMergeTest, WindowedOpsFuseProducersAndEpiloguesButNotEachOther) {
  // A reduce_window takes its elementwise producer and its epilogue, but not the reduce_window
  // below it (whose windows it would fold again for each of its own), and its result, of the
  // operand's shape, is not read at the same index: the sibling over x stays its own kernel.
  auto loop_or_window = [](const ir::Instruction& inst) {
    return Loop(inst) || inst.opcode() == Opcode::kReduceWindow;
  };
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sq = stablehlo.multiply %x, %x : tensor<8x8xf32>
  %a = "stablehlo.reduce_window"(%sq, %zero) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %s = stablehlo.add %p, %q : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 3, 3>, padding = dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>} : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %b = "stablehlo.reduce_window"(%a, %zero) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %s = stablehlo.add %p, %q : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 3, 3>, padding = dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>} : (tensor<8x8xf32>, tensor<f32>) -> tensor<8x8xf32>
  %nine = stablehlo.constant dense<9.0> : tensor<f32>
  %b9 = stablehlo.broadcast_in_dim %nine, dims = [] : (tensor<f32>) -> tensor<8x8xf32>
  %avg = stablehlo.divide %b, %b9 : tensor<8x8xf32>
  %y = stablehlo.add %x, %x : tensor<8x8xf32>
  return %avg, %y : tensor<8x8xf32>, tensor<8x8xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = PlanFusion(*m->entry(), loop_or_window, Reduce, Dot);
  ASSERT_EQ(plan.kernels.size(), 3u) << plan.CostReport();
  EXPECT_EQ(Ops(plan.kernels[0]), (std::vector<Opcode>{Opcode::kMultiply, Opcode::kReduceWindow}));
  EXPECT_EQ(CountOp(plan.kernels[1], Opcode::kReduceWindow), 1) << plan.CostReport();
  EXPECT_EQ(CountOp(plan.kernels[1], Opcode::kDivide), 1) << plan.CostReport();
  EXPECT_EQ(Ops(plan.kernels[2]), (std::vector<Opcode>{Opcode::kAdd}));
}

}  // namespace
}  // namespace ember::passes
