// Internal to compiler/host: the single-threaded Eigen GEMM of fast_dot.cc (its AVX-512 or AVX2 +
// FMA build on CPUs that have them), for other fast kernels that split their own work across the
// pool.
#ifndef EMBER_COMPILER_HOST_FAST_GEMM_H_
#define EMBER_COMPILER_HOST_FAST_GEMM_H_

#include <cstdint>

namespace ember::host::fast {

// c[m, n] = a[m, k] * b[k, n], all dense row-major, on the calling thread.
void Gemm(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n);
void Gemm(const double* a, const double* b, double* c, int64_t m, int64_t k, int64_t n);

}  // namespace ember::host::fast

#endif  // EMBER_COMPILER_HOST_FAST_GEMM_H_
