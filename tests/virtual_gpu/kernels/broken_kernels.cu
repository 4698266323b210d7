// Deliberately broken kernels: the virtual GPU must report each with the kernel's name and the
// line of the offending instruction (tests/virtual_gpu/broken_kernels_test.cc).
extern "C" __global__ void missing_barrier(const float* in, float* out) {
  __shared__ float partial[64];
  const int t = threadIdx.x;
  partial[t] = in[t];
  // Missing __syncthreads(): thread t reads partial[t + 32], written by another warp.
  if (t < 32) partial[t] += partial[t + 32];
  __syncthreads();
  if (t == 0) out[0] = partial[0];
}

extern "C" __global__ void out_of_bounds_write(float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 1.0f;  // one element too far
}

extern "C" __global__ void divergent_barrier(float* out) {
  if (threadIdx.x < 16) {
    __syncthreads();  // only half of the block gets here
  }
  out[threadIdx.x] = 1.0f;
}

extern "C" __global__ void wrong_shuffle_mask(const float* in, float* out) {
  float v = in[threadIdx.x];
  if ((threadIdx.x & 31) < 16) {
    v = __shfl_xor_sync(0xffffffffu, v, 1);  // names lanes 16-31, which never come
  } else {
    __syncthreads();
  }
  out[threadIdx.x] = v;
}

extern "C" __global__ void uninitialized_shared_read(float* out) {
  __shared__ float values[64];
  if (threadIdx.x < 32) values[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = values[63 - threadIdx.x];  // values[32..63] were never written
}

extern "C" __global__ void read_after_free(const float* in, float* out) {
  out[threadIdx.x] = in[threadIdx.x];
}

extern "C" __global__ void misaligned_load(const char* in, float* out) {
  out[threadIdx.x] = *reinterpret_cast<const float*>(in + 1 + 4 * threadIdx.x);
}

extern "C" __global__ void endless_loop(int* flag) {
  while (atomicAdd(flag, 0) == 0) {
  }
}

extern "C" __global__ void traps(float* out) {
  if (threadIdx.x == 5) __trap();
  out[threadIdx.x] = 1.0f;
}
