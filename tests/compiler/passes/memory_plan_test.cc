// Kernel scheduling for a low arena peak (schedule.h) and input/output aliasing of donated
// parameters in buffer assignment (io_alias.h), on hand-written programs whose peaks and
// aliasing decisions can be worked out by hand.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "compiler/frontend/import/import.h"
#include "compiler/frontend/text/mlir_text_parser.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/arena_packing.h"
#include "compiler/passes/buffer_assignment.h"
#include "compiler/passes/fusion_plan.h"
#include "compiler/passes/io_alias.h"
#include "compiler/passes/row_groups.h"
#include "compiler/passes/schedule.h"
#include "tests/compiler/parse_module.h"

namespace ember::passes {
namespace {

using ::ember::test_util::Parse;

bool Never(const ir::Instruction&) { return false; }
bool Elementwise(const ir::Instruction& inst) {
  switch (inst.opcode()) {
    case ir::Opcode::kAdd:
    case ir::Opcode::kSubtract:
    case ir::Opcode::kMultiply:
    case ir::Opcode::kExponential:
    case ir::Opcode::kNegate:
    case ir::Opcode::kBroadcastInDim:
    case ir::Opcode::kTranspose:
      return true;
    default:
      return false;
  }
}
bool IsReduce(const ir::Instruction& inst) { return inst.opcode() == ir::Opcode::kReduce; }
bool IsDot(const ir::Instruction& inst) { return inst.opcode() == ir::Opcode::kDotGeneral; }

// Every instruction its own kernel: the order of the program is the order of the kernels.
FusionPlan Unfused(const ir::Module& m) { return PlanFusion(*m.entry(), Never, Never, Never); }
FusionPlan Fused(const ir::Module& m) {
  return PlanFusion(*m.entry(), Elementwise, IsReduce, IsDot);
}

std::vector<ir::Opcode> Roots(const FusionPlan& plan) {
  std::vector<ir::Opcode> out;
  for (const Kernel& k : plan.kernels) out.push_back(k.root()->opcode());
  return out;
}

// Two chains of 4 KiB temporaries that end in small results, interleaved by the program.
constexpr char kTwoChains[] = R"(
func.func @main(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> (tensor<f32>, tensor<f32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %a1 = stablehlo.exponential %x : tensor<1024xf32>
  %b1 = stablehlo.exponential %y : tensor<1024xf32>
  %a2 = stablehlo.negate %a1 : tensor<1024xf32>
  %b2 = stablehlo.negate %b1 : tensor<1024xf32>
  %a3 = stablehlo.reduce(%a2 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<1024xf32>, tensor<f32>) -> tensor<f32>
  %b3 = stablehlo.reduce(%b2 init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<1024xf32>, tensor<f32>) -> tensor<f32>
  return %a3, %b3 : tensor<f32>, tensor<f32>
})";

TEST(ScheduleTest, FinishingOneChainBeforeTheOtherLowersThePeak) {
  std::unique_ptr<ir::Module> m = Parse(kTwoChains);
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Unfused(*m);
  ASSERT_EQ(plan.kernels.size(), 6u);
  // Program order: a1, b1 and a2 are live together (3 x 4 KiB).
  EXPECT_EQ(AssignBuffers(*m->entry(), plan).arena_bytes, 3 * 4096);

  const std::vector<int> list = ListSchedule(*m->entry(), plan);
  EXPECT_TRUE(IsValidSchedule(plan, list));
  EXPECT_EQ(list, (std::vector<int>{0, 2, 4, 1, 3, 5}));  // a1 a2 a3 b1 b2 b3
  const std::vector<int> dfs = DfsSchedule(*m->entry(), plan);
  EXPECT_TRUE(IsValidSchedule(plan, dfs));

  const ScheduleReport report = ScheduleForMemory(*m->entry(), plan);
  EXPECT_EQ(report.program_order_peak, 3 * 4096);
  EXPECT_EQ(report.peak, 2 * 4096);
  EXPECT_NE(report.chosen, "program");
  EXPECT_TRUE(absl::StrContains(report.ToString(), "arena peak 8192")) << report.ToString();
  // The plan itself is reordered, kernel_of follows, and buffer assignment sees the new order.
  EXPECT_EQ(AssignBuffers(*m->entry(), plan).arena_bytes, 2 * 4096);
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    for (const ir::Instruction* inst : plan.kernels[k].instructions) {
      EXPECT_EQ(plan.kernel_of.at(inst), static_cast<int>(k));
    }
  }
  const std::vector<int> identity = {0, 1, 2, 3, 4, 5};
  EXPECT_TRUE(IsValidSchedule(plan, identity));
}

TEST(ScheduleTest, ProgramOrderStaysWhenNothingIsGained) {
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<256xf32>) -> tensor<256xf32> {
  %0 = stablehlo.exponential %x : tensor<256xf32>
  %1 = stablehlo.negate %0 : tensor<256xf32>
  %2 = stablehlo.exponential %1 : tensor<256xf32>
  return %2 : tensor<256xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Unfused(*m);
  const std::vector<ir::Opcode> before = Roots(plan);
  const ScheduleReport report = ScheduleForMemory(*m->entry(), plan);
  EXPECT_EQ(report.chosen, "program");
  EXPECT_EQ(report.peak, report.program_order_peak);
  EXPECT_EQ(Roots(plan), before);
}

TEST(ScheduleTest, InvalidOrdersAreRecognized) {
  std::unique_ptr<ir::Module> m = Parse(kTwoChains);
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Unfused(*m);
  EXPECT_FALSE(IsValidSchedule(plan, std::vector<int>{2, 0, 4, 1, 3, 5}));  // a2 before a1
  EXPECT_FALSE(IsValidSchedule(plan, std::vector<int>{0, 0, 2, 3, 4, 5}));  // a repeat
  EXPECT_FALSE(IsValidSchedule(plan, std::vector<int>{0, 1, 2}));           // too short
  EXPECT_FALSE(IsValidSchedule(plan, std::vector<int>{0, 1, 2, 3, 4, 9}));  // out of range
}

TEST(ScheduleTest, SideEffectsKeepTheirProgramOrder) {
  // Two chains, each ending in a side-effecting custom call; the second chain's call comes first
  // in the program. Scheduling may move the pure kernels but never swaps the calls.
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %a1 = stablehlo.exponential %x : tensor<1024xf32>
  %b1 = stablehlo.exponential %y : tensor<1024xf32>
  %b2 = stablehlo.negate %b1 : tensor<1024xf32>
  %b3 = stablehlo.custom_call @second(%b2) {has_side_effect = true} : (tensor<1024xf32>) -> tensor<1024xf32>
  %a2 = stablehlo.negate %a1 : tensor<1024xf32>
  %a3 = stablehlo.custom_call @first(%a2) {has_side_effect = true} : (tensor<1024xf32>) -> tensor<1024xf32>
  return %a3, %b3 : tensor<1024xf32>, tensor<1024xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Unfused(*m);
  ASSERT_EQ(plan.kernels.size(), 6u);
  const std::vector<std::vector<int>> deps = KernelDependencies(plan);
  EXPECT_EQ(deps[5], (std::vector<int>{3, 4}));  // @first waits for @second
  ScheduleForMemory(*m->entry(), plan);
  std::vector<std::string> calls;
  for (const Kernel& k : plan.kernels) {
    if (k.root()->opcode() != ir::Opcode::kCustomCall) continue;
    calls.push_back(k.root()->attribute("call_target_name")->s);
  }
  EXPECT_EQ(calls, (std::vector<std::string>{"second", "first"}));
}

// ---------------------------------------------------------------- packing

TEST(ArenaPackingTest, PlacingBySizeFillsTheHoleFirstFitLeaves) {
  // p (4 KiB) dies at kernel 1, where s (1 KiB, read at the end) is allocated above it; first
  // fit then finds no hole for q (5 KiB) and grows the arena to 10 KiB. Placed by size, q goes
  // first and p shares its bytes (they are never live together): 6 KiB, the most ever live.
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<1024xf32>, %z: tensor<1280xf32>) -> (tensor<f32>, tensor<256xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %p = stablehlo.exponential %x : tensor<1024xf32>
  %s = "stablehlo.slice"(%p) {start_indices = array<i64: 0>, limit_indices = array<i64: 256>, strides = array<i64: 1>} : (tensor<1024xf32>) -> tensor<256xf32>
  %q = stablehlo.exponential %z : tensor<1280xf32>
  %r = stablehlo.reduce(%q init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<1280xf32>, tensor<f32>) -> tensor<f32>
  %u = stablehlo.negate %s : tensor<256xf32>
  return %r, %u : tensor<f32>, tensor<256xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Unfused(*m);
  ASSERT_EQ(plan.kernels.size(), 5u);
  const BufferAssignment buffers = AssignBuffers(*m->entry(), plan);
  EXPECT_EQ(buffers.arena_bytes, 6144);
  // No two temporaries live at one kernel share bytes.
  std::vector<const BufferSlot*> arena;
  for (const auto& [v, slot] : buffers.slots) {
    if (slot.kind == BufferSlot::Kind::kArena) arena.push_back(&slot);
  }
  ASSERT_EQ(arena.size(), 3u);
  for (const BufferSlot* a : arena) {
    EXPECT_LE(a->offset + a->size, buffers.arena_bytes);
    for (const BufferSlot* b : arena) {
      if (a == b || a->last_use < b->defined_at || b->last_use < a->defined_at) continue;
      EXPECT_TRUE(a->offset + a->size <= b->offset || b->offset + b->size <= a->offset);
    }
  }
}

TEST(ArenaPackingTest, IntervalsLiveTogetherNeverOverlap) {
  std::vector<LiveInterval> intervals = {
      {256, 0, 3}, {1024, 1, 1}, {512, 2, 5}, {1024, 4, 6}, {64, 0, 6}, {2048, 7, 7}};
  const int64_t arena = PackBySizeBestFit(intervals);
  EXPECT_EQ(arena, 2048);  // the 2 KiB buffer alone at kernel 7 bounds it
  for (size_t i = 0; i < intervals.size(); ++i) {
    for (size_t j = i + 1; j < intervals.size(); ++j) {
      const LiveInterval& a = intervals[i];
      const LiveInterval& b = intervals[j];
      if (a.end < b.begin || b.end < a.begin) continue;
      EXPECT_TRUE(a.offset + a.size <= b.offset || b.offset + b.size <= a.offset) << i << " " << j;
    }
  }
}

// ---------------------------------------------------------------- aliasing

constexpr char kSgd[] = R"(
func.func @main(%w: tensor<64x32xf32>, %g: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %lr = stablehlo.constant dense<0.5> : tensor<f32>
  %b = stablehlo.broadcast_in_dim %lr, dims = [] : (tensor<f32>) -> tensor<64x32xf32>
  %0 = stablehlo.multiply %b, %g : tensor<64x32xf32>
  %1 = stablehlo.subtract %w, %0 : tensor<64x32xf32>
  return %1 : tensor<64x32xf32>
})";

