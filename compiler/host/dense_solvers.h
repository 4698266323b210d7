// Internal to compiler/host: dense factorizations and solves on one row-major matrix in its own
// element type, through Eigen's blocked algorithms (their trailing updates are matrix products)
// and, for the Householder QR pair, plain row loops the compiler vectorizes,
// for the linear-algebra thunk (linalg_thunk.h). Built like the GEMM of fast_dot.cc: once for the
// baseline ISA (dense_solvers.cc) and, for f32/f64, once for AVX2 + FMA (dense_solvers_avx2.cc),
// chosen at run time by CPU. Sums are reassociated, so results differ from the evaluator's (which
// works in double and rounds once) in the last bits, as XLA:CPU's LAPACK results do.
//
// S is float, double, std::complex<float> or std::complex<double>.
#ifndef EMBER_COMPILER_HOST_DENSE_SOLVERS_H_
#define EMBER_COMPILER_HOST_DENSE_SOLVERS_H_

#include <complex>
#include <cstdint>

namespace ember::host::fast {

// The Cholesky factor of the Hermitian positive definite n x n matrix `a` holds in its `lower`
// (else upper) triangle, in place: L with A = L L^H (else U with A = U^H U) in that triangle,
// zeros in the other. The other triangle is never read. False, with `a` unspecified, when a
// pivot is not positive (or NaN): the matrix is not positive definite.
bool Cholesky(float* a, int64_t n, bool lower);
bool Cholesky(double* a, int64_t n, bool lower);
bool Cholesky(std::complex<float>* a, int64_t n, bool lower);
bool Cholesky(std::complex<double>* a, int64_t n, bool lower);

// How triangular_solve reads its matrix (StableHLO's attributes).
struct TriangularForm {
  enum class Transpose { kNone, kTranspose, kAdjoint };
  bool left_side = true;  // op(a) x = b, else x op(a) = b
  bool lower = true;      // which triangle of a is read
  bool unit_diagonal = false;
  Transpose transpose = Transpose::kNone;
};
// Solves for x in place of `b` (rows x cols; n = rows for a left-side solve, cols for a right
// side) with the n x n triangular matrix op(a), reading only a's `lower` (else upper) triangle,
// and not its diagonal when unit_diagonal. `a` and `b` must not overlap.
void TriangularSolve(const float* a, float* b, int64_t rows, int64_t cols,
                     const TriangularForm& form);
void TriangularSolve(const double* a, double* b, int64_t rows, int64_t cols,
                     const TriangularForm& form);
void TriangularSolve(const std::complex<float>* a, std::complex<float>* b, int64_t rows,
                     int64_t cols, const TriangularForm& form);
void TriangularSolve(const std::complex<double>* a, std::complex<double>* b, int64_t rows,
                     int64_t cols, const TriangularForm& form);

// LAPACK xGETRF, blocked: A = P L U with partial pivoting, in place (L's multipliers below the
// diagonal, U on and above it). pivots[j] (min(rows, cols) of them, 0-based) is the row step j
// swapped with: the first of largest |re| + |im| on or below the diagonal (a NaN is never
// larger); a zero pivot leaves its column unscaled, as the evaluator's LuFactor does.
void LuFactor(float* a, int64_t rows, int64_t cols, int32_t* pivots);
void LuFactor(double* a, int64_t rows, int64_t cols, int32_t* pivots);
void LuFactor(std::complex<float>* a, int64_t rows, int64_t cols, int32_t* pivots);
void LuFactor(std::complex<double>* a, int64_t rows, int64_t cols, int32_t* pivots);

// LAPACK xGEQRF (unblocked, the evaluator's QrCore in the element type): A = Q R by Householder
// reflections H(j) = I - tau v v^H, in place: R on and above the diagonal, each v below it (its
// leading 1 implicit); taus (min(rows, cols) of them), beta = -sign(re(alpha)) * norm. Column
// norms are summed in double. `work` holds cols elements.
void Qr(float* a, int64_t rows, int64_t cols, float* taus, float* work);
void Qr(double* a, int64_t rows, int64_t cols, double* taus, double* work);
void Qr(std::complex<float>* a, int64_t rows, int64_t cols, std::complex<float>* taus,
        std::complex<float>* work);
void Qr(std::complex<double>* a, int64_t rows, int64_t cols, std::complex<double>* taus,
        std::complex<double>* work);

// LAPACK xORGQR / xUNGQR: q (rows x cols) = H(0) H(1) ... H(k-1) applied to the first cols
// columns of the identity, the reflectors read from `a` (as Qr leaves them) and `taus` (k of
// them, k <= min(rows, cols)). Each reflector touches only the columns from its own on, as
// LAPACK's does. `work` holds rows + cols elements.
void HouseholderProduct(const float* a, const float* taus, float* q, int64_t rows, int64_t cols,
                        int64_t k, float* work);
void HouseholderProduct(const double* a, const double* taus, double* q, int64_t rows, int64_t cols,
                        int64_t k, double* work);
void HouseholderProduct(const std::complex<float>* a, const std::complex<float>* taus,
                        std::complex<float>* q, int64_t rows, int64_t cols, int64_t k,
                        std::complex<float>* work);
void HouseholderProduct(const std::complex<double>* a, const std::complex<double>* taus,
                        std::complex<double>* q, int64_t rows, int64_t cols, int64_t k,
                        std::complex<double>* work);

// Eigen's SelfAdjointEigenSolver (tridiagonal reduction, implicit symmetric QR) for the real
// symmetric or complex Hermitian n x n matrix held in `a`'s `lower` (else upper) triangle (the
// other is not read, nor are the diagonal's imaginary parts): eigenvalues ascending in w (n,
// real), eigenvectors in the columns of v (n x n, row-major, each of unit norm; their signs or
// phases are the solver's). False when it does not converge or `a` holds a NaN or an infinity
// (then w and v are unspecified). Complex in double precision only: complex<float> matrices are
// widened by the caller (Eigen's complex<float> packets read scalars with misaligned loads,
// undefined behaviour the sanitizer build rejects; dense_solvers.inc).
bool SymmetricEigen(const float* a, int64_t n, bool lower, float* w, float* v);
bool SymmetricEigen(const double* a, int64_t n, bool lower, double* w, double* v);
bool SymmetricEigen(const std::complex<double>* a, int64_t n, bool lower, double* w,
                    std::complex<double>* v);

// Eigen's BDCSVD (divide and conquer) of the rows x cols matrix `a`: the singular values
// descending in s (k = min(rows, cols)); unless u and vt are null, u (rows x rows when `full`,
// else rows x k) and vt (cols x cols, else k x cols; V^H) with a = u diag(s) vt. False when it
// does not converge or `a` holds a NaN or an infinity. Complex in double precision only, as
// SymmetricEigen.
bool SingularValues(const float* a, int64_t rows, int64_t cols, bool full, float* s, float* u,
                    float* vt);
bool SingularValues(const double* a, int64_t rows, int64_t cols, bool full, double* s, double* u,
                    double* vt);
bool SingularValues(const std::complex<double>* a, int64_t rows, int64_t cols, bool full,
                    double* s, std::complex<double>* u, std::complex<double>* vt);

}  // namespace ember::host::fast

#endif  // EMBER_COMPILER_HOST_DENSE_SOLVERS_H_
