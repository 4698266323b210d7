// The evaluator's dense eigen/singular-value algorithms (compiler/evaluator/dense_linalg.h) on
// random real and complex matrices: every factorization reconstructs its input, its factors are
// unitary and shaped as LAPACK shapes them, and known spectra come back.
#include "compiler/evaluator/dense_linalg.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <type_traits>

namespace ember::eval::linalg {
namespace {

double Abs(double v) { return std::abs(v); }
double Abs(Complex v) { return std::abs(v); }
double Conj(double v) { return v; }
Complex Conj(Complex v) { return std::conj(v); }

template <typename S>
S Random(std::mt19937& rng) {
  std::normal_distribution<double> d;
  if constexpr (std::is_same_v<S, double>) {
    return d(rng);
  } else {
    return Complex(d(rng), d(rng));
  }
}

template <typename S>
Matrix<S> RandomMatrix(int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  Matrix<S> m(rows, cols);
  for (S& x : m.data) x = Random<S>(rng);
  return m;
}

template <typename S>
Matrix<S> Mul(const Matrix<S>& a, const Matrix<S>& b) {
  Matrix<S> c(a.rows, b.cols);
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t k = 0; k < a.cols; ++k) {
      for (int64_t j = 0; j < b.cols; ++j) c(i, j) += a(i, k) * b(k, j);
    }
  }
  return c;
}

template <typename S>
Matrix<S> Adjoint(const Matrix<S>& a) {
  Matrix<S> t(a.cols, a.rows);
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t j = 0; j < a.cols; ++j) t(j, i) = Conj(a(i, j));
  }
  return t;
}

template <typename S>
double MaxDiff(const Matrix<S>& a, const Matrix<S>& b) {
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  double d = 0;
  for (size_t i = 0; i < a.data.size(); ++i) d = std::max(d, Abs(a.data[i] - b.data[i]));
  return d;
}

template <typename S>
void ExpectOrthonormalColumns(const Matrix<S>& q) {
  EXPECT_LT(MaxDiff(Mul(Adjoint(q), q), Matrix<S>::Identity(q.cols)), 1e-12);
}

template <typename S>
Matrix<S> Hermitian(int64_t n, uint32_t seed) {
  Matrix<S> a = RandomMatrix<S>(n, n, seed);
  Matrix<S> h = Mul(a, Adjoint(a));
  for (int64_t i = 0; i < n; ++i) h(i, i) = S(std::real(Complex(h(i, i))));
  return h;
}

template <typename S>
class DenseLinalgTest : public ::testing::Test {};
using Scalars = ::testing::Types<double, Complex>;
TYPED_TEST_SUITE(DenseLinalgTest, Scalars);

TYPED_TEST(DenseLinalgTest, HermitianEigenReconstructsFromEitherTriangle) {
  using S = TypeParam;
  for (int64_t n : {1, 2, 5, 17}) {
    const Matrix<S> a = Hermitian<S>(n, 10 + n);
    for (bool lower : {true, false}) {
      // Garbage in the triangle that must not be read.
      Matrix<S> input = a;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          if (lower ? j > i : j < i) {
            input(i, j) = S(1e6);
          }
        }
      }
      std::vector<double> w;
      Matrix<S> v;
      ASSERT_TRUE(HermitianEigen(input, lower, w, v));
      EXPECT_TRUE(std::is_sorted(w.begin(), w.end()));
      ExpectOrthonormalColumns(v);
      Matrix<S> d(n, n);
      for (int64_t i = 0; i < n; ++i) d(i, i) = S(w[i]);
      EXPECT_LT(MaxDiff(Mul(Mul(v, d), Adjoint(v)), a), 1e-10 * n);
    }
  }
}