TEST(IoAliasTest, ElementwiseUpdateWritesIntoTheDonatedParameter) {
  std::unique_ptr<ir::Module> m = Parse(kSgd);
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Fused(*m);
  ASSERT_EQ(plan.kernels.size(), 1u) << plan.CostReport();
  const IoAlias donation{0, 0};
  const BufferAssignment buffers = AssignBuffers(*m->entry(), plan, {&donation, 1});
  EXPECT_EQ(buffers.result_aliases, (std::vector<int>{0}));
  EXPECT_TRUE(absl::StrContains(buffers.ToString(*m->entry()),
                                "result 0 is written into parameter 0"));
  // Without donations, or donating the other parameter (also read at the same element), or
  // with an index out of range.
  EXPECT_EQ(AssignBuffers(*m->entry(), plan).result_aliases, (std::vector<int>{-1}));
  const IoAlias other{1, 0};
  EXPECT_EQ(AssignBuffers(*m->entry(), plan, {&other, 1}).result_aliases, (std::vector<int>{1}));
  const IoAlias bad[] = {{2, 0}, {0, 1}, {-1, 0}};
  EXPECT_EQ(AssignBuffers(*m->entry(), plan, bad).result_aliases, (std::vector<int>{-1}));
}

TEST(IoAliasTest, AParameterReadByALaterKernelIsNotOverwritten) {
  // Program order: w * 2 is written (kernel 0) before sum(w) reads w (kernel 1).
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%w: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<f32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.add %w, %w : tensor<1024xf32>
  %1 = stablehlo.reduce(%w init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<1024xf32>, tensor<f32>) -> tensor<f32>
  return %0, %1 : tensor<1024xf32>, tensor<f32>
})");
  ASSERT_NE(m, nullptr);
  // Two kernels (multi-output fusion would make the sum and the doubling one kernel over w).
  FusionOptions separate;
  separate.multi_output = false;
  FusionPlan plan = PlanFusion(*m->entry(), Elementwise, IsReduce, IsDot, separate);
  ASSERT_EQ(plan.kernels.size(), 2u);
  const IoAlias donation{0, 0};
  BufferAssignment buffers = AssignBuffers(*m->entry(), plan, {&donation, 1});
  EXPECT_EQ(buffers.result_aliases, (std::vector<int>{-1, -1}));
  EXPECT_TRUE(absl::StrContains(WhyNotAliased(*m->entry(), plan, buffers, donation),
                                "kernel 1 reads the parameter after kernel 0"));
  // The buffer report says which candidate was refused, and why.
  EXPECT_TRUE(absl::StrContains(buffers.ToString(*m->entry()),
                                "result 0 gets its own buffer, not parameter 0's: kernel 1 reads "
                                "the parameter after kernel 0"))
      << buffers.ToString(*m->entry());
  // Scheduling with the donation in mind runs the reduction first; then the alias is safe.
  const ScheduleReport report = ScheduleForMemory(*m->entry(), plan, {&donation, 1});
  EXPECT_TRUE(absl::StrContains(report.chosen, "alias")) << report.ToString();
  EXPECT_EQ(plan.kernels[0].root()->opcode(), ir::Opcode::kReduce);
  buffers = AssignBuffers(*m->entry(), plan, {&donation, 1});
  EXPECT_EQ(buffers.result_aliases, (std::vector<int>{0, -1}));
}

