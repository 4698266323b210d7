// Buffer objects: XLA's PjrtCApiBufferTest cases (f32[4] = 41..44), metadata queries, and the
// delete / destroy lifecycle, including use after delete and ready events (§10.3, §16.3-16.4).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "tests/capi/capi_test_util.h"

namespace ember::capi_test {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;

class PjrtCApiBufferTest : public CapiTest {
 protected:
  void SetUp() override {
    CapiTest::SetUp();
    if (HasFatalFailure()) return;
    buffer_ = UploadF32(client_.get(), FirstDevice(), kData, {4});
    ASSERT_NE(buffer_, nullptr);
  }
  void TearDown() override {
    buffer_.reset();
    CapiTest::TearDown();
  }
  const std::vector<float> kData = {41.0f, 42.0f, 43.0f, 44.0f};
  BufferPtr buffer_;
};

TEST_F(PjrtCApiBufferTest, IsDeleted) {
  EXPECT_FALSE(IsDeleted(buffer_.get()));
  auto args = EMBER_ARGS(PJRT_Buffer_Delete_Args);
  args.buffer = buffer_.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_Delete(&args)));
  EXPECT_TRUE(IsDeleted(buffer_.get()));
}

TEST_F(PjrtCApiBufferTest, GetOnDeviceSizeInBytes) {
  auto args = EMBER_ARGS(PJRT_Buffer_OnDeviceSizeInBytes_Args);
  args.buffer = buffer_.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_OnDeviceSizeInBytes(&args)));
  EXPECT_GT(args.on_device_size_in_bytes, 0u);
  EXPECT_GE(args.on_device_size_in_bytes, 4 * sizeof(float));
}

TEST_F(PjrtCApiBufferTest, ReadyEvent) {
  auto args = EMBER_ARGS(PJRT_Buffer_ReadyEvent_Args);
  args.buffer = buffer_.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_ReadyEvent(&args)));
  ASSERT_NE(args.event, nullptr);
  EXPECT_TRUE(Await(args.event).ok());
  auto ready = EMBER_ARGS(PJRT_Event_IsReady_Args);
  ready.event = args.event;
  ASSERT_TRUE(IsOk(api_->PJRT_Event_IsReady(&ready)));
  EXPECT_TRUE(ready.is_ready);
  auto destroy = EMBER_ARGS(PJRT_Event_Destroy_Args);
  destroy.event = args.event;
  EXPECT_TRUE(IsOk(api_->PJRT_Event_Destroy(&destroy)));
}

TEST_F(PjrtCApiBufferTest, ToHostBufferNoHostLayout) {
  std::vector<float> out(4, -1.0f);
  auto args = EMBER_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  args.src = buffer_.get();
  args.host_layout = nullptr;
  args.dst = out.data();
  args.dst_size = out.size() * sizeof(float);
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_ToHostBuffer(&args)));
  ASSERT_NE(args.event, nullptr) << "jaxlib CHECK-fails on a null event after success";
  EventPtr event(args.event);
  ASSERT_TRUE(Await(event.get()).ok());
  EXPECT_THAT(out, ElementsAre(41.0f, 42.0f, 43.0f, 44.0f));
}

TEST_F(PjrtCApiBufferTest, IncreaseAndDecreaseReferenceCount) {
  auto increase = EMBER_ARGS(PJRT_Buffer_IncreaseExternalReferenceCount_Args);
  increase.buffer = buffer_.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_IncreaseExternalReferenceCount(&increase)));
  auto decrease = EMBER_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount_Args);
  decrease.buffer = buffer_.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_DecreaseExternalReferenceCount(&decrease)));
}

TEST_F(PjrtCApiBufferTest, DecreaseReferenceCountReturnsError) {
  auto decrease = EMBER_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount_Args);
  decrease.buffer = buffer_.get();
  ErrorInfo error = TakeError(api_->PJRT_Buffer_DecreaseExternalReferenceCount(&decrease));
  EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(error.message,
            "Attempting to decrease reference on a buffer with zero reference count.");
  EXPECT_THAT(ToHostF32(buffer_.get()), ElementsAre(41.0f, 42.0f, 43.0f, 44.0f));
}

