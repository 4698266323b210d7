// Deliberately broken kernels (kernels/broken_kernels.cu, compiled by NVRTC) are each caught by
// the virtual GPU with the right error code and a message naming the kernel and the PTX line of
// the offending instruction; the fault is sticky until the context is reset.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/virtual_gpu/driver/virtual_gpu_hooks.h"
#include "tests/virtual_gpu/nvrtc_compiler.h"
#include "tests/virtual_gpu/vgpu_test_util.h"

namespace ember::vgpu::testing {
namespace {

using ::testing::HasSubstr;

class BrokenKernelsTest : public VirtualGpuTest, public ::testing::WithParamInterface<int> {
 protected:
  void SetUp() override {
    VirtualGpuTest::SetUp();
    absl::StatusOr<std::string> ptx =
        CompileToPtx(ReadSourceFile("kernels/broken_kernels.cu"), absl::StrCat("compute_", GetParam()));
    ASSERT_TRUE(ptx.ok()) << ptx.status();
    ptx_ = *std::move(ptx);
    module_ = Load(ptx_);
    ASSERT_NE(module_, nullptr);
  }
  void TearDown() override {
    ember_vgpu_set_reverse_order(0);
    ember_vgpu_set_instruction_budget(0);
    VirtualGpuTest::TearDown();
  }

  // Runs `kernel`, expects `code` and a message that names the kernel and the line of the first
  // statement containing `statement` (which the message must quote), plus `detail`.
  void ExpectCaught(const std::string& kernel, Dim3 grid, Dim3 block, std::vector<void*> args,
                    CUresult code, const std::string& statement, const std::string& detail) {
    const CUresult result = Run(Function(module_, kernel), grid, block, std::move(args));
    EXPECT_EQ(result, code) << CuErrorText(result);
    const std::string message = LastFault();
    const int line = FindPtxLine(ptx_, kernel, statement);
    ASSERT_GT(line, 0) << statement << " not found in " << kernel;
    EXPECT_THAT(message, HasSubstr(absl::StrCat("kernel '", kernel, "' line ", line, " (")));
    EXPECT_THAT(message, HasSubstr(statement));
    EXPECT_THAT(message, HasSubstr(detail));
    // The error string Ember would read carries the same detail.
    EXPECT_THAT(CuErrorText(result), HasSubstr(absl::StrCat("kernel '", kernel, "'")));
    // Sticky: every later call in the context fails the same way.
    CUdeviceptr p = 0;
    EXPECT_EQ(cuMemAlloc(&p, 16), code);
  }

