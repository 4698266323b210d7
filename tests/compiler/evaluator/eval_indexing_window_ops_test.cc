// Tests of the evaluator's indexing and window families: gather / scatter on the spec's examples
// (batching dims included) plus clamping and out-of-bounds rules, dynamic_gather,
// torch_index_select, reduce_window against a direct loop, select_and_scatter on the spec's
// example.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "compiler/evaluator/evaluator.h"
#include "tests/compiler/evaluator/eval_ops_test_util.h"

namespace ember::eval {
namespace {

using testing::Ints;
using testing::Lit;
using testing::OpRunner;
using testing::RandomFloats;
using testing::TensorType;
using testing::Values;
using ET = ir::ElementType;

std::vector<int64_t> Iota(int64_t n, int64_t start) {
  std::vector<int64_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start + i;
  return v;
}

// The spec's gather/scatter example indices: [2, 2, 3, 2].
const std::vector<int64_t> kSpecIndices = {0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 9,
                                           0, 0, 2, 1, 2, 2, 1, 2, 0, 1, 1, 0};

ir::AttributeMap SpecGatherAttrs() {
  ir::AttributeMap a;
  a.Set("offset_dims", Ints({3, 4}));
  a.Set("collapsed_slice_dims", Ints({1}));
  a.Set("operand_batching_dims", Ints({0}));
  a.Set("start_indices_batching_dims", Ints({1}));
  a.Set("start_index_map", Ints({2, 1}));
  a.Set("index_vector_dim", ir::Attribute::Int(3));
  a.Set("indices_are_sorted", ir::Attribute::Bool(false));
  return a;
}

const std::vector<int32_t> kSpecGatherResult = {
    1, 2, 3, 4, 3,  4,  5,  6,  13, 14, 15, 16, 33, 34, 35, 36, 35, 36, 37, 38, 41, 42, 43, 44,
    1, 2, 3, 4, 13, 14, 15, 16, 21, 22, 23, 24, 43, 44, 45, 46, 33, 34, 35, 36, 27, 28, 29, 30};

TEST(EvalGather, SpecExampleWithBatchingDims) {
  OpRunner r;
  std::vector<int32_t> operand(48);
  for (int i = 0; i < 48; ++i) operand[i] = i + 1;
  ir::AttributeMap a = SpecGatherAttrs();
  a.Set("slice_sizes", Ints({1, 1, 2, 2}));
  auto out = r.Run(ir::Opcode::kGather,
                   {Lit<int32_t>({2, 3, 4, 2}, operand), Lit<int64_t>({2, 2, 3, 2}, kSpecIndices)},
                   {TensorType(ET::kS32, {2, 2, 3, 2, 2})}, std::move(a));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>((*out)[0].array), kSpecGatherResult);
}

TEST(EvalGather, DynamicGatherTakesSliceSizesFromAnOperand) {
  OpRunner r;
  std::vector<int32_t> operand(48);
  for (int i = 0; i < 48; ++i) operand[i] = i + 1;
  auto out = r.Run(ir::Opcode::kDynamicGather,
                   {Lit<int32_t>({2, 3, 4, 2}, operand), Lit<int64_t>({2, 2, 3, 2}, kSpecIndices),
                    Lit<int64_t>({4}, {1, 1, 2, 2})},
                   {TensorType(ET::kS32, {2, 2, 3, 2, 2})}, SpecGatherAttrs());
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int32_t>((*out)[0].array), kSpecGatherResult);
}

TEST(EvalGather, StartIndicesAreClampedAndIndexVectorDimCanBeImplicit) {
  OpRunner r;
  // operand [5, 3]; indices [4] (index_vector_dim = 1 = rank: scalar indices); slices of [3, 2]
  // along dim 0 start at clamp(i, 0, 2).
  std::vector<float> operand(15);
  for (int i = 0; i < 15; ++i) operand[i] = float(i);
  ir::AttributeMap a;
  a.Set("offset_dims", Ints({1, 2}));
  a.Set("collapsed_slice_dims", Ints({}));
  a.Set("start_index_map", Ints({0}));
  a.Set("index_vector_dim", ir::Attribute::Int(1));
  a.Set("slice_sizes", Ints({3, 2}));
  auto out =
      r.Run(ir::Opcode::kGather, {Lit<float>({5, 3}, operand), Lit<int32_t>({4}, {-3, 1, 2, 100})},
            {TensorType(ET::kF32, {4, 3, 2})}, std::move(a));
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> got = Values<float>((*out)[0].array);
  const int starts[4] = {0, 1, 2, 2};
  for (int b = 0; b < 4; ++b)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 2; ++j)
        EXPECT_EQ(got[b * 6 + i * 2 + j], operand[(starts[b] + i) * 3 + j]);
}