TEST(IoAliasTest, AReaderThatNeedsTheResultKeepsTheAliasOff) {
  // exp(w) is result 0; the dot reads both exp(w) and w, so it runs after exp(w) in every order.
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%w: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %0 = stablehlo.exponential %w : tensor<16x16xf32>
  %1 = stablehlo.dot_general %0, %w, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %0, %1 : tensor<16x16xf32>, tensor<16x16xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Fused(*m);
  const IoAlias donation{0, 0};
  ScheduleForMemory(*m->entry(), plan, {&donation, 1});
  EXPECT_EQ(AssignBuffers(*m->entry(), plan, {&donation, 1}).result_aliases,
            (std::vector<int>{-1, -1}));
  // Nor can the dot write over w: it reads all of w while it writes.
  const IoAlias last{0, 1};
  const BufferAssignment buffers = AssignBuffers(*m->entry(), plan, {&last, 1});
  EXPECT_EQ(buffers.result_aliases, (std::vector<int>{-1, -1}));
  EXPECT_TRUE(absl::StrContains(WhyNotAliased(*m->entry(), plan, buffers, last),
                                "reads the parameter at other elements"));
}

TEST(IoAliasTest, AWriterReadingOtherElementsIsNotAliased) {
  // transpose(w) + w: the writer reads w[j, i] while it writes element (i, j).
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%w: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %0 = stablehlo.transpose %w, dims = [1, 0] : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %1 = stablehlo.add %0, %w : tensor<32x32xf32>
  return %1 : tensor<32x32xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Fused(*m);
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_FALSE(ReadsOnlySameElement(plan.kernels[0], m->entry()->parameter(0)));
  const IoAlias donation{0, 0};
  const BufferAssignment buffers = AssignBuffers(*m->entry(), plan, {&donation, 1});
  EXPECT_EQ(buffers.result_aliases, (std::vector<int>{-1}));
  EXPECT_TRUE(absl::StrContains(WhyNotAliased(*m->entry(), plan, buffers, donation),
                                "other elements"));
}

