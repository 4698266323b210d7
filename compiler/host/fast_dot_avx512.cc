// fast_gemm.inc built for AVX-512 (F, VL, DQ, BW) + FMA (CMake compiles this file alone with
// those flags); fast_dot.cc calls it only on CPUs that have them all. Eigen's namespace is renamed
// here so its templates compiled for AVX-512 are distinct symbols from the other builds'. Include
// nothing else: any inline function emitted here would be AVX-512 code under a shared name.
#define Eigen EmberEigenAvx512
#define EMBER_GEMM_NS gemm_avx512
#include "compiler/host/fast_gemm.inc"