// np.asarray on a CPU buffer reads this pointer as host memory (§16.4), once the buffer is
// ready, so on a host device it must then point at the data itself.
TEST_F(PjrtCApiBufferTest, OpaqueDeviceMemoryDataPointer) {
  auto ready = EMBER_ARGS(PJRT_Buffer_ReadyEvent_Args);
  ready.buffer = buffer_.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_ReadyEvent(&ready)));
  EventPtr ready_event(ready.event);
  ASSERT_TRUE(Await(ready_event.get()).ok());
  auto increase = EMBER_ARGS(PJRT_Buffer_IncreaseExternalReferenceCount_Args);
  increase.buffer = buffer_.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_IncreaseExternalReferenceCount(&increase)));
  auto args = EMBER_ARGS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args);
  args.buffer = buffer_.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&args)));
  ASSERT_NE(args.device_memory_ptr, nullptr);
  auto on_cpu = EMBER_ARGS(PJRT_Buffer_IsOnCpu_Args);
  on_cpu.buffer = buffer_.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_IsOnCpu(&on_cpu)));
  if (on_cpu.is_on_cpu) {
    std::vector<float> seen(4);
    std::memcpy(seen.data(), args.device_memory_ptr, 4 * sizeof(float));
    EXPECT_EQ(seen, kData);
  }
  auto decrease = EMBER_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount_Args);
  decrease.buffer = buffer_.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_DecreaseExternalReferenceCount(&decrease)));
}

// ---------------------------------------------------------------- metadata

using CapiBufferTest = CapiTest;

TEST_F(CapiBufferTest, MetadataDescribesTheUpload) {
  const std::vector<int64_t> dims = {3, 5, 2};
  std::vector<float> data(30);
  std::mt19937 rng(11);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  for (float& x : data) x = dist(rng);
  BufferPtr buffer = UploadF32(client_.get(), FirstDevice(), data, dims);
  ASSERT_NE(buffer, nullptr);

  EXPECT_EQ(ElementType(buffer.get()), PJRT_Buffer_Type_F32);
  EXPECT_EQ(Dimensions(buffer.get()), dims);

  auto unpadded = EMBER_ARGS(PJRT_Buffer_UnpaddedDimensions_Args);
  unpadded.buffer = buffer.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_UnpaddedDimensions(&unpadded)));
  ASSERT_EQ(unpadded.num_dims, 3u);
  EXPECT_EQ(std::vector<int64_t>(unpadded.unpadded_dims, unpadded.unpadded_dims + 3), dims);

  auto dynamic = EMBER_ARGS(PJRT_Buffer_DynamicDimensionIndices_Args);
  dynamic.buffer = buffer.get();
  dynamic.num_dynamic_dims = 99;
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_DynamicDimensionIndices(&dynamic)));
  EXPECT_EQ(dynamic.num_dynamic_dims, 0u);

  auto size = EMBER_ARGS(PJRT_Buffer_OnDeviceSizeInBytes_Args);
  size.buffer = buffer.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_OnDeviceSizeInBytes(&size)));
  EXPECT_EQ(size.on_device_size_in_bytes, 30 * sizeof(float));

  auto device = EMBER_ARGS(PJRT_Buffer_Device_Args);
  device.buffer = buffer.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_Device(&device)));
  EXPECT_EQ(device.device, FirstDevice());

  auto memory = EMBER_ARGS(PJRT_Buffer_Memory_Args);
  memory.buffer = buffer.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_Memory(&memory)));
  EXPECT_EQ(memory.memory, DefaultMemory(FirstDevice()));
  EXPECT_THAT(DeviceMemories(FirstDevice()), Contains(memory.memory));

  // True on host devices, false on CUDA ones; the default client may be either.
  auto on_cpu = EMBER_ARGS(PJRT_Buffer_IsOnCpu_Args);
  on_cpu.buffer = buffer.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_IsOnCpu(&on_cpu)));

  auto layout = EMBER_ARGS(PJRT_Buffer_GetMemoryLayout_Args);
  layout.buffer = buffer.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_GetMemoryLayout(&layout)));
  ASSERT_EQ(layout.layout.type, PJRT_Buffer_MemoryLayout_Type_Tiled);
  const PJRT_Buffer_MemoryLayout_Tiled& tiled = layout.layout.tiled;
  ASSERT_EQ(tiled.minor_to_major_size, 3u);
  EXPECT_EQ(std::vector<int64_t>(tiled.minor_to_major, tiled.minor_to_major + 3),
            (std::vector<int64_t>{2, 1, 0}))
      << "default layout is row-major";

  auto pointer = EMBER_ARGS(PJRT_Buffer_UnsafePointer_Args);
  pointer.buffer = buffer.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_UnsafePointer(&pointer)));
  EXPECT_NE(pointer.buffer_pointer, 0u);

  EXPECT_EQ(ToHostF32(buffer.get()), data);
}

// ---------------------------------------------------------------- lifecycle

void DeleteBuffer(PJRT_Buffer* buffer) {
  auto args = EMBER_ARGS(PJRT_Buffer_Delete_Args);
  args.buffer = buffer;
  EXPECT_TRUE(IsOk(Api()->PJRT_Buffer_Delete(&args)));
}

