// The dense solvers' entry points: the AVX2 + FMA build (dense_solvers_avx2.cc) for f32/f64 on
// CPUs that have both, else the baseline build included here; complex types always take the
// baseline build.
#include "compiler/host/dense_solvers.h"

#define EMBER_SOLVER_NS solvers_base
#define EMBER_SOLVER_COMPLEX
#include "compiler/host/dense_solvers.inc"
#undef EMBER_SOLVER_COMPLEX
#undef EMBER_SOLVER_NS

namespace ember::host::fast {
namespace solvers_avx2 {
bool Cholesky(float* a, int64_t n, bool lower);
bool Cholesky(double* a, int64_t n, bool lower);
void TriangularSolve(const float* a, float* b, int64_t rows, int64_t cols,
                     const TriangularForm& form);
void TriangularSolve(const double* a, double* b, int64_t rows, int64_t cols,
                     const TriangularForm& form);
void LuFactor(float* a, int64_t rows, int64_t cols, int32_t* pivots);
void LuFactor(double* a, int64_t rows, int64_t cols, int32_t* pivots);
}  // namespace solvers_avx2

namespace {
bool UseAvx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return avx2;
}
}  // namespace

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

}  // namespace ember::host::fast
