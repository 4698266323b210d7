// Hostile input through the C boundary: null args and handles, short or long struct_size, bad
// element types, dims and byte_strides, undersized destinations, bad device ids. Each must give a
// clean PJRT_Error naming the function or argument, and a buffer made beforehand must survive.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/capi/capi_test_util.h"

namespace ember::capi_test {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

// Clean = a non-OK code other than INTERNAL/UNKNOWN, and a message naming one of `names`.
::testing::AssertionResult IsCleanError(const ErrorInfo& error,
                                        const std::vector<std::string>& names) {
  if (error.ok()) return ::testing::AssertionFailure() << "returned success";
  if (error.code == PJRT_Error_Code_INTERNAL || error.code == PJRT_Error_Code_UNKNOWN) {
    return ::testing::AssertionFailure() << "not a caller error: " << error;
  }
  for (const std::string& name : names) {
    if (error.message.find(name) != std::string::npos) return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << error << " names none of " << ::testing::PrintToString(names);
}

class CapiBadInputTest : public CapiTest {
 protected:
  void SetUp() override {
    CapiTest::SetUp();
    if (HasFatalFailure()) return;
    std::mt19937 rng(2024);
    std::uniform_real_distribution<float> dist(-1e3f, 1e3f);
    witness_data_.resize(24);
    for (float& x : witness_data_) x = dist(rng);
    witness_ = UploadF32(client_.get(), FirstDevice(), witness_data_, {4, 6});
    ASSERT_NE(witness_, nullptr);
  }
  // Every test ends by checking the buffer made before the bad calls.
  void TearDown() override {
    if (witness_ != nullptr) {
      EXPECT_FALSE(IsDeleted(witness_.get()));
      EXPECT_EQ(ToHostF32(witness_.get()), witness_data_) << "bad input damaged another buffer";
    }
    witness_.reset();
    CapiTest::TearDown();
  }

  ErrorInfo Upload(int32_t type, std::vector<int64_t> dims,
                   const std::vector<int64_t>* strides = nullptr,
                   int32_t semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall) {
    static const std::vector<uint8_t> kData(4096, 0x3c);
    UploadSpec spec;
    spec.type = type;
    spec.dims = std::move(dims);
    spec.data = kData.data();
    spec.byte_strides = strides;
    spec.semantics = semantics;
    spec.device = FirstDevice();
    ::ember::capi_test::Upload upload = FromHost(client_.get(), spec);
    EXPECT_EQ(upload.status.ok(), upload.buffer != nullptr);
    return upload.status;
  }

  std::vector<float> witness_data_;
  BufferPtr witness_;
};

TEST_F(CapiBadInputTest, NullArgsPointerIsRejected) {
  EXPECT_TRUE(IsCleanError(TakeError(api_->PJRT_Client_Devices(nullptr)), {"PJRT_Client_Devices"}));
  EXPECT_TRUE(IsCleanError(TakeError(api_->PJRT_Client_BufferFromHostBuffer(nullptr)),
                           {"PJRT_Client_BufferFromHostBuffer"}));
  EXPECT_TRUE(IsCleanError(TakeError(api_->PJRT_Buffer_ToHostBuffer(nullptr)),
                           {"PJRT_Buffer_ToHostBuffer"}));
  EXPECT_TRUE(IsCleanError(TakeError(api_->PJRT_Buffer_Delete(nullptr)), {"PJRT_Buffer_Delete"}));
  EXPECT_TRUE(IsCleanError(TakeError(api_->PJRT_Event_Await(nullptr)), {"PJRT_Event_Await"}));
  EXPECT_TRUE(IsCleanError(TakeError(api_->PJRT_Client_Create(nullptr)), {"PJRT_Client_Create"}));
  EXPECT_TRUE(
      IsCleanError(TakeError(api_->PJRT_Device_MemoryStats(nullptr)), {"PJRT_Device_MemoryStats"}));
}

TEST_F(CapiBadInputTest, ShortStructSizeIsRejectedNamingTheStruct) {
  for (size_t size : {size_t{0}, EMBER_MIN_SIZE_PJRT_Client_Devices_Args - 1}) {
    auto args = MakeArgs<PJRT_Client_Devices_Args>(size);
    args.client = client_.get();
    ErrorInfo error = TakeError(api_->PJRT_Client_Devices(&args));
    EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT) << error;
    EXPECT_THAT(error.message, HasSubstr("PJRT_Client_Devices"));
  }
  for (size_t size :
       {size_t{0}, size_t{16}, EMBER_MIN_SIZE_PJRT_Client_BufferFromHostBuffer_Args - 1}) {
    float value = 1.0f;
    auto args = MakeArgs<PJRT_Client_BufferFromHostBuffer_Args>(size);
    args.client = client_.get();
    args.data = &value;
    args.type = PJRT_Buffer_Type_F32;
    args.device = FirstDevice();
    ErrorInfo error = TakeError(api_->PJRT_Client_BufferFromHostBuffer(&args));
    EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT) << error;
    EXPECT_THAT(error.message, HasSubstr("PJRT_Client_BufferFromHostBuffer"));
  }
  {
    std::vector<float> out(24);
    auto args =
        MakeArgs<PJRT_Buffer_ToHostBuffer_Args>(EMBER_MIN_SIZE_PJRT_Buffer_ToHostBuffer_Args - 8);
    args.src = witness_.get();
    args.dst = out.data();
    args.dst_size = out.size() * sizeof(float);
    ErrorInfo error = TakeError(api_->PJRT_Buffer_ToHostBuffer(&args));
    EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT) << error;
    EXPECT_THAT(error.message, HasSubstr("PJRT_Buffer_ToHostBuffer"));
  }
}