ir::AttributeMap SpecScatterAttrs() {
  ir::AttributeMap a;
  a.Set("update_window_dims", Ints({3, 4}));
  a.Set("inserted_window_dims", Ints({1}));
  a.Set("input_batching_dims", Ints({0}));
  a.Set("scatter_indices_batching_dims", Ints({1}));
  a.Set("scatter_dims_to_operand_dims", Ints({2, 1}));
  a.Set("index_vector_dim", ir::Attribute::Int(3));
  a.Set("indices_are_sorted", ir::Attribute::Bool(false));
  a.Set("unique_indices", ir::Attribute::Bool(false));
  return a;
}

TEST(EvalScatter, SpecExampleWithBatchingDims) {
  OpRunner r;
  ir::Computation* add = r.BinaryRegion(ir::Opcode::kAdd, ET::kS64);
  auto out =
      r.Run(ir::Opcode::kScatter,
            {Lit<int64_t>({2, 3, 4, 2}, Iota(48, 1)), Lit<int64_t>({2, 2, 3, 2}, kSpecIndices),
             Lit<int64_t>({2, 2, 3, 2, 2}, std::vector<int64_t>(48, 1))},
            {TensorType(ET::kS64, {2, 3, 4, 2})}, SpecScatterAttrs(), {add});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<int64_t> want = {3,  4,  6,  7,  6,  7,  7,  8,  9,  10, 11, 12,
                                     15, 16, 17, 18, 17, 18, 19, 20, 22, 23, 24, 25,
                                     25, 26, 28, 29, 30, 31, 31, 32, 35, 36, 38, 39,
                                     38, 39, 39, 40, 41, 42, 44, 45, 46, 47, 47, 48};
  EXPECT_EQ(Values<int64_t>((*out)[0].array), want);
}

TEST(EvalScatter, WindowsOutOfBoundsAreSkippedWholeAndUpdatesApplyInOrder) {
  OpRunner r;
  // input [6]; windows of 3 at starts 4 (partly outside: skipped whole, as XLA skips it) and 1,
  // 1 again. The update computation keeps the newer value, so repeated indices see row-major
  // order.
  ir::Computation* keep_new = r.module().AddRegion("keep_new");
  {
    ir::ValueType s = TensorType(ET::kF32, {});
    keep_new->AddParameter(s);
    ir::Value* y = keep_new->AddParameter(s);
    keep_new->AddInstruction(ir::Opcode::kReturn, {y}, {});
  }
  ir::AttributeMap a;
  a.Set("update_window_dims", Ints({1}));
  a.Set("inserted_window_dims", Ints({}));
  a.Set("scatter_dims_to_operand_dims", Ints({0}));
  a.Set("index_vector_dim", ir::Attribute::Int(1));
  auto out = r.Run(ir::Opcode::kScatter,
                   {Lit<float>({6}, {0, 0, 0, 0, 0, 0}), Lit<int32_t>({3, 1}, {4, 1, 1}),
                    Lit<float>({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})},
                   {TensorType(ET::kF32, {6})}, std::move(a), {keep_new});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<float>((*out)[0].array), (std::vector<float>{0, 7, 8, 9, 0, 0}));
}

TEST(EvalTorchIndexSelect, SelectsAlongDimWithBatchDims) {
  OpRunner r;
  // operand [2, 4, 3], index [2, 2] with batch_dims 1, dim 1 -> result [2, 2, 3].
  const std::vector<int64_t> operand = Iota(24, 0);
  ir::AttributeMap a;
  a.Set("dim", ir::Attribute::Int(1));
  a.Set("batch_dims", ir::Attribute::Int(1));
  auto out = r.Run(ir::Opcode::kTorchIndexSelect,
                   {Lit<int64_t>({2, 4, 3}, operand), Lit<int32_t>({2, 2}, {3, 0, 1, 1})},
                   {TensorType(ET::kS64, {2, 2, 3})}, std::move(a));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0].array),
            (std::vector<int64_t>{9, 10, 11, 0, 1, 2, 15, 16, 17, 15, 16, 17}));
}

