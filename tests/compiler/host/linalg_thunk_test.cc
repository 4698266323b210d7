// cholesky, triangular_solve, custom_call @ember_lu and the Householder QR pair (@Qr,
// @ProductOfElementaryHouseholderReflectors) on the host backend's library thunk
// (linalg_thunk.h) against the evaluator, which computes in double and rounds once: f32, f64,
// c64 and c128; batches; matrices below and above the solvers' block sizes; every form of
// triangular_solve (side, triangle, transpose, unit diagonal); the triangle not read filled with
// garbage; a matrix that is not positive definite, or NaN, gives NaN for that matrix only;
// LU pivots and permutations equal, singular and rectangular matrices included; results nothing
// reads; ember_eigh and ember_svd (real types) by their values and by reconstruction and
// orthogonality (vector signs are the solver's), NaN in giving NaN out; bf16 and f16 on f32
// copies; integer types stay on the evaluator with the reason in the cost report. Factors agree to
// a few ulp of the type scaled by the size (sums are reassociated), not bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
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
  double tolerance;  // relative, per element, scaled by the matrix size
};
const Type kTypes[] = {{ir::ElementType::kF32, "f32", 2e-6},
                       {ir::ElementType::kF64, "f64", 4e-15},
                       {ir::ElementType::kC64, "complex<f32>", 2e-6},
                       {ir::ElementType::kC128, "complex<f64>", 4e-15}};

bool IsComplexType(ir::ElementType t) {
  return t == ir::ElementType::kC64 || t == ir::ElementType::kC128;
}

// The type of eigenvalues and singular values: real.
const char* RealMlir(const Type& type) {
  return type.type == ir::ElementType::kC64    ? "f32"
         : type.type == ir::ElementType::kC128 ? "f64"
                                               : type.mlir;
}

template <typename... L>
std::vector<ir::Literal> Args(L&&... literals) {
  std::vector<ir::Literal> v;
  (v.push_back(std::move(literals)), ...);
  return v;
}

// Result r of both backends agrees within `tolerance` * size relative to the largest magnitude
// of the evaluator's matrix (both NaN counts as equal); integers exactly.
void ExpectClose(const NativeRun& run, size_t r, double tolerance, int64_t size) {
  ASSERT_LT(r, run.host.size());
  ASSERT_LT(r, run.evaluator.size());
  const ir::Literal& want = run.evaluator[r].array;
  const ir::Literal& got = run.host[r].array;
  ASSERT_TRUE(want.shape() == got.shape())
      << want.shape().ToString() << " vs " << got.shape().ToString();
  const std::vector<Complex> w = ComplexValues(want), g = ComplexValues(got);
  double scale = 1;
  for (const Complex& v : w) {
    if (std::isfinite(std::abs(v))) scale = std::max(scale, std::abs(v));
  }
  int bad = 0;
  for (size_t i = 0; i < w.size() && bad < 5; ++i) {
    const bool wn = std::isnan(w[i].real()) || std::isnan(w[i].imag());
    const bool gn = std::isnan(g[i].real()) || std::isnan(g[i].imag());
    if (wn || gn) {
      if (wn != gn) {
        ADD_FAILURE() << "result " << r << " element " << i << ": " << g[i] << " vs " << w[i];
        ++bad;
      }
      continue;
    }
    const double limit = ir::IsFloat(want.element_type()) || IsComplexType(want.element_type())
                             ? tolerance * static_cast<double>(size) * scale
                             : 0;
    if (std::abs(g[i] - w[i]) > limit) {
      ADD_FAILURE() << "result " << r << " element " << i << ": host " << g[i] << " vs evaluator "
                    << w[i] << " (limit " << limit << ")";
      ++bad;
    }
  }
}

Complex Random(std::mt19937_64& rng, bool complex) {
  std::uniform_real_distribution<double> u(-1, 1);
  return complex ? Complex(u(rng), u(rng)) : Complex(u(rng), 0);
}

int64_t Count(const std::vector<int64_t>& dims) {
  int64_t c = 1;
  for (int64_t d : dims) c *= d;
  return c;
}

