// The windowed ops compiled by the code generator against the reference evaluator. reduce_window:
// sums, maxima and
// minima over f32, f64, bf16, f16 and s32, with strides, low and high padding (which holds the
// init value and takes part in the fold), base and window dilations, windows folded in
// straight-line code and in loops, a fused elementwise producer and epilogue (avg_pool's
// divide), and cumulative windows (exact folds only). Every window is folded in the evaluator's
// row-major order from the init value, so results match bit for bit (any NaN matches any NaN).
// select_and_scatter (max_pool's gradient): each result element gathers the source elements of
// the windows that pick it, in the source's order, so it matches bit for bit too; ties and NaNs
// (the first pick in window order wins) included.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "tests/compiler/codegen/differential_harness.h"
#include "tests/compiler/codegen/differential_inputs.h"

namespace ember::codegen {
namespace {

using ir::ElementType;

using namespace test_inputs;   // NOLINT: the shared input makers
using namespace test_harness;  // NOLINT: the shared comparison with the evaluator

struct Window {
  const char* name;
  std::vector<int64_t> in;
  std::vector<int64_t> window, strides, base_dilations, window_dilations;
  std::vector<int64_t> padding;  // lo0, hi0, lo1, hi1, ...
};

std::vector<int64_t> ResultDims(const Window& w) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < w.in.size(); ++d) {
    const int64_t dilated = (w.in[d] - 1) * w.base_dilations[d] + 1;
    const int64_t padded = w.padding[2 * d] + dilated + w.padding[2 * d + 1];
    const int64_t span = (w.window[d] - 1) * w.window_dilations[d] + 1;
    out.push_back(padded < span ? 0 : (padded - span) / w.strides[d] + 1);
  }
  return out;
}

std::string Tensor(const std::vector<int64_t>& dims, const char* type) {
  return absl::StrCat("tensor<", absl::StrJoin(dims, "x"), dims.empty() ? "" : "x", type, ">");
}

// `%rw = reduce_window(%operand, %init)` of `w` with body `op` over `type`.
std::string ReduceWindow(const Window& w, const char* op, const char* type,
                         const std::string& operand, const std::string& init) {
  std::vector<std::string> pads;
  for (size_t d = 0; d < w.in.size(); ++d) {
    pads.push_back(absl::StrCat("[", w.padding[2 * d], ", ", w.padding[2 * d + 1], "]"));
  }
  const std::string scalar = Tensor({}, type);
  return absl::StrCat(
      "  %rw = \"stablehlo.reduce_window\"(", operand, ", ", init, ") ({\n",
      "  ^bb0(%a: ", scalar, ", %b: ", scalar, "):\n",
      "    %s = stablehlo.", op, " %a, %b : ", scalar, "\n",
      "    stablehlo.return %s : ", scalar, "\n  }) {window_dimensions = array<i64: ",
      absl::StrJoin(w.window, ", "), ">, window_strides = array<i64: ",
      absl::StrJoin(w.strides, ", "), ">, base_dilations = array<i64: ",
      absl::StrJoin(w.base_dilations, ", "), ">, window_dilations = array<i64: ",
      absl::StrJoin(w.window_dilations, ", "), ">, padding = dense<[", absl::StrJoin(pads, ", "),
      "]> : tensor<", w.in.size(), "x2xi64>} : (", Tensor(w.in, type), ", ", scalar, ") -> ",
      Tensor(ResultDims(w), type), "\n");
}

// The windows: straight-line folds (at most 32 positions) and loops (more), every padding and
// dilation kind, result elements whose windows lie wholly in the padding.
const std::vector<Window>& Windows() {
  static const std::vector<Window> windows = {
      {"strided, padded", {9, 11}, {3, 2}, {2, 1}, {1, 1}, {1, 1}, {1, 1, 0, 1}},
      {"dilated", {5, 6}, {2, 3}, {1, 2}, {2, 1}, {1, 2}, {1, 0, 2, 1}},
      {"pool 3x3/2 SAME", {2, 9, 9, 5}, {1, 3, 3, 1}, {1, 2, 2, 1}, {1, 1, 1, 1},
       {1, 1, 1, 1}, {0, 0, 1, 1, 1, 1, 0, 0}},
      {"loop, 48 positions", {3, 40}, {2, 24}, {1, 3}, {1, 1}, {1, 1}, {1, 0, 5, 5}},
      {"loop, holes and gaps", {4, 13}, {3, 12}, {2, 1}, {2, 1}, {1, 2}, {2, 3, 4, 9}},
      {"negative padding", {7, 8}, {2, 2}, {1, 2}, {1, 1}, {1, 1}, {-1, 0, 0, -2}},
      {"windows all padding", {3, 4}, {2, 2}, {3, 3}, {1, 1}, {1, 1}, {5, 5, 0, 6}},
  };
  return windows;
}

