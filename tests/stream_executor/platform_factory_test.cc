// CreatePlatform: host, cuda and auto, and the fallback reason. Written to pass both here (no
// CUDA driver) and on a machine with a GPU.
#include "stream_executor/platform_factory.h"

#include <dlfcn.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stream_executor/cuda/cuda_platform.h"

namespace ember::se {
namespace {

using ::testing::HasSubstr;

bool CudaDriverPresent() {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (handle == nullptr) handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

TEST(PlatformFactoryTest, HostWithDeviceCount) {
  PlatformOptions options;
  options.kind = "host";
  options.host_device_count = 4;
  auto platform = CreatePlatform(options);
  ASSERT_TRUE(platform.ok()) << platform.status();
  EXPECT_EQ((*platform)->Name(), "host");
  EXPECT_EQ((*platform)->DeviceCount(), 4);
  EXPECT_EQ(LastAutoFallbackReason(), "");
}

TEST(PlatformFactoryTest, MemoryLimitReachesTheDevices) {
  PlatformOptions options;
  options.kind = "host";
  options.memory_limit_bytes = 12345678;
  auto platform = CreatePlatform(options);
  ASSERT_TRUE(platform.ok()) << platform.status();
  auto executor = (*platform)->ExecutorForDevice(0);
  ASSERT_TRUE(executor.ok());
  EXPECT_EQ((*executor)->GetMemoryStats().bytes_limit, 12345678);
}

TEST(PlatformFactoryTest, BadOptionsAreInvalidArgument) {
  PlatformOptions options;
  options.kind = "tpu";
  auto platform = CreatePlatform(options);
  EXPECT_EQ(platform.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(platform.status().message(), HasSubstr("tpu"));
  options.kind = "auto";
  options.memory_limit_bytes = -1;
  EXPECT_EQ(CreatePlatform(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.memory_limit_bytes.reset();
  options.kind = "host";
  options.host_device_count = 0;
  EXPECT_EQ(CreatePlatform(options).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PlatformFactoryTest, CudaWithoutDriverSaysSo) {
  auto platform = CreateCudaPlatform();
  if (platform.ok()) {
    EXPECT_EQ((*platform)->Name(), "cuda");
    EXPECT_GT((*platform)->DeviceCount(), 0);
    return;
  }
  if (absl::IsUnimplemented(platform.status())) {
    EXPECT_THAT(platform.status().message(), HasSubstr("built without CUDA support"));
    return;
  }
  EXPECT_EQ(platform.status().code(), absl::StatusCode::kFailedPrecondition);
  if (!CudaDriverPresent()) {
    EXPECT_THAT(platform.status().message(), HasSubstr("no CUDA driver found"));
    EXPECT_THAT(platform.status().message(), HasSubstr("libcuda.so.1"));  // the dlerror text
  }
}

TEST(PlatformFactoryTest, MissingDriverLibraryIsFailedPrecondition) {
  CudaPlatformOptions options;
  options.driver_library = "libember_no_such_driver.so.1";
  auto platform = CreateCudaPlatform(options);
  ASSERT_FALSE(platform.ok());
  if (absl::IsUnimplemented(platform.status())) GTEST_SKIP() << "built without CUDA";
  EXPECT_EQ(platform.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(platform.status().message(), HasSubstr("no CUDA driver found"));
  EXPECT_THAT(platform.status().message(), HasSubstr("libember_no_such_driver.so.1"));
}

TEST(PlatformFactoryTest, AutoFallsBackToHostWithAReason) {
  PlatformOptions options;
  options.kind = "auto";
  options.host_device_count = 2;
  std::string reason = "stale";
  auto platform = CreatePlatform(options, &reason);
  ASSERT_TRUE(platform.ok()) << platform.status();
  if ((*platform)->Name() == "cuda") {  // a machine with a usable GPU
    EXPECT_EQ(reason, "");
    return;
  }
  EXPECT_EQ((*platform)->Name(), "host");
  EXPECT_EQ((*platform)->DeviceCount(), 2);
  EXPECT_FALSE(reason.empty());
  if (!CudaDriverPresent()) {
    EXPECT_THAT(reason, ::testing::AnyOf(HasSubstr("no CUDA driver found"),
                                         HasSubstr("built without CUDA support")));
  }
  // The thread-local record says the same.
  auto again = CreatePlatform(options);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(LastAutoFallbackReason(), reason);
}

TEST(PlatformFactoryTest, ExplicitCudaDoesNotFallBack) {
  PlatformOptions options;
  options.kind = "cuda";
  auto platform = CreatePlatform(options);
  if (platform.ok()) {
    EXPECT_EQ((*platform)->Name(), "cuda");
  } else {
    EXPECT_TRUE(absl::IsFailedPrecondition(platform.status()) ||
                absl::IsUnimplemented(platform.status()))
        << platform.status();
  }
}

}  // namespace
}  // namespace ember::se
