// The virtual driver's Driver API rules: devices and attributes as the environment asks, contexts
// and the context stack, streams (the legacy default stream's implicit synchronization), events,
// host functions (no driver calls inside), memory (exact sizes, device pointers are not host
// addresses, pinned memory), peer access, modules (PTX only; errors name the line), launch
// limits, and occupancy. Kernels here are small hand-written PTX.
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/virtual_gpu/driver/virtual_gpu_hooks.h"
#include "tests/virtual_gpu/vgpu_test_util.h"

namespace ember::vgpu::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kPtx[] = R"(
.version 7.0
.target sm_80
.address_size 64
.extern .shared .align 4 .b8 dynamic_words[];

// dst[i] = src[i] for i < n
.visible .entry copy_words(.param .u64 p_src, .param .u64 p_dst, .param .u32 p_n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<7>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [p_src];
  ld.param.u64 %rd2, [p_dst];
  ld.param.u32 %r1, [p_n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r5, %r2, %r3, %r4;
  setp.ge.s32 %p1, %r5, %r1;
  @%p1 bra DONE;
  mul.wide.s32 %rd3, %r5, 4;
  add.s64 %rd4, %rd1, %rd3;
  add.s64 %rd5, %rd2, %rd3;
  ld.global.u32 %r6, [%rd4];
  st.global.u32 [%rd5], %r6;
DONE:
  ret;
}

// dst[t] = t * 3 through dynamic shared memory (one word per thread)
.visible .entry through_dynamic_shared(.param .u64 p_dst)
{
  .reg .b32 %r<5>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_dst];
  mov.u32 %r1, %tid.x;
  mul.lo.u32 %r2, %r1, 3;
  shl.b32 %r3, %r1, 2;
  mov.u32 %r4, dynamic_words;
  add.u32 %r4, %r4, %r3;
  st.shared.u32 [%r4], %r2;
  bar.sync 0;
  ld.shared.u32 %r2, [%r4];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
)";

class DriverApiTest : public VirtualGpuTest {
 protected:
  void SetUp() override {
    VirtualGpuTest::SetUp();
    module_ = Load(kPtx);
    ASSERT_NE(module_, nullptr);
    copy_ = Function(module_, "copy_words");
  }
  CUmodule module_ = nullptr;
  CUfunction copy_ = nullptr;
};

// The models the environment asks for (EMBER_VIRTUAL_GPU_MODEL / _COUNT; H100 x2 by default).
std::vector<std::string> ExpectedModels() {
  int count = 2;
  if (const char* c = std::getenv("EMBER_VIRTUAL_GPU_COUNT")) count = std::atoi(c);
  std::vector<std::string> names = {"H100"};
  if (const char* m = std::getenv("EMBER_VIRTUAL_GPU_MODEL")) {
    names.clear();
    std::string all = m;
    size_t start = 0;
    while (start <= all.size()) {
      size_t comma = all.find(',', start);
      if (comma == std::string::npos) comma = all.size();
      names.push_back(all.substr(start, comma - start));
      start = comma + 1;
    }
  }
  std::vector<std::string> models;
  for (int i = 0; i < count; ++i) models.push_back(names.size() == 1 ? names[0] : names[i]);
  return models;
}