TEST(ReduceWindowDifferentialTest, EveryWindowFoldAndType) {
  constexpr ElementType kTested[] = {ElementType::kF32, ElementType::kF64, ElementType::kBF16,
                                     ElementType::kF16, ElementType::kS32};
  int cases = 0;
  for (const Window& w : Windows()) {
    for (const char* op : {"add", "maximum", "minimum"}) {
      for (ElementType t : kTested) {
        SCOPED_TRACE(absl::StrCat(w.name, " ", op, " ", Mlir(t)));
        const std::string type = Mlir(t);
        const std::string text = absl::StrCat(
            "func.func @main(%x: ", Tensor(w.in, type.c_str()), ", %init: ",
            Tensor({}, type.c_str()), ") -> ", Tensor(ResultDims(w), type.c_str()), " {\n",
            ReduceWindow(w, op, type.c_str(), "%x", "%init"), "  return %rw : ",
            Tensor(ResultDims(w), type.c_str()), "\n}\n");
        KernelRun run = CompareWithEvaluator(text, InputsFor(text, 100 + cases));
        EXPECT_TRUE(run.compiled) << run.refusal << "\n" << text;
        EXPECT_EQ(run.mismatches, 0);
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 7 * 3 * 5);
}

TEST(ReduceWindowDifferentialTest, FusedProducerAndAvgPoolEpilogue) {
  // avg_pool as JAX writes it (a constant zero init, the sum divided by the window size), its
  // operand a fused producer, and a second output of a max_pool over the same producer.
  const Window& pool = Windows()[2];
  for (const char* ty : {"f32", "bf16", "f16", "f64"}) {
    SCOPED_TRACE(ty);
    const std::string x = Tensor(pool.in, ty);
    const std::string r = Tensor(ResultDims(pool), ty);
    const std::string scalar = Tensor({}, ty);
    std::string max_pool = ReduceWindow(pool, "maximum", ty, "%relu", "%zero");
    absl::StrReplaceAll({{"%rw =", "%mp ="}}, &max_pool);
    const std::string text = absl::StrCat(
        "func.func @main(%x: ", x, ", %y: ", x, ") -> (", r, ", ", r, ") {\n",
        "  %zero = stablehlo.constant dense<0.0> : ", scalar, "\n",
        "  %nine = stablehlo.constant dense<9.0> : ", scalar, "\n",
        "  %bz = stablehlo.broadcast_in_dim %zero, dims = [] : (", scalar, ") -> ", x, "\n",
        "  %xy = stablehlo.multiply %x, %y : ", x, "\n",
        "  %relu = stablehlo.maximum %xy, %bz : ", x, "\n",
        ReduceWindow(pool, "add", ty, "%xy", "%zero"),
        "  %b9 = stablehlo.broadcast_in_dim %nine, dims = [] : (", scalar, ") -> ", r, "\n",
        "  %avg = stablehlo.divide %rw, %b9 : ", r, "\n", max_pool,
        "  return %avg, %mp : ", r, ", ", r, "\n}\n");
    KernelRun run = CompareWithEvaluator(text, InputsFor(text, 7));
    EXPECT_TRUE(run.compiled) << run.refusal << "\n" << text;
    EXPECT_EQ(run.mismatches, 0);
  }
}

TEST(ReduceWindowDifferentialTest, CumulativeWindows) {
  // cumsum of s32 and cummax of f32 fold exactly in any order: compiled. A float cumsum is
  // folded by the evaluator in XLA's blocked order, and a long cumulative window would cost
  // O(n^2) folded window by window: both stay with the evaluator.
  const Window prefix{"prefix", {6, 10}, {1, 10}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 9, 0}};
  const Window suffix{"suffix", {7, 5}, {7, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 6, 0, 0}};
  const Window longer{"long", {2, 100}, {1, 100}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 99, 0}};
  struct Case {
    const Window* w;
    const char* op;
    const char* type;
    bool compiled;
  };
  const Case cases[] = {{&prefix, "add", "i32", true},     {&suffix, "add", "i32", true},
                        {&prefix, "maximum", "f32", true}, {&suffix, "minimum", "bf16", true},
                        {&prefix, "add", "f32", false},    {&suffix, "add", "bf16", false},
                        {&longer, "maximum", "f32", false}};
  int seed = 300;
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.w->name, " ", c.op, " ", c.type));
    const std::string text = absl::StrCat(
        "func.func @main(%x: ", Tensor(c.w->in, c.type), ") -> ",
        Tensor(ResultDims(*c.w), c.type), " {\n", "  %init = stablehlo.constant dense<",
        std::string(c.type) == "i32" ? "0" : "0.0", "> : ",
        Tensor({}, c.type), "\n", ReduceWindow(*c.w, c.op, c.type, "%x", "%init"),
        "  return %rw : ", Tensor(ResultDims(*c.w), c.type), "\n}\n");
    KernelRun run = CompareWithEvaluator(text, InputsFor(text, seed++));
    EXPECT_EQ(run.compiled, c.compiled) << run.refusal << "\n" << text;
    EXPECT_EQ(run.mismatches, 0);
    if (!c.compiled) {
      EXPECT_NE(run.refusal.find("cumulative"), std::string::npos) << run.refusal;
    }
  }
}