// Hermitian positive definite matrices (M M^H + n I) in the `lower` triangle, garbage in the
// other one (never read).
std::vector<Complex> SpdBatch(int64_t batch, int64_t n, bool lower, bool complex,
                              std::mt19937_64& rng) {
  std::vector<Complex> out;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Complex> m(static_cast<size_t>(n * n));
    for (Complex& v : m) v = Random(rng, complex);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        Complex s = 0;
        for (int64_t k = 0; k < n; ++k) s += m[i * n + k] * std::conj(m[j * n + k]);
        if (i == j) s = Complex(s.real() + static_cast<double>(n), 0);
        const bool kept = lower ? i >= j : i <= j;
        out.push_back(kept ? s : Complex(1e3, complex ? -7 : 0));
      }
    }
  }
  return out;
}

std::string CholeskyProgram(const std::vector<int64_t>& dims, const char* type, bool lower) {
  const std::string t = TensorType(dims, type);
  return absl::StrCat("func.func @main(%a: ", t, ") -> ", t, " {\n",
                      "  %r = \"stablehlo.cholesky\"(%a) {lower = ", lower ? "true" : "false",
                      "} : (", t, ") -> ", t, "\n  return %r : ", t, "\n}\n");
}

TEST(LinalgThunkTest, CholeskyMatchesTheEvaluator) {
  std::mt19937_64 rng(1);
  for (const Type& type : kTypes) {
    for (int64_t n : {1, 5, 64, 65, 150}) {
      for (int64_t batch : {1, 3}) {
        if (n == 150 && batch == 3) continue;
        for (bool lower : {true, false}) {
          SCOPED_TRACE(absl::StrCat(type.mlir, " n ", n, " batch ", batch, " lower ", lower));
          const std::vector<int64_t> dims = {batch, n, n};
          const std::string text = CholeskyProgram(dims, type.mlir, lower);
          NativeRun run = RunBothBackends(
              text, Args(ComplexLiteral(type.type, dims,
                                     SpdBatch(batch, n, lower, IsComplexType(type.type), rng))));
          ExpectClose(run, 0, type.tolerance, n);
          EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
          // The triangle not read is zero on both.
          const std::vector<Complex> got = ComplexValues(run.host[0].array);
          for (int64_t i = 0; i < Count(dims); ++i) {
            const int64_t r = (i / n) % n, c = i % n;
            if (lower ? c > r : c < r) {
              ASSERT_EQ(got[i], Complex(0)) << i;
            }
          }
        }
      }
    }
  }
}

TEST(LinalgThunkTest, MatricesThatAreNotPositiveDefiniteGiveNaNAlone) {
  for (const Type& type : kTypes) {
    SCOPED_TRACE(type.mlir);
    std::mt19937_64 rng(2);
    const int64_t n = 80;  // past one block: the failing pivot is in the second
    std::vector<Complex> v = SpdBatch(3, n, true, IsComplexType(type.type), rng);
    v[n * n + 70 * n + 70] = -1e6;  // matrix 1: a negative pivot
    v[2 * n * n + 3 * n + 1] = std::numeric_limits<double>::quiet_NaN();  // matrix 2: NaN
    const std::vector<int64_t> dims = {3, n, n};
    NativeRun run = RunBothBackends(CholeskyProgram(dims, type.mlir, true),
                                    Args(ComplexLiteral(type.type, dims, v)));
    ExpectClose(run, 0, type.tolerance, n);
    const std::vector<Complex> got = ComplexValues(run.host[0].array);
    EXPECT_FALSE(std::isnan(got[0].real()));
    for (int64_t i = n * n; i < 3 * n * n; ++i) ASSERT_TRUE(std::isnan(got[i].real())) << i;
  }
}

std::string TriangularProgram(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                              const char* type, bool left, bool lower, bool unit,
                              const char* transpose) {
  const std::string at = TensorType(a, type), bt = TensorType(b, type);
  return absl::StrCat(
      "func.func @main(%a: ", at, ", %b: ", bt, ") -> ", bt, " {\n",
      "  %r = \"stablehlo.triangular_solve\"(%a, %b) {left_side = ", left ? "true" : "false",
      ", lower = ", lower ? "true" : "false", ", unit_diagonal = ", unit ? "true" : "false",
      ", transpose_a = #stablehlo<transpose ", transpose, ">} : (", at, ", ", bt, ") -> ", bt,
      "\n  return %r : ", bt, "\n}\n");
}

