// Sorts whose results are read only through slices of their first k positions (lax.top_k as JAX
// hands it over: a stable sort of (x, iota) in descending total order, then slices [0, k)) run as
// a partial selection with the compiled comparator (sort_thunk.h); against the evaluator's full
// sort: floats with NaN of both signs, -0/+0, inf and ties, integers, k = 0, 1, n/4 and n,
// ascending and descending, the first and the last dimension, two slices of different k. Sorts
// whose results are read otherwise, or whose comparator is not a plain total order, stay full.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/compiler/host/native_op_differential.h"

namespace ember::host {
namespace {

using ir::ElementType;
using namespace testing;  // NOLINT: the shared differential helpers
namespace ti = codegen::test_inputs;

struct TopKSort {
  std::vector<int64_t> dims;
  int64_t dimension;
  int64_t k_values, k_indices;  // the slices' lengths along `dimension`
  int64_t start = 0;            // of the values' slice
  const char* direction = "GT";
  const char* order = nullptr;  // compare type; null: TOTALORDER for floats, SIGNED otherwise
};

// sort(x, iota) along c.dimension with one compare of the keys, then a slice of each result.
std::string TopKProgram(const TopKSort& c, ElementType type) {
  const char* t = ti::Mlir(type);
  const char* order = c.order != nullptr                                      ? c.order
                      : ir::IsFloat(type)                                     ? "TOTALORDER"
                      : type == ElementType::kU8 || type == ElementType::kU32 ? "UNSIGNED"
                                                                              : "SIGNED";
  auto slice = [&](const char* value, const char* elem, int64_t start, int64_t k) {
    std::vector<std::string> ranges;
    std::vector<int64_t> out = c.dims;
    for (size_t d = 0; d < c.dims.size(); ++d) {
      const bool here = static_cast<int64_t>(d) == c.dimension;
      ranges.push_back(here ? absl::StrCat(start, ":", start + k) : absl::StrCat("0:", c.dims[d]));
      if (here) out[d] = k;
    }
    return std::make_pair(
        absl::StrCat("stablehlo.slice ", value, " [", absl::StrJoin(ranges, ", "), "] : (",
                     TensorType(c.dims, elem), ") -> ", TensorType(out, elem)),
        TensorType(out, elem));
  };
  const auto [values, values_type] = slice("%s#0", t, c.start, c.k_values);
  const auto [indices, indices_type] = slice("%s#1", "i32", 0, c.k_indices);
  const std::string x = TensorType(c.dims, t), i = TensorType(c.dims, "i32");
  const std::string scalar = absl::StrCat("tensor<", t, ">");
  return absl::StrCat("func.func @main(%x: ", x, ") -> (", values_type, ", ", indices_type, ") {\n",
                      "  %i = stablehlo.iota dim = ", c.dimension, " : ", i, "\n",
                      "  %s:2 = \"stablehlo.sort\"(%x, %i) ({\n", "  ^bb0(%a: ", scalar,
                      ", %b: ", scalar, ", %ia: tensor<i32>, %ib: tensor<i32>):\n",
                      "    %c = stablehlo.compare ", c.direction, ", %a, %b, ", order, " : (",
                      scalar, ", ", scalar, ") -> tensor<i1>\n",
                      "    stablehlo.return %c : tensor<i1>\n", "  }) {dimension = ", c.dimension,
                      " : i64, is_stable = true} : (", x, ", ", i, ") -> (", x, ", ", i, ")\n",
                      "  %v = ", values, "\n", "  %j = ", indices, "\n",
                      "  return %v, %j : ", values_type, ", ", indices_type, "\n}\n");
}

void ExpectSame(const TopKSort& c, ElementType type, uint64_t seed, bool partial) {
  const std::string text = TopKProgram(c, type);
  std::mt19937_64 rng(seed);
  NativeRun run = RunBothBackends(text, MixedArray(type, c.dims, rng));
  EXPECT_EQ(CompareResults(run), 0) << text;
  // Every type's comparator is compiled (f16 in total order too: its loads keep signalling NaNs).
  EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
  EXPECT_EQ(run.cost_report.find("a partial sort") != std::string::npos, partial)
      << run.cost_report;
}

TEST(SortThunkTest, TopKAsSortAndSlicesSelectsTheEvaluatorsFirstPositions) {
  const ElementType types[] = {ElementType::kF32, ElementType::kBF16, ElementType::kF16,
                               ElementType::kF64, ElementType::kS32,  ElementType::kU8};
  uint64_t seed = 1;
  for (ElementType type : types) {
    for (int64_t k : {0, 1, 8, 75}) {
      SCOPED_TRACE(absl::StrCat(ti::Mlir(type), " k ", k));
      ExpectSame({{13, 300}, 1, k, k}, type, seed++, /*partial=*/true);
    }
    SCOPED_TRACE(ti::Mlir(type));
    ExpectSame({{13, 300}, 1, 300, 300}, type, seed++, /*partial=*/false);    // k = n
    ExpectSame({{200, 3}, 0, 5, 9}, type, seed++, /*partial=*/true);          // first dimension
    ExpectSame({{9, 64}, 1, 3, 7, 0, "LT"}, type, seed++, /*partial=*/true);  // ascending
  }
}

TEST(SortThunkTest, OtherReadsAndOrdersSortInFull) {
  // A slice past the start reads the rest of the line; a float LT without total order is not
  // a strict weak order with NaNs about.
  ExpectSame({{13, 300}, 1, 8, 8, 5}, ElementType::kF32, 100, /*partial=*/false);
  ExpectSame({{13, 300}, 1, 8, 8, 0, "LT", "FLOAT"}, ElementType::kF32, 101, /*partial=*/false);
}

TEST(SortThunkTest, ComparatorsOfF16InTotalOrderKeepSignallingNaNsInTheirPlace) {
  // A comparator that is not one compare of the keys runs compiled; its f16 loads keep signalling
  // NaNs (0x7C01, 0xFD00 among the inputs' specials), which total order puts below the quiet ones.
  // With the loads' plain conversion to f32 (it quiets them) the indices differ from the
  // evaluator's.
  const std::string x = "tensor<13x300xf16>", i = "tensor<13x300xi32>";
  const std::string text = absl::StrCat(
      "func.func @main(%x: ", x, ") -> (", x, ", ", i, ") {\n",
      "  %i = stablehlo.iota dim = 1 : ", i, "\n",
      "  %s:2 = \"stablehlo.sort\"(%x, %i) ({\n",
      "  ^bb0(%a: tensor<f16>, %b: tensor<f16>, %ia: tensor<i32>, %ib: tensor<i32>):\n",
      "    %lt = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f16>, tensor<f16>) -> "
      "tensor<i1>\n",
      "    %eq = stablehlo.compare EQ, %a, %b, TOTALORDER : (tensor<f16>, tensor<f16>) -> "
      "tensor<i1>\n",
      "    %ilt = stablehlo.compare LT, %ia, %ib, SIGNED : (tensor<i32>, tensor<i32>) -> "
      "tensor<i1>\n",
      "    %tie = stablehlo.and %eq, %ilt : tensor<i1>\n",
      "    %c = stablehlo.or %lt, %tie : tensor<i1>\n",
      "    stablehlo.return %c : tensor<i1>\n",
      "  }) {dimension = 1 : i64, is_stable = false} : (", x, ", ", i, ") -> (", x, ", ", i,
      ")\n",
      "  return %s#0, %s#1 : ", x, ", ", i, "\n}\n");
  std::mt19937_64 rng(7);
  NativeRun run = RunBothBackends(text, MixedArray(ElementType::kF16, {13, 300}, rng));
  EXPECT_EQ(CompareResults(run), 0) << text;
  EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
}

}  // namespace
}  // namespace ember::host