// ---- reduce_window, select_and_scatter -------------------------------------------------------

TEST(EvalReduceWindow, MaxAndSumMatchDirectLoops) {
  OpRunner r;
  const std::vector<float> x = RandomFloats(5 * 6, 91);
  // max over 2x3 windows, strides 2x1, window dilation 1x2, base dilation 2x1, padding.
  const std::vector<int64_t> wd = {2, 3}, ws = {2, 1}, bd = {2, 1}, wdil = {1, 2},
                             pad = {1, 0, 2, 1};
  const float init = -1e30f;
  int64_t out_dims[2];
  const int64_t dims[2] = {5, 6};
  for (int d = 0; d < 2; ++d) {
    const int64_t padded = pad[2 * d] + (dims[d] - 1) * bd[d] + 1 + pad[2 * d + 1];
    out_dims[d] = (padded - ((wd[d] - 1) * wdil[d] + 1)) / ws[d] + 1;
  }
  ir::AttributeMap a;
  a.Set("window_dimensions", Ints(wd));
  a.Set("window_strides", Ints(ws));
  a.Set("base_dilations", Ints(bd));
  a.Set("window_dilations", Ints(wdil));
  a.Set("padding", Ints(pad));
  ir::Computation* max = r.BinaryRegion(ir::Opcode::kMaximum, ET::kF32);
  auto out = r.Run(ir::Opcode::kReduceWindow, {Lit<float>({5, 6}, x), Lit<float>({}, {init})},
                   {TensorType(ET::kF32, {out_dims[0], out_dims[1]})}, a, {max});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<float> got = Values<float>((*out)[0].array);
  for (int64_t i = 0; i < out_dims[0]; ++i)
    for (int64_t j = 0; j < out_dims[1]; ++j) {
      float want = init;
      for (int64_t u = 0; u < wd[0]; ++u)
        for (int64_t v = 0; v < wd[1]; ++v) {
          const int64_t p = i * ws[0] + u * wdil[0] - pad[0], q = j * ws[1] + v * wdil[1] - pad[2];
          if (p < 0 || q < 0 || p % bd[0] || q % bd[1]) continue;
          if (p / bd[0] >= 5 || q / bd[1] >= 6) continue;
          want = std::max(want, x[(p / bd[0]) * 6 + q / bd[1]]);
        }
      EXPECT_EQ(got[i * out_dims[1] + j], want) << i << "," << j;
    }
  // Variadic: (sum, count) with an add body over both, default strides.
  ir::Computation* add2 = r.module().AddRegion("add2");
  {
    ir::ValueType s = TensorType(ET::kS32, {});
    ir::Value* a0 = add2->AddParameter(s);
    ir::Value* a1 = add2->AddParameter(s);
    ir::Value* b0 = add2->AddParameter(s);
    ir::Value* b1 = add2->AddParameter(s);
    ir::Instruction* s0 = add2->AddInstruction(ir::Opcode::kAdd, {a0, b0}, {s});
    ir::Instruction* s1 = add2->AddInstruction(ir::Opcode::kAdd, {a1, b1}, {s});
    add2->AddInstruction(ir::Opcode::kReturn, {s0->result(), s1->result()}, {});
  }
  ir::AttributeMap b;
  b.Set("window_dimensions", Ints({3}));
  auto sums = r.Run(ir::Opcode::kReduceWindow,
                    {Lit<int32_t>({5}, {1, 2, 3, 4, 5}), Lit<int32_t>({5}, {1, 1, 1, 1, 1}),
                     Lit<int32_t>({}, {0}), Lit<int32_t>({}, {0})},
                    {TensorType(ET::kS32, {3}), TensorType(ET::kS32, {3})}, std::move(b), {add2});
  ASSERT_TRUE(sums.ok()) << sums.status();
  EXPECT_EQ(Values<int32_t>((*sums)[0].array), (std::vector<int32_t>{6, 9, 12}));
  EXPECT_EQ(Values<int32_t>((*sums)[1].array), (std::vector<int32_t>{3, 3, 3}));
}

