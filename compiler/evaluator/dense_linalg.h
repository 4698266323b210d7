// Dense eigen- and singular-value algorithms on one row-major matrix, in double or
// complex<double>: the numerical cores behind the evaluator's linear-algebra custom calls
// (eval_linalg_custom_calls.cc). Where LAPACK defines a packed output (sytrd/hetrd, gehrd), the
// layout and reflector conventions are LAPACK's, so frameworks that unpack it (JAX's
// householder_product) read the same thing they read from XLA:CPU. Shared by the evaluator and
// the host backend's DecompositionThunk (compiler/host/decomposition_thunk.h), which run the same
// cores and so give the same bits.
#ifndef EMBER_COMPILER_EVALUATOR_DENSE_LINALG_H_
#define EMBER_COMPILER_EVALUATOR_DENSE_LINALG_H_

#include <complex>
#include <cstdint>
#include <vector>

namespace ember::eval::linalg {

using Complex = std::complex<double>;

// A row-major rows x cols matrix.
template <typename S>
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<S> data;
  Matrix() = default;
  Matrix(int64_t r, int64_t c) : rows(r), cols(c), data(static_cast<size_t>(r * c), S(0)) {}
  S& operator()(int64_t i, int64_t j) { return data[static_cast<size_t>(i * cols + j)]; }
  const S& operator()(int64_t i, int64_t j) const {
    return data[static_cast<size_t>(i * cols + j)];
  }
  static Matrix Identity(int64_t n);
};

// LAPACK xSYTRD / xHETRD: reduces the Hermitian matrix held in the `lower` (else upper)
// triangle of `a` to real tridiagonal form Q^H A Q = T. On return `a` holds T's diagonal and
// off-diagonal in that triangle and the reflectors beyond them (the other triangle is
// untouched); d (n) and e (n-1) are T's diagonal and off-diagonal; taus (n-1) the reflectors'
// scalars.
template <typename S>
void Tridiagonalize(Matrix<S>& a, bool lower, std::vector<double>& d, std::vector<double>& e,
                    std::vector<S>& taus);
// Q of a Tridiagonalize result (xORGTR / xUNGTR).
template <typename S>
Matrix<S> TridiagonalQ(const Matrix<S>& packed, bool lower, const std::vector<S>& taus);

// LAPACK xGETRF: A = P L U by Gaussian elimination with partial pivoting, column by column (the
// pivot is the first entry of largest |re| + |im| on or below the diagonal; a zero pivot leaves
// its column as it is). On return `a` holds L's multipliers below the diagonal and U on and above
// it; `pivots` (min(rows, cols) entries, 0-based) the row each step swapped with.
template <typename S>
void LuFactor(Matrix<S>& a, std::vector<int32_t>& pivots);

// LAPACK xGEHRD (ilo = 1, ihi = n): A = Q H Q^H with H upper Hessenberg. On return `a` holds H on
// and above the first subdiagonal and the reflectors below it; taus has n-1 entries.
template <typename S>
void Hessenberg(Matrix<S>& a, std::vector<S>& taus);
// Q of a Hessenberg result (xORGHR / xUNGHR).
template <typename S>
Matrix<S> HessenbergQ(const Matrix<S>& packed, const std::vector<S>& taus);

// Eigenvalues (ascending) and eigenvectors (columns of z, which comes in holding the basis to
// rotate: the identity, or the Q of a tridiagonal reduction) of the symmetric tridiagonal matrix
// with diagonal d and off-diagonal e, by implicit QL with Wilkinson shifts. False when it does
// not converge.
template <typename S>
bool TridiagonalEigen(std::vector<double>& d, std::vector<double> e, Matrix<S>& z);

// Hermitian eigendecomposition of the matrix held in the `lower` (else upper) triangle of `a`:
// eigenvalues ascending in w, eigenvectors in the columns of v. False when it does not converge.
template <typename S>
bool HermitianEigen(const Matrix<S>& a, bool lower, std::vector<double>& w, Matrix<S>& v);

// Singular value decomposition a = u diag(s) vt by one-sided Jacobi rotations: s descending;
// u is rows x rows (`full`) or rows x min, vt cols x cols or min x cols. Columns of u (rows of
// vt) for zero singular values, and the extra ones of the full form, complete an orthonormal
// basis. False when it does not converge.
template <typename S>
bool SingularValues(const Matrix<S>& a, bool full, std::vector<double>& s, Matrix<S>& u,
                    Matrix<S>& vt);

// Schur decomposition a = z t z^H. Real input: t is quasi upper triangular with 1x1 and
// standardized 2x2 blocks (equal diagonal, off-diagonals of opposite sign: a complex pair), as
// LAPACK xGEES gives it. Complex input: t is upper triangular. False when QR iteration does not
// converge.
template <typename S>
bool Schur(const Matrix<S>& a, Matrix<S>& t, Matrix<S>& z);

// Eigenvalues and (optionally) left and right eigenvectors of a general matrix, as LAPACK xGEEV
// gives them: vectors of unit 2-norm whose largest component is real; for real input, the
// vectors of a conjugate pair are conjugates. Left vectors satisfy u^H a = w u^H.
template <typename S>
bool GeneralEigen(const Matrix<S>& a, bool left, bool right, std::vector<Complex>& w,
                  Matrix<Complex>& vl, Matrix<Complex>& vr);

}  // namespace ember::eval::linalg

#endif  // EMBER_COMPILER_EVALUATOR_DENSE_LINALG_H_
