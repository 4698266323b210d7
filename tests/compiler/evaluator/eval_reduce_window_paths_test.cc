// Tests of reduce_window's evaluation paths: cumulative windows (cumsum and its kin) as running
// folds, windows over several axes of an exactly associative op one axis at a time, and the
// general row-major fold, each against a direct loop over the spec's definition. Shapes are sized
// so the old quadratic evaluation would not finish in a test's time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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

// reduce_window attributes over a rank-1 operand of `n`: JAX's cumulative lowering (window n,
// all of the padding on one side).
ir::AttributeMap CumulativeWindow(int64_t n, bool reverse) {
  ir::AttributeMap a;
  a.Set("window_dimensions", Ints({n}));
  a.Set("window_strides", Ints({1}));
  a.Set("padding", reverse ? Ints({0, n - 1}) : Ints({n - 1, 0}));
  return a;
}

// A region log(exp(a) + exp(b)): several instructions, so no typed fast path applies.
ir::Computation* LogAddExpRegion(OpRunner& r) {
  ir::Computation* region = r.module().AddRegion("logaddexp");
  ir::ValueType s = TensorType(ET::kF32, {});
  ir::Value* a = region->AddParameter(s);
  ir::Value* b = region->AddParameter(s);
  ir::Instruction* ea = region->AddInstruction(ir::Opcode::kExponential, {a}, {s});
  ir::Instruction* eb = region->AddInstruction(ir::Opcode::kExponential, {b}, {s});
  ir::Instruction* sum = region->AddInstruction(ir::Opcode::kAdd, {ea->result(), eb->result()}, {s});
  ir::Instruction* log = region->AddInstruction(ir::Opcode::kLog, {sum->result()}, {s});
  region->AddInstruction(ir::Opcode::kReturn, {log->result()}, {});
  return region;
}

TEST(EvalReduceWindowPaths, CumulativeSumsOfAHundredThousandElements) {
  constexpr int64_t n = 100'000;
  OpRunner r;
  ir::Computation* add_i = r.BinaryRegion(ir::Opcode::kAdd, ET::kS32);
  ir::Computation* add_f = r.BinaryRegion(ir::Opcode::kAdd, ET::kF32);
  std::vector<int32_t> xi(n);
  const std::vector<float> xf = RandomFloats(n, 7, 0, 1);
  for (int64_t i = 0; i < n; ++i) xi[i] = static_cast<int32_t>((i * 7919) % 201) - 100;

  for (bool reverse : {false, true}) {
    SCOPED_TRACE(reverse ? "suffix" : "prefix");
    auto ints = r.Run(ir::Opcode::kReduceWindow, {Lit<int32_t>({n}, xi), Lit<int32_t>({}, {0})},
                      {TensorType(ET::kS32, {n})}, CumulativeWindow(n, reverse), {add_i});
    ASSERT_TRUE(ints.ok()) << ints.status();
    auto floats = r.Run(ir::Opcode::kReduceWindow, {Lit<float>({n}, xf), Lit<float>({}, {0.f})},
                        {TensorType(ET::kF32, {n})}, CumulativeWindow(n, reverse), {add_f});
    ASSERT_TRUE(floats.ok()) << floats.status();
    const std::vector<int32_t> got_i = Values<int32_t>((*ints)[0].array);
    const std::vector<float> got_f = Values<float>((*floats)[0].array);
    ASSERT_EQ(got_i.size(), static_cast<size_t>(n));
    ASSERT_EQ(got_f.size(), static_cast<size_t>(n));
    int64_t want_i = 0;
    double want_f = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = reverse ? n - 1 - k : k;
      want_i += xi[i];
      want_f += xf[i];
      ASSERT_EQ(got_i[i], want_i) << i;
      // Float sums round once per element in any order: within n * eps of the exact sum.
      ASSERT_NEAR(got_f[i], want_f, 1e-4 * want_f + 1e-6) << i;
    }
  }
}

TEST(EvalReduceWindowPaths, PrefixSumsFollowXlasBlockedOrderBitForBit) {
  // XLA:CPU scans blocks of 16 on their own and adds the running total of the blocks before: for
  // up to 128 blocks that total is itself a sequential fold. Up to one block it is the spec's
  // sequential fold.
  OpRunner r;
  for (int64_t n : {int64_t{13}, int64_t{250}}) {
    SCOPED_TRACE(n);
    const std::vector<float> x = RandomFloats(n, 11);
    auto out = r.Run(ir::Opcode::kReduceWindow, {Lit<float>({n}, x), Lit<float>({}, {0.f})},
                     {TensorType(ET::kF32, {n})}, CumulativeWindow(n, false),
                     {r.BinaryRegion(ir::Opcode::kAdd, ET::kF32)});
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<float> got = Values<float>((*out)[0].array);
    float blocks_before = 0, in_block = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (i % 16 == 0 && i > 0) {
        blocks_before = blocks_before + in_block;
        in_block = 0;
      }
      in_block = in_block + x[i];
      ASSERT_EQ(got[i], in_block + blocks_before) << i;
    }
  }
}