TEST_F(DriverApiTest, DevicesHaveTheAttributesOfTheirModels) {
  const std::vector<std::string> models = ExpectedModels();
  int count = 0;
  EMBER_ASSERT_CU(cuDeviceGetCount(&count));
  ASSERT_EQ(count, static_cast<int>(models.size()));
  int version = 0;
  EMBER_ASSERT_CU(cuDriverGetVersion(&version));
  EXPECT_EQ(version, 13000);
  for (int d = 0; d < count; ++d) {
    const bool a100 = models[d] == "A100";
    char name[128];
    EMBER_ASSERT_CU(cuDeviceGetName(name, sizeof(name), d));
    EXPECT_THAT(name, HasSubstr(a100 ? "A100-SXM4-40GB" : "H100 80GB"));
    auto attr = [&](CUdevice_attribute a) {
      int v = -1;
      EXPECT_EQ(cuDeviceGetAttribute(&v, a, d), CUDA_SUCCESS);
      return v;
    };
    EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR), a100 ? 8 : 9);
    EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR), 0);
    EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), a100 ? 108 : 132);
    EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK), 49152);
    EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN), a100 ? 166912 : 232448);
    EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR), a100 ? 167936 : 233472);
    EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK), 1024);
    EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR), 2048);
    EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_WARP_SIZE), 32);
    EXPECT_EQ(attr(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING), 1);
    size_t total = 0;
    EMBER_ASSERT_CU(cuDeviceTotalMem(&total, d));
    EXPECT_EQ(total, a100 ? 42505273344ull : 85520809984ull);
  }
  int v = 0;
  EXPECT_EQ(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, count), CUDA_ERROR_INVALID_DEVICE);
}