// A newer framework appends fields the plugin does not know: a larger struct_size is accepted.
TEST_F(CapiBadInputTest, LargerStructSizeIsAccepted) {
  struct Padded {
    PJRT_Client_Devices_Args args;
    unsigned char future_fields[64];
  } padded;
  std::memset(static_cast<void*>(&padded), 0, sizeof(padded));
  padded.args.struct_size = sizeof(padded);
  padded.args.client = client_.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Client_Devices(&padded.args)));
  EXPECT_EQ(padded.args.num_devices, devices_.size());
}

TEST_F(CapiBadInputTest, NullHandlesAreRejected) {
  {
    float value = 1.0f;
    auto args = EMBER_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
    args.client = nullptr;
    args.data = &value;
    args.type = PJRT_Buffer_Type_F32;
    args.device = FirstDevice();
    EXPECT_TRUE(IsCleanError(TakeError(api_->PJRT_Client_BufferFromHostBuffer(&args)),
                             {"PJRT_Client_BufferFromHostBuffer", "client"}));
  }
  {
    auto args = EMBER_ARGS(PJRT_Client_Devices_Args);
    EXPECT_TRUE(IsCleanError(TakeError(api_->PJRT_Client_Devices(&args)),
                             {"PJRT_Client_Devices", "client"}));
  }
  {
    std::vector<uint8_t> out(16);
    auto args = EMBER_ARGS(PJRT_Buffer_ToHostBuffer_Args);
    args.dst = out.data();
    args.dst_size = out.size();
    EXPECT_TRUE(IsCleanError(TakeError(api_->PJRT_Buffer_ToHostBuffer(&args)),
                             {"PJRT_Buffer_ToHostBuffer", "src", "buffer"}));
  }
  {
    auto args = EMBER_ARGS(PJRT_Buffer_ElementType_Args);
    EXPECT_TRUE(IsCleanError(TakeError(api_->PJRT_Buffer_ElementType(&args)),
                             {"PJRT_Buffer_ElementType", "buffer"}));
  }
  {
    auto args = EMBER_ARGS(PJRT_Buffer_Dimensions_Args);
    EXPECT_TRUE(IsCleanError(TakeError(api_->PJRT_Buffer_Dimensions(&args)),
                             {"PJRT_Buffer_Dimensions", "buffer"}));
  }
  {
    auto args = EMBER_ARGS(PJRT_Buffer_Delete_Args);
    EXPECT_TRUE(
        IsCleanError(TakeError(api_->PJRT_Buffer_Delete(&args)), {"PJRT_Buffer_Delete", "buffer"}));
  }
  {
    auto args = EMBER_ARGS(PJRT_Buffer_CopyToDevice_Args);
    args.buffer = witness_.get();
    args.dst_device = nullptr;
    EXPECT_TRUE(IsCleanError(TakeError(api_->PJRT_Buffer_CopyToDevice(&args)),
                             {"PJRT_Buffer_CopyToDevice", "device"}));
  }
  {
    auto args = EMBER_ARGS(PJRT_Device_GetDescription_Args);
    EXPECT_TRUE(IsCleanError(TakeError(api_->PJRT_Device_GetDescription(&args)),
                             {"PJRT_Device_GetDescription", "device"}));
  }
  {
    auto args = EMBER_ARGS(PJRT_Device_DefaultMemory_Args);
    EXPECT_TRUE(IsCleanError(TakeError(api_->PJRT_Device_DefaultMemory(&args)),
                             {"PJRT_Device_DefaultMemory", "device"}));
  }
  {
    auto args = EMBER_ARGS(PJRT_Event_IsReady_Args);
    EXPECT_TRUE(
        IsCleanError(TakeError(api_->PJRT_Event_IsReady(&args)), {"PJRT_Event_IsReady", "event"}));
  }
  {
    auto args = EMBER_ARGS(PJRT_Event_Await_Args);
    EXPECT_TRUE(
        IsCleanError(TakeError(api_->PJRT_Event_Await(&args)), {"PJRT_Event_Await", "event"}));
  }
  {
    float value = 2.0f;
    auto args = EMBER_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
    args.client = client_.get();
    args.data = &value;
    args.type = PJRT_Buffer_Type_F32;
    args.device = nullptr;
    args.memory = nullptr;
    // Neither device nor memory: an error, or the first addressable device.
    ErrorInfo error = TakeError(api_->PJRT_Client_BufferFromHostBuffer(&args));
    if (error.ok()) {
      BufferPtr buffer(args.buffer);
      EventPtr done(args.done_with_host_buffer);
      EXPECT_EQ(ToHostF32(buffer.get()), std::vector<float>{2.0f});
    } else {
      EXPECT_TRUE(IsCleanError(error, {"PJRT_Client_BufferFromHostBuffer", "device", "memory"}));
    }
  }
  {
    auto args = EMBER_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
    args.client = client_.get();
    args.data = nullptr;
    int64_t dims[] = {4};
    args.dims = dims;
    args.num_dims = 1;
    args.type = PJRT_Buffer_Type_F32;
    args.device = FirstDevice();
    EXPECT_TRUE(IsCleanError(TakeError(api_->PJRT_Client_BufferFromHostBuffer(&args)),
                             {"PJRT_Client_BufferFromHostBuffer", "data"}));
  }
}