TEST(LinalgThunkTest, TriangularSolveInEveryFormMatchesTheEvaluator) {
  std::mt19937_64 rng(3);
  for (const Type& type : kTypes) {
    const bool complex = IsComplexType(type.type);
    for (int64_t n : {1, 7, 70}) {
      for (bool left : {true, false}) {
        for (bool lower : {true, false}) {
          for (bool unit : {false, true}) {
            for (const char* transpose : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
              SCOPED_TRACE(absl::StrCat(type.mlir, " n ", n, " left ", left, " lower ", lower,
                                        " unit ", unit, " ", transpose));
              const int64_t batch = 2, m = n == 70 ? 3 : 5;
              const std::vector<int64_t> ad = {batch, n, n};
              const std::vector<int64_t> bd =
                  left ? std::vector<int64_t>{batch, n, m} : std::vector<int64_t>{batch, m, n};
              // Small off-diagonal entries, a diagonal of about 1 in magnitude (or garbage when
              // unit: never read), garbage in the other triangle.
              std::vector<Complex> a(static_cast<size_t>(Count(ad)));
              for (int64_t i = 0; i < Count(ad); ++i) {
                const int64_t r = (i / n) % n, c = i % n;
                const bool kept = lower ? r > c : r < c;
                if (r == c) {
                  a[i] = unit ? Complex(1e4, 0) : Complex(1.5, 0) + 0.5 * Random(rng, complex);
                } else {
                  a[i] = kept ? Random(rng, complex) / static_cast<double>(n) : Complex(-3e3, 0);
                }
              }
              std::vector<Complex> b(static_cast<size_t>(Count(bd)));
              for (Complex& v : b) v = Random(rng, complex);
              NativeRun run = RunBothBackends(
                  TriangularProgram(ad, bd, type.mlir, left, lower, unit, transpose),
                  Args(ComplexLiteral(type.type, ad, a), ComplexLiteral(type.type, bd, b)));
              ExpectClose(run, 0, type.tolerance, n);
              EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
            }
          }
        }
      }
    }
  }
}

std::string LuProgram(const std::vector<int64_t>& dims, const char* type, const std::string& ret) {
  std::vector<int64_t> pivots(dims.begin(), dims.end() - 1), perm(dims.begin(), dims.end() - 1);
  pivots.back() = std::min(dims[dims.size() - 2], dims.back());
  const std::string t = TensorType(dims, type), p = TensorType(pivots, "i32"),
                    q = TensorType(perm, "i32");
  const std::string all = absl::StrCat(t, ", ", p, ", ", q);
  const std::string returned = ret == "all" ? "%r#0, %r#1, %r#2" : "%r#1";
  const std::string returned_types = ret == "all" ? all : p;
  return absl::StrCat("func.func @main(%a: ", t, ") -> (", returned_types, ") {\n",
                      "  %r:3 = stablehlo.custom_call @ember_lu(%a) {api_version = 4 : i32} : (", t,
                      ") -> (", all, ")\n  return ", returned, " : ", returned_types, "\n}\n");
}

TEST(LinalgThunkTest, LuMatchesTheEvaluatorsGetrf) {
  std::mt19937_64 rng(4);
  const std::vector<std::vector<int64_t>> shapes = {
      {1, 1, 1}, {2, 5, 5}, {2, 7, 4}, {2, 4, 7}, {1, 100, 100}, {2, 70, 90}, {1, 90, 70}};
  for (const Type& type : kTypes) {
    for (const std::vector<int64_t>& dims : shapes) {
      SCOPED_TRACE(absl::StrCat(type.mlir, " ", absl::StrJoin(dims, "x")));
      std::vector<Complex> a(static_cast<size_t>(Count(dims)));
      for (Complex& v : a) v = Random(rng, IsComplexType(type.type));
      NativeRun run =
          RunBothBackends(LuProgram(dims, type.mlir, "all"), Args(ComplexLiteral(type.type, dims, a)));
      ExpectClose(run, 0, type.tolerance * 10, std::max(dims[1], dims[2]));
      ExpectClose(run, 1, 0, 1);  // pivots
      ExpectClose(run, 2, 0, 1);  // permutation
      EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
    }
  }
}