TYPED_TEST(DenseLinalgTest, LuFactorPivotsLikeGetrfAndReconstructs) {
  using S = TypeParam;
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 1}, {5, 5}, {7, 4}, {4, 7}, {16, 16}}) {
    const Matrix<S> a = RandomMatrix<S>(rows, cols, static_cast<uint32_t>(rows * 31 + cols));
    Matrix<S> lu = a;
    std::vector<int32_t> pivots;
    LuFactor(lu, pivots);
    const int64_t k = std::min(rows, cols);
    ASSERT_EQ(static_cast<int64_t>(pivots.size()), k);
    // P A = L U, with L unit lower (rows x k) and U upper (k x cols).
    Matrix<S> l(rows, k), u(k, cols), pa = a;
    for (int64_t j = 0; j < k; ++j) {
      ASSERT_GE(pivots[j], j);
      ASSERT_LT(pivots[j], rows);
      for (int64_t c = 0; c < cols; ++c) std::swap(pa(j, c), pa(pivots[j], c));
    }
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        if (i > j && j < k) l(i, j) = lu(i, j);
        if (i <= j && i < k) u(i, j) = lu(i, j);
      }
      if (i < k) l(i, i) = S(1);
    }
    EXPECT_LT(MaxDiff(Mul(l, u), pa), 1e-12 * rows) << rows << "x" << cols;
    // Partial pivoting: every multiplier is at most 1 in modulus (sqrt(2) for complex values,
    // whose pivots are chosen by |re| + |im|, as LAPACK's ICAMAX does).
    const double bound = std::is_same_v<S, Complex> ? std::sqrt(2.0) : 1.0;
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < std::min(i, k); ++j) {
        EXPECT_LE(std::abs(Complex(lu(i, j))), bound + 1e-12);
      }
    }
  }
  // Ties go to the first row; a zero column is left as it is (getrf reports it, and goes on).
  Matrix<S> tie(3, 3);
  tie(0, 0) = S(-2);
  tie(1, 0) = S(2);
  tie(2, 0) = S(1);
  tie(0, 1) = S(1);
  tie(1, 1) = S(1);
  tie(2, 2) = S(3);
  std::vector<int32_t> pivots;
  LuFactor(tie, pivots);
  EXPECT_EQ(pivots, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(tie(1, 0), S(-1));
  EXPECT_EQ(tie(1, 1), S(2));
  Matrix<S> zero(2, 2);
  zero(0, 1) = S(1);
  zero(1, 1) = S(4);
  LuFactor(zero, pivots);
  EXPECT_EQ(pivots, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(zero(1, 0), S(0));
  EXPECT_EQ(zero(1, 1), S(4));
}

TYPED_TEST(DenseLinalgTest, TridiagonalizePacksLapackStyle) {
  using S = TypeParam;
  const int64_t n = 6;
  const Matrix<S> a = Hermitian<S>(n, 3);
  for (bool lower : {true, false}) {
    Matrix<S> packed = a;
    std::vector<double> d, e;
    std::vector<S> taus;
    Tridiagonalize(packed, lower, d, e, taus);
    ASSERT_EQ(d.size(), 6u);
    ASSERT_EQ(e.size(), 5u);
    ASSERT_EQ(taus.size(), 5u);
    Matrix<S> t(n, n);
    for (int64_t i = 0; i < n; ++i) {
      t(i, i) = S(d[i]);
      if (i + 1 < n) t(i + 1, i) = t(i, i + 1) = S(e[i]);
      EXPECT_EQ(packed(i, i), S(d[i]));
    }
    for (int64_t i = 0; i + 1 < n; ++i) {
      EXPECT_EQ(lower ? packed(i + 1, i) : packed(i, i + 1), S(e[i]));
    }
    // The other triangle is untouched.
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if (lower ? j > i : j < i) {
          EXPECT_EQ(packed(i, j), a(i, j));
        }
      }
    }
    const Matrix<S> q = TridiagonalQ(packed, lower, taus);
    ExpectOrthonormalColumns(q);
    EXPECT_LT(MaxDiff(Mul(Mul(q, t), Adjoint(q)), a), 1e-10);
  }
}

TYPED_TEST(DenseLinalgTest, HessenbergReconstructs) {
  using S = TypeParam;
  for (int64_t n : {1, 2, 7}) {
    const Matrix<S> a = RandomMatrix<S>(n, n, 20 + n);
    Matrix<S> packed = a;
    std::vector<S> taus;
    Hessenberg(packed, taus);
    ASSERT_EQ(taus.size(), static_cast<size_t>(n - 1));
    const Matrix<S> q = HessenbergQ(packed, taus);
    Matrix<S> h = packed;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j + 1 < i; ++j) h(i, j) = S(0);
    }
    ExpectOrthonormalColumns(q);
    EXPECT_LT(MaxDiff(Mul(Mul(q, h), Adjoint(q)), a), 1e-10);
    // H(0) leaves the first row and column of the identity alone.
    EXPECT_EQ(q(0, 0), S(1));
  }
}

TYPED_TEST(DenseLinalgTest, SchurReconstructsWithTheRightShape) {
  using S = TypeParam;
  for (int64_t n : {1, 2, 3, 8, 15}) {
    const Matrix<S> a = RandomMatrix<S>(n, n, 30 + n);
    Matrix<S> t, z;
    ASSERT_TRUE(Schur(a, t, z));
    ExpectOrthonormalColumns(z);
    EXPECT_LT(MaxDiff(Mul(Mul(z, t), Adjoint(z)), a), 1e-10 * n);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < i; ++j) {
        if (std::is_same_v<S, Complex> || j + 1 < i) {
          EXPECT_EQ(t(i, j), S(0)) << i << "," << j;
        } else if (t(i, j) != S(0)) {
          // A standardized 2x2 block: equal diagonal, off-diagonals of opposite signs, and no
          // block starts right after it.
          EXPECT_EQ(t(i, i), t(j, j));
          EXPECT_LT(std::real(Complex(t(i, j) * t(j, i))), 0);
          if (i + 1 < n) {
            EXPECT_EQ(t(i + 1, i), S(0));
          }
        }
      }
    }
  }
}

