// custom_call @ember_eig, @ember_schur, @ember_hessenberg and @ember_tridiagonal on the host
// backend's DecompositionThunk (decomposition_thunk.h) against the evaluator, bit for bit (any
// NaN matching any NaN): both run the same double-precision cores and round once, so every
// element must agree, in f32, f64, c64, c128, bf16 and f16; batches across the pool; every flag
// (left/right eigenvectors, Schur vectors, lower/upper triangle); results nothing reads; a NaN
// matrix giving NaN alone; an operand type the thunk does not take staying on the evaluator with
// its reason in the cost report.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/compiler/host/native_op_differential.h"

namespace ember::host {
namespace {

using namespace testing;  // NOLINT: the shared differential helpers
using Complex = std::complex<double>;

struct Type {
  ir::ElementType type;
  const char* mlir;
  const char* complex_mlir;  // eig's eigenvalues and vectors
  const char* real_mlir;     // tridiagonal's d and e
};
const Type kTypes[] = {
    {ir::ElementType::kF32, "f32", "complex<f32>", "f32"},
    {ir::ElementType::kF64, "f64", "complex<f64>", "f64"},
    {ir::ElementType::kC64, "complex<f32>", "complex<f32>", "f32"},
    {ir::ElementType::kC128, "complex<f64>", "complex<f64>", "f64"},
    {ir::ElementType::kBF16, "bf16", "complex<f32>", "bf16"},
    {ir::ElementType::kF16, "f16", "complex<f32>", "f16"},
};

bool IsComplexType(ir::ElementType t) {
  return t == ir::ElementType::kC64 || t == ir::ElementType::kC128;
}

// Both parts have the same bits, or are both NaN.
bool SamePart(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  uint64_t x, y;
  std::memcpy(&x, &a, 8);
  std::memcpy(&y, &b, 8);
  return x == y;
}

// Every result of the host backend equals the evaluator's, element by element.
void ExpectSameBits(const NativeRun& run) {
  ASSERT_FALSE(run.host.empty()) << "the host backend gave no results";
  ASSERT_EQ(run.host.size(), run.evaluator.size());
  for (size_t r = 0; r < run.host.size(); ++r) {
    const ir::Literal& want = run.evaluator[r].array;
    const ir::Literal& got = run.host[r].array;
    ASSERT_TRUE(want.shape() == got.shape()) << r;
    const std::vector<Complex> w = ComplexValues(want), g = ComplexValues(got);
    int bad = 0;
    for (size_t i = 0; i < w.size() && bad < 5; ++i) {
      if (!SamePart(w[i].real(), g[i].real()) || !SamePart(w[i].imag(), g[i].imag())) {
        ADD_FAILURE() << "result " << r << " element " << i << ": host " << g[i] << " vs evaluator "
                      << w[i];
        ++bad;
      }
    }
  }
}

std::vector<Complex> RandomMatrices(int64_t count, bool complex, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Complex> v(static_cast<size_t>(count));
  for (Complex& x : v) x = complex ? Complex(u(rng), u(rng)) : Complex(u(rng), 0);
  return v;
}

// One decomposition of the operand `dims` (batch, n, n) and the results it returns: `results`
// are the result types the op gives, `returned` the indices the program returns.
struct Call {
  std::string target;
  std::string config;  // the backend_config dictionary's entries
  std::vector<std::string> results;
};

std::string Program(const Call& call, const std::string& operand,
                    const std::vector<size_t>& returned) {
  std::vector<std::string> out, names;
  for (size_t r : returned) {
    out.push_back(call.results[r]);
    names.push_back(absl::StrCat("%r#", r));
  }
  const std::string results = absl::StrJoin(call.results, ", ");
  return absl::StrCat("func.func @main(%a: ", operand, ") -> (", absl::StrJoin(out, ", "),
                      ") {\n  %r:", call.results.size(), " = stablehlo.custom_call @", call.target,
                      "(%a) {api_version = 4 : i32, backend_config = {", call.config, "}} : (",
                      operand, ") -> (", results, ")\n  return ", absl::StrJoin(names, ", "), " : ",
                      absl::StrJoin(out, ", "), "\n}\n");
}

// Every form of the four calls on (batch, n, n) matrices of `type`.
std::vector<Call> Calls(const Type& type, int64_t batch, int64_t n) {
  const std::vector<int64_t> m = {batch, n, n}, v = {batch, n},
                             taus = {batch, std::max<int64_t>(n - 1, 0)};
  const std::string a = TensorType(m, type.mlir), vc = TensorType(m, type.complex_mlir),
                    w = TensorType(v, type.complex_mlir), t = TensorType(taus, type.mlir);
  std::vector<Call> calls;
  for (bool left : {false, true}) {
    for (bool right : {false, true}) {
      Call c{"ember_eig",
             absl::StrCat("compute_left = ", left, " : i1, compute_right = ", right, " : i1"),
             {w}};
      if (left) c.results.push_back(vc);
      if (right) c.results.push_back(vc);
      calls.push_back(c);
    }
  }
  calls.push_back({"ember_schur", "compute_schur_vectors = true", {a, a}});
  calls.push_back({"ember_schur", "compute_schur_vectors = false", {a}});
  calls.push_back({"ember_hessenberg", "", {a, t}});
  for (bool lower : {true, false}) {
    const std::string d = TensorType(v, type.real_mlir), e = TensorType(taus, type.real_mlir);
    calls.push_back({"ember_tridiagonal", lower ? "lower = true" : "lower = false", {a, d, e, t}});
  }
  return calls;
}

std::vector<size_t> All(const Call& call) {
  std::vector<size_t> r;
  for (size_t i = 0; i < call.results.size(); ++i) r.push_back(i);
  return r;
}

TEST(DecompositionThunkTest, EveryCallMatchesTheEvaluatorBitForBit) {
  std::mt19937_64 rng(1);
  for (const Type& type : kTypes) {
    for (int64_t n : {1, 4, 17}) {
      const std::vector<int64_t> dims = {3, n, n};
      for (const Call& call : Calls(type, 3, n)) {
        SCOPED_TRACE(absl::StrCat(type.mlir, " n ", n, " @", call.target, " {", call.config, "}"));
        const std::string text = Program(call, TensorType(dims, type.mlir), All(call));
        NativeRun run = RunBothBackends(
            text,
            ComplexLiteral(type.type, dims, RandomMatrices(3 * n * n, IsComplexType(type.type), rng)));
        ExpectSameBits(run);
        EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
      }
    }
  }
}

TEST(DecompositionThunkTest, ResultsNothingReadsAreLeftOut) {
  std::mt19937_64 rng(2);
  for (const Type& type : {kTypes[0], kTypes[3]}) {
    const int64_t n = 6;
    const std::vector<int64_t> dims = {2, n, n};
    for (const Call& call : Calls(type, 2, n)) {
      // Only the last result, then only the first.
      for (size_t returned : {call.results.size() - 1, size_t{0}}) {
        SCOPED_TRACE(
            absl::StrCat(type.mlir, " @", call.target, " {", call.config, "} result ", returned));
        NativeRun run = RunBothBackends(
            Program(call, TensorType(dims, type.mlir), {returned}),
            ComplexLiteral(type.type, dims, RandomMatrices(2 * n * n, IsComplexType(type.type), rng)));
        ExpectSameBits(run);
        EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
      }
    }
  }
}

TEST(DecompositionThunkTest, ANaNMatrixGivesNaNAlone) {
  std::mt19937_64 rng(3);
  for (const Type& type : kTypes) {
    const int64_t n = 5;
    const std::vector<int64_t> dims = {2, n, n};
    std::vector<Complex> a = RandomMatrices(2 * n * n, IsComplexType(type.type), rng);
    a[7] = Complex(std::numeric_limits<double>::quiet_NaN(), 0);  // matrix 0 only
    for (const Call& call : Calls(type, 2, n)) {
      if (call.target != "ember_eig" && call.target != "ember_schur") continue;
      SCOPED_TRACE(absl::StrCat(type.mlir, " @", call.target, " {", call.config, "}"));
      NativeRun run = RunBothBackends(Program(call, TensorType(dims, type.mlir), All(call)),
                                      ComplexLiteral(type.type, dims, a));
      ExpectSameBits(run);
      const std::vector<Complex> first = ComplexValues(run.host[0].array);
      const size_t half = first.size() / 2;
      for (size_t i = 0; i < first.size(); ++i) {
        EXPECT_EQ(std::isnan(first[i].real()), i < half) << i;
      }
    }
  }
}

TEST(DecompositionThunkTest, EmptyMatricesAndBatches) {
  for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{{2, 0, 0}, {0, 3, 3}}) {
    for (const Call& call : Calls(kTypes[0], dims[0], dims[1])) {
      SCOPED_TRACE(
          absl::StrCat(absl::StrJoin(dims, "x"), " @", call.target, " {", call.config, "}"));
      NativeRun run = RunBothBackends(Program(call, TensorType(dims, "f32"), All(call)),
                                      ComplexLiteral(ir::ElementType::kF32, dims, {}));
      ExpectSameBits(run);
    }
  }
}

TEST(DecompositionThunkTest, OtherOperandsStayOnTheEvaluatorWithTheReason) {
  const std::string s32 = TensorType({3, 3}, "i32");
  const std::pair<std::string, std::string> cases[] = {
      {Program({"ember_schur", "compute_schur_vectors = false", {s32}}, s32, {0}),
       "a i32 operand (float and complex types only)"},
      {Program({"ember_hessenberg", "", {TensorType({3, 3}, "f32")}}, TensorType({3, 3}, "f32"),
               {0}),
       "1 results where ember_hessenberg has 2"},
      {Program({"ember_eig", "compute_left = 1.0 : f32", {TensorType({3}, "complex<f32>")}},
               TensorType({3, 3}, "f32"), {0}),
       "a backend_config flag that is not a boolean"},
  };
  for (const auto& [text, reason] : cases) {
    ExpectTheEvaluatorRunsIt(text, reason);
  }
}

}  // namespace
}  // namespace ember::host