TEST(IoAliasTest, ReturnedParametersAndOtherSizesAreNotAliased) {
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%w: tensor<8xf32>, %v: tensor<4xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<4xf64>) {
  %0 = stablehlo.negate %w : tensor<8xf32>
  %1 = stablehlo.convert %v : (tensor<4xf32>) -> tensor<4xf64>
  return %0, %w, %1 : tensor<8xf32>, tensor<8xf32>, tensor<4xf64>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Unfused(*m);
  const IoAlias donations[] = {{0, 0}, {0, 1}, {1, 2}};
  const BufferAssignment buffers = AssignBuffers(*m->entry(), plan, donations);
  EXPECT_EQ(buffers.result_aliases, (std::vector<int>{-1, -1, -1}));
  EXPECT_TRUE(absl::StrContains(WhyNotAliased(*m->entry(), plan, buffers, donations[0]),
                                "also returned"));
  EXPECT_TRUE(absl::StrContains(WhyNotAliased(*m->entry(), plan, buffers, donations[1]),
                                "not written by a kernel"));
  EXPECT_TRUE(absl::StrContains(WhyNotAliased(*m->entry(), plan, buffers, donations[2]),
                                "size"));
}

TEST(IoAliasTest, AnUpdateInAReductionsEpilogueWritesIntoTheDonatedParameters) {
  // Momentum SGD on a bias: the gradient is a reduction over the batch; the update of the
  // velocity and of the bias is the reduction's epilogue (one kernel, as Keras' train steps give).
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%b: tensor<8xf32>, %v: tensor<8xf32>, %x: tensor<64x8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %c = stablehlo.constant dense<0.9> : tensor<f32>
  %g = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<64x8xf32>, tensor<f32>) -> tensor<8xf32>
  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<8xf32>
  %0 = stablehlo.multiply %v, %cb : tensor<8xf32>
  %v2 = stablehlo.add %0, %g : tensor<8xf32>
  %1 = stablehlo.multiply %v2, %cb : tensor<8xf32>
  %b2 = stablehlo.subtract %b, %1 : tensor<8xf32>
  return %b2, %v2 : tensor<8xf32>, tensor<8xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Fused(*m);
  ASSERT_EQ(plan.kernels.size(), 1u) << plan.CostReport();
  ASSERT_EQ(plan.kernels[0].kind, KernelKind::kReduce);
  EXPECT_TRUE(ReadsOnlySameElement(plan.kernels[0], m->entry()->parameter(0)));
  EXPECT_TRUE(ReadsOnlySameElement(plan.kernels[0], m->entry()->parameter(1)));
  // The folded input is read at every element of the reduced one.
  EXPECT_FALSE(ReadsOnlySameElement(plan.kernels[0], m->entry()->parameter(2)));
  const IoAlias donations[] = {{0, 0}, {1, 1}};
  BufferAssignment buffers = AssignBuffers(*m->entry(), plan, donations);
  EXPECT_EQ(buffers.result_aliases, (std::vector<int>{0, 1})) << buffers.ToString(*m->entry());
}