TYPED_TEST(DenseLinalgTest, GeneralEigenvectorsSatisfyTheirEquations) {
  using S = TypeParam;
  for (int64_t n : {1, 4, 9}) {
    const Matrix<S> a = RandomMatrix<S>(n, n, 40 + n);
    std::vector<Complex> w;
    Matrix<Complex> vl, vr;
    ASSERT_TRUE(GeneralEigen(a, true, true, w, vl, vr));
    Matrix<Complex> ac(n, n);
    for (size_t i = 0; i < a.data.size(); ++i) ac.data[i] = a.data[i];
    for (int64_t k = 0; k < n; ++k) {
      double norm_r = 0, norm_l = 0, big = 0;
      for (int64_t i = 0; i < n; ++i) {
        Complex av = 0, ua = 0;
        for (int64_t j = 0; j < n; ++j) {
          av += ac(i, j) * vr(j, k);
          ua += std::conj(vl(j, k)) * ac(j, i);
        }
        EXPECT_LT(std::abs(av - w[k] * vr(i, k)), 1e-9) << "right " << k;
        EXPECT_LT(std::abs(ua - w[k] * std::conj(vl(i, k))), 1e-9) << "left " << k;
        norm_r += std::norm(vr(i, k));
        norm_l += std::norm(vl(i, k));
        if (std::abs(vr(i, k)) > std::abs(vr(static_cast<int64_t>(big), k))) big = i;
      }
      EXPECT_NEAR(norm_r, 1, 1e-12);
      EXPECT_NEAR(norm_l, 1, 1e-12);
      EXPECT_EQ(vr(static_cast<int64_t>(big), k).imag(), 0);  // largest component real
    }
    if constexpr (std::is_same_v<S, double>) {
      // Complex eigenvalues of a real matrix come in conjugate pairs, positive imaginary first.
      for (int64_t k = 0; k < n; ++k) {
        if (w[k].imag() > 0) {
          ASSERT_LT(k + 1, n);
          EXPECT_EQ(w[k + 1], std::conj(w[k]));
          for (int64_t i = 0; i < n; ++i) EXPECT_EQ(vr(i, k + 1), std::conj(vr(i, k)));
        }
      }
    }
  }
}

TYPED_TEST(DenseLinalgTest, KnownSpectrum) {
  using S = TypeParam;
  // A rotation by 90 degrees scaled by 2 has eigenvalues +-2i; diag(3, -1) has 3 and -1.
  Matrix<S> r(2, 2);
  r(0, 1) = S(-2);
  r(1, 0) = S(2);
  std::vector<Complex> w;
  Matrix<Complex> vl, vr;
  ASSERT_TRUE(GeneralEigen(r, false, true, w, vl, vr));
  std::vector<double> imag = {w[0].imag(), w[1].imag()};
  std::sort(imag.begin(), imag.end());
  EXPECT_NEAR(imag[0], -2, 1e-14);
  EXPECT_NEAR(imag[1], 2, 1e-14);
  Matrix<S> d(2, 2);
  d(0, 0) = S(3);
  d(1, 1) = S(-1);
  std::vector<double> ev;
  Matrix<S> v;
  ASSERT_TRUE(HermitianEigen(d, true, ev, v));
  EXPECT_EQ(ev, (std::vector<double>{-1, 3}));
}

TYPED_TEST(DenseLinalgTest, SingularValuesOfEveryShape) {
  using S = TypeParam;
  struct Case {
    int64_t rows, cols, rank;
  };
  for (const Case& c : {Case{6, 4, 4}, Case{4, 6, 4}, Case{5, 5, 5}, Case{7, 5, 2}, Case{3, 8, 1},
                        Case{1, 1, 1}, Case{4, 4, 0}}) {
    Matrix<S> a(c.rows, c.cols);
    if (c.rank > 0) {
      a = Mul(RandomMatrix<S>(c.rows, c.rank, 50 + c.rows),
              RandomMatrix<S>(c.rank, c.cols, 60 + c.cols));
    }
    const int64_t k = std::min(c.rows, c.cols);
    for (bool full : {false, true}) {
      SCOPED_TRACE(testing::Message()
                   << c.rows << "x" << c.cols << " rank " << c.rank << (full ? " full" : " thin"));
      std::vector<double> s;
      Matrix<S> u, vt;
      ASSERT_TRUE(SingularValues(a, full, s, u, vt));
      ASSERT_EQ(static_cast<int64_t>(s.size()), k);
      EXPECT_TRUE(std::is_sorted(s.rbegin(), s.rend()));
      EXPECT_EQ(u.rows, c.rows);
      EXPECT_EQ(u.cols, full ? c.rows : k);
      EXPECT_EQ(vt.rows, full ? c.cols : k);
      EXPECT_EQ(vt.cols, c.cols);
      ExpectOrthonormalColumns(u);
      ExpectOrthonormalColumns(Adjoint(vt));
      Matrix<S> sm(u.cols, vt.rows);
      for (int64_t i = 0; i < k; ++i) sm(i, i) = S(s[i]);
      EXPECT_LT(MaxDiff(Mul(Mul(u, sm), vt), a), 1e-10);
      for (int64_t i = c.rank; i < k; ++i) EXPECT_LT(s[i], 1e-12);
    }
  }
}

}  // namespace
}  // namespace ember::eval::linalg
