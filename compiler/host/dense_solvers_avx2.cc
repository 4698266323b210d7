// dense_solvers.inc built for AVX2 + FMA (CMake compiles this file alone with -mavx2 -mfma), real
// types only; dense_solvers.cc calls it on CPUs that have both. Eigen's namespace is renamed so
// its templates built here are distinct symbols from the baseline build's (see
// fast_dot_avx2.cc). Nothing else is included: an inline function emitted here would be AVX2 code
// under a shared name.
#include "compiler/host/dense_solvers.h"

#define Eigen EmberEigenAvx2
#define EMBER_SOLVER_NS solvers_avx2
#include "compiler/host/dense_solvers.inc"
