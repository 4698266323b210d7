// The CUDA platform end to end against the virtual GPU's libcuda.so.1 (tests/virtual_gpu): driver
// loading, contexts, allocator, streams, events, host callbacks, cross-device work, error
// mapping, and that every handle is released. The real driver is exercised only on a GPU machine.
#include <cuda.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stream_executor/cuda/cuda_platform.h"
#include "stream_executor/host/host_platform.h"
#include "stream_executor/platform_factory.h"
#include "tests/stream_executor/host_test_util.h"

namespace ember::se {
namespace {

using ::ember::se::testing::RandomBytes;
using ::testing::HasSubstr;

// The virtual driver's test hooks, from the same (already loaded) library instance.
struct DriverHooks {
  int (*live_handles)() = nullptr;
  void (*fail_next_allocations)(int) = nullptr;
  // A device fault, as a kernel's.
  void (*fault)(int device, CUresult code, const char* message) = nullptr;
};

DriverHooks LoadHooks() {
  DriverHooks hooks;
  void* handle = dlopen(EMBER_VIRTUAL_CUDA_DRIVER, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(handle, nullptr) << dlerror();
  if (handle == nullptr) return hooks;
  hooks.live_handles = reinterpret_cast<int (*)()>(dlsym(handle, "ember_vgpu_live_handles"));
  hooks.fail_next_allocations =
      reinterpret_cast<void (*)(int)>(dlsym(handle, "ember_vgpu_fail_next_allocations"));
  hooks.fault =
      reinterpret_cast<void (*)(int, CUresult, const char*)>(dlsym(handle, "ember_vgpu_fault"));
  return hooks;  // the handle stays open: the platform keeps the library loaded anyway
}

// Queues a host callback that holds `stream` until `gate` is notified.
absl::Status HoldUntil(Stream& stream, absl::Notification& gate) {
  return stream.EnqueueHostCallback([&gate] {
    gate.WaitForNotification();
    return absl::OkStatus();
  });
}

class CudaPlatformTest : public ::testing::Test {
 protected:
  void SetUp() override {
    CudaPlatformOptions options;
    options.driver_library = EMBER_VIRTUAL_CUDA_DRIVER;
    auto platform = CreateCudaPlatform(options);
    ASSERT_TRUE(platform.ok()) << platform.status();
    platform_ = std::move(platform).value();
    hooks_ = LoadHooks();
    ASSERT_NE(hooks_.live_handles, nullptr);
  }

  void TearDown() override {
    platform_.reset();
    if (hooks_.live_handles != nullptr) {
      EXPECT_EQ(hooks_.live_handles(), 0) << "contexts, streams, events or memory leaked";
    }
  }

  Executor* Exec(int ordinal) {
    auto executor = platform_->ExecutorForDevice(ordinal);
    EXPECT_TRUE(executor.ok()) << executor.status();
    return executor.value();
  }

  std::unique_ptr<Stream> NewStream(Executor* executor) {
    auto stream = executor->CreateStream();
    EXPECT_TRUE(stream.ok()) << stream.status();
    return std::move(stream).value();
  }

  DeviceMemory Alloc(Executor* executor, uint64_t size) {
    auto mem = executor->Allocate(size);
    EXPECT_TRUE(mem.ok()) << mem.status();
    return mem.value();
  }

  std::unique_ptr<Platform> platform_;
  DriverHooks hooks_;
};

TEST_F(CudaPlatformTest, PlatformAndExecutors) {
  EXPECT_EQ(platform_->Name(), "cuda");
  EXPECT_EQ(platform_->DeviceCount(), 2);
  Executor* executor = Exec(1);
  EXPECT_EQ(executor->device_ordinal(), 1);
  EXPECT_THAT(executor->DeviceKind(), HasSubstr("(Ember virtual GPU)"));
  EXPECT_FALSE(executor->MemoryIsHostAccessible());
  EXPECT_EQ(Exec(1), executor);
  // The virtual machine's default devices are H100s with 80 GB.
  EXPECT_EQ(executor->GetMemoryStats().bytes_limit, int64_t{85520809984});
  EXPECT_EQ(platform_->ExecutorForDevice(2).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(CudaPlatformTest, AllocatorUsesCuMemAllocWith256ByteClasses) {
  Executor* executor = Exec(0);
  DeviceMemory zero = Alloc(executor, 0);
  DeviceMemory small = Alloc(executor, 100);
  EXPECT_FALSE(zero.is_null());
  EXPECT_NE(zero.opaque, small.opaque);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.opaque) % 256, 0u);
  EXPECT_EQ(executor->GetMemoryStats().bytes_in_use, 512);
  executor->Deallocate(small);
  DeviceMemory again = Alloc(executor, 200);
  EXPECT_EQ(again.opaque, small.opaque);  // reused from the cache
  executor->Deallocate(again);
  executor->Deallocate(zero);
}

TEST_F(CudaPlatformTest, DriverOutOfMemoryIsResourceExhaustedNamingTheCall) {
  Executor* executor = Exec(0);
  hooks_.fail_next_allocations(1);
  auto mem = executor->Allocate(4096);
  ASSERT_FALSE(mem.ok());
  EXPECT_EQ(mem.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(mem.status().message(), HasSubstr("cuMemAlloc failed"));
  EXPECT_THAT(mem.status().message(), HasSubstr("CUDA_ERROR_OUT_OF_MEMORY"));
  EXPECT_THAT(mem.status().message(), HasSubstr("cuda device 0"));
  EXPECT_TRUE(executor->Allocate(4096).ok());  // next one works; freed by the allocator later
}

TEST_F(CudaPlatformTest, SynchronousAndAsyncCopiesRoundTrip) {
  Executor* executor = Exec(0);
  const std::vector<uint8_t> in = RandomBytes(65537, 11);
  DeviceMemory a = Alloc(executor, in.size());
  DeviceMemory b = Alloc(executor, in.size());
  ASSERT_TRUE(executor->SynchronousMemcpyH2D(a, in.data(), in.size()).ok());
  auto stream = NewStream(executor);
  std::vector<uint8_t> out(in.size(), 0);
  ASSERT_TRUE(stream->MemcpyD2D(b, a, in.size()).ok());
  ASSERT_TRUE(stream->Memset(a, 0x5A, 1000).ok());
  ASSERT_TRUE(stream->MemcpyD2H(out.data(), b, out.size()).ok());
  ASSERT_TRUE(stream->BlockHostUntilDone().ok());
  EXPECT_EQ(in, out);
  std::vector<uint8_t> head(1000, 0);
  ASSERT_TRUE(executor->SynchronousMemcpyD2H(head.data(), a, head.size()).ok());
  EXPECT_EQ(head, std::vector<uint8_t>(1000, 0x5A));
  EXPECT_EQ(stream->MemcpyH2D(a, in.data(), in.size() + 1).code(),
            absl::StatusCode::kInvalidArgument);
  executor->Deallocate(a);
  executor->Deallocate(b);
}

TEST_F(CudaPlatformTest, EventsHostCallbacksAndErrors) {
  Executor* executor = Exec(0);
  auto stream = NewStream(executor);
  absl::Notification gate;
  ASSERT_TRUE(HoldUntil(*stream, gate).ok());
  std::atomic<int> calls{0};
  absl::Notification fired;
  {
    auto event = stream->RecordEvent();
    ASSERT_TRUE(event.ok()) << event.status();
    absl::SleepFor(absl::Milliseconds(20));
    EXPECT_FALSE((*event)->IsReady());
    (*event)->AndThen([&](absl::Status status) {
      EXPECT_TRUE(status.ok());
      ++calls;
      fired.Notify();
    });
  }  // dropped before ready
  std::vector<int> order;
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(stream
                    ->EnqueueHostCallback([&order, i] {
                      order.push_back(i);
                      return absl::OkStatus();
                    })
                    .ok());
  }
  ASSERT_TRUE(stream->EnqueueHostCallback([] { return absl::DataLossError("bad kernel"); }).ok());
  auto failed = stream->RecordEvent();
  ASSERT_TRUE(failed.ok());
  gate.Notify();
  fired.WaitForNotification();
  EXPECT_EQ((*failed)->Await().code(), absl::StatusCode::kDataLoss);
  absl::Status then_status;
  absl::Notification then_ran;
  (*failed)->AndThen([&](absl::Status status) {
    then_status = status;
    then_ran.Notify();
  });
  then_ran.WaitForNotification();
  EXPECT_EQ(then_status.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(stream->BlockHostUntilDone().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(calls.load(), 1);
  ASSERT_EQ(order.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(order[i], i);
}

TEST_F(CudaPlatformTest, WaitForAcrossStreamsAndDevices) {
  Executor* gpu0 = Exec(0);
  Executor* gpu1 = Exec(1);
  auto producer = NewStream(gpu0);
  auto consumer = NewStream(gpu1);
  absl::Notification gate;
  ASSERT_TRUE(HoldUntil(*producer, gate).ok());
  const std::vector<uint8_t> in = RandomBytes(10000, 12);
  DeviceMemory src = Alloc(gpu0, in.size());
  DeviceMemory dst = Alloc(gpu1, in.size());
  ASSERT_TRUE(producer->MemcpyH2D(src, in.data(), in.size()).ok());
  ASSERT_TRUE(producer->MemcpyD2D(dst, src, in.size()).ok());  // into the other GPU
  auto copied = producer->RecordEvent();
  ASSERT_TRUE(copied.ok());
  std::vector<uint8_t> out(in.size(), 0);
  ASSERT_TRUE(consumer->WaitFor(*copied).ok());
  ASSERT_TRUE(consumer->MemcpyD2H(out.data(), dst, out.size()).ok());
  auto done = consumer->RecordEvent();
  ASSERT_TRUE(done.ok());
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_FALSE((*done)->IsReady());
  gate.Notify();
  ASSERT_TRUE((*done)->Await().ok());
  EXPECT_EQ(in, out);
  gpu0->Deallocate(src);
  gpu1->Deallocate(dst);
}

// After a device fault the driver skips the host functions queued behind it; the stream still
// runs every callback and every event becomes ready, with the fault as its status.
TEST_F(CudaPlatformTest, HostCallbacksAndEventsCompleteAfterADeviceFault) {
  Executor* executor = Exec(0);
  auto stream = NewStream(executor);
  absl::Notification gate;
  ASSERT_TRUE(HoldUntil(*stream, gate).ok());
  bool callback_ran = false;
  ASSERT_TRUE(stream
                  ->EnqueueHostCallback([&callback_ran] {
                    callback_ran = true;
                    return absl::OkStatus();
                  })
                  .ok());
  auto event = stream->RecordEvent();
  ASSERT_TRUE(event.ok()) << event.status();
  absl::Notification fired;
  absl::Status fired_with;
  (*event)->AndThen([&](absl::Status status) {
    fired_with = status;
    fired.Notify();
  });
  hooks_.fault(0, CUDA_ERROR_ILLEGAL_ADDRESS, "a kernel faulted (simulated)");
  gate.Notify();
  const absl::Status done = stream->BlockHostUntilDone();
  EXPECT_THAT(done.message(), HasSubstr("CUDA_ERROR_ILLEGAL_ADDRESS"));
  EXPECT_THAT(done.message(), HasSubstr("a kernel faulted (simulated)"));
  ASSERT_TRUE(fired.WaitForNotificationWithTimeout(absl::Seconds(20)))
      << "the event's callback never ran after the fault";
  EXPECT_FALSE(fired_with.ok());
  EXPECT_TRUE(callback_ran);
  event->reset();
  stream.reset();
  // The fault is sticky until the device is reset: let the platform go, then reset it.
  platform_.reset();
  void* handle = dlopen(EMBER_VIRTUAL_CUDA_DRIVER, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  auto reset =
      reinterpret_cast<CUresult (*)(CUdevice)>(dlsym(handle, "cuDevicePrimaryCtxReset_v2"));
  ASSERT_NE(reset, nullptr);
  EXPECT_EQ(reset(0), CUDA_SUCCESS);
}

TEST_F(CudaPlatformTest, WaitForAnEventOfAnotherPlatformIsAnError) {
  auto host = CreateHostPlatform(1, std::nullopt);
  ASSERT_TRUE(host.ok());
  auto host_stream = (*(*host)->ExecutorForDevice(0))->CreateStream();
  ASSERT_TRUE(host_stream.ok());
  absl::Notification gate;
  ASSERT_TRUE(HoldUntil(**host_stream, gate).ok());
  auto host_event = (*host_stream)->RecordEvent();
  ASSERT_TRUE(host_event.ok());
  auto stream = NewStream(Exec(0));
  absl::Status status = stream->WaitFor(*host_event);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("not come from the CUDA platform"));
  gate.Notify();
}

TEST(CudaPlatformLoadTest, LibraryDirectoryIsSearchedFirst) {
  PlatformOptions options;
  options.kind = "cuda";
  options.cuda_library_path = EMBER_VIRTUAL_GPU_LIB_DIR;
  auto platform = CreatePlatform(options);
  ASSERT_TRUE(platform.ok()) << platform.status();
  EXPECT_EQ((*platform)->Name(), "cuda");
  auto executor = (*platform)->ExecutorForDevice(0);
  ASSERT_TRUE(executor.ok()) << executor.status();
  EXPECT_THAT((*executor)->DeviceKind(), HasSubstr("(Ember virtual GPU)"));
  // A directory without the library falls back to the loader's search, which finds no driver
  // on a machine without one; "cuda" then fails, naming the library.
  CudaPlatformOptions missing;
  missing.library_directory = "/nonexistent/ember";
  missing.driver_library = "libember_no_such_driver.so.1";
  auto none = CreateCudaPlatform(missing);
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.status().message(), HasSubstr("libember_no_such_driver.so.1"));
}

TEST(CudaPlatformLoadTest, MissingSymbolIsNamed) {
  CudaPlatformOptions options;
  options.driver_library = EMBER_VIRTUAL_CUDA_DRIVER_NO_MEMSET;
  auto platform = CreateCudaPlatform(options);
  ASSERT_FALSE(platform.ok());
  EXPECT_EQ(platform.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(platform.status().message(), HasSubstr("cuMemsetD8Async"));
}

}  // namespace
}  // namespace ember::se
