// The dense solvers' entry points: the AVX2 + FMA build (dense_solvers_avx2.cc) for f32/f64 on
// CPUs that have both, else the baseline build included here; complex types always take the
// baseline build, and so does everything in sanitizer builds (EMBER_SOLVERS_BASELINE_ONLY).
#include "compiler/host/dense_solvers.h"

#define EMBER_SOLVER_NS solvers_base
#define EMBER_SOLVER_COMPLEX
#include "compiler/host/dense_solvers.inc"
#undef EMBER_SOLVER_COMPLEX
#undef EMBER_SOLVER_NS

namespace ember::host::fast {
#ifdef EMBER_SOLVERS_BASELINE_ONLY
// Sanitizer builds compile the solvers once, for the baseline ISA (CMakeLists.txt): the same
// templates as the AVX2 build, which would only double the slowest file of those builds.
namespace solvers_avx2 = solvers_base;
namespace {
constexpr bool UseAvx2() { return false; }
}  // namespace
#else
namespace solvers_avx2 {
bool Cholesky(float* a, int64_t n, bool lower);
bool Cholesky(double* a, int64_t n, bool lower);
void TriangularSolve(const float* a, float* b, int64_t rows, int64_t cols,
                     const TriangularForm& form);
void TriangularSolve(const double* a, double* b, int64_t rows, int64_t cols,
                     const TriangularForm& form);
void LuFactor(float* a, int64_t rows, int64_t cols, int32_t* pivots);
void LuFactor(double* a, int64_t rows, int64_t cols, int32_t* pivots);
void Qr(float* a, int64_t rows, int64_t cols, float* taus, float* work);
void Qr(double* a, int64_t rows, int64_t cols, double* taus, double* work);
void HouseholderProduct(const float* a, const float* taus, float* q, int64_t rows, int64_t cols,
                        int64_t k, float* work);
void HouseholderProduct(const double* a, const double* taus, double* q, int64_t rows, int64_t cols,
                        int64_t k, double* work);
bool SymmetricEigen(const float* a, int64_t n, bool lower, float* w, float* v);
bool SymmetricEigen(const double* a, int64_t n, bool lower, double* w, double* v);
bool SingularValues(const float* a, int64_t rows, int64_t cols, bool full, float* s, float* u,
                    float* vt);
bool SingularValues(const double* a, int64_t rows, int64_t cols, bool full, double* s, double* u,
                    double* vt);
}  // namespace solvers_avx2

namespace {
bool UseAvx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return avx2;
}
}  // namespace
#endif  // EMBER_SOLVERS_BASELINE_ONLY

bool Cholesky(float* a, int64_t n, bool lower) {
  return UseAvx2() ? solvers_avx2::Cholesky(a, n, lower) : solvers_base::Cholesky(a, n, lower);
}
bool Cholesky(double* a, int64_t n, bool lower) {
  return UseAvx2() ? solvers_avx2::Cholesky(a, n, lower) : solvers_base::Cholesky(a, n, lower);
}
bool Cholesky(std::complex<float>* a, int64_t n, bool lower) {
  return solvers_base::Cholesky(a, n, lower);
}
bool Cholesky(std::complex<double>* a, int64_t n, bool lower) {
  return solvers_base::Cholesky(a, n, lower);
}

void TriangularSolve(const float* a, float* b, int64_t rows, int64_t cols,
                     const TriangularForm& form) {
  if (UseAvx2()) {
    solvers_avx2::TriangularSolve(a, b, rows, cols, form);
  } else {
    solvers_base::TriangularSolve(a, b, rows, cols, form);
  }
}
void TriangularSolve(const double* a, double* b, int64_t rows, int64_t cols,
                     const TriangularForm& form) {
  if (UseAvx2()) {
    solvers_avx2::TriangularSolve(a, b, rows, cols, form);
  } else {
    solvers_base::TriangularSolve(a, b, rows, cols, form);
  }
}
void TriangularSolve(const std::complex<float>* a, std::complex<float>* b, int64_t rows,
                     int64_t cols, const TriangularForm& form) {
  solvers_base::TriangularSolve(a, b, rows, cols, form);
}
void TriangularSolve(const std::complex<double>* a, std::complex<double>* b, int64_t rows,
                     int64_t cols, const TriangularForm& form) {
  solvers_base::TriangularSolve(a, b, rows, cols, form);
}

