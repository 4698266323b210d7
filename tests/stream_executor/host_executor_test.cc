// Host executor and platform: memory, synchronous copies, stats, limits, ordinals.
#include "stream_executor/host/host_executor.h"

#include <cstdint>
#include <cstring>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stream_executor/host/host_platform.h"
#include "tests/stream_executor/host_test_util.h"

namespace ember::se {
namespace {

using ::ember::se::testing::ExecutorOf;
using ::ember::se::testing::MakeHostPlatform;
using ::ember::se::testing::RandomBytes;
using ::testing::HasSubstr;

TEST(HostPlatformTest, DevicesAndOrdinals) {
  auto platform = MakeHostPlatform(3);
  EXPECT_EQ(platform->Name(), "host");
  EXPECT_EQ(platform->DeviceCount(), 3);
  for (int i = 0; i < 3; ++i) {
    Executor* executor = ExecutorOf(*platform, i);
    EXPECT_EQ(executor->device_ordinal(), i);
    EXPECT_TRUE(executor->MemoryIsHostAccessible());
    EXPECT_EQ(executor->DeviceKind(), "Ember host device");
  }
  EXPECT_EQ(ExecutorOf(*platform, 1), ExecutorOf(*platform, 1));
  for (int bad : {-1, 3, 1000}) {
    auto executor = platform->ExecutorForDevice(bad);
    EXPECT_EQ(executor.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(executor.status().message(), HasSubstr("out of range"));
  }
}

TEST(HostPlatformTest, RejectsBadOptions) {
  EXPECT_EQ(CreateHostPlatform(0, std::nullopt).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CreateHostPlatform(-2, std::nullopt).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CreateHostPlatform(1, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(HostExecutorTest, AllocationsAreAlignedDistinctAndRoundTripData) {
  auto platform = MakeHostPlatform();
  Executor* executor = ExecutorOf(*platform, 0);
  std::set<void*> seen;
  for (uint64_t size : {0ull, 1ull, 63ull, 64ull, 1000ull, 123457ull}) {
    auto mem = executor->Allocate(size);
    ASSERT_TRUE(mem.ok()) << mem.status();
    EXPECT_FALSE(mem->is_null());
    EXPECT_EQ(mem->size, size);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(mem->opaque) % host::kHostAlignment, 0u);
    EXPECT_TRUE(seen.insert(mem->opaque).second);
    const std::vector<uint8_t> in = RandomBytes(size, static_cast<uint32_t>(size));
    std::vector<uint8_t> out(size, 0);
    ASSERT_TRUE(executor->SynchronousMemcpyH2D(*mem, in.data(), size).ok());
    ASSERT_TRUE(executor->SynchronousMemcpyD2H(out.data(), *mem, size).ok());
    EXPECT_EQ(in, out);
  }
  for (void* ptr : seen) executor->Deallocate(DeviceMemory{ptr, 0});
  EXPECT_EQ(executor->GetMemoryStats().bytes_in_use, 0);
}

TEST(HostExecutorTest, StatsAndClear) {
  auto platform = MakeHostPlatform();
  Executor* executor = ExecutorOf(*platform, 0);
  const MemoryStats fresh = executor->GetMemoryStats();
  EXPECT_EQ(fresh.bytes_in_use, 0);
  ASSERT_TRUE(fresh.bytes_limit.has_value());  // physical memory by default
  EXPECT_GT(*fresh.bytes_limit, 0);

  auto a = executor->Allocate(4096);
  ASSERT_TRUE(a.ok());
  executor->Deallocate(*a);
  const MemoryStats after = executor->GetMemoryStats();
  EXPECT_EQ(after.bytes_in_use, 0);
  EXPECT_EQ(after.peak_bytes_in_use, 4096);
  EXPECT_EQ(after.num_allocs, 1);
  EXPECT_EQ(after.pool_bytes, 4096);
  ASSERT_TRUE(executor->ClearMemoryStats().ok());
  EXPECT_EQ(executor->GetMemoryStats().peak_bytes_in_use, 0);
  EXPECT_EQ(executor->GetMemoryStats().num_allocs, 0);
}

TEST(HostExecutorTest, MemoryLimitGivesResourceExhausted) {
  auto platform = MakeHostPlatform(2, /*limit=*/1 << 20);
  Executor* executor = ExecutorOf(*platform, 1);
  EXPECT_EQ(executor->GetMemoryStats().bytes_limit, 1 << 20);
  auto a = executor->Allocate(800 << 10);
  ASSERT_TRUE(a.ok());
  auto b = executor->Allocate(400 << 10);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(b.status().message(), HasSubstr("host device 1"));
  EXPECT_THAT(b.status().message(), HasSubstr("409600 bytes"));
  // The other device has its own limit.
  EXPECT_TRUE(ExecutorOf(*platform, 0)->Allocate(400 << 10).ok());
}

TEST(HostExecutorTest, DeallocateToleratesNullAndForeignMemory) {
  auto platform = MakeHostPlatform();
  Executor* executor = ExecutorOf(*platform, 0);
  int local = 0;
  executor->Deallocate(DeviceMemory{});
  executor->Deallocate(DeviceMemory{&local, sizeof(local)});
  EXPECT_EQ(executor->GetMemoryStats().bytes_in_use, 0);
}

TEST(HostExecutorTest, SynchronousCopiesCheckArguments) {
  auto platform = MakeHostPlatform();
  Executor* executor = ExecutorOf(*platform, 0);
  auto mem = executor->Allocate(16);
  ASSERT_TRUE(mem.ok());
  char buffer[32] = {};
  absl::Status too_big = executor->SynchronousMemcpyH2D(*mem, buffer, 32);
  EXPECT_EQ(too_big.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(too_big.message(), HasSubstr("32 bytes do not fit"));
  EXPECT_EQ(executor->SynchronousMemcpyD2H(nullptr, *mem, 8).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(executor->SynchronousMemcpyD2H(buffer, DeviceMemory{}, 8).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(executor->SynchronousMemcpyD2H(nullptr, DeviceMemory{}, 0).ok());
  executor->Deallocate(*mem);
}

}  // namespace
}  // namespace ember::se
