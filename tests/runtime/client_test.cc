// Runtime client on host devices: transfers, strides, copies, deletion, external references.
#include "runtime/client.h"

#include <cstdint>
#include <cstring>
#include <random>

#include "gtest/gtest.h"
#include "runtime/device.h"
#include "stream_executor/executor.h"

namespace ember::runtime {
namespace {

using ir::ElementType;

std::shared_ptr<Client> MakeClient(int devices) {
  DeviceOptions options;
  options.platform = "host";
  options.host_device_count = devices;
  auto client = Client::Create(options);
  EXPECT_TRUE(client.ok()) << client.status();
  return *client;
}

std::vector<float> RandomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(ClientTest, DevicesAndLookups) {
  auto client = MakeClient(3);
  ASSERT_EQ(client->devices().size(), 3u);
  EXPECT_EQ(*client->LookupDevice(2), client->devices()[2]);
  EXPECT_FALSE(client->LookupDevice(3).ok());
  EXPECT_FALSE(client->LookupDevice(-1).ok());
  EXPECT_EQ(client->platform_name(), "ember");
  EXPECT_EQ(*client->DefaultDeviceAssignment(3, 1), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(*client->DefaultDeviceAssignment(2, 2), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_FALSE(client->DefaultDeviceAssignment(0, 2).ok());
}

TEST(ClientTest, RoundTripEverySemantics) {
  auto client = MakeClient(1);
  MemorySpace* memory = client->memories()[0];
  for (auto semantics : {HostBufferSemantics::kImmutableOnlyDuringCall,
                         HostBufferSemantics::kImmutableUntilTransferCompletes,
                         HostBufferSemantics::kImmutableZeroCopy}) {
    std::vector<float> host = RandomFloats(12, 7);
    const std::vector<float> original = host;
    AsyncEventRef done;
    auto buffer = client->BufferFromHostBuffer(host.data(), ElementType::kF32, {3, 4}, {},
                                               semantics, memory, &done);
    ASSERT_TRUE(buffer.ok()) << buffer.status();
    ASSERT_TRUE(done->Await().ok());
    std::fill(host.begin(), host.end(), -1.0f);  // the caller may reuse its memory now
    std::vector<float> back(12);
    auto copied = (*buffer)->ToHost(back.data(), {});
    ASSERT_TRUE(copied.ok());
    ASSERT_TRUE((*copied)->Await().ok());
    EXPECT_EQ(back, original);
  }
}

TEST(ClientTest, StridedUploadAndDownloadTranspose) {
  auto client = MakeClient(1);
  const std::vector<float> host = RandomFloats(6, 3);  // a 2x3 array stored column-major
  AsyncEventRef done;
  auto buffer = client->BufferFromHostBuffer(host.data(), ElementType::kF32, {2, 3}, {4, 8},
                                             HostBufferSemantics::kImmutableOnlyDuringCall,
                                             client->memories()[0], &done);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  std::vector<float> dense(6);
  ASSERT_TRUE((*(*buffer)->ToHost(dense.data(), {}))->Await().ok());
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(dense[i * 3 + j], host[j * 2 + i]);
  std::vector<float> column_major(6);
  ASSERT_TRUE((*(*buffer)->ToHost(column_major.data(), {4, 8}))->Await().ok());
  EXPECT_EQ(column_major, host);
}

TEST(ClientTest, CopyBetweenDevicesAndDelete) {
  auto client = MakeClient(2);
  const std::vector<float> host = RandomFloats(100, 5);
  AsyncEventRef done;
  auto a = client->BufferFromHostBuffer(host.data(), ElementType::kF32, {100}, {},
                                        HostBufferSemantics::kImmutableUntilTransferCompletes,
                                        client->memories()[0], &done);
  ASSERT_TRUE(a.ok());
  auto b = (*a)->CopyTo(client->devices()[1], nullptr);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ((*b)->device(), client->devices()[1]);
  (*a)->Delete();
  (*a)->Delete();
  EXPECT_TRUE((*a)->IsDeleted());
  EXPECT_FALSE((*a)->ToHost(nullptr, {}).ok());
  EXPECT_FALSE((*a)->ReadyEvent()->Await().ok());
  std::vector<float> back(100);
  ASSERT_TRUE((*(*b)->ToHost(back.data(), {}))->Await().ok());
  EXPECT_EQ(back, host);
}

// Memory is free as soon as the buffer is deleted once every use the caller waited for is done:
// no transfer keeps a hold past the event it fires (the memory_stats check of
// tests/gpu/cuda_platform_check.py saw one such 8 MiB buffer linger). The arrays are large enough
// to go through the streams; many rounds give a lingering hold many chances to show.
TEST(ClientTest, DeletedBuffersAreFreeOnceTheirWaitedUsesAreDone) {
  auto client = MakeClient(2);
  Device* first = client->devices()[0];
  Device* second = client->devices()[1];
  const int64_t base_first = first->executor()->GetMemoryStats().bytes_in_use;
  const int64_t base_second = second->executor()->GetMemoryStats().bytes_in_use;
  constexpr int64_t kElements = 64 * 1024;  // 256 KiB: past the synchronous small-copy path
  const std::vector<float> host = RandomFloats(kElements, 11);
  std::vector<float> back(kElements);
  for (int round = 0; round < 200; ++round) {
    AsyncEventRef done;
    auto a = client->BufferFromHostBuffer(host.data(), ElementType::kF32, {kElements}, {},
                                          HostBufferSemantics::kImmutableUntilTransferCompletes,
                                          client->memories()[0], &done);
    ASSERT_TRUE(a.ok()) << a.status();
    // Read back without waiting for the upload first: the read waits on it.
    ASSERT_TRUE((*(*a)->ToHost(back.data(), {}))->Await().ok());
    auto b = (*a)->CopyTo(second, nullptr);
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_TRUE((*b)->ReadyEvent()->Await().ok());
    (*a)->Delete();
    ASSERT_EQ(first->executor()->GetMemoryStats().bytes_in_use, base_first) << "round " << round;
    ASSERT_TRUE((*(*b)->ToHost(back.data(), {}))->Await().ok());
    (*b)->Delete();
    ASSERT_EQ(second->executor()->GetMemoryStats().bytes_in_use, base_second) << "round " << round;
  }
  EXPECT_EQ(back, host);
}

TEST(ClientTest, ExternalReferencesKeepMemoryAlive) {
  auto client = MakeClient(1);
  const std::vector<float> host = RandomFloats(8, 9);
  AsyncEventRef done;
  auto buffer = client->BufferFromHostBuffer(host.data(), ElementType::kF32, {8}, {},
                                             HostBufferSemantics::kImmutableOnlyDuringCall,
                                             client->memories()[0], &done);
  ASSERT_TRUE(buffer.ok());
  ASSERT_TRUE((*buffer)->ReadyEvent()->Await().ok());
  EXPECT_FALSE((*buffer)->DecreaseExternalReference().ok());
  ASSERT_TRUE((*buffer)->IncreaseExternalReference().ok());
  void* pointer = *(*buffer)->OpaqueDevicePointer();
  (*buffer)->Delete();
  EXPECT_EQ(std::memcmp(pointer, host.data(), 32), 0);  // still readable: externally held
  EXPECT_TRUE((*buffer)->DecreaseExternalReference().ok());
}

TEST(ClientTest, RejectsBadShapesAndTypes) {
  auto client = MakeClient(1);
  float x = 1;
  AsyncEventRef done;
  auto memory = client->memories()[0];
  auto sem = HostBufferSemantics::kImmutableOnlyDuringCall;
  EXPECT_FALSE(client->BufferFromHostBuffer(&x, ElementType::kF32, {-1}, {}, sem, memory, &done).ok());
  EXPECT_FALSE(client->BufferFromHostBuffer(&x, ElementType::kToken, {1}, {}, sem, memory, &done).ok());
  // Strides may run backwards, but not past 2^63 bytes, and one per dimension.
  EXPECT_FALSE(
      client->BufferFromHostBuffer(&x, ElementType::kF32, {2}, {INT64_MIN}, sem, memory, &done).ok());
  EXPECT_FALSE(
      client->BufferFromHostBuffer(&x, ElementType::kF32, {2}, {4, 4}, sem, memory, &done).ok());
  EXPECT_FALSE(client->BufferFromHostBuffer(nullptr, ElementType::kF32, {2}, {}, sem, memory, &done).ok());
}

}  // namespace
}  // namespace ember::runtime
