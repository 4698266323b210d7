#include "tests/virtual_gpu/vgpu_test_util.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/virtual_gpu/driver/virtual_gpu_hooks.h"

namespace ember::vgpu::testing {

std::string CuErrorText(CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &text);
  return absl::StrCat(name ? name : "unknown CUresult", ": ", text ? text : "");
}

namespace {
std::string ReadWhole(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::string();
  std::stringstream content;
  content << file.rdbuf();
  return content.str();
}
}  // namespace

std::string ReadSourceFile(const std::string& relative_path) {
  std::string text = ReadWhole(absl::StrCat(EMBER_VGPU_SOURCE_DIR, "/", relative_path));
  EXPECT_FALSE(text.empty()) << "cannot read " << relative_path;
  return text;
}

std::string ReadLlvmPtx(const std::string& name, int sm) {
  if (!LlvmMissingReason().empty()) return std::string();
  std::string text = ReadWhole(absl::StrCat(EMBER_VGPU_LLVM_PTX_DIR, "/", name, ".sm_", sm, ".ptx"));
  EXPECT_FALSE(text.empty()) << "llc-19 output for " << name << " sm_" << sm << " is missing";
  return text;
}

std::string LlvmMissingReason() {
#ifdef EMBER_VGPU_NO_LLC
  return "llc-19 was not found when the build was configured (scripts/setup.sh installs the "
         "Debian package llvm-19); the LLVM-generated PTX tests need it";
#else
  return std::string();
#endif
}

int FindPtxLine(const std::string& ptx, const std::string& kernel, const std::string& needle) {
  std::vector<std::string> lines = absl::StrSplit(ptx, '\n');
  bool in_kernel = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find(".entry ") != std::string::npos) {
      if (in_kernel) return 0;  // the next kernel starts
      in_kernel = lines[i].find(".entry " + kernel + "(") != std::string::npos;
    }
    if (in_kernel && lines[i].find(needle) != std::string::npos) return static_cast<int>(i + 1);
  }
  return 0;
}

void VirtualGpuTest::SetUp() {
  EMBER_ASSERT_CU(cuInit(0));
  EMBER_ASSERT_CU(cuDevicePrimaryCtxRetain(&ctx_, 0));
  EMBER_ASSERT_CU(cuCtxPushCurrent(ctx_));
}

void VirtualGpuTest::TearDown() {
  if (ctx_ == nullptr) return;
  if (cuCtxSynchronize() != CUDA_SUCCESS) {
    // A faulted context only comes back through a reset, which frees everything in it.
    EXPECT_EQ(cuDevicePrimaryCtxReset(0), CUDA_SUCCESS);
  } else {
    for (CUdeviceptr p : allocations_) EXPECT_EQ(cuMemFree(p), CUDA_SUCCESS);
    for (CUmodule m : modules_) EXPECT_EQ(cuModuleUnload(m), CUDA_SUCCESS);
  }
  CUcontext popped = nullptr;
  EXPECT_EQ(cuCtxPopCurrent(&popped), CUDA_SUCCESS);
  EXPECT_EQ(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
}

CUmodule VirtualGpuTest::Load(const std::string& ptx) {
  CUmodule module = nullptr;
  const CUresult r = cuModuleLoadData(&module, ptx.c_str());
  EXPECT_EQ(r, CUDA_SUCCESS) << CuErrorText(r);
  if (r == CUDA_SUCCESS) modules_.push_back(module);
  return module;
}

CUfunction VirtualGpuTest::Function(CUmodule module, const std::string& name) {
  CUfunction f = nullptr;
  const CUresult r = cuModuleGetFunction(&f, module, name.c_str());
  EXPECT_EQ(r, CUDA_SUCCESS) << name << ": " << CuErrorText(r);
  return f;
}

CUdeviceptr VirtualGpuTest::Alloc(size_t bytes) {
  CUdeviceptr p = 0;
  const CUresult r = cuMemAlloc(&p, bytes);
  EXPECT_EQ(r, CUDA_SUCCESS) << CuErrorText(r);
  if (r == CUDA_SUCCESS) allocations_.push_back(p);
  return p;
}

CUresult VirtualGpuTest::Run(CUfunction f, Dim3 grid, Dim3 block, std::vector<void*> args,
                             unsigned dynamic_shared) {
  const CUresult launched = cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                           dynamic_shared, nullptr, args.data(), nullptr);
  if (launched != CUDA_SUCCESS) return launched;
  return cuCtxSynchronize();
}

void VirtualGpuTest::ResetContext() {
  EXPECT_EQ(cuDevicePrimaryCtxReset(0), CUDA_SUCCESS);
  allocations_.clear();
  modules_.clear();
}

std::string VirtualGpuTest::LastFault() {
  char buffer[4096];
  ember_vgpu_last_fault(0, buffer, sizeof(buffer));
  return buffer;
}

}  // namespace ember::vgpu::testing
