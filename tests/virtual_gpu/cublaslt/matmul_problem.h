// What one cublasLtMatmul call asks for, checked (shapes, layouts, type combinations) and then
// computed on host memory: D = epilogue(alpha * op(A) op(B) + beta * C), accumulated in double
// (complex<double> for complex types, 64-bit integers for int8) and rounded once to D's type.
#ifndef EMBER_TESTS_VIRTUAL_GPU_CUBLASLT_MATMUL_PROBLEM_H_
#define EMBER_TESTS_VIRTUAL_GPU_CUBLASLT_MATMUL_PROBLEM_H_

#include <cublasLt.h>

#include <cstdint>
#include <string>

namespace ember::vgpu::cublaslt {

struct Layout {
  cudaDataType_t type = CUDA_R_32F;
  int32_t order = CUBLASLT_ORDER_COL;
  uint64_t rows = 0;
  uint64_t cols = 0;
  int64_t ld = 0;
  int32_t batch_count = 1;
  int64_t batch_stride = 0;  // elements
};

struct MatmulDesc {
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t scale = CUDA_R_32F;
  int32_t pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  int32_t transa = CUBLAS_OP_N;
  int32_t transb = CUBLAS_OP_N;
  int32_t transc = CUBLAS_OP_N;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  uint64_t bias = 0;  // device address
  int32_t bias_type = -1;  // -1: D's type (or the scale type for 32-bit and wider outputs)
  int64_t bias_batch_stride = 0;
  int8_t fast_accum = 0;
};

struct Operands {
  uint64_t a = 0, b = 0, c = 0, d = 0;
  // alpha and beta as bytes of the scale type (read from the host at the call, or from the
  // device when the stream reaches the work for device pointer mode).
  uint8_t alpha[16] = {}, beta[16] = {};
  uint64_t alpha_address = 0, beta_address = 0;  // device pointer mode
};

int TypeSize(cudaDataType_t type);
const char* TypeName(cudaDataType_t type);

// CUBLAS_STATUS_SUCCESS, or the status with *why filled in.
cublasStatus_t Validate(const MatmulDesc& desc, const Layout& a, const Layout& b, const Layout& c,
                        const Layout& d, std::string* why);

// Resolves device memory for `device` and computes. False with *why when an operand does not
// resolve (a fault on a GPU).
bool Compute(int device, const MatmulDesc& desc, const Layout& a, const Layout& b,
             const Layout& c, const Layout& d, const Operands& operands, std::string* why);

}  // namespace ember::vgpu::cublaslt

#endif  // EMBER_TESTS_VIRTUAL_GPU_CUBLASLT_MATMUL_PROBLEM_H_