TEST(LinalgThunkTest, LuOfSingularMatricesAndUnreadResults) {
  // A zero column (its pivot step swaps nothing and scales nothing), a zero matrix, and a
  // rank-one matrix (ties among its pivots); only the pivots are returned (the factors have no
  // reader).
  for (const Type& type : kTypes) {
    SCOPED_TRACE(type.mlir);
    const int64_t n = 40;
    std::vector<Complex> a(static_cast<size_t>(3 * n * n));
    std::mt19937_64 rng(5);
    for (int64_t i = 0; i < n * n; ++i) a[i] = (i % n == 3) ? Complex(0) : Random(rng, false);
    for (int64_t i = 0; i < n * n; ++i) {
      // (Row scales that are powers of two: the eliminations are exact in every type.)
      a[2 * n * n + i] =
          std::ldexp(1.0, static_cast<int>(i / n % 3)) * static_cast<double>(i % n % 7 + 1);
    }
    const std::vector<int64_t> dims = {3, n, n};
    NativeRun all =
        RunBothBackends(LuProgram(dims, type.mlir, "all"), Args(ComplexLiteral(type.type, dims, a)));
    ExpectClose(all, 0, type.tolerance * 10, n);
    ExpectClose(all, 1, 0, 1);
    ExpectClose(all, 2, 0, 1);
    NativeRun pivots = RunBothBackends(LuProgram(dims, type.mlir, "pivots"),
                                       Args(ComplexLiteral(type.type, dims, a)));
    ExpectClose(pivots, 0, 0, 1);
    EXPECT_EQ(pivots.cost_report.find("  evaluator "), std::string::npos) << pivots.cost_report;
  }
}

std::string QrProgram(const std::vector<int64_t>& dims, const char* type) {
  std::vector<int64_t> taus(dims.begin(), dims.end() - 1);
  taus.back() = std::min(dims[dims.size() - 2], dims.back());
  const std::string t = TensorType(dims, type), tt = TensorType(taus, type);
  return absl::StrCat("func.func @main(%a: ", t, ") -> (", t, ", ", tt, ", ", t, ") {\n",
                      "  %r:2 = stablehlo.custom_call @Qr(%a) : (", t, ") -> (", t, ", ", tt,
                      ")\n  %q = stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(",
                      "%r#0, %r#1) : (", t, ", ", tt, ") -> ", t, "\n  return %r#0, %r#1, %q : ", t,
                      ", ", tt, ", ", t, "\n}\n");
}

TEST(LinalgThunkTest, HouseholderQrPairMatchesTheEvaluator) {
  // geqrf's packed factors and taus, and orgqr's q from them: square, tall, wide, batched,
  // one column and one row; a zero column (tau 0).
  std::mt19937_64 rng(7);
  const std::vector<std::vector<int64_t>> shapes = {{1, 1, 1},   {2, 6, 6},   {2, 9, 4}, {2, 4, 9},
                                                    {1, 80, 80}, {3, 50, 20}, {1, 7, 1}, {1, 1, 7}};
  for (const Type& type : kTypes) {
    for (const std::vector<int64_t>& dims : shapes) {
      SCOPED_TRACE(absl::StrCat(type.mlir, " ", absl::StrJoin(dims, "x")));
      std::vector<Complex> a(static_cast<size_t>(Count(dims)));
      for (Complex& v : a) v = Random(rng, IsComplexType(type.type));
      if (dims[2] > 2) {
        for (int64_t i = 0; i < dims[1]; ++i) a[i * dims[2] + 1] = 0;  // matrix 0, column 1
      }
      NativeRun run =
          RunBothBackends(QrProgram(dims, type.mlir), Args(ComplexLiteral(type.type, dims, a)));
      const int64_t size = std::max(dims[1], dims[2]);
      ExpectClose(run, 0, type.tolerance * 10, size);
      ExpectClose(run, 1, type.tolerance * 10, size);
      ExpectClose(run, 2, type.tolerance * 10, size);
      EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
    }
  }
}

TEST(LinalgThunkTest, HouseholderProductOfFewerReflectors) {
  // orgqr with k < min(rows, cols) reflectors (the taus operand's last dimension).
  for (const Type& type : kTypes) {
    SCOPED_TRACE(type.mlir);
    std::mt19937_64 rng(8);
    const std::vector<int64_t> ad = {2, 12, 8}, td = {2, 5};
    std::vector<Complex> a(static_cast<size_t>(Count(ad))), t(static_cast<size_t>(Count(td)));
    for (Complex& v : a) v = Random(rng, IsComplexType(type.type));
    for (Complex& v : t) v = Complex(1, 0) + 0.5 * Random(rng, IsComplexType(type.type));
    const std::string at = TensorType(ad, type.mlir), tt = TensorType(td, type.mlir);
    const std::string text = absl::StrCat(
        "func.func @main(%a: ", at, ", %t: ", tt, ") -> ", at, " {\n",
        "  %q = stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(%a, %t) : (", at,
        ", ", tt, ") -> ", at, "\n  return %q : ", at, "\n}\n");
    NativeRun run =
        RunBothBackends(text, Args(ComplexLiteral(type.type, ad, a), ComplexLiteral(type.type, td, t)));
    ExpectClose(run, 0, type.tolerance * 10, 12);
    EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
  }
}