TEST_F(CapiBufferTest, UseAfterDeleteFailsCleanlyAndLeavesOthersAlone) {
  std::vector<float> a = {1.0f, 2.0f, 3.0f}, b = {-4.5f, 6.25f};
  BufferPtr doomed = UploadF32(client_.get(), FirstDevice(), a, {3});
  BufferPtr survivor = UploadF32(client_.get(), FirstDevice(), b, {2});
  ASSERT_NE(doomed, nullptr);
  ASSERT_NE(survivor, nullptr);

  // An event taken before the delete does not turn into an error because of it (§10.3).
  auto early = EMBER_ARGS(PJRT_Buffer_ReadyEvent_Args);
  early.buffer = doomed.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_ReadyEvent(&early)));
  EventPtr early_event(early.event);
  ASSERT_TRUE(Await(early_event.get()).ok());

  DeleteBuffer(doomed.get());
  EXPECT_TRUE(IsDeleted(doomed.get()));
  EXPECT_TRUE(Await(early_event.get()).ok());

  std::vector<float> out(3, 0.0f);
  auto to_host = EMBER_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  to_host.src = doomed.get();
  to_host.dst = out.data();
  to_host.dst_size = sizeof(float) * 3;
  ErrorInfo error = TakeError(api_->PJRT_Buffer_ToHostBuffer(&to_host));
  if (error.ok()) {
    // Reporting the failure through the event is also acceptable.
    ASSERT_NE(to_host.event, nullptr);
    EventPtr event(to_host.event);
    error = Await(event.get());
  }
  EXPECT_FALSE(error.ok()) << "ToHostBuffer on a deleted buffer succeeded";
  EXPECT_FALSE(error.message.empty());

  // A ready event requested after the delete is already in the error state (§10.3).
  auto late = EMBER_ARGS(PJRT_Buffer_ReadyEvent_Args);
  late.buffer = doomed.get();
  ErrorInfo late_error = TakeError(api_->PJRT_Buffer_ReadyEvent(&late));
  if (late_error.ok()) {
    EventPtr late_event(late.event);
    ASSERT_NE(late_event, nullptr);
    EXPECT_FALSE(Await(late_event.get()).ok()) << "ready event of a deleted buffer is OK";
  }

  // Metadata is still answerable, and the other buffer is untouched.
  EXPECT_EQ(ElementType(doomed.get()), PJRT_Buffer_Type_F32);
  EXPECT_EQ(Dimensions(doomed.get()), (std::vector<int64_t>{3}));
  EXPECT_EQ(ToHostF32(survivor.get()), b);
}

TEST_F(CapiBufferTest, DoubleDeleteIsHarmless) {
  std::vector<float> a = {9.0f, 8.0f};
  BufferPtr buffer = UploadF32(client_.get(), FirstDevice(), a, {2});
  ASSERT_NE(buffer, nullptr);
  DeleteBuffer(buffer.get());
  auto again = EMBER_ARGS(PJRT_Buffer_Delete_Args);
  again.buffer = buffer.get();
  TakeError(api_->PJRT_Buffer_Delete(&again));  // Either answer is fine; no crash is the test.
  EXPECT_TRUE(IsDeleted(buffer.get()));
}

TEST_F(CapiBufferTest, DestroyWithoutDeleteFreesTheBuffer) {
  for (int i = 0; i < 8; ++i) {
    std::vector<float> a(1000, static_cast<float>(i));
    BufferPtr buffer = UploadF32(client_.get(), FirstDevice(), a, {10, 100});
    ASSERT_NE(buffer, nullptr);
  }
  std::vector<float> last = {0.5f};
  BufferPtr buffer = UploadF32(client_.get(), FirstDevice(), last, {});
  EXPECT_EQ(ToHostF32(buffer.get()), last);
}

// Buffers may outlive nothing: destroying them before the client is the framework's order, but
// a buffer destroyed after its ready event was handed out must not break the event.
TEST_F(CapiBufferTest, ReadyEventOutlivesItsBuffer) {
  std::vector<float> a = {3.0f};
  BufferPtr buffer = UploadF32(client_.get(), FirstDevice(), a, {1});
  ASSERT_NE(buffer, nullptr);
  auto ready = EMBER_ARGS(PJRT_Buffer_ReadyEvent_Args);
  ready.buffer = buffer.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_ReadyEvent(&ready)));
  EventPtr event(ready.event);
  buffer.reset();
  ErrorInfo status;
  ASSERT_TRUE(WaitReady(event.get(), &status));
  EXPECT_TRUE(status.ok()) << status;
}

}  // namespace
}  // namespace ember::capi_test