void LuFactor(float* a, int64_t rows, int64_t cols, int32_t* pivots) {
  if (UseAvx2()) {
    solvers_avx2::LuFactor(a, rows, cols, pivots);
  } else {
    solvers_base::LuFactor(a, rows, cols, pivots);
  }
}
void LuFactor(double* a, int64_t rows, int64_t cols, int32_t* pivots) {
  if (UseAvx2()) {
    solvers_avx2::LuFactor(a, rows, cols, pivots);
  } else {
    solvers_base::LuFactor(a, rows, cols, pivots);
  }
}
void LuFactor(std::complex<float>* a, int64_t rows, int64_t cols, int32_t* pivots) {
  solvers_base::LuFactor(a, rows, cols, pivots);
}
void LuFactor(std::complex<double>* a, int64_t rows, int64_t cols, int32_t* pivots) {
  solvers_base::LuFactor(a, rows, cols, pivots);
}

void Qr(float* a, int64_t rows, int64_t cols, float* taus, float* work) {
  if (UseAvx2()) {
    solvers_avx2::Qr(a, rows, cols, taus, work);
  } else {
    solvers_base::Qr(a, rows, cols, taus, work);
  }
}
void Qr(double* a, int64_t rows, int64_t cols, double* taus, double* work) {
  if (UseAvx2()) {
    solvers_avx2::Qr(a, rows, cols, taus, work);
  } else {
    solvers_base::Qr(a, rows, cols, taus, work);
  }
}
void Qr(std::complex<float>* a, int64_t rows, int64_t cols, std::complex<float>* taus,
        std::complex<float>* work) {
  solvers_base::Qr(a, rows, cols, taus, work);
}
void Qr(std::complex<double>* a, int64_t rows, int64_t cols, std::complex<double>* taus,
        std::complex<double>* work) {
  solvers_base::Qr(a, rows, cols, taus, work);
}

void HouseholderProduct(const float* a, const float* taus, float* q, int64_t rows, int64_t cols,
                        int64_t k, float* work) {
  if (UseAvx2()) {
    solvers_avx2::HouseholderProduct(a, taus, q, rows, cols, k, work);
  } else {
    solvers_base::HouseholderProduct(a, taus, q, rows, cols, k, work);
  }
}
void HouseholderProduct(const double* a, const double* taus, double* q, int64_t rows, int64_t cols,
                        int64_t k, double* work) {
  if (UseAvx2()) {
    solvers_avx2::HouseholderProduct(a, taus, q, rows, cols, k, work);
  } else {
    solvers_base::HouseholderProduct(a, taus, q, rows, cols, k, work);
  }
}
void HouseholderProduct(const std::complex<float>* a, const std::complex<float>* taus,
                        std::complex<float>* q, int64_t rows, int64_t cols, int64_t k,
                        std::complex<float>* work) {
  solvers_base::HouseholderProduct(a, taus, q, rows, cols, k, work);
}
void HouseholderProduct(const std::complex<double>* a, const std::complex<double>* taus,
                        std::complex<double>* q, int64_t rows, int64_t cols, int64_t k,
                        std::complex<double>* work) {
  solvers_base::HouseholderProduct(a, taus, q, rows, cols, k, work);
}

bool SymmetricEigen(const float* a, int64_t n, bool lower, float* w, float* v) {
  return UseAvx2() ? solvers_avx2::SymmetricEigen(a, n, lower, w, v)
                   : solvers_base::SymmetricEigen(a, n, lower, w, v);
}
bool SymmetricEigen(const double* a, int64_t n, bool lower, double* w, double* v) {
  return UseAvx2() ? solvers_avx2::SymmetricEigen(a, n, lower, w, v)
                   : solvers_base::SymmetricEigen(a, n, lower, w, v);
}
bool SingularValues(const float* a, int64_t rows, int64_t cols, bool full, float* s, float* u,
                    float* vt) {
  return UseAvx2() ? solvers_avx2::SingularValues(a, rows, cols, full, s, u, vt)
                   : solvers_base::SingularValues(a, rows, cols, full, s, u, vt);
}
bool SingularValues(const double* a, int64_t rows, int64_t cols, bool full, double* s, double* u,
                    double* vt) {
  return UseAvx2() ? solvers_avx2::SingularValues(a, rows, cols, full, s, u, vt)
                   : solvers_base::SingularValues(a, rows, cols, full, s, u, vt);
}
bool SymmetricEigen(const std::complex<double>* a, int64_t n, bool lower, double* w,
                    std::complex<double>* v) {
  return solvers_base::SymmetricEigen(a, n, lower, w, v);
}
bool SingularValues(const std::complex<double>* a, int64_t rows, int64_t cols, bool full,
                    double* s, std::complex<double>* u, std::complex<double>* vt) {
  return solvers_base::SingularValues(a, rows, cols, full, s, u, vt);
}

}  // namespace ember::host::fast