TEST_F(DriverApiTest, CallsNeedACurrentContext) {
  CUcontext popped = nullptr;
  EMBER_ASSERT_CU(cuCtxPopCurrent(&popped));
  EXPECT_EQ(popped, ctx_);
  CUdeviceptr p = 0;
  EXPECT_EQ(cuMemAlloc(&p, 16), CUDA_ERROR_INVALID_CONTEXT);
  CUstream s = nullptr;
  EXPECT_EQ(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(cuCtxPopCurrent(&popped), CUDA_ERROR_INVALID_CONTEXT);
  EMBER_ASSERT_CU(cuCtxPushCurrent(ctx_));
  CUcontext current = nullptr;
  EMBER_ASSERT_CU(cuCtxGetCurrent(&current));
  EXPECT_EQ(current, ctx_);
  CUdevice device = -1;
  EMBER_ASSERT_CU(cuCtxGetDevice(&device));
  EXPECT_EQ(device, 0);
}

TEST_F(DriverApiTest, ObjectsOfAnotherContextAreRefused) {
  CUcontext other = nullptr;
  EMBER_ASSERT_CU(cuDevicePrimaryCtxRetain(&other, 1));
  CUstream mine = nullptr;
  EMBER_ASSERT_CU(cuStreamCreate(&mine, CU_STREAM_NON_BLOCKING));
  EMBER_ASSERT_CU(cuCtxPushCurrent(other));
  CUdeviceptr buffer = 0;
  EMBER_ASSERT_CU(cuMemAlloc(&buffer, 64));
  int n = 16;
  void* args[] = {&buffer, &buffer, &n};
  // A function loaded in device 0's context, launched while device 1's context is current.
  const CUresult launched = cuLaunchKernel(copy_, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr);
  EXPECT_EQ(launched, CUDA_ERROR_INVALID_HANDLE);
  EXPECT_THAT(CuErrorText(launched), HasSubstr("device 0's context"));
  EXPECT_EQ(cuStreamSynchronize(mine), CUDA_ERROR_INVALID_HANDLE);
  EMBER_ASSERT_CU(cuMemFree(buffer));
  CUcontext popped = nullptr;
  EMBER_ASSERT_CU(cuCtxPopCurrent(&popped));
  EMBER_ASSERT_CU(cuStreamDestroy(mine));
  EMBER_ASSERT_CU(cuDevicePrimaryCtxRelease(1));
}

void CUDA_CB CallDriverFromHostFunction(void* data) {
  CUdeviceptr p = 0;
  static_cast<std::atomic<int>*>(data)->store(static_cast<int>(cuMemAlloc(&p, 16)));
}

TEST_F(DriverApiTest, HostFunctionsMayNotCallTheDriver) {
  std::atomic<int> result{-1};
  EMBER_ASSERT_CU(cuLaunchHostFunc(nullptr, &CallDriverFromHostFunction, &result));
  EMBER_ASSERT_CU(cuCtxSynchronize());
  EXPECT_EQ(result.load(), CUDA_ERROR_NOT_PERMITTED);
}

struct Gate {
  absl::Notification open;
  std::atomic<bool> ran{false};
};
void CUDA_CB WaitAtGate(void* data) { static_cast<Gate*>(data)->open.WaitForNotification(); }
void CUDA_CB MarkRan(void* data) { static_cast<Gate*>(data)->ran = true; }

TEST_F(DriverApiTest, LegacyStreamWaitsForBlockingStreamsOnly) {
  CUstream blocking = nullptr, non_blocking = nullptr;
  EMBER_ASSERT_CU(cuStreamCreate(&blocking, CU_STREAM_DEFAULT));
  EMBER_ASSERT_CU(cuStreamCreate(&non_blocking, CU_STREAM_NON_BLOCKING));
  Gate held, free_running;
  EMBER_ASSERT_CU(cuLaunchHostFunc(non_blocking, &WaitAtGate, &free_running));
  EMBER_ASSERT_CU(cuLaunchHostFunc(blocking, &WaitAtGate, &held));
  // Work on the legacy stream waits for the blocking stream, not for the non-blocking one.
  EMBER_ASSERT_CU(cuLaunchHostFunc(nullptr, &MarkRan, &held));
  CUstream other = nullptr;
  EMBER_ASSERT_CU(cuStreamCreate(&other, CU_STREAM_NON_BLOCKING));
  EMBER_ASSERT_CU(cuLaunchHostFunc(other, &MarkRan, &free_running));
  EMBER_ASSERT_CU(cuStreamSynchronize(other));
  EXPECT_TRUE(free_running.ran);
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_FALSE(held.ran) << "the legacy stream ran ahead of a blocking stream";
  EXPECT_EQ(cuStreamQuery(nullptr), CUDA_ERROR_NOT_READY);
  held.open.Notify();
  free_running.open.Notify();
  EMBER_ASSERT_CU(cuStreamSynchronize(nullptr));
  EXPECT_TRUE(held.ran);
  for (CUstream s : {blocking, non_blocking, other}) EMBER_ASSERT_CU(cuStreamDestroy(s));
}

TEST_F(DriverApiTest, EventsOrderStreamsAndMeasureTime) {
  CUstream a = nullptr, b = nullptr;
  EMBER_ASSERT_CU(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
  EMBER_ASSERT_CU(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
  CUevent start = nullptr, done = nullptr, untimed = nullptr;
  EMBER_ASSERT_CU(cuEventCreate(&start, CU_EVENT_DEFAULT));
  EMBER_ASSERT_CU(cuEventCreate(&done, CU_EVENT_DEFAULT));
  EMBER_ASSERT_CU(cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING));
  Gate gate;
  EMBER_ASSERT_CU(cuEventRecord(start, a));
  EMBER_ASSERT_CU(cuLaunchHostFunc(a, &WaitAtGate, &gate));
  EMBER_ASSERT_CU(cuEventRecord(done, a));
  EMBER_ASSERT_CU(cuEventRecord(untimed, a));
  EMBER_ASSERT_CU(cuStreamWaitEvent(b, done, 0));
  Gate after;
  EMBER_ASSERT_CU(cuLaunchHostFunc(b, &MarkRan, &after));
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_EQ(cuEventQuery(done), CUDA_ERROR_NOT_READY);
  EXPECT_FALSE(after.ran);
  float ms = -1;
  EXPECT_EQ(cuEventElapsedTime(&ms, start, done), CUDA_ERROR_NOT_READY);
  gate.open.Notify();
  EMBER_ASSERT_CU(cuEventSynchronize(done));
  EMBER_ASSERT_CU(cuStreamSynchronize(b));
  EXPECT_TRUE(after.ran);
  EMBER_ASSERT_CU(cuEventQuery(done));
  EMBER_ASSERT_CU(cuEventElapsedTime(&ms, start, done));
  EXPECT_GE(ms, 15.0f);
  EMBER_ASSERT_CU(cuEventSynchronize(untimed));
  EXPECT_EQ(cuEventElapsedTime(&ms, start, untimed), CUDA_ERROR_INVALID_HANDLE);
  for (CUevent e : {start, done, untimed}) EMBER_ASSERT_CU(cuEventDestroy(e));
  for (CUstream s : {a, b}) EMBER_ASSERT_CU(cuStreamDestroy(s));
}

TEST_F(DriverApiTest, AllocationsHaveExactSizesAndAreNotHostAddresses) {
  size_t free_before = 0, total = 0;
  EMBER_ASSERT_CU(cuMemGetInfo(&free_before, &total));
  CUdeviceptr p = Alloc(1000);
  size_t free_after = 0;
  EMBER_ASSERT_CU(cuMemGetInfo(&free_after, &total));
  EXPECT_EQ(free_before - free_after, 1000u);
  EXPECT_EQ(p % 256, 0u);
  std::vector<uint8_t> host(1001, 7);
  const CUresult too_far = cuMemcpyHtoD(p, host.data(), 1001);
  EXPECT_EQ(too_far, CUDA_ERROR_INVALID_VALUE);
  EXPECT_THAT(CuErrorText(too_far), HasSubstr("1 bytes past the end of the 1000-byte device allocation"));
  // A device pointer handed over as host memory is refused, not dereferenced.
  const CUresult swapped = cuMemcpyHtoD(p, reinterpret_cast<void*>(p), 16);
  EXPECT_EQ(swapped, CUDA_ERROR_INVALID_VALUE);
  EXPECT_THAT(CuErrorText(swapped), HasSubstr("is a device address"));
  CUdeviceptr loose = 0;
  EMBER_ASSERT_CU(cuMemAlloc(&loose, 8));
  EMBER_ASSERT_CU(cuMemFree(loose));
  const CUresult twice = cuMemFree(loose);
  EXPECT_EQ(twice, CUDA_ERROR_INVALID_VALUE);
  EXPECT_THAT(CuErrorText(twice), HasSubstr("already freed"));
  unsigned int type = 0;
  EMBER_ASSERT_CU(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p));
  EXPECT_EQ(type, static_cast<unsigned>(CU_MEMORYTYPE_DEVICE));
}

TEST_F(DriverApiTest, DereferencingADevicePointerOnTheHostCrashes) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  CUdeviceptr p = Alloc(64);
  EMBER_ASSERT_CU(cuMemsetD32(p, 42, 16));
  EXPECT_DEATH(
      {
        volatile int value = *reinterpret_cast<volatile int*>(p);
        (void)value;
      },
      "");
}