TEST(EvalSelectAndScatter, SpecExample) {
  OpRunner r;
  ir::Computation* ge = r.BinaryRegion(ir::Opcode::kCompare, ET::kS64, "GE");
  ir::Computation* add = r.BinaryRegion(ir::Opcode::kAdd, ET::kS64);
  ir::AttributeMap a;
  a.Set("window_dimensions", Ints({3, 1}));
  a.Set("window_strides", Ints({2, 1}));
  a.Set("padding", Ints({0, 1, 0, 0}));
  auto out = r.Run(ir::Opcode::kSelectAndScatter,
                   {Lit<int64_t>({4, 2}, {1, 5, 2, 5, 3, 6, 4, 4}),
                    Lit<int64_t>({2, 2}, {5, 6, 7, 8}), Lit<int64_t>({}, {0})},
                   {TensorType(ET::kS64, {4, 2})}, std::move(a), {ge, add});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Values<int64_t>((*out)[0].array), (std::vector<int64_t>{0, 0, 0, 0, 5, 14, 7, 0}));
}

TEST(EvalSelectAndScatter, FastAndRegionPathsAgreeWithDirectLoop) {
  OpRunner r;
  const std::vector<float> x = RandomFloats(6 * 8, 93);
  const std::vector<float> src = RandomFloats(3 * 4, 94);
  ir::AttributeMap a;
  a.Set("window_dimensions", Ints({2, 3}));
  a.Set("window_strides", Ints({2, 2}));
  a.Set("padding", Ints({0, 0, 1, 0}));
  // Simple regions (evaluated directly) ...
  ir::Computation* ge = r.BinaryRegion(ir::Opcode::kCompare, ET::kF32, "GE");
  ir::Computation* add = r.BinaryRegion(ir::Opcode::kAdd, ET::kF32);
  auto fast = r.Run(ir::Opcode::kSelectAndScatter,
                    {Lit<float>({6, 8}, x), Lit<float>({3, 4}, src), Lit<float>({}, {0})},
                    {TensorType(ET::kF32, {6, 8})}, a, {ge, add});
  // ... and the same functions written so that the regions must be run.
  ir::ValueType s = TensorType(ET::kF32, {});
  ir::ValueType p = TensorType(ET::kPred, {});
  ir::Computation* ge2 = r.module().AddRegion("ge2");
  {
    ir::Value* x0 = ge2->AddParameter(s);
    ir::Value* x1 = ge2->AddParameter(s);
    ir::AttributeMap c;
    c.Set("comparison_direction", ir::Attribute::String("LT"));
    ir::Instruction* lt = ge2->AddInstruction(ir::Opcode::kCompare, {x0, x1}, {p}, c);
    ir::Instruction* n = ge2->AddInstruction(ir::Opcode::kNot, {lt->result()}, {p});
    ge2->AddInstruction(ir::Opcode::kReturn, {n->result()}, {});
  }
  ir::Computation* add2 = r.module().AddRegion("add2");
  {
    ir::Value* x0 = add2->AddParameter(s);
    ir::Value* x1 = add2->AddParameter(s);
    ir::Instruction* neg = add2->AddInstruction(ir::Opcode::kNegate, {x1}, {s});
    ir::Instruction* sub = add2->AddInstruction(ir::Opcode::kSubtract, {x0, neg->result()}, {s});
    add2->AddInstruction(ir::Opcode::kReturn, {sub->result()}, {});
  }
  auto slow = r.Run(ir::Opcode::kSelectAndScatter,
                    {Lit<float>({6, 8}, x), Lit<float>({3, 4}, src), Lit<float>({}, {0})},
                    {TensorType(ET::kF32, {6, 8})}, a, {ge2, add2});
  ASSERT_TRUE(fast.ok()) << fast.status();
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_EQ((*fast)[0].array, (*slow)[0].array);
  // Direct loop: first maximum in row-major window order gets the source value.
  std::vector<float> want(48, 0.0f);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      int best = -1;
      for (int u = 0; u < 2; ++u)
        for (int v = 0; v < 3; ++v) {
          const int row = 2 * i + u, col = 2 * j + v - 1;
          if (col < 0 || col >= 8) continue;
          if (best < 0 || x[row * 8 + col] > x[best]) best = row * 8 + col;
        }
      want[best] += src[i * 4 + j];
    }
  EXPECT_EQ(Values<float>((*fast)[0].array), want);
}

}  // namespace
}  // namespace ember::eval