TEST(IoAliasTest, ARunningTotalUpdatedByASumWritesIntoTheDonatedScalar) {
  // A Keras metric: total += sum(x) (a scalar, like the reduction's init).
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%total: tensor<f32>, %x: tensor<64xf32>) -> tensor<f32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<64xf32>, tensor<f32>) -> tensor<f32>
  %0 = stablehlo.add %total, %s : tensor<f32>
  return %0 : tensor<f32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Fused(*m);
  ASSERT_EQ(plan.kernels.size(), 1u) << plan.CostReport();
  const IoAlias donation{0, 0};
  BufferAssignment buffers = AssignBuffers(*m->entry(), plan, {&donation, 1});
  EXPECT_EQ(buffers.result_aliases, (std::vector<int>{0})) << buffers.ToString(*m->entry());
  // Folded into the sum itself (as its init), the total is read before the result is complete.
  m = Parse(R"(
func.func @main(%total: tensor<f32>, %x: tensor<64xf32>) -> tensor<f32> {
  %s = stablehlo.reduce(%x init: %total) applies stablehlo.add across dimensions = [0] : (tensor<64xf32>, tensor<f32>) -> tensor<f32>
  %0 = stablehlo.multiply %s, %s : tensor<f32>
  return %0 : tensor<f32>
})");
  ASSERT_NE(m, nullptr);
  plan = Fused(*m);
  ASSERT_EQ(plan.kernels.size(), 1u) << plan.CostReport();
  buffers = AssignBuffers(*m->entry(), plan, {&donation, 1});
  EXPECT_EQ(buffers.result_aliases, (std::vector<int>{-1})) << buffers.ToString(*m->entry());
}

TEST(IoAliasTest, AParameterAnotherOutputOfTheWriterReadsIsNotOverwritten) {
  // One loop kernel stores a + b, then a * b: written into a's buffer, the sum would leave the
  // product reading sums. Each parameter is read for both outputs, so neither is aliased.
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%a: tensor<1000xf32>, %b: tensor<1000xf32>) -> (tensor<1000xf32>, tensor<1000xf32>) {
  %0 = stablehlo.add %a, %b : tensor<1000xf32>
  %1 = stablehlo.multiply %a, %b : tensor<1000xf32>
  return %0, %1 : tensor<1000xf32>, tensor<1000xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Fused(*m);
  ASSERT_EQ(plan.kernels.size(), 1u) << plan.CostReport();
  const IoAlias donations[] = {{0, 0}, {1, 1}};
  BufferAssignment buffers = AssignBuffers(*m->entry(), plan, donations);
  EXPECT_EQ(buffers.result_aliases, (std::vector<int>{-1, -1}));
  EXPECT_TRUE(absl::StrContains(WhyNotAliased(*m->entry(), plan, buffers, donations[0]),
                                "reads the parameter for another of its outputs"))
      << buffers.ToString(*m->entry());
}

