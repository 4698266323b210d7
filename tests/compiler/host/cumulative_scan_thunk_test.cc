// Cumulative reduce_windows (cumsum, cumprod, cummax, cummin, and/or/xor scans) on the host
// backend's native scan (cumulative_scan_thunk.h) against the evaluator, bit for bit: every
// element type and body it takes, prefixes and suffixes, bodies op(acc, x) and op(x, acc), the
// last, first and a middle axis, lengths within one block, over several blocks with padding, and
// over three levels of blocks; NaN/inf/-0 among random values. Bodies of several ops (a clipped
// running sum, logaddexp for cumlogsumexp) run with the code generator's compiled combiner, in the
// evaluator's order for interpreted bodies. An init value the body changes (not XLA's scan) stays
// on the evaluator, and says so in the cost report.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "tests/compiler/host/native_op_differential.h"

namespace ember::host {
namespace {

using ir::ElementType;
using namespace testing;  // NOLINT: the shared differential helpers
namespace ti = codegen::test_inputs;

// The identity of `op` over `type` as an MLIR literal (the init value jnp's scans use).
std::string InitFor(ElementType type, const std::string& op) {
  const bool is_float = ir::IsFloat(type);
  const bool is_signed = type == ElementType::kS8 || type == ElementType::kS16 ||
                         type == ElementType::kS32 || type == ElementType::kS64;
  const int w = ti::Width(type);
  if (op == "add" || op == "or" || op == "xor") return is_float ? "0.0" : "0";
  if (op == "multiply") return is_float ? "1.0" : "1";
  if (op == "and")
    return is_signed ? "-1" : absl::StrCat(w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1);
  const bool max = op == "maximum";
  if (is_float) {
    switch (type) {
      case ElementType::kBF16:
        return max ? "0xFF80" : "0x7F80";
      case ElementType::kF16:
        return max ? "0xFC00" : "0x7C00";
      case ElementType::kF32:
        return max ? "0xFF800000" : "0x7F800000";
      default:
        return max ? "0xFFF0000000000000" : "0x7FF0000000000000";
    }
  }
  if (is_signed) {
    const uint64_t magnitude = uint64_t{1} << (w - 1);
    return max ? absl::StrCat("-", magnitude) : absl::StrCat(magnitude - 1);
  }
  return max ? "0" : absl::StrCat(w == 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1);
}

struct Scan {
  int64_t axis;
  bool reverse;  // suffixes
  bool swapped;  // the body computes op(x, acc)
};

// `%rN = reduce_window(%x, %init)` scanning `s.axis` of `dims`.
std::string ScanOp(int index, const std::vector<int64_t>& dims, const Scan& s, const char* op,
                   const char* type, const std::string& operand) {
  std::vector<int64_t> window(dims.size(), 1);
  std::vector<std::string> pads;
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t n = dims[d];
    if (static_cast<int64_t>(d) == s.axis) window[d] = n;
    const bool here = static_cast<int64_t>(d) == s.axis;
    pads.push_back(absl::StrCat("[", here && !s.reverse ? n - 1 : 0, ", ",
                                here && s.reverse ? n - 1 : 0, "]"));
  }
  const std::string scalar = TensorType({}, type);
  return absl::StrCat(
      "  %r", index, " = \"stablehlo.reduce_window\"(", operand, ", %init) ({\n",
      "  ^bb0(%a: ", scalar, ", %b: ", scalar, "):\n", "    %s = stablehlo.", op, " ",
      s.swapped ? "%b, %a" : "%a, %b", " : ", scalar, "\n", "    stablehlo.return %s : ", scalar,
      "\n  }) {window_dimensions = array<i64: ", absl::StrJoin(window, ", "),
      ">, padding = dense<[", absl::StrJoin(pads, ", "), "]> : tensor<", dims.size(),
      "x2xi64>} : (", TensorType(dims, type), ", ", scalar, ") -> ", TensorType(dims, type), "\n");
}

// One program of `scans` over %x, all returned.
std::string ScanProgram(const std::vector<int64_t>& dims, const std::vector<Scan>& scans,
                        const char* op, ElementType type, const std::string& init) {
  const char* t = ti::Mlir(type);
  const std::string x = TensorType(dims, t);
  std::vector<std::string> names, types;
  std::string body =
      absl::StrCat("  %init = stablehlo.constant dense<", init, "> : ", TensorType({}, t), "\n");
  for (size_t i = 0; i < scans.size(); ++i) {
    absl::StrAppend(&body, ScanOp(static_cast<int>(i), dims, scans[i], op, t, "%x"));
    names.push_back(absl::StrCat("%r", i));
    types.push_back(x);
  }
  return absl::StrCat("func.func @main(%x: ", x, ") -> (", absl::StrJoin(types, ", "), ") {\n",
                      body, "  return ", absl::StrJoin(names, ", "), " : ",
                      absl::StrJoin(types, ", "), "\n}\n");
}

// `specials`: NaN, inf and random bit patterns among the inputs (see MixedArray). `scan`: this
// scan runs it (else the code generator's loop kernel, which takes short windows it can fold in
// any order: integer bodies and float maxima/minima of at most 64 elements).
void ExpectNative(const std::string& text, ElementType type, const std::vector<int64_t>& dims,
                  uint64_t seed, bool specials = true, bool scan = true) {
  std::mt19937_64 rng(seed);
  NativeRun run = RunBothBackends(text, MixedArray(type, dims, rng, specials));
  EXPECT_EQ(CompareResults(run), 0) << text;
  EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
  EXPECT_EQ(run.cost_report.find("the evaluator runs it"), std::string::npos) << run.cost_report;
  EXPECT_EQ(run.cost_report.find("scanned natively") != std::string::npos, scan) << run.cost_report;
}

TEST(CumulativeScanThunkTest, EveryTypeAndBodyMatchesTheEvaluator) {
  // [67, 70]: rows of 70 and columns of 67 (five blocks each, the last padded). Longer than 64,
  // so the code generator leaves them to this scan (it folds shorter integer sums and float
  // maxima window by window).
  const std::vector<int64_t> dims = {67, 70};
  const std::vector<Scan> scans = {
      {1, false, false}, {1, true, true}, {0, false, true}, {0, true, false}};
  uint64_t seed = 1;
  for (const ti::TypeInfo& info : ti::kTypes) {
    if (info.type == ElementType::kPred) continue;
    std::vector<const char*> ops = {"add", "multiply", "maximum", "minimum"};
    if (!ir::IsFloat(info.type)) ops.insert(ops.end(), {"and", "or", "xor"});
    for (const char* op : ops) {
      SCOPED_TRACE(absl::StrCat(info.mlir, " ", op));
      ExpectNative(ScanProgram(dims, scans, op, info.type, InitFor(info.type, op)), info.type, dims,
                   seed++);
    }
  }
}

TEST(CumulativeScanThunkTest, LengthsAxesAndLaneGroups) {
  struct Case {
    std::vector<int64_t> dims;
    int64_t axis;
  };
  // Within one block, exactly one, one past, three levels of blocks (5000: 313 blocks of 16,
  // then 20, then 2); rows fewer and more than a lane group; columns of a middle axis wider
  // than a lane group.
  const Case cases[] = {{{1}, 0},         {{5}, 0},       {{16}, 0},     {{17}, 0},
                        {{300}, 0},       {{3, 5000}, 1}, {{20, 33}, 1}, {{70, 5}, 0},
                        {{2, 40, 70}, 1}, {{2, 3, 4}, 2}, {{9, 1}, 1}};
  const struct {
    ElementType type;
    const char* op;
  } bodies[] = {{ElementType::kF32, "add"},
                {ElementType::kBF16, "add"},
                {ElementType::kF16, "multiply"},
                {ElementType::kF64, "maximum"},
                {ElementType::kS32, "add"}};
  uint64_t seed = 50;
  for (const Case& c : cases) {
    for (const auto& b : bodies) {
      SCOPED_TRACE(absl::StrCat(absl::StrJoin(c.dims, "x"), " axis ", c.axis, " ", ti::Mlir(b.type),
                                " ", b.op));
      const std::vector<Scan> scans = {{c.axis, false, false}, {c.axis, true, false}};
      // Finite inputs too: NaN and inf soon swallow a long scan's rounding differences.
      // (A window of one element is no scan: a copy.)
      const bool reordered =
          ir::IsFloat(b.type) && (std::string(b.op) == "add" || std::string(b.op) == "multiply");
      const bool scan = c.dims[c.axis] > 1 && (c.dims[c.axis] > 64 || reordered);
      for (bool specials : {true, false}) {
        ExpectNative(ScanProgram(c.dims, scans, b.op, b.type, InitFor(b.type, b.op)), b.type,
                     c.dims, seed++, specials, scan);
      }
    }
  }
}

TEST(CumulativeScanThunkTest, ScanOfAFusedProducerFeedingAnEpilogue) {
  // jnp.cumsum(2 * x) / 3: the scan between two loop kernels.
  const std::string text = R"(
func.func @main(%x: tensor<64x300xf32>) -> tensor<64x300xf32> {
  %two = stablehlo.constant dense<2.0> : tensor<64x300xf32>
  %three = stablehlo.constant dense<3.0> : tensor<64x300xf32>
  %y = stablehlo.multiply %x, %two : tensor<64x300xf32>
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %c = "stablehlo.reduce_window"(%y, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {window_dimensions = array<i64: 1, 300>, padding = dense<[[0, 0], [299, 0]]> : tensor<2x2xi64>} : (tensor<64x300xf32>, tensor<f32>) -> tensor<64x300xf32>
  %d = stablehlo.divide %c, %three : tensor<64x300xf32>
  return %d : tensor<64x300xf32>
})";
  ExpectNative(text, ElementType::kF32, {64, 300}, 77, /*specials=*/false);
}

// One cumulative reduce_window of %x along `axis` with the body `body` (over %a, the accumulator,
// and %b, giving %r) and the init value `init`.
std::string CombinerProgram(const std::vector<int64_t>& dims, int64_t axis, bool reverse,
                            ElementType type, const std::string& init, const std::string& body) {
  const char* t = ti::Mlir(type);
  const std::string x = TensorType(dims, t), scalar = TensorType({}, t);
  std::vector<int64_t> window(dims.size(), 1);
  std::vector<std::string> pads;
  for (size_t d = 0; d < dims.size(); ++d) {
    const bool here = static_cast<int64_t>(d) == axis;
    if (here) window[d] = dims[d];
    pads.push_back(absl::StrCat("[", here && !reverse ? dims[d] - 1 : 0, ", ",
                                here && reverse ? dims[d] - 1 : 0, "]"));
  }
  return absl::StrCat(
      "func.func @main(%x: ", x, ") -> ", x, " {\n  %init = stablehlo.constant dense<", init,
      "> : ", scalar, "\n  %s = \"stablehlo.reduce_window\"(%x, %init) ({\n  ^bb0(%a: ", scalar,
      ", %b: ", scalar, "):\n", absl::StrReplaceAll(body, {{"$T", scalar}}),
      "    stablehlo.return %r : ", scalar, "\n  }) {window_dimensions = array<i64: ",
      absl::StrJoin(window, ", "), ">, padding = dense<[", absl::StrJoin(pads, ", "),
      "]> : tensor<", dims.size(), "x2xi64>} : (", x, ", ", scalar, ") -> ", x,
      "\n  return %s : ", x, "\n}\n");
}

TEST(CumulativeScanThunkTest, BodiesOfSeveralOpsRunCompiledInTheEvaluatorsOrder) {
  // A running sum clipped at 100 (init 0: min(0 + 0, 100) is 0), over every element type the
  // combiner takes but pred; and logaddexp in f64 (jax.lax.cumlogsumexp: exp and log1p through
  // the C library in double, as the evaluator computes them), init -inf. Both bit for bit.
  const std::string clipped =
      "    %s = stablehlo.add %a, %b : $T\n"
      "    %c = stablehlo.constant dense<100> : $T\n"
      "    %r = stablehlo.minimum %s, %c : $T\n";
  const std::string logaddexp =
      "    %m = stablehlo.maximum %a, %b : $T\n"
      "    %d = stablehlo.subtract %a, %b : $T\n"
      "    %nan = stablehlo.compare NE, %d, %d, FLOAT : ($T, $T) -> tensor<i1>\n"
      "    %sum = stablehlo.add %a, %b : $T\n"
      "    %abs = stablehlo.abs %d : $T\n"
      "    %neg = stablehlo.negate %abs : $T\n"
      "    %e = stablehlo.exponential %neg : $T\n"
      "    %l = stablehlo.log_plus_one %e : $T\n"
      "    %y = stablehlo.add %m, %l : $T\n"
      "    %r = stablehlo.select %nan, %sum, %y : tensor<i1>, $T\n";
  struct Case {
    std::vector<int64_t> dims;
    int64_t axis;
  };
  // Within one block, over several (padded), three levels of blocks (4100: 257 blocks of 16,
  // then 17, then 2; one row, since the evaluator interprets each step of these bodies, and its
  // reference costs a window of up to 4100 per element: the levels do not depend on the type, so
  // three types stand for the rest there), a middle axis.
  const Case cases[] = {{{9}, 0}, {{3, 70}, 1}, {{1, 4100}, 1}, {{40, 3}, 0}, {{2, 30, 4}, 1}};
  uint64_t seed = 900;
  for (const Case& c : cases) {
    const bool three_levels = c.dims[c.axis] > 16 * 16 * 16;  // the scanned length
    for (bool reverse : {false, true}) {
      for (const ti::TypeInfo& info : ti::kTypes) {
        if (info.type == ElementType::kPred || ti::Width(info.type) > 64) continue;
        if (!ir::IsFloat(info.type) && !ir::IsInteger(info.type)) continue;
        if (three_levels && info.type != ElementType::kF32 && info.type != ElementType::kS8 &&
            info.type != ElementType::kBF16) {
          continue;
        }
        SCOPED_TRACE(absl::StrCat(absl::StrJoin(c.dims, "x"), " axis ", c.axis,
                                  reverse ? " suffixes " : " prefixes ", info.mlir));
        const std::string init = ir::IsFloat(info.type) ? "0.0" : "0";
        ExpectNative(CombinerProgram(c.dims, c.axis, reverse, info.type, init, clipped), info.type,
                     c.dims, seed++, /*specials=*/false);
      }
      SCOPED_TRACE(absl::StrCat(absl::StrJoin(c.dims, "x"), " logaddexp"));
      for (bool specials : {false, true}) {
        // (Over 4100 elements, a running logaddexp is NaN or inf from the first special on.)
        if (three_levels && specials) continue;
        ExpectNative(CombinerProgram(c.dims, c.axis, reverse, ElementType::kF64,
                                     "0xFFF0000000000000", logaddexp),
                     ElementType::kF64, c.dims, seed++, specials);
      }
    }
  }
}

TEST(CumulativeScanThunkTest, AnInitTheCompiledBodyChangesStaysOnTheEvaluator) {
  // The clipped running sum from 1: min(1 + 1, 100) is 2.
  const std::vector<int64_t> dims = {2, 100};
  const std::string text = CombinerProgram(dims, 1, false, ElementType::kF32, "1.0",
                                           "    %s = stablehlo.add %a, %b : $T\n"
                                           "    %c = stablehlo.constant dense<100.0> : $T\n"
                                           "    %r = stablehlo.minimum %s, %c : $T\n");
  std::mt19937_64 rng(6);
  NativeRun run = RunBothBackends(text, MixedArray(ElementType::kF32, dims, rng, false));
  EXPECT_EQ(CompareResults(run), 0);
  EXPECT_NE(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
  EXPECT_NE(run.cost_report.find("not idempotent"), std::string::npos) << run.cost_report;
}

TEST(CumulativeScanThunkTest, AnInitTheBodyChangesStaysOnTheEvaluatorWithTheReason) {
  const std::vector<int64_t> dims = {4, 100};
  const std::string text = ScanProgram(dims, {{1, false, false}}, "add", ElementType::kF32, "1.0");
  std::mt19937_64 rng(5);
  NativeRun run = RunBothBackends(text, MixedArray(ElementType::kF32, dims, rng));
  EXPECT_EQ(CompareResults(run), 0);
  EXPECT_NE(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
  EXPECT_NE(run.cost_report.find("not idempotent"), std::string::npos) << run.cost_report;
}

}  // namespace
}  // namespace ember::host