// Column j of the rows x cols row-major matrix m.
std::vector<Complex> Column(const std::vector<Complex>& m, int64_t offset, int64_t rows,
                            int64_t cols, int64_t j) {
  std::vector<Complex> c(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) c[i] = m[offset + i * cols + j];
  return c;
}

TEST(LinalgThunkTest, SymmetricEigenAgreesWithTheEvaluator) {
  // Eigenvalues as the evaluator's; eigenvectors (signs and phases are the solver's) orthonormal
  // and reconstructing the matrix read from the requested triangle (garbage in the other;
  // complex diagonals carry an imaginary part that is not read, as LAPACK's xHEEVD).
  std::mt19937_64 rng(9);
  for (const Type& type : kTypes) {
    const bool complex = IsComplexType(type.type);
    for (int64_t n : {1, 5, 40}) {
      for (bool lower : {true, false}) {
        SCOPED_TRACE(absl::StrCat(type.mlir, " n ", n, " lower ", lower));
        const std::vector<int64_t> dims = {2, n, n}, wd = {2, n};
        const std::string t = TensorType(dims, type.mlir), wt = TensorType(wd, RealMlir(type));
        const std::string text =
            absl::StrCat("func.func @main(%a: ", t, ") -> (", t, ", ", wt, ") {\n",
                         "  %r:2 = stablehlo.custom_call @ember_eigh(%a) {api_version = 4 : i32, ",
                         "backend_config = {lower = ", lower ? "true" : "false", "}} : (", t,
                         ") -> (", t, ", ", wt, ")\n  return %r#0, %r#1 : ", t, ", ", wt, "\n}\n");
        std::vector<Complex> a = SpdBatch(2, n, lower, complex, rng);
        if (complex) {
          for (int64_t i = 0; i < 2 * n; ++i) a[i * n + i % n] += Complex(0, 0.25);
        }
        NativeRun run = RunBothBackends(text, Args(ComplexLiteral(type.type, dims, a)));
        ExpectClose(run, 1, type.tolerance * 10, n);  // eigenvalues
        EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
        const std::vector<Complex> v = ComplexValues(run.host[0].array), w = ComplexValues(run.host[1].array);
        for (int64_t b = 0; b < 2; ++b) {
          double scale = 0;
          for (int64_t i = 0; i < n * n; ++i) scale = std::max(scale, std::abs(a[b * n * n + i]));
          for (int64_t i = 0; i < n; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              Complex recon = 0, dot = 0;
              for (int64_t l = 0; l < n; ++l) {
                recon +=
                    v[b * n * n + i * n + l] * w[b * n + l] * std::conj(v[b * n * n + j * n + l]);
                dot += std::conj(v[b * n * n + l * n + i]) * v[b * n * n + l * n + j];
              }
              const Complex want = i == j ? Complex(a[b * n * n + i * n + i].real(), 0)
                                   : (lower ? i > j : i < j)
                                       ? a[b * n * n + i * n + j]
                                       : std::conj(a[b * n * n + j * n + i]);
              ASSERT_LE(std::abs(recon - want), type.tolerance * 50 * n * scale) << i << "," << j;
              ASSERT_LE(std::abs(dot - Complex(i == j ? 1 : 0)), type.tolerance * 50 * n);
            }
          }
        }
      }
    }
  }
}