TEST(IoAliasTest, AnEarlierKernelOfTheWritersRowGroupKeepsTheAliasOff) {
  // Column maxima of w (kernel 0 reads w through a transpose: other rows), then w - max by rows
  // (kernel 1, written into w). Run one after the other the alias is safe; run as a row group,
  // kernel 0's next tile would read rows kernel 1 already wrote: the group is one writer.
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %lo = stablehlo.constant dense<-1.0e30> : tensor<f32>
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %mx = stablehlo.reduce(%t init: %lo) applies stablehlo.maximum across dimensions = [1] : (tensor<16x16xf32>, tensor<f32>) -> tensor<16xf32>
  %b = stablehlo.broadcast_in_dim %mx, dims = [0] : (tensor<16xf32>) -> tensor<16x16xf32>
  %0 = stablehlo.subtract %w, %b : tensor<16x16xf32>
  return %0 : tensor<16x16xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionOptions separate;
  separate.multi_output = false;
  FusionPlan plan = PlanFusion(*m->entry(), Elementwise, IsReduce, IsDot, separate);
  ASSERT_EQ(plan.kernels.size(), 2u) << plan.CostReport();
  const IoAlias donation{0, 0};
  EXPECT_EQ(AssignBuffers(*m->entry(), plan, {&donation, 1}).result_aliases,
            (std::vector<int>{0}));
  PlanRowGroups(plan, {true, true}, 1);
  ASSERT_EQ(plan.row_groups.size(), 1u);
  const BufferAssignment buffers = AssignBuffers(*m->entry(), plan, {&donation, 1});
  EXPECT_EQ(buffers.result_aliases, (std::vector<int>{-1}));
  EXPECT_TRUE(absl::StrContains(WhyNotAliased(*m->entry(), plan, buffers, donation),
                                "kernel 0 writes the result and reads the parameter at other"))
      << buffers.ToString(*m->entry());
}

// Temporaries written over a temporary their kernel reads for the last time (buffer
// assignment's in-place step), and the cases that keep them apart.
TEST(InPlaceTest, AnElementwiseKernelWritesOverTheDotItReadsLast) {
  // dot -> exp (kernel 1: the dot's last reader) -> a second dot reading exp. exp(d) is written
  // over d; the second dot reads all of exp(d) while it writes, so it gets its own buffer.
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %d = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %e = stablehlo.exponential %d : tensor<16x16xf32>
  %f = stablehlo.dot_general %e, %x, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %g = stablehlo.negate %f : tensor<16x16xf32>
  return %g : tensor<16x16xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionPlan plan = Fused(*m);
  ASSERT_EQ(plan.kernels.size(), 4u) << plan.CostReport();
  const ir::Value* d = plan.kernels[0].root()->result();
  const ir::Value* e = plan.kernels[1].root()->result();
  const ir::Value* f = plan.kernels[2].root()->result();
  const BufferAssignment buffers = AssignBuffers(*m->entry(), plan);
  EXPECT_EQ(buffers.written_over.size(), 1u) << buffers.ToString(*m->entry());
  EXPECT_EQ(buffers.written_over.at(e), d);
  EXPECT_EQ(buffers.slots.at(e).offset, buffers.slots.at(d).offset);
  EXPECT_NE(buffers.slots.at(f).offset, buffers.slots.at(e).offset);
  // Two 1 KiB buffers: d then exp(d), and the second dot (the result has its own).
  EXPECT_EQ(buffers.arena_bytes, 2048) << buffers.ToString(*m->entry());
  EXPECT_EQ(WhyNotWrittenOver(plan.kernels[2], 2, e, f),
            "kernel 2 writes the result and reads the parameter at other elements");
}

