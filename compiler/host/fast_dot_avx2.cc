// fast_gemm.inc built for AVX2 + FMA (CMake compiles this file alone with -mavx2 -mfma);
// fast_dot.cc calls it only on CPUs that have both. Eigen's namespace is renamed here so its
// templates compiled for AVX2 are distinct symbols from the baseline build's. Include nothing
// else: any inline function emitted here would be AVX2 code under a shared name.
#define Eigen EmberEigenAvx2
#define EMBER_GEMM_NS gemm_avx2
#include "compiler/host/fast_gemm.inc"