std::string SvdProgram(const std::vector<int64_t>& dims, const Type& element, bool full,
                       bool uv) {
  const char* type = element.mlir;
  const int64_t rows = dims[1], cols = dims[2], k = std::min(rows, cols);
  const std::string t = TensorType(dims, type), st = TensorType({dims[0], k}, RealMlir(element));
  const std::string ut = TensorType({dims[0], rows, full ? rows : k}, type);
  const std::string vt = TensorType({dims[0], full ? cols : k, cols}, type);
  const std::string results = uv ? absl::StrCat(st, ", ", ut, ", ", vt) : st;
  return absl::StrCat("func.func @main(%a: ", t, ") -> (", results, ") {\n", "  %r:", uv ? 3 : 1,
                      " = stablehlo.custom_call @ember_svd(%a) {api_version = ",
                      "4 : i32, backend_config = {full_matrices = ", full ? "true" : "false",
                      ", compute_uv = ", uv ? "true" : "false", "}} : (", t, ") -> (", results,
                      ")\n  return ", uv ? "%r#0, %r#1, %r#2" : "%r#0", " : ", results, "\n}\n");
}

TEST(LinalgThunkTest, SingularValuesAgreeWithTheEvaluator) {
  // s as the evaluator's; u diag(s) vt reconstructs a; u and vt orthonormal (full and thin);
  // values only; empty matrices give the evaluator's identities.
  std::mt19937_64 rng(10);
  const std::vector<std::vector<int64_t>> shapes = {{2, 6, 4},   {2, 4, 6}, {1, 5, 5},
                                                    {1, 40, 30}, {1, 1, 7}, {2, 0, 3}};
  for (const Type& type : kTypes) {
    const bool complex = IsComplexType(type.type);
    for (const std::vector<int64_t>& dims : shapes) {
      for (bool full : {false, true}) {
        for (bool uv : {true, false}) {
          SCOPED_TRACE(
              absl::StrCat(type.mlir, " ", absl::StrJoin(dims, "x"), " full ", full, " uv ", uv));
          std::vector<Complex> a(static_cast<size_t>(Count(dims)));
          for (Complex& v : a) v = Random(rng, complex);
          NativeRun run = RunBothBackends(SvdProgram(dims, type, full, uv),
                                          Args(ComplexLiteral(type.type, dims, a)));
          const int64_t rows = dims[1], cols = dims[2], k = std::min(rows, cols);
          ExpectClose(run, 0, type.tolerance * 10, std::max<int64_t>(1, k));
          EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
          if (!uv) continue;
          if (k == 0) {
            ExpectClose(run, 1, 0, 1);
            ExpectClose(run, 2, 0, 1);
            continue;
          }
          const std::vector<Complex> s = ComplexValues(run.host[0].array), u = ComplexValues(run.host[1].array),
                                     vt = ComplexValues(run.host[2].array);
          const int64_t uc = full ? rows : k, vr = full ? cols : k;
          for (int64_t b = 0; b < dims[0]; ++b) {
            for (int64_t i = 0; i < rows; ++i) {
              for (int64_t j = 0; j < cols; ++j) {
                Complex recon = 0;
                for (int64_t l = 0; l < k; ++l) {
                  recon += u[b * rows * uc + i * uc + l] * s[b * k + l] *
                           vt[b * vr * cols + l * cols + j];
                }
                ASSERT_LE(std::abs(recon - a[b * rows * cols + i * cols + j]),
                          type.tolerance * 50 * std::max(rows, cols));
              }
            }
            for (int64_t i = 0; i < uc; ++i) {
              for (int64_t j = 0; j < uc; ++j) {
                Complex dot = 0;
                const std::vector<Complex> ci = Column(u, b * rows * uc, rows, uc, i);
                const std::vector<Complex> cj = Column(u, b * rows * uc, rows, uc, j);
                for (int64_t l = 0; l < rows; ++l) dot += std::conj(ci[l]) * cj[l];
                ASSERT_LE(std::abs(dot - Complex(i == j ? 1 : 0)), type.tolerance * 50 * rows);
              }
            }
          }
        }
      }
    }
  }
}

TEST(LinalgThunkTest, NaNInputGivesNaNEigenAndSingularValues) {
  for (const Type& type : kTypes) {
    SCOPED_TRACE(type.mlir);
    std::vector<Complex> a(18, Complex(1, 0));
    // Matrix 0 only; in a complex matrix, a NaN imaginary part alone.
    a[4] = IsComplexType(type.type) ? Complex(1, std::numeric_limits<double>::quiet_NaN())
                                    : Complex(std::numeric_limits<double>::quiet_NaN(), 0);
    NativeRun run = RunBothBackends(SvdProgram({2, 3, 3}, type, false, false),
                                    Args(ComplexLiteral(type.type, {2, 3, 3}, a)));
    const std::vector<Complex> s = ComplexValues(run.host[0].array);
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(s[i].real())) << i;
    for (int i = 3; i < 6; ++i) EXPECT_FALSE(std::isnan(s[i].real())) << i;
  }
}