TEST(EvalReduceWindowPaths, CumulativeMaxAndCompoundRegionMatchDirectLoops) {
  constexpr int64_t n = 2000;
  OpRunner r;
  const std::vector<float> x = RandomFloats(n, 13, -3, 3);
  const float ninf = -std::numeric_limits<float>::infinity();
  for (bool reverse : {false, true}) {
    SCOPED_TRACE(reverse ? "suffix" : "prefix");
    auto max = r.Run(ir::Opcode::kReduceWindow, {Lit<float>({n}, x), Lit<float>({}, {ninf})},
                     {TensorType(ET::kF32, {n})}, CumulativeWindow(n, reverse),
                     {r.BinaryRegion(ir::Opcode::kMaximum, ET::kF32)});
    ASSERT_TRUE(max.ok()) << max.status();
    auto lse = r.Run(ir::Opcode::kReduceWindow, {Lit<float>({n}, x), Lit<float>({}, {ninf})},
                     {TensorType(ET::kF32, {n})}, CumulativeWindow(n, reverse),
                     {LogAddExpRegion(r)});
    ASSERT_TRUE(lse.ok()) << lse.status();
    const std::vector<float> got_max = Values<float>((*max)[0].array);
    const std::vector<float> got_lse = Values<float>((*lse)[0].array);
    float want_max = ninf;
    double want_lse = -INFINITY;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = reverse ? n - 1 - k : k;
      want_max = std::max(want_max, x[i]);
      want_lse = std::log(std::exp(want_lse) + std::exp(static_cast<double>(x[i])));
      ASSERT_EQ(got_max[i], want_max) << i;
      ASSERT_NEAR(got_lse[i], want_lse, 1e-4) << i;
    }
  }
}

TEST(EvalReduceWindowPaths, InitThatIsNotAnIdentityKeepsTheSpecsFold) {
  // body(init, init) != init: padding holds the init value and counts, so a cumulative window of
  // n elements over n-1 padding adds the init value n-1 - i times plus once as the start.
  constexpr int64_t n = 300;
  OpRunner r;
  std::vector<int32_t> x(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<int32_t>(i % 17) - 8;
  auto out = r.Run(ir::Opcode::kReduceWindow, {Lit<int32_t>({n}, x), Lit<int32_t>({}, {1})},
                   {TensorType(ET::kS32, {n})}, CumulativeWindow(n, false),
                   {r.BinaryRegion(ir::Opcode::kAdd, ET::kS32)});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<int32_t> got = Values<int32_t>((*out)[0].array);
  int32_t prefix = 0;
  for (int64_t i = 0; i < n; ++i) {
    prefix += x[i];
    const int32_t padding = static_cast<int32_t>(n - 1 - i);
    EXPECT_EQ(got[i], 1 + padding + prefix) << i;
  }
}

// A 2-D window with strides, dilations and padding, compared element by element with the spec's
// row-major fold; `exact` asks for bit equality.
template <typename T>
void CheckWindow2D(ir::Opcode op, ET type, T init, const std::vector<T>& x, int64_t rows,
                   int64_t cols, bool exact) {
  OpRunner r;
  const std::vector<int64_t> wd = {9, 7}, ws = {2, 3}, bd = {1, 2}, wdil = {2, 1},
                             pad = {4, 3, 5, 6};
  int64_t out_dims[2];
  const int64_t dims[2] = {rows, cols};
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
  auto out = r.Run(ir::Opcode::kReduceWindow, {Lit<T>({rows, cols}, x), Lit<T>({}, {init})},
                   {TensorType(type, {out_dims[0], out_dims[1]})}, a, {r.BinaryRegion(op, type)});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<T> got = Values<T>((*out)[0].array);
  auto apply = [&](T acc, T v) -> T {
    if (op == ir::Opcode::kAdd) return static_cast<T>(acc + v);
    if (op == ir::Opcode::kMaximum) return std::max(acc, v);
    return std::min(acc, v);
  };
  for (int64_t i = 0; i < out_dims[0]; ++i)
    for (int64_t j = 0; j < out_dims[1]; ++j) {
      T want = init;
      for (int64_t u = 0; u < wd[0]; ++u)
        for (int64_t v = 0; v < wd[1]; ++v) {
          const int64_t p = i * ws[0] + u * wdil[0] - pad[0], q = j * ws[1] + v * wdil[1] - pad[2];
          const bool inside = p >= 0 && q >= 0 && p % bd[0] == 0 && q % bd[1] == 0 &&
                              p / bd[0] < rows && q / bd[1] < cols;
          want = apply(want, inside ? x[(p / bd[0]) * cols + q / bd[1]] : init);
        }
      if (exact) {
        ASSERT_EQ(got[i * out_dims[1] + j], want) << i << "," << j;
      } else {
        ASSERT_NEAR(got[i * out_dims[1] + j], want, 1e-4) << i << "," << j;
      }
    }
}

TEST(EvalReduceWindowPaths, TwoAxisWindowsOfExactOpsMatchTheRowMajorFold) {
  constexpr int64_t rows = 61, cols = 47;
  std::vector<int32_t> xi(rows * cols);
  for (size_t i = 0; i < xi.size(); ++i) xi[i] = static_cast<int32_t>((i * 2654435761u) >> 20);
  CheckWindow2D<int32_t>(ir::Opcode::kAdd, ET::kS32, 0, xi, rows, cols, /*exact=*/true);
  const std::vector<float> xf = RandomFloats(rows * cols, 17);
  CheckWindow2D<float>(ir::Opcode::kMaximum, ET::kF32, -INFINITY, xf, rows, cols, true);
  CheckWindow2D<float>(ir::Opcode::kMinimum, ET::kF32, INFINITY, xf, rows, cols, true);
  // Float sums are not exactly associative: they keep the row-major fold, so bits match too.
  CheckWindow2D<float>(ir::Opcode::kAdd, ET::kF32, 0.f, xf, rows, cols, true);
}

}  // namespace
}  // namespace ember::eval