TEST(InPlaceTest, AValueReadByALaterKernelIsNotWrittenOver) {
  // exp(t) reads t, but so does the later reduction: t stays.
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %t = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %e = stablehlo.exponential %t : tensor<16x16xf32>
  %f = stablehlo.dot_general %e, %x, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %s = stablehlo.reduce(%t init: %zero) applies stablehlo.add across dimensions = [1] : (tensor<16x16xf32>, tensor<f32>) -> tensor<16xf32>
  return %f, %s : tensor<16x16xf32>, tensor<16xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionOptions separate;
  separate.multi_output = false;
  FusionPlan plan = PlanFusion(*m->entry(), Elementwise, IsReduce, IsDot, separate);
  const BufferAssignment buffers = AssignBuffers(*m->entry(), plan);
  EXPECT_TRUE(buffers.written_over.empty()) << buffers.ToString(*m->entry());
}

TEST(InPlaceTest, AnAllReduceIsWrittenOverItsOperandOnlyWhenItIsTheOnlyReader) {
  constexpr char kProgram[] = R"(
func.func @main(%x: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %d = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %s:2 = "stablehlo.all_reduce"(%d, OTHER) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %t = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<16x16xf32>, tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>)
  %n = stablehlo.dot_general %s#0, %s#1, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %n, %x : tensor<16x16xf32>, tensor<16x16xf32>
})";
  auto plan_of = [](const ir::Module& m) { return PlanFusion(*m.entry(), Never, Never, IsDot); };
  // all_reduce(d, x): result 0 over d (x is a parameter: it stays).
  std::string two = kProgram;
  two.replace(two.find("OTHER"), 5, "%x");
  std::unique_ptr<ir::Module> m = Parse(two);
  ASSERT_NE(m, nullptr);
  FusionPlan plan = plan_of(*m);
  ASSERT_EQ(plan.kernels.size(), 3u) << plan.CostReport();
  const ir::Instruction* reduce = plan.kernels[1].root();
  ASSERT_EQ(reduce->opcode(), ir::Opcode::kAllReduce);
  ASSERT_EQ(plan.kernels[1].kind, KernelKind::kSingle);
  BufferAssignment buffers = AssignBuffers(*m->entry(), plan);
  EXPECT_EQ(buffers.written_over.size(), 1u) << buffers.ToString(*m->entry());
  EXPECT_EQ(buffers.written_over.at(reduce->result(0)), reduce->operand(0));
  EXPECT_NE(WhyNotWrittenOver(plan.kernels[1], 1, reduce->operand(0), reduce->result(1)), "");
  // all_reduce(d, d): either result written over d would change what the other one sums.
  std::string twice = kProgram;
  twice.replace(twice.find("OTHER"), 5, "%d");
  m = Parse(twice);
  ASSERT_NE(m, nullptr);
  plan = plan_of(*m);
  buffers = AssignBuffers(*m->entry(), plan);
  EXPECT_TRUE(buffers.written_over.empty()) << buffers.ToString(*m->entry());
}

TEST(InPlaceTest, KernelsOfARowGroupWriteOverNothing) {
  // Row maxima of d, then d - max by rows: alone, the subtraction is written over d; as a row
  // group (the reduction's next tile would read rows already written) it is not.
  std::unique_ptr<ir::Module> m = Parse(R"(
func.func @main(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %lo = stablehlo.constant dense<-1.0e30> : tensor<f32>
  %d = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %mx = stablehlo.reduce(%d init: %lo) applies stablehlo.maximum across dimensions = [1] : (tensor<16x16xf32>, tensor<f32>) -> tensor<16xf32>
  %b = stablehlo.broadcast_in_dim %mx, dims = [0] : (tensor<16xf32>) -> tensor<16x16xf32>
  %0 = stablehlo.subtract %d, %b : tensor<16x16xf32>
  %1 = stablehlo.dot_general %0, %x, contracting_dims = [1] x [0] : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  return %1 : tensor<16x16xf32>
})");
  ASSERT_NE(m, nullptr);
  FusionOptions separate;
  separate.multi_output = false;
  FusionPlan plan = PlanFusion(*m->entry(), Elementwise, IsReduce, IsDot, separate);
  ASSERT_EQ(plan.kernels.size(), 4u) << plan.CostReport();
  EXPECT_EQ(AssignBuffers(*m->entry(), plan).written_over.size(), 1u);
  PlanRowGroups(plan, {false, true, true, false}, 1);
  ASSERT_EQ(plan.row_groups.size(), 1u);
  EXPECT_TRUE(AssignBuffers(*m->entry(), plan).written_over.empty());
}

}  // namespace
}  // namespace ember::passes