TEST(LinalgThunkTest, NarrowFloatsRunOnF32CopiesRoundedOnce) {
  // bf16 and f16: every op on f32 copies, each result rounded back once; the evaluator computes
  // in double and rounds once, so they agree to about an ulp of the type.
  const Type narrow[] = {{ir::ElementType::kBF16, "bf16", 1.0 / 128},
                         {ir::ElementType::kF16, "f16", 1.0 / 1024}};
  std::mt19937_64 rng(11);
  for (const Type& type : narrow) {
    SCOPED_TRACE(type.mlir);
    const int64_t n = 12;
    const std::vector<int64_t> dims = {2, n, n};
    auto expect_library = [](const NativeRun& run) {
      EXPECT_EQ(run.cost_report.find("  evaluator "), std::string::npos) << run.cost_report;
    };
    const std::vector<Complex> spd = SpdBatch(2, n, true, false, rng);
    NativeRun cholesky = RunBothBackends(CholeskyProgram(dims, type.mlir, true),
                                         Args(ComplexLiteral(type.type, dims, spd)));
    ExpectClose(cholesky, 0, type.tolerance, 1);
    expect_library(cholesky);
    std::vector<Complex> b(static_cast<size_t>(2 * n * 3));
    for (Complex& v : b) v = Random(rng, false);
    NativeRun solve = RunBothBackends(
        TriangularProgram(dims, {2, n, 3}, type.mlir, true, true, false, "NO_TRANSPOSE"),
        Args(ComplexLiteral(type.type, dims, spd), ComplexLiteral(type.type, {2, n, 3}, b)));
    ExpectClose(solve, 0, type.tolerance, 1);
    expect_library(solve);
    // (Powers of two on a diagonal that dominates: the pivots are the diagonal in both.)
    std::vector<Complex> a(static_cast<size_t>(2 * n * n));
    for (int64_t i = 0; i < 2 * n * n; ++i) {
      a[i] = (i / n) % n == i % n ? Complex(std::ldexp(1.0, static_cast<int>(i % 3)) * 16, 0)
                                  : Random(rng, false);
    }
    NativeRun lu =
        RunBothBackends(LuProgram(dims, type.mlir, "all"), Args(ComplexLiteral(type.type, dims, a)));
    ExpectClose(lu, 0, type.tolerance, 1);
    ExpectClose(lu, 1, 0, 1);  // pivots
    ExpectClose(lu, 2, 0, 1);  // permutation
    expect_library(lu);
    NativeRun qr =
        RunBothBackends(QrProgram(dims, type.mlir), Args(ComplexLiteral(type.type, dims, a)));
    for (size_t r = 0; r < 3; ++r) ExpectClose(qr, r, type.tolerance, 2);
    expect_library(qr);
    NativeRun svd = RunBothBackends(SvdProgram(dims, type, false, false),
                                    Args(ComplexLiteral(type.type, dims, a)));
    ExpectClose(svd, 0, type.tolerance, 1);
    expect_library(svd);
    const std::string t = TensorType(dims, type.mlir), wt = TensorType({2, n}, type.mlir);
    NativeRun eigh = RunBothBackends(
        absl::StrCat("func.func @main(%a: ", t, ") -> ", wt, " {\n",
                     "  %r:2 = stablehlo.custom_call @ember_eigh(%a) {api_version = 4 : i32, ",
                     "backend_config = {lower = true}} : (", t, ") -> (", t, ", ", wt,
                     ")\n  return %r#1 : ", wt, "\n}\n"),
        Args(ComplexLiteral(type.type, dims, spd)));
    ExpectClose(eigh, 0, type.tolerance, 1);
    expect_library(eigh);
  }
}

TEST(LinalgThunkTest, OtherTypesStayOnTheEvaluatorWithTheReason) {
  // An integer ember_lu is compiled onto the evaluator's op table, with its reason in the cost
  // report (the verifier rejects integer cholesky and triangular_solve).
  const std::pair<std::string, std::string> cases[] = {
      {LuProgram({1, 4, 4}, "i32", "all"), "no library kernel for i32"}};
  for (const auto& [text, reason] : cases) {
    ExpectTheEvaluatorRunsIt(text, reason);
  }
}

}  // namespace
}  // namespace ember::host
