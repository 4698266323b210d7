// Shared by the virtual GPU's tests: a fixture that holds device 0's primary context on the
// virtual driver (linked directly), helpers to load PTX, allocate, copy and launch, and to read
// kernel sources from tests/virtual_gpu/kernels and the PTX llc-19 produced from them at build
// time.
#ifndef EMBER_TESTS_VIRTUAL_GPU_VGPU_TEST_UTIL_H_
#define EMBER_TESTS_VIRTUAL_GPU_VGPU_TEST_UTIL_H_

#include <cuda.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ember::vgpu::testing {

// "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered: <detail>".
std::string CuErrorText(CUresult result);

#define EMBER_ASSERT_CU(expr)                                                        \
  do {                                                                               \
    const CUresult ember_cu_result_ = (expr);                                        \
    ASSERT_EQ(ember_cu_result_, CUDA_SUCCESS)                                        \
        << #expr << ": " << ::ember::vgpu::testing::CuErrorText(ember_cu_result_);   \
  } while (0)

// A file under tests/virtual_gpu (source) or its build folder (generated PTX).
std::string ReadSourceFile(const std::string& relative_path);
// PTX that llc-19 produced from kernels/<name>.ll for `sm` (80 or 90); empty when llc-19 was
// not found at configure time (the caller skips with LlvmMissingReason()).
std::string ReadLlvmPtx(const std::string& name, int sm);
std::string LlvmMissingReason();

// The line number of the first line in `ptx` that contains `needle` after the line that
// declares `kernel` (0 if none): what a fault message should name.
int FindPtxLine(const std::string& ptx, const std::string& kernel, const std::string& needle);

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

class VirtualGpuTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // Each fails the test (and returns null / empty) on error.
  CUmodule Load(const std::string& ptx);
  CUfunction Function(CUmodule module, const std::string& name);
  CUdeviceptr Alloc(size_t bytes);
  template <class T>
  CUdeviceptr Upload(const std::vector<T>& values) {
    CUdeviceptr p = Alloc(values.size() * sizeof(T));
    if (p != 0) {
      EXPECT_EQ(cuMemcpyHtoD(p, values.data(), values.size() * sizeof(T)), CUDA_SUCCESS);
    }
    return p;
  }
  template <class T>
  std::vector<T> Download(CUdeviceptr p, size_t count) {
    std::vector<T> values(count);
    const CUresult r = cuMemcpyDtoH(values.data(), p, count * sizeof(T));
    EXPECT_EQ(r, CUDA_SUCCESS) << CuErrorText(r);
    return values;
  }
  // Launches on the legacy stream and synchronizes; returns the first error.
  CUresult Run(CUfunction f, Dim3 grid, Dim3 block, std::vector<void*> args,
               unsigned dynamic_shared = 0);
  // The sticky fault message of device 0 (empty when none).
  std::string LastFault();
  // cuDevicePrimaryCtxReset(0): clears a fault and frees everything the test allocated or loaded.
  void ResetContext();

  CUcontext ctx_ = nullptr;

 private:
  std::vector<CUmodule> modules_;
  std::vector<CUdeviceptr> allocations_;
};

}  // namespace ember::vgpu::testing

#endif  // EMBER_TESTS_VIRTUAL_GPU_VGPU_TEST_UTIL_H_
