// Host <-> device transfers: the four host-buffer semantics, byte_strides (transposed and padded
// host arrays), the ToHostBuffer size query, upload by memory (jax.device_put), and copies between
// devices and memories (reference §10.2, §16.4; XLA BufferTransferImmutableUntilTransferCompletes).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "tests/capi/capi_test_util.h"

namespace ember::capi_test {
namespace {

using ::testing::AnyOf;

std::vector<float> RandomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  std::vector<float> out(n);
  for (float& x : out) x = dist(rng);
  return out;
}

UploadSpec F32Spec(const std::vector<float>& data, std::vector<int64_t> dims, PJRT_Device* device,
                   PJRT_HostBufferSemantics semantics) {
  UploadSpec spec;
  spec.dims = std::move(dims);
  spec.data = data.data();
  spec.device = device;
  spec.semantics = semantics;
  return spec;
}

using CapiTransferTest = CapiTest;

TEST_F(PjrtCApiTest, BufferTransferImmutableUntilTransferCompletes) {
  std::vector<float> data = {41.0f, 42.0f, 43.0f, 44.0f};
  Upload upload = FromHost(
      client_.get(),
      F32Spec(data, {4}, FirstDevice(), PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes));
  ASSERT_TRUE(upload.status.ok()) << upload.status;
  ASSERT_NE(upload.done_with_host_buffer, nullptr);
  EXPECT_TRUE(Await(upload.done_with_host_buffer.get()).ok());
}

// The host memory may be reused as soon as the call returns.
TEST_F(CapiTransferTest, ImmutableOnlyDuringCallCopiesBeforeReturning) {
  std::vector<float> host = RandomFloats(64, 1);
  const std::vector<float> expected = host;
  Upload upload = FromHost(
      client_.get(),
      F32Spec(host, {8, 8}, FirstDevice(), PJRT_HostBufferSemantics_kImmutableOnlyDuringCall));
  ASSERT_TRUE(upload.status.ok()) << upload.status;
  std::fill(host.begin(), host.end(), -1.0f);
  EXPECT_EQ(ToHostF32(upload.buffer.get()), expected);
  if (upload.done_with_host_buffer != nullptr) {
    EXPECT_TRUE(Await(upload.done_with_host_buffer.get()).ok());
  }
}

TEST_F(CapiTransferTest, ImmutableUntilTransferCompletesAllowsReuseAfterTheEvent) {
  std::vector<float> host = RandomFloats(300, 2);
  const std::vector<float> expected = host;
  Upload upload =
      FromHost(client_.get(), F32Spec(host, {3, 100}, FirstDevice(),
                                      PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes));
  ASSERT_TRUE(upload.status.ok()) << upload.status;
  ASSERT_NE(upload.done_with_host_buffer, nullptr);
  ErrorInfo done;
  ASSERT_TRUE(WaitReady(upload.done_with_host_buffer.get(), &done));
  ASSERT_TRUE(done.ok()) << done;
  std::fill(host.begin(), host.end(), 0.0f);
  EXPECT_EQ(ToHostF32(upload.buffer.get()), expected);
}

// Zero-copy may alias the host array; the host must then stay untouched until the buffer is gone,
// and done_with_host_buffer fires no later than the buffer's destruction.
void CheckZeroCopy(PJRT_Client* client, PJRT_Device* device, PJRT_HostBufferSemantics semantics,
                   bool may_be_unsupported) {
  // 64-byte aligned storage, as numpy arrays usually are.
  std::vector<float> storage(256 + 16);
  auto address = reinterpret_cast<uintptr_t>(storage.data());
  float* host = storage.data() + ((64 - address % 64) % 64) / sizeof(float);
  std::vector<float> expected = RandomFloats(256, 3);
  std::memcpy(host, expected.data(), 256 * sizeof(float));
  UploadSpec spec;
  spec.dims = {16, 16};
  spec.data = host;
  spec.device = device;
  spec.semantics = semantics;
  Upload upload = FromHost(client, spec);
  if (may_be_unsupported && !upload.status.ok()) {
    EXPECT_THAT(upload.status.code,
                AnyOf(PJRT_Error_Code_UNIMPLEMENTED, PJRT_Error_Code_INVALID_ARGUMENT));
    EXPECT_FALSE(upload.status.message.empty());
    return;
  }
  ASSERT_TRUE(upload.status.ok()) << upload.status;
  Readback readback = ToHost(upload.buffer.get());
  ASSERT_TRUE(readback.status.ok()) << readback.status;
  ASSERT_EQ(readback.bytes.size(), 256 * sizeof(float));
  EXPECT_EQ(std::memcmp(readback.bytes.data(), expected.data(), readback.bytes.size()), 0);
  EventPtr done = std::move(upload.done_with_host_buffer);
  upload.buffer.reset();
  if (done != nullptr) {
    ErrorInfo status;
    ASSERT_TRUE(WaitReady(done.get(), &status)) << "done_with_host_buffer never fired";
    EXPECT_TRUE(status.ok()) << status;
  }
}

TEST_F(CapiTransferTest, ImmutableZeroCopyRoundTrips) {
  CheckZeroCopy(client_.get(), FirstDevice(), PJRT_HostBufferSemantics_kImmutableZeroCopy, false);
}

TEST_F(CapiTransferTest, MutableZeroCopyRoundTripsOrIsRejectedCleanly) {
  CheckZeroCopy(client_.get(), FirstDevice(), PJRT_HostBufferSemantics_kMutableZeroCopy, true);
}

// ---------------------------------------------------------------- strides and sizes

// A [rows, cols] f32 array stored column-major on the host (numpy's a.T of a C array): reading it
// back gives the logical array in row-major order.
TEST_F(CapiTransferTest, ColumnMajorByteStridesAreHonoured) {
  constexpr int64_t kRows = 5, kCols = 7;
  std::vector<float> column_major = RandomFloats(kRows * kCols, 4);
  std::vector<int64_t> strides = {sizeof(float), kRows * sizeof(float)};
  UploadSpec spec = F32Spec(column_major, {kRows, kCols}, FirstDevice(),
                            PJRT_HostBufferSemantics_kImmutableOnlyDuringCall);
  spec.byte_strides = &strides;
  Upload upload = FromHost(client_.get(), spec);
  ASSERT_TRUE(upload.status.ok()) << upload.status;
  std::vector<float> row_major = ToHostF32(upload.buffer.get());
  ASSERT_EQ(row_major.size(), static_cast<size_t>(kRows * kCols));
  for (int64_t i = 0; i < kRows; ++i) {
    for (int64_t j = 0; j < kCols; ++j) {
      ASSERT_EQ(row_major[i * kCols + j], column_major[j * kRows + i]) << i << "," << j;
    }
  }
}

// Rows padded to 10 floats (a slice a[:, :6] of a [4, 10] array): the padding is skipped.
TEST_F(CapiTransferTest, PaddedRowStridesSkipThePadding) {
  constexpr int64_t kRows = 4, kCols = 6, kPitch = 10;
  std::vector<float> padded = RandomFloats(kRows * kPitch, 5);
  std::vector<int64_t> strides = {kPitch * sizeof(float), sizeof(float)};
  UploadSpec spec = F32Spec(padded, {kRows, kCols}, FirstDevice(),
                            PJRT_HostBufferSemantics_kImmutableOnlyDuringCall);
  spec.byte_strides = &strides;
  Upload upload = FromHost(client_.get(), spec);
  ASSERT_TRUE(upload.status.ok()) << upload.status;
  std::vector<float> dense = ToHostF32(upload.buffer.get());
  ASSERT_EQ(dense.size(), static_cast<size_t>(kRows * kCols));
  for (int64_t i = 0; i < kRows; ++i) {
    for (int64_t j = 0; j < kCols; ++j) {
      ASSERT_EQ(dense[i * kCols + j], padded[i * kPitch + j]) << i << "," << j;
    }
  }
}

// numpy's a[::-1, ::-2] of a [4, 6] array: the data pointer is the first element of the view
// (the original's last row) and both strides are negative, as XLA:CPU accepts them.
TEST_F(CapiTransferTest, NegativeByteStridesWalkBackwards) {
  constexpr int64_t kRows = 4, kCols = 6;
  std::vector<float> base = RandomFloats(kRows * kCols, 7);
  std::vector<int64_t> strides = {-kCols * static_cast<int64_t>(sizeof(float)),
                                  -2 * static_cast<int64_t>(sizeof(float))};
  UploadSpec spec = F32Spec(base, {kRows, kCols / 2}, FirstDevice(),
                            PJRT_HostBufferSemantics_kImmutableOnlyDuringCall);
  spec.data = base.data() + (kRows - 1) * kCols + (kCols - 1);
  spec.byte_strides = &strides;
  Upload upload = FromHost(client_.get(), spec);
  ASSERT_TRUE(upload.status.ok()) << upload.status;
  std::vector<float> dense = ToHostF32(upload.buffer.get());
  ASSERT_EQ(dense.size(), static_cast<size_t>(kRows * kCols / 2));
  for (int64_t i = 0; i < kRows; ++i) {
    for (int64_t j = 0; j < kCols / 2; ++j) {
      ASSERT_EQ(dense[i * (kCols / 2) + j], base[(kRows - 1 - i) * kCols + (kCols - 1 - 2 * j)])
          << i << "," << j;
    }
  }
}

TEST_F(CapiTransferTest, ExplicitDenseStridesEqualNoStrides) {
  std::vector<float> data = RandomFloats(24, 6);
  std::vector<int64_t> strides = {12 * sizeof(float), 4 * sizeof(float), sizeof(float)};
  UploadSpec spec =
      F32Spec(data, {2, 3, 4}, FirstDevice(), PJRT_HostBufferSemantics_kImmutableOnlyDuringCall);
  spec.byte_strides = &strides;
  Upload upload = FromHost(client_.get(), spec);
  ASSERT_TRUE(upload.status.ok()) << upload.status;
  EXPECT_EQ(ToHostF32(upload.buffer.get()), data);
}

TEST_F(CapiTransferTest, ToHostBufferSizeQueryWithNullDst) {
  std::vector<float> data = RandomFloats(6 * 7, 7);
  BufferPtr buffer = UploadF32(client_.get(), FirstDevice(), data, {6, 7});
  ASSERT_NE(buffer, nullptr);
  auto args = EMBER_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  args.src = buffer.get();
  args.dst = nullptr;
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_ToHostBuffer(&args)));
  EXPECT_EQ(args.dst_size, 6 * 7 * sizeof(float));
  EventPtr event(args.event);  // Usually null for a query; owned if not.
}