TEST_F(CapiBadInputTest, UnknownElementTypesAreRejected) {
  for (int type : {99, static_cast<int>(PJRT_Buffer_Type_INVALID),
                   static_cast<int>(PJRT_Buffer_Type_TOKEN), -1}) {
    SCOPED_TRACE("type " + std::to_string(type));
    EXPECT_TRUE(IsCleanError(Upload(type, {2, 2}), {"PJRT_Client_BufferFromHostBuffer", "type"}));
  }
}

// A C caller can put any int in an enum field; out-of-range values are an error, not undefined
// behaviour in the plugin (the ASan+UBSan build aborts on loading them as the C++ enum type).
TEST_F(CapiBadInputTest, OutOfRangeHostBufferSemanticsAreRejected) {
  for (int32_t semantics : {4, 7, -1}) {
    SCOPED_TRACE("semantics " + std::to_string(semantics));
    EXPECT_TRUE(IsCleanError(Upload(PJRT_Buffer_Type_F32, {2}, nullptr, semantics),
                             {"PJRT_Client_BufferFromHostBuffer", "semantics"}));
  }
}

TEST_F(CapiBadInputTest, OutOfRangeCreateOptionTypeIsRejected) {
  PJRT_NamedValue option = Int64Option("host_device_count", 2);
  const int32_t bad_type = 42;
  static_assert(sizeof(option.type) == sizeof(bad_type));
  std::memcpy(&option.type, &bad_type, sizeof(bad_type));
  ErrorInfo error;
  ClientPtr client = CreateClient({option}, &error);
  EXPECT_EQ(client, nullptr);
  EXPECT_TRUE(IsCleanError(error, {"host_device_count"}));
}

TEST_F(CapiBadInputTest, NegativeAndOverflowingDimsAreRejected) {
  const std::vector<std::vector<int64_t>> bad_dims = {
      {-1},
      {4, -2},
      {INT64_MIN},
      {int64_t{1} << 40, int64_t{1} << 40},  // element count overflows int64
      {INT64_MAX, 2},
      {int64_t{1} << 62},  // count fits, byte size (x4) overflows
      {int64_t{3037000500}, int64_t{3037000500}},
  };
  for (const std::vector<int64_t>& dims : bad_dims) {
    SCOPED_TRACE(::testing::PrintToString(dims));
    ErrorInfo error = Upload(PJRT_Buffer_Type_F32, dims);
    EXPECT_TRUE(IsCleanError(error, {"PJRT_Client_BufferFromHostBuffer", "dim"}));
    EXPECT_THAT(error.code,
                AnyOf(PJRT_Error_Code_INVALID_ARGUMENT, PJRT_Error_Code_RESOURCE_EXHAUSTED));
  }
}