TEST_F(DriverApiTest, KernelsReachPinnedHostMemoryAndAsyncCopiesReadWhenTheyRun) {
  void* pinned = nullptr;
  EMBER_ASSERT_CU(cuMemHostAlloc(&pinned, 64 * 4, 0));
  int* words = static_cast<int*>(pinned);
  for (int i = 0; i < 64; ++i) words[i] = i * i;
  CUdeviceptr device_view = 0;
  EMBER_ASSERT_CU(cuMemHostGetDevicePointer(&device_view, pinned, 0));
  CUdeviceptr dst = Alloc(64 * 4);
  int n = 64;
  EMBER_ASSERT_CU(Run(copy_, {1}, {64}, {&device_view, &dst, &n}));
  std::vector<int> out = Download<int>(dst, 64);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], i * i);
  // An asynchronous copy reads its source when the stream reaches it.
  CUstream s = nullptr;
  EMBER_ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  Gate gate;
  EMBER_ASSERT_CU(cuLaunchHostFunc(s, &WaitAtGate, &gate));
  EMBER_ASSERT_CU(cuMemcpyHtoDAsync(dst, pinned, 4, s));
  words[0] = 1234;
  gate.open.Notify();
  EMBER_ASSERT_CU(cuStreamSynchronize(s));
  EXPECT_EQ(Download<int>(dst, 1)[0], 1234);
  EMBER_ASSERT_CU(cuStreamDestroy(s));
  EMBER_ASSERT_CU(cuMemFreeHost(pinned));
}

