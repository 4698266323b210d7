// fast_math.h's kernels built for AVX2 + FMA (CMake compiles this file alone with -mavx2
// -mfma); fast_loop.cc calls them only on CPUs that have both. fast_math.h keeps its functions
// in an unnamed namespace, so nothing compiled here is shared by name with other files.
#include "compiler/host/fast_math.h"

namespace ember::host::fast::avx2 {

void ExpF32(const float* a, float* o, int64_t n) { fast::ExpF32(a, o, n); }
void LogF32(const float* a, float* o, int64_t n) { fast::LogF32(a, o, n); }
void TanhF32(const float* a, float* o, int64_t n) { fast::TanhF32(a, o, n); }
void LogisticF32(const float* a, float* o, int64_t n) { fast::LogisticF32(a, o, n); }

}  // namespace ember::host::fast::avx2
