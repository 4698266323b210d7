// Kernels with known results for the virtual GPU's tests, compiled by NVRTC at test time (for
// compute_80 and compute_90). Each exercises one area of the PTX interpreter; the tests compare
// the results with host references on random inputs.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// Grid-stride loop: y = a * x + y.
extern "C" __global__ void grid_stride_saxpy(float a, const float* x, float* y, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    y[i] = a * x[i] + y[i];
  }
}

// Shared-memory tree reduction over blockDim.x (a power of two) with dynamic shared memory:
// out[block] = sum of the block's inputs.
extern "C" __global__ void tree_reduce(const float* in, float* out, int n) {
  extern __shared__ float partial[];
  const int t = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + t;
  partial[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = partial[0];
}

// Warp-shuffle reduction of a grid-stride sum; lane 0 of each warp adds into *out atomically.
extern "C" __global__ void warp_shuffle_reduce(const float* in, float* out, int n) {
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i];
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}

// Tiled transpose through a padded 32x32 shared tile; blocks of 32x8 threads.
extern "C" __global__ void tiled_transpose(const float* in, float* out, int rows, int cols) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x;
  int y = blockIdx.y * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) {
    if (x < cols && y + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
  }
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  for (int j = 0; j < 32; j += 8) {
    if (x < rows && y + j < cols) out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
  }
}