TEST_F(DriverApiTest, PeerMemoryNeedsPeerAccess) {
  CUcontext other = nullptr;
  EMBER_ASSERT_CU(cuDevicePrimaryCtxRetain(&other, 1));
  EMBER_ASSERT_CU(cuCtxPushCurrent(other));
  CUdeviceptr remote = 0;
  EMBER_ASSERT_CU(cuMemAlloc(&remote, 32 * 4));
  EMBER_ASSERT_CU(cuMemsetD32(remote, 9, 32));
  CUcontext popped = nullptr;
  EMBER_ASSERT_CU(cuCtxPopCurrent(&popped));
  int can = 0;
  EMBER_ASSERT_CU(cuDeviceCanAccessPeer(&can, 0, 1));
  EXPECT_EQ(can, 1);
  CUdeviceptr local = Alloc(32 * 4);
  int n = 32;
  const CUresult denied = Run(copy_, {1}, {32}, {&remote, &local, &n});
  EXPECT_EQ(denied, CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_THAT(LastFault(), HasSubstr("has no peer access to device 1"));
  ResetContext();
  module_ = Load(kPtx);
  copy_ = Function(module_, "copy_words");
  local = Alloc(32 * 4);
  EMBER_ASSERT_CU(cuCtxEnablePeerAccess(other, 0));
  EXPECT_EQ(cuCtxEnablePeerAccess(other, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
  EMBER_ASSERT_CU(Run(copy_, {1}, {32}, {&remote, &local, &n}));
  EXPECT_EQ(Download<int>(local, 32), std::vector<int>(32, 9));
  EMBER_ASSERT_CU(cuCtxPushCurrent(other));
  EMBER_ASSERT_CU(cuMemFree(remote));
  EMBER_ASSERT_CU(cuCtxPopCurrent(&popped));
  EMBER_ASSERT_CU(cuDevicePrimaryCtxRelease(1));
}

TEST_F(DriverApiTest, ModulesArePtxOnlyAndErrorsNameTheLine) {
  CUmodule m = nullptr;
  const char cubin[] = "\x7f" "ELF\x02\x01\x01";
  const CUresult elf = cuModuleLoadData(&m, cubin);
  EXPECT_EQ(elf, CUDA_ERROR_INVALID_IMAGE);
  EXPECT_THAT(CuErrorText(elf), HasSubstr("interprets PTX only"));
  const std::string unknown = absl::StrCat(
      ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n",
      "  .reg .b32 %r<2>;\n  frobnicate.b32 %r1, %r0;\n  ret;\n}\n");
  char log[512] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {log, reinterpret_cast<void*>(sizeof(log))};
  const CUresult bad = cuModuleLoadDataEx(&m, unknown.c_str(), 2, options, values);
  EXPECT_EQ(bad, CUDA_ERROR_INVALID_PTX);
  EXPECT_THAT(log, HasSubstr("line 7: unknown instruction 'frobnicate.b32'"));
  EXPECT_THAT(log, HasSubstr("kernel 'k'"));
  const std::string newer = absl::StrCat(".version 8.6\n.target sm_100\n.address_size 64\n",
                                         ".visible .entry k()\n{\n  ret;\n}\n");
  const CUresult arch = cuModuleLoadData(&m, newer.c_str());
  EXPECT_EQ(arch, CUDA_ERROR_INVALID_PTX);
  EXPECT_THAT(CuErrorText(arch), HasSubstr("targets sm_100"));
  CUfunction f = nullptr;
  EXPECT_EQ(cuModuleGetFunction(&f, module_, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
}

TEST_F(DriverApiTest, LaunchLimitsAreChecked) {
  CUdeviceptr buffer = Alloc(4096);
  int n = 1;
  void* args[] = {&buffer, &buffer, &n};
  EXPECT_EQ(cuLaunchKernel(copy_, 1, 1, 1, 2048, 1, 1, 0, nullptr, args, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuLaunchKernel(copy_, 1, 70000, 1, 32, 1, 1, 0, nullptr, args, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuLaunchKernel(copy_, 0, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(cuLaunchKernel(copy_, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  // Launch errors are not sticky.
  EMBER_ASSERT_CU(Run(copy_, {1}, {32}, {&buffer, &buffer, &n}));

  CUfunction shared = Function(module_, "through_dynamic_shared");
  void* shared_args[] = {&buffer};
  const CUresult big = cuLaunchKernel(shared, 1, 1, 1, 1024, 1, 1, 64 * 1024, nullptr, shared_args, nullptr);
  EXPECT_EQ(big, CUDA_ERROR_INVALID_VALUE);
  EXPECT_THAT(CuErrorText(big), HasSubstr("CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES"));
  EMBER_ASSERT_CU(cuFuncSetAttribute(shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024));
  EMBER_ASSERT_CU(Run(shared, {1}, {1024}, {&buffer}, 64 * 1024));
  std::vector<int> out = Download<int>(buffer, 1024);
  for (int t = 0; t < 1024; ++t) ASSERT_EQ(out[t], 3 * t);
  EXPECT_EQ(cuFuncSetAttribute(shared, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 300 * 1024),
            CUDA_ERROR_INVALID_VALUE);
  // Too little dynamic shared memory for the threads: the kernel writes past it.
  const CUresult small = Run(shared, {1}, {64}, {&buffer}, 128);
  EXPECT_EQ(small, CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_THAT(LastFault(), HasSubstr("of shared memory is out of bounds (128 bytes)"));
}

TEST_F(DriverApiTest, LaunchKernelExAndOccupancy) {
  CUdeviceptr src = Upload(std::vector<int>{1, 2, 3, 4}), dst = Alloc(16);
  int n = 4;
  void* args[] = {&src, &dst, &n};
  CUlaunchConfig config = {};
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 32;
  config.blockDimY = config.blockDimZ = 1;
  EMBER_ASSERT_CU(cuLaunchKernelEx(&config, copy_, args, nullptr));
  EMBER_ASSERT_CU(cuCtxSynchronize());
  EXPECT_EQ(Download<int>(dst, 4), (std::vector<int>{1, 2, 3, 4}));
  int blocks = 0;
  EMBER_ASSERT_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, copy_, 256, 0));
  EXPECT_EQ(blocks, 8);  // 2048 threads per SM
  CUfunction shared = Function(module_, "through_dynamic_shared");
  EMBER_ASSERT_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, shared, 32, 100 * 1024));
  EXPECT_EQ(blocks, ExpectedModels()[0] == "A100" ? 1 : 2);  // shared memory per SM
  int grid = 0, block = 0;
  EMBER_ASSERT_CU(cuOccupancyMaxPotentialBlockSize(&grid, &block, copy_, nullptr, 0, 0));
  EXPECT_GT(block, 0);
  EXPECT_EQ(block % 32, 0);
  int value = 0;
  EMBER_ASSERT_CU(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, copy_));
  EXPECT_EQ(value, 1024);
  EMBER_ASSERT_CU(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_PTX_VERSION, copy_));
  EXPECT_EQ(value, 70);
}

TEST_F(DriverApiTest, DriverHandlesAreCountedForLeakChecks) {
  const int before = ember_vgpu_live_handles();
  CUstream s = nullptr;
  EMBER_ASSERT_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUevent e = nullptr;
  EMBER_ASSERT_CU(cuEventCreate(&e, 0));
  EXPECT_EQ(ember_vgpu_live_handles(), before + 2);
  EMBER_ASSERT_CU(cuEventDestroy(e));
  EMBER_ASSERT_CU(cuStreamDestroy(s));
  EXPECT_EQ(ember_vgpu_live_handles(), before);
  ember_vgpu_fail_next_allocations(1);
  CUdeviceptr p = 0;
  EXPECT_EQ(cuMemAlloc(&p, 16), CUDA_ERROR_OUT_OF_MEMORY);
}

}  // namespace
}  // namespace ember::vgpu::testing