struct ScatterCase {
  const char* name;
  std::vector<int64_t> in, window, strides;
  std::vector<int64_t> padding;  // lo0, hi0, lo1, hi1, ...
  const char* select;            // compare direction of (current, candidate)
  bool swapped;                  // the region compares (candidate, current)
  const char* scatter;
};

std::vector<int64_t> SourceDims(const ScatterCase& c) {
  std::vector<int64_t> out;
  for (size_t d = 0; d < c.in.size(); ++d) {
    const int64_t padded = c.padding[2 * d] + c.in[d] + c.padding[2 * d + 1];
    out.push_back(padded < c.window[d] ? 0 : (padded - c.window[d]) / c.strides[d] + 1);
  }
  return out;
}

// `%ss = select_and_scatter(%operand, %source, %init)` of `c` over `type`.
std::string SelectAndScatter(const ScatterCase& c, const char* type, const std::string& operand,
                             const std::string& source, const std::string& init) {
  std::vector<std::string> pads;
  for (size_t d = 0; d < c.in.size(); ++d) {
    pads.push_back(absl::StrCat("[", c.padding[2 * d], ", ", c.padding[2 * d + 1], "]"));
  }
  const std::string scalar = Tensor({}, type);
  return absl::StrCat(
      "  %ss = \"stablehlo.select_and_scatter\"(", operand, ", ", source, ", ", init, ") ({\n",
      "  ^bb0(%a: ", scalar, ", %b: ", scalar, "):\n", "    %c = stablehlo.compare ", c.select,
      ", ", c.swapped ? "%b, %a" : "%a, %b", " : (", scalar, ", ", scalar, ") -> tensor<i1>\n",
      "    stablehlo.return %c : tensor<i1>\n  }, {\n", "  ^bb0(%a: ", scalar, ", %b: ", scalar,
      "):\n", "    %s = stablehlo.", c.scatter, " %a, %b : ", scalar, "\n",
      "    stablehlo.return %s : ", scalar, "\n  }) {window_dimensions = array<i64: ",
      absl::StrJoin(c.window, ", "), ">, window_strides = array<i64: ",
      absl::StrJoin(c.strides, ", "), ">, padding = dense<[", absl::StrJoin(pads, ", "),
      "]> : tensor<", c.in.size(), "x2xi64>} : (", Tensor(c.in, type), ", ",
      Tensor(SourceDims(c), type), ", ", scalar, ") -> ", Tensor(c.in, type), "\n");
}