// jax.device_put passes the memory and a null device (§16.4).
TEST_F(CapiTransferTest, UploadByMemoryWithNullDevice) {
  PJRT_Memory* memory = DefaultMemory(FirstDevice());
  ASSERT_NE(memory, nullptr);
  std::vector<float> data = RandomFloats(10, 8);
  UploadSpec spec = F32Spec(data, {10}, nullptr, PJRT_HostBufferSemantics_kImmutableOnlyDuringCall);
  spec.memory = memory;
  Upload upload = FromHost(client_.get(), spec);
  ASSERT_TRUE(upload.status.ok()) << upload.status;
  auto where = EMBER_ARGS(PJRT_Buffer_Memory_Args);
  where.buffer = upload.buffer.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_Memory(&where)));
  EXPECT_EQ(where.memory, memory);
  auto device = EMBER_ARGS(PJRT_Buffer_Device_Args);
  device.buffer = upload.buffer.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Buffer_Device(&device)));
  EXPECT_EQ(device.device, FirstDevice());
  EXPECT_EQ(ToHostF32(upload.buffer.get()), data);
}

// ---------------------------------------------------------------- copies

class CapiTwoDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(Api(), nullptr) << LoadError();
    ErrorInfo error;
    client_ = CreateClient(HostOptions(2), &error);
    ASSERT_TRUE(error.ok()) << error;
    devices_ = Devices(client_.get());
    ASSERT_EQ(devices_.size(), 2u);
  }
  ClientPtr client_;
  std::vector<PJRT_Device*> devices_;
};