TEST_F(CapiBadInputTest, BadByteStridesAreRejected) {
  const std::vector<std::vector<int64_t>> bad_strides = {
      {4},             // one stride for a rank-2 array
      {24, 4, 1},      // three strides
      {INT64_MAX, 4},  // reaches far outside the host array
      {4, INT64_MAX},
      {INT64_MIN, 4},  // reaches far before it (negative strides are fine when they fit)
      {-(int64_t{1} << 62), 4},
  };
  for (const std::vector<int64_t>& strides : bad_strides) {
    SCOPED_TRACE(::testing::PrintToString(strides));
    ErrorInfo error = Upload(PJRT_Buffer_Type_F32, {4, 6}, &strides);
    EXPECT_TRUE(IsCleanError(error, {"PJRT_Client_BufferFromHostBuffer", "stride"}));
    EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT);
  }
}

// The destination is too small by one byte: an error, and not one byte written past dst_size.
TEST_F(CapiBadInputTest, ToHostBufferWithTooSmallDstIsRejected) {
  const size_t need = witness_data_.size() * sizeof(float);
  std::vector<uint8_t> dst(need + 64, 0x5A);
  auto args = EMBER_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  args.src = witness_.get();
  args.dst = dst.data();
  args.dst_size = need - 1;
  ErrorInfo error = TakeError(api_->PJRT_Buffer_ToHostBuffer(&args));
  if (error.ok()) {
    EventPtr event(args.event);
    if (event != nullptr) error = Await(event.get());
  }
  EXPECT_TRUE(IsCleanError(error, {"PJRT_Buffer_ToHostBuffer", "dst_size"}));
  for (size_t i = need - 1; i < dst.size(); ++i) {
    ASSERT_EQ(dst[i], 0x5A) << "byte " << i << " written past dst_size";
  }
}

TEST_F(CapiBadInputTest, LookupWithBadIdsIsRejected) {
  const int count = static_cast<int>(devices_.size());
  for (int id : {-1, count, count + 1000, INT_MAX, INT_MIN}) {
    auto args = EMBER_ARGS(PJRT_Client_LookupDevice_Args);
    args.client = client_.get();
    args.id = id;
    ErrorInfo error = TakeError(api_->PJRT_Client_LookupDevice(&args));
    EXPECT_EQ(error.code, PJRT_Error_Code_INVALID_ARGUMENT) << error;
    EXPECT_EQ(error.message, "No matching device found for device_id " + std::to_string(id));
  }
  for (int hw : {-1, count + 7, INT_MIN}) {
    auto args = EMBER_ARGS(PJRT_Client_LookupAddressableDevice_Args);
    args.client = client_.get();
    args.local_hardware_id = hw;
    ErrorInfo error = TakeError(api_->PJRT_Client_LookupAddressableDevice(&args));
    EXPECT_FALSE(error.ok());
    EXPECT_THAT(error.message, HasSubstr(std::to_string(hw)));
  }
}

// All of the above in one client, then the original buffer still round-trips (TearDown), and a
// new upload still works.
TEST_F(CapiBadInputTest, EverythingAtOnceLeavesTheClientUsable) {
  TakeError(api_->PJRT_Client_Devices(nullptr));
  EXPECT_FALSE(Upload(99, {3}).ok());
  EXPECT_FALSE(Upload(PJRT_Buffer_Type_F32, {-5}).ok());
  std::vector<int64_t> strides = {4};
  EXPECT_FALSE(Upload(PJRT_Buffer_Type_F32, {2, 2}, &strides).ok());
  std::vector<uint8_t> tiny(1);
  auto to_host = EMBER_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  to_host.src = witness_.get();
  to_host.dst = tiny.data();
  to_host.dst_size = tiny.size();
  ErrorInfo error = TakeError(api_->PJRT_Buffer_ToHostBuffer(&to_host));
  if (error.ok()) {
    EventPtr event(to_host.event);
  }
  std::vector<float> fresh = {6.0f, 7.0f, 8.0f};
  BufferPtr buffer = UploadF32(client_.get(), FirstDevice(), fresh, {3});
  EXPECT_EQ(ToHostF32(buffer.get()), fresh);
}

}  // namespace
}  // namespace ember::capi_test