// Histogram: per-block counts in shared memory (atomics), merged into global memory (atomics).
extern "C" __global__ void atomic_histogram(const unsigned* in, unsigned* bins, int n, int nbins) {
  extern __shared__ unsigned local_bins[];
  for (int b = threadIdx.x; b < nbins; b += blockDim.x) local_bins[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    atomicAdd(&local_bins[in[i] % nbins], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < nbins; b += blockDim.x) atomicAdd(&bins[b], local_bins[b]);
}

// f16 and bf16 arithmetic, scalar and packed, and conversions.
extern "C" __global__ void half_math(const __half* a, const __half* b, const __nv_bfloat16* c,
                                     const __nv_bfloat16* d, __half* h_out, __nv_bfloat16* b_out,
                                     float* f_out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const __half x = a[i], y = b[i];
  h_out[4 * i + 0] = __hadd(x, y);
  h_out[4 * i + 1] = __hmul(x, y);
  h_out[4 * i + 2] = __hfma(x, y, x);
  const __half2 p = __hmul2(__halves2half2(x, y), __halves2half2(y, x));
  h_out[4 * i + 3] = __hmax(__low2half(p), __float2half_rn(0.5f));
  const __nv_bfloat16 u = c[i], v = d[i];
  b_out[3 * i + 0] = __hadd(u, v);
  b_out[3 * i + 1] = __hmul(u, v);
  b_out[3 * i + 2] = __float2bfloat16_rn(__bfloat162float(u) * 3.0f);
  f_out[2 * i + 0] = __half2float(x) + __bfloat162float(v);
  f_out[2 * i + 1] = __half2float(__hsub(x, y));
}

// Divergence: data-dependent branches, loops with per-thread trip counts, continue, and warp
// votes and shuffles after the paths reconverge.
extern "C" __global__ void divergent_branches(const int* in, int* out, unsigned* ballots, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  int r = 0;
  if (v % 3 == 0) {
    for (int k = 0; k < (v & 7); ++k) r += k * v;
  } else if (v % 3 == 1) {
    int k = v;
    while (k > 1) {
      if (k & 1) {
        k = 3 * k + 1;
        continue;
      }
      k >>= 1;
      ++r;
    }
  } else {
    r = v < 0 ? -v : v * 2;
  }
  const unsigned ballot = __ballot_sync(0xffffffffu, r > 10);
  const int left = __shfl_up_sync(0xffffffffu, r, 1);
  if (i < n) {
    out[i] = r + ((threadIdx.x & 31) == 0 ? 0 : left);
    if ((threadIdx.x & 31) == 0) ballots[i / 32] = ballot;
  }
}

// Integer instructions: division, remainder, high multiplication, bit counts, bit reversal,
// funnel shifts, byte permutes, min/max and 64-bit arithmetic.
extern "C" __global__ void integer_ops(const int* a, const int* b, long long* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int x = a[i], y = b[i] == 0 ? 7 : b[i];
  long long* o = out + 12 * i;
  o[0] = x / y;
  o[1] = x % y;
  o[2] = __mulhi(x, y);
  o[3] = __umulhi(static_cast<unsigned>(x), static_cast<unsigned>(y));
  o[4] = __popc(static_cast<unsigned>(x));
  o[5] = __clz(x);
  o[6] = static_cast<long long>(__brev(static_cast<unsigned>(x)));
  o[7] = static_cast<long long>(__funnelshift_l(static_cast<unsigned>(x), static_cast<unsigned>(y), y & 31));
  o[8] = static_cast<long long>(__byte_perm(static_cast<unsigned>(x), static_cast<unsigned>(y), 0x5140));
  o[9] = max(x, y) - min(x, y);
  o[10] = static_cast<long long>(x) * static_cast<long long>(y) + (static_cast<long long>(y) << 33);
  o[11] = static_cast<long long>(static_cast<unsigned long long>(static_cast<unsigned>(x)) * 0x9e3779b97f4a7c15ull >> 7);
}

// Float conversions and math the interpreter must get bit-exact (IEEE operations) or within the
// documented error (the fast intrinsics).
extern "C" __global__ void float_ops(const float* a, const float* b, float* exact, float* approx,
                                     int* ints, double* doubles, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float x = a[i], y = b[i];
  float* e = exact + 8 * i;
  e[0] = __fadd_rz(x, y);
  e[1] = __fmul_rd(x, y);
  e[2] = __fdiv_ru(x, y);
  e[3] = __fsqrt_rn(fabsf(x));
  e[4] = __fmaf_rn(x, y, -x);
  e[5] = fminf(x, y);
  e[6] = __int2float_rz(static_cast<int>(x * 1000.0f) * 16777 + 1);
  e[7] = truncf(x * 10.0f) + rintf(y * 10.0f);
  float* ap = approx + 4 * i;
  ap[0] = __expf(x * 0.1f);
  ap[1] = __logf(fabsf(y) + 1.0f);
  ap[2] = __sinf(x * 0.3f);  // inside [-pi, pi], where sin.approx's documented bound holds
  ap[3] = rsqrtf(fabsf(y) + 0.5f);
  ints[2 * i + 0] = __float2int_rn(x * 1000.0f);
  ints[2 * i + 1] = static_cast<int>(__float2uint_rz(fabsf(y) * 1e9f));
  doubles[2 * i + 0] = static_cast<double>(x) * y + 1.0 / 3.0;
  doubles[2 * i + 1] = sqrt(static_cast<double>(fabsf(x)));
}

// A function the compiler keeps out of line (call/ret with .param passing) and a per-thread
// array indexed at run time (local memory).
__device__ __noinline__ float weighted(const float* values, int count, float scale) {
  float local[16];
  for (int k = 0; k < 16; ++k) local[k] = values[k % count] * (k + 1);
  float s = 0.0f;
  for (int k = 0; k < count; ++k) s += local[(k * 5) % 16];
  return s * scale;
}
extern "C" __global__ void calls_and_local_memory(const float* in, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = weighted(in + i, 1 + i % 7, 0.5f);
}

// Warp-level primitives beyond shuffles: vote, match, reduce, active mask.
extern "C" __global__ void warp_primitives(const int* in, unsigned* out) {
  const int lane = threadIdx.x & 31;
  const int v = in[threadIdx.x];
  unsigned* o = out + 6 * threadIdx.x;
  o[0] = __all_sync(0xffffffffu, v >= 0);
  o[1] = __any_sync(0xffffffffu, v > 100);
  o[2] = __match_any_sync(0xffffffffu, v % 4);
  o[3] = __reduce_add_sync(0xffffffffu, static_cast<unsigned>(v));
  o[4] = __reduce_max_sync(0xffffffffu, static_cast<unsigned>(v));
  if (lane % 3 == 0) {
    o[5] = __activemask();
  } else {
    o[5] = 0;
  }
}