TEST_F(CapiTwoDeviceTest, CopyToDeviceMovesDataToTheOtherDevice) {
  std::vector<float> data = RandomFloats(33, 9);
  BufferPtr source = UploadF32(client_.get(), devices_[0], data, {3, 11});
  ASSERT_NE(source, nullptr);
  auto args = EMBER_ARGS(PJRT_Buffer_CopyToDevice_Args);
  args.buffer = source.get();
  args.dst_device = devices_[1];
  ASSERT_TRUE(IsOk(Api()->PJRT_Buffer_CopyToDevice(&args)));
  BufferPtr copy(args.dst_buffer);
  ASSERT_NE(copy, nullptr);
  auto device = EMBER_ARGS(PJRT_Buffer_Device_Args);
  device.buffer = copy.get();
  ASSERT_TRUE(IsOk(Api()->PJRT_Buffer_Device(&device)));
  EXPECT_EQ(device.device, devices_[1]);
  EXPECT_EQ(Dimensions(copy.get()), (std::vector<int64_t>{3, 11}));
  // The copy is independent of its source.
  source.reset();
  EXPECT_EQ(ToHostF32(copy.get()), data);
}

TEST_F(CapiTwoDeviceTest, CopyToMemoryLandsInThatMemory) {
  std::vector<float> data = RandomFloats(17, 10);
  BufferPtr source = UploadF32(client_.get(), devices_[0], data, {17});
  ASSERT_NE(source, nullptr);
  for (PJRT_Memory* target : {DefaultMemory(devices_[1]), DefaultMemory(devices_[0])}) {
    auto args = EMBER_ARGS(PJRT_Buffer_CopyToMemory_Args);
    args.buffer = source.get();
    args.dst_memory = target;
    ASSERT_TRUE(IsOk(Api()->PJRT_Buffer_CopyToMemory(&args)));
    BufferPtr copy(args.dst_buffer);
    ASSERT_NE(copy, nullptr);
    auto where = EMBER_ARGS(PJRT_Buffer_Memory_Args);
    where.buffer = copy.get();
    ASSERT_TRUE(IsOk(Api()->PJRT_Buffer_Memory(&where)));
    EXPECT_EQ(where.memory, target);
    EXPECT_EQ(ToHostF32(copy.get()), data);
  }
  EXPECT_EQ(ToHostF32(source.get()), data);
}

TEST_F(CapiTwoDeviceTest, CopyOfADeletedBufferFails) {
  std::vector<float> data = {1.0f, 2.0f};
  BufferPtr source = UploadF32(client_.get(), devices_[0], data, {2});
  ASSERT_NE(source, nullptr);
  auto del = EMBER_ARGS(PJRT_Buffer_Delete_Args);
  del.buffer = source.get();
  ASSERT_TRUE(IsOk(Api()->PJRT_Buffer_Delete(&del)));
  auto args = EMBER_ARGS(PJRT_Buffer_CopyToDevice_Args);
  args.buffer = source.get();
  args.dst_device = devices_[1];
  ErrorInfo error = TakeError(Api()->PJRT_Buffer_CopyToDevice(&args));
  BufferPtr copy(error.ok() ? args.dst_buffer : nullptr);
  if (error.ok() && copy != nullptr) error = ToHost(copy.get()).status;
  EXPECT_FALSE(error.ok()) << "copying a deleted buffer produced data";
}

}  // namespace
}  // namespace ember::capi_test