TEST(SelectAndScatterDifferentialTest, EveryWindowAndType) {
  // max_pool's gradient (select GE, scatter add) over overlapping, padded, strided and disjoint
  // windows; a swapped LE select scattering maxima. Small integers and the specials give ties
  // and NaNs, where the first pick in window order must win as in the evaluator.
  const ScatterCase kCases[] = {
      {"max_pool grad 3x3/2 SAME", {2, 9, 9, 3}, {1, 3, 3, 1}, {1, 2, 2, 1},
       {0, 0, 1, 1, 1, 1, 0, 0}, "GE", false, "add"},
      {"disjoint 2x2", {6, 8}, {2, 2}, {2, 2}, {0, 0, 0, 0}, "GE", false, "add"},
      {"overlapping, padded", {7, 5}, {3, 2}, {1, 2}, {2, 1, 0, 1}, "GT", false, "add"},
      {"swapped LE, maxima", {7, 6}, {2, 3}, {2, 1}, {1, 0, 2, 2}, "LE", true, "maximum"},
  };
  constexpr ElementType kTested[] = {ElementType::kF32, ElementType::kF64, ElementType::kBF16,
                                     ElementType::kF16, ElementType::kS32};
  int seed = 500;
  for (const ScatterCase& c : kCases) {
    for (ElementType t : kTested) {
      SCOPED_TRACE(absl::StrCat(c.name, " ", Mlir(t)));
      const char* type = Mlir(t);
      const std::string text = absl::StrCat(
          "func.func @main(%x: ", Tensor(c.in, type), ", %g: ", Tensor(SourceDims(c), type),
          ", %init: ", Tensor({}, type), ") -> ", Tensor(c.in, type), " {\n",
          SelectAndScatter(c, type, "%x", "%g", "%init"), "  return %ss : ",
          Tensor(c.in, type), "\n}\n");
      KernelRun run = CompareWithEvaluator(text, InputsFor(text, seed++));
      EXPECT_TRUE(run.compiled) << run.refusal << "\n" << text;
      EXPECT_EQ(run.mismatches, 0);
    }
  }
}

TEST(SelectAndScatterDifferentialTest, FusedOperandSourceAndEpilogue) {
  // As a max_pool's gradient sits in a training step: the pooled activations (a relu) and the
  // incoming gradient (scaled) computed in the kernel, the result scaled again.
  const ScatterCase c{"max_pool grad", {2, 9, 9, 3}, {1, 3, 3, 1}, {1, 2, 2, 1},
                      {0, 0, 1, 1, 1, 1, 0, 0}, "GE", false, "add"};
  for (const char* ty : {"f32", "bf16"}) {
    SCOPED_TRACE(ty);
    const std::string x = Tensor(c.in, ty);
    const std::string g = Tensor(SourceDims(c), ty);
    const std::string scalar = Tensor({}, ty);
    const std::string text = absl::StrCat(
        "func.func @main(%x: ", x, ", %g: ", g, ") -> ", x, " {\n",
        "  %zero = stablehlo.constant dense<0.0> : ", scalar, "\n",
        "  %half = stablehlo.constant dense<0.5> : ", scalar, "\n",
        "  %bz = stablehlo.broadcast_in_dim %zero, dims = [] : (", scalar, ") -> ", x, "\n",
        "  %relu = stablehlo.maximum %x, %bz : ", x, "\n",
        "  %bh = stablehlo.broadcast_in_dim %half, dims = [] : (", scalar, ") -> ", g, "\n",
        "  %gh = stablehlo.multiply %g, %bh : ", g, "\n",
        SelectAndScatter(c, ty, "%relu", "%gh", "%zero"),
        "  %bx = stablehlo.broadcast_in_dim %half, dims = [] : (", scalar, ") -> ", x, "\n",
        "  %r = stablehlo.multiply %ss, %bx : ", x, "\n", "  return %r : ", x, "\n}\n");
    KernelRun run = CompareWithEvaluator(text, InputsFor(text, 77));
    EXPECT_TRUE(run.compiled) << run.refusal << "\n" << text;
    EXPECT_EQ(run.mismatches, 0);
  }
}

}  // namespace
}  // namespace ember::codegen