  std::string ptx_;
  CUmodule module_ = nullptr;
};

TEST_P(BrokenKernelsTest, MissingBarrierIsCaughtInEitherWarpOrder) {
  std::vector<float> values(64, 1.0f);
  CUdeviceptr in = Upload(values), out = Alloc(4);
  // Warp 0 runs first: it reads partial[t + 32] before warp 1 wrote it.
  ExpectCaught("missing_barrier", {1}, {64}, {&in, &out}, CUDA_ERROR_LAUNCH_FAILED,
               "ld.shared.f32", "no thread of this block has written yet");
}

TEST_P(BrokenKernelsTest, MissingBarrierIsADataRaceWhenTheWriterRunsFirst) {
  ember_vgpu_set_reverse_order(1);
  std::vector<float> values(64, 1.0f);
  CUdeviceptr in = Upload(values), out = Alloc(4);
  ExpectCaught("missing_barrier", {1}, {64}, {&in, &out}, CUDA_ERROR_LAUNCH_FAILED,
               "ld.shared.f32", "data race on shared memory");
}

TEST_P(BrokenKernelsTest, OutOfBoundsWrite) {
  int n = 100;
  CUdeviceptr out = Alloc(n * sizeof(float));
  ExpectCaught("out_of_bounds_write", {1}, {128}, {&out, &n}, CUDA_ERROR_ILLEGAL_ADDRESS,
               "st.global", "out of bounds: it starts 0 bytes past the end of the 400-byte");
}

TEST_P(BrokenKernelsTest, DivergentBarrier) {
  CUdeviceptr out = Alloc(64 * sizeof(float));
  ExpectCaught("divergent_barrier", {1}, {64}, {&out}, CUDA_ERROR_LAUNCH_FAILED, "bar.sync",
               "exited at line");
}

TEST_P(BrokenKernelsTest, WrongShuffleMask) {
  std::vector<float> values(32, 2.0f);
  CUdeviceptr in = Upload(values), out = Alloc(32 * sizeof(float));
  ExpectCaught("wrong_shuffle_mask", {1}, {32}, {&in, &out}, CUDA_ERROR_LAUNCH_FAILED,
               "shfl.sync.bfly.b32", "membermask 0xffffffff, but lane 16 never arrives");
}

TEST_P(BrokenKernelsTest, ReadOfUnwrittenSharedMemory) {
  CUdeviceptr out = Alloc(64 * sizeof(float));
  ExpectCaught("uninitialized_shared_read", {1}, {64}, {&out}, CUDA_ERROR_LAUNCH_FAILED,
               "ld.shared.f32", "no thread of this block has written");
}

TEST_P(BrokenKernelsTest, UseAfterFree) {
  CUdeviceptr in = 0, out = Alloc(32 * sizeof(float));
  EMBER_ASSERT_CU(cuMemAlloc(&in, 32 * sizeof(float)));
  EMBER_ASSERT_CU(cuMemFree(in));
  ExpectCaught("read_after_free", {1}, {32}, {&in, &out}, CUDA_ERROR_ILLEGAL_ADDRESS,
               "ld.global.f32", "use after free of the 128-byte device allocation");
}

TEST_P(BrokenKernelsTest, MisalignedLoad) {
  CUdeviceptr in = Alloc(256), out = Alloc(32 * sizeof(float));
  EMBER_ASSERT_CU(cuMemsetD8(in, 0, 256));
  ExpectCaught("misaligned_load", {1}, {32}, {&in, &out}, CUDA_ERROR_MISALIGNED_ADDRESS,
               "ld.global", "is not aligned to 4 bytes");
}

TEST_P(BrokenKernelsTest, EndlessLoopExhaustsTheInstructionBudget) {
  ember_vgpu_set_instruction_budget(100000);
  CUdeviceptr flag = Upload(std::vector<int>{0});
  const CUresult result = Run(Function(module_, "endless_loop"), {1}, {32}, {&flag});
  EXPECT_EQ(result, CUDA_ERROR_LAUNCH_TIMEOUT) << CuErrorText(result);
  EXPECT_THAT(LastFault(), HasSubstr("kernel 'endless_loop'"));
  EXPECT_THAT(LastFault(), HasSubstr("budget of 100000 warp instructions"));
}

TEST_P(BrokenKernelsTest, Trap) {
  CUdeviceptr out = Alloc(32 * sizeof(float));
  ExpectCaught("traps", {1}, {32}, {&out}, CUDA_ERROR_ILLEGAL_INSTRUCTION, "trap;",
               "thread (5,0,0) of block (0,0,0): trap instruction executed");
}

TEST_P(BrokenKernelsTest, AResetContextWorksAgain) {
  CUdeviceptr out = Alloc(32 * sizeof(float));
  int n = 32;
  ASSERT_EQ(Run(Function(module_, "out_of_bounds_write"), {1}, {64}, {&out, &n}), CUDA_ERROR_ILLEGAL_ADDRESS);
  ResetContext();
  CUdeviceptr p = 0;
  EMBER_ASSERT_CU(cuMemAlloc(&p, 64));
  EMBER_ASSERT_CU(cuMemFree(p));
  EXPECT_EQ(LastFault(), "");
}

INSTANTIATE_TEST_SUITE_P(Arch, BrokenKernelsTest, ::testing::Values(80, 90),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return absl::StrCat("sm", info.param);
                         });

}  // namespace
}  // namespace ember::vgpu::testing
