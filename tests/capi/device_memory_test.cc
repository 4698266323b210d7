// Devices and memories as the framework walks them at startup (§13): descriptions, attribute
// types, memories and their owners, the PJRT_Memory vtable contract (§8), and MemoryStats writing
// every *_is_set flag of an unzeroed args struct (§16.4).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/capi/capi_test_util.h"

namespace ember::capi_test {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

TEST_F(PjrtCApiTest, DeviceId) { EXPECT_EQ(DeviceId(devices_[0]), 0); }

TEST_F(PjrtCApiTest, DeviceProcessIndex) {
  auto args = EMBER_ARGS(PJRT_DeviceDescription_ProcessIndex_Args);
  args.device_description = Description(devices_[0]);
  args.process_index = -1;
  ASSERT_TRUE(IsOk(api_->PJRT_DeviceDescription_ProcessIndex(&args)));
  EXPECT_EQ(args.process_index, 0);
}

TEST_F(PjrtCApiTest, DeviceIsAddressable) {
  auto args = EMBER_ARGS(PJRT_Device_IsAddressable_Args);
  args.device = devices_[0];
  ASSERT_TRUE(IsOk(api_->PJRT_Device_IsAddressable(&args)));
  EXPECT_TRUE(args.is_addressable);
}

TEST_F(PjrtCApiTest, DeviceLocalHardwareId) {
  auto args = EMBER_ARGS(PJRT_Device_LocalHardwareId_Args);
  args.device = devices_[0];
  args.local_hardware_id = -1;
  ASSERT_TRUE(IsOk(api_->PJRT_Device_LocalHardwareId(&args)));
  EXPECT_EQ(args.local_hardware_id, 0);
}

using CapiDeviceTest = CapiTest;

TEST_F(CapiDeviceTest, DescriptionStringsAreNonEmpty) {
  for (PJRT_Device* device : devices_) {
    PJRT_DeviceDescription* description = Description(device);
    ASSERT_NE(description, nullptr);
    auto kind = EMBER_ARGS(PJRT_DeviceDescription_Kind_Args);
    kind.device_description = description;
    ASSERT_TRUE(IsOk(api_->PJRT_DeviceDescription_Kind(&kind)));
    EXPECT_NE(kind.device_kind, nullptr);
    EXPECT_GT(kind.device_kind_size, 0u);
    auto to_string = EMBER_ARGS(PJRT_DeviceDescription_ToString_Args);
    to_string.device_description = description;
    ASSERT_TRUE(IsOk(api_->PJRT_DeviceDescription_ToString(&to_string)));
    EXPECT_NE(to_string.to_string, nullptr);
    EXPECT_GT(to_string.to_string_size, 0u);
    auto debug = EMBER_ARGS(PJRT_DeviceDescription_DebugString_Args);
    debug.device_description = description;
    ASSERT_TRUE(IsOk(api_->PJRT_DeviceDescription_DebugString(&debug)));
    EXPECT_NE(debug.debug_string, nullptr);
    EXPECT_GT(debug.debug_string_size, 0u);
  }
}

// kFloat or kBool in device attributes is fatal in the framework (§11).
void ExpectFrameworkReadableAttributes(const PJRT_NamedValue* attributes, size_t count) {
  if (count > 0) {
    ASSERT_NE(attributes, nullptr);
  }
  std::set<std::string> names;
  for (size_t i = 0; i < count; ++i) {
    const PJRT_NamedValue& value = attributes[i];
    ASSERT_NE(value.name, nullptr);
    std::string name(value.name, value.name_size);
    EXPECT_FALSE(name.empty());
    EXPECT_TRUE(names.insert(name).second) << "duplicate attribute " << name;
    EXPECT_TRUE(value.type == PJRT_NamedValue_kString || value.type == PJRT_NamedValue_kInt64 ||
                value.type == PJRT_NamedValue_kInt64List)
        << name << " has type " << value.type;
    if (value.type == PJRT_NamedValue_kString && value.value_size > 0) {
      EXPECT_NE(value.string_value, nullptr) << name;
    }
    if (value.type == PJRT_NamedValue_kInt64List && value.value_size > 0) {
      EXPECT_NE(value.int64_array_value, nullptr) << name;
    }
  }
}

TEST_F(CapiDeviceTest, DescriptionAttributesUseOnlyFrameworkTypes) {
  for (PJRT_Device* device : devices_) {
    auto args = EMBER_ARGS(PJRT_DeviceDescription_Attributes_Args);
    args.device_description = Description(device);
    ASSERT_TRUE(IsOk(api_->PJRT_DeviceDescription_Attributes(&args)));
    ExpectFrameworkReadableAttributes(args.attributes, args.num_attributes);
  }
}

// Called by the framework at minor >= 92 when non-null; on success the deleter is called (§13).
TEST_F(CapiDeviceTest, GetAttributesSucceedsWithADeleterOrIsUnimplemented) {
  auto args = EMBER_ARGS(PJRT_Device_GetAttributes_Args);
  args.device = devices_[0];
  ErrorInfo error = TakeError(api_->PJRT_Device_GetAttributes(&args));
  if (!error.ok()) {
    EXPECT_EQ(error.code, PJRT_Error_Code_UNIMPLEMENTED) << error;
    EXPECT_THAT(error.message, HasSubstr("PJRT_Device_GetAttributes"));
    return;
  }
  ExpectFrameworkReadableAttributes(args.attributes, args.num_attributes);
  ASSERT_NE(args.attributes_deleter, nullptr);
  args.attributes_deleter(args.device_attributes);
}

using CapiMemoryTest = CapiTest;

TEST_F(CapiMemoryTest, EveryDeviceHasADefaultDeviceMemoryItCanAddress) {
  ErrorInfo error;
  ClientPtr client = CreateClient(HostOptions(2), &error);
  ASSERT_TRUE(error.ok()) << error;
  std::vector<PJRT_Device*> devices = Devices(client.get());
  std::vector<PJRT_Memory*> all = ClientMemories(client.get());
  ASSERT_FALSE(all.empty());
  for (PJRT_Device* device : AddressableDevices(client.get())) {
    std::vector<PJRT_Memory*> memories = DeviceMemories(device);
    ASSERT_FALSE(memories.empty());
    for (PJRT_Memory* memory : memories) {
      EXPECT_THAT(all, Contains(memory)) << "device memory not among the client's memories";
      EXPECT_THAT(MemoryDevices(memory), Contains(device));
    }
    PJRT_Memory* default_memory = DefaultMemory(device);
    ASSERT_NE(default_memory, nullptr);
    EXPECT_THAT(memories, Contains(default_memory));
    EXPECT_EQ(MemoryKind(default_memory), "device");
  }
  for (PJRT_Memory* memory : all) {
    for (PJRT_Device* device : MemoryDevices(memory)) EXPECT_THAT(devices, Contains(device));
  }
}

TEST_F(CapiMemoryTest, IdsKindsAndStringsAreConsistent) {
  std::set<int> ids;
  std::map<std::string, int> kind_ids;
  for (PJRT_Memory* memory : ClientMemories(client_.get())) {
    auto id = EMBER_ARGS(PJRT_Memory_Id_Args);
    id.memory = memory;
    ASSERT_TRUE(IsOk(api_->PJRT_Memory_Id(&id)));
    EXPECT_TRUE(ids.insert(id.id).second) << "duplicate memory id " << id.id;
    std::string kind = MemoryKind(memory);
    EXPECT_FALSE(kind.empty());
    auto kind_id = EMBER_ARGS(PJRT_Memory_Kind_Id_Args);
    kind_id.memory = memory;
    ASSERT_TRUE(IsOk(api_->PJRT_Memory_Kind_Id(&kind_id)));
    auto [it, inserted] = kind_ids.emplace(kind, kind_id.kind_id);
    EXPECT_EQ(it->second, kind_id.kind_id) << "kind " << kind << " has two kind ids";
    auto to_string = EMBER_ARGS(PJRT_Memory_ToString_Args);
    to_string.memory = memory;
    ASSERT_TRUE(IsOk(api_->PJRT_Memory_ToString(&to_string)));
    EXPECT_GT(to_string.to_string_size, 0u);
    auto debug = EMBER_ARGS(PJRT_Memory_DebugString_Args);
    debug.memory = memory;
    ASSERT_TRUE(IsOk(api_->PJRT_Memory_DebugString(&debug)));
    EXPECT_GT(debug.debug_string_size, 0u);
  }
  std::set<int> distinct_kind_ids;
  for (const auto& [kind, kind_id] : kind_ids) distinct_kind_ids.insert(kind_id);
  EXPECT_EQ(distinct_kind_ids.size(), kind_ids.size()) << "two kinds share a kind id";
}

void NoOpDestructor(void*) {}

// At minor >= 105 the framework reads each memory's first word as a PJRT_Memory_FunctionTable*
// and, if non-null, stores and fetches user data through it (§8.2).
TEST_F(CapiMemoryTest, FirstWordIsNullOrAWorkingUserDataTable) {
  static const int kKeyA = 0, kKeyB = 0, kKeyUnset = 0;
  int value_a = 1, value_b = 2;
  for (PJRT_Memory* memory : ClientMemories(client_.get())) {
    const PJRT_Memory_FunctionTable* table = nullptr;
    std::memcpy(&table, memory, sizeof(table));
    if (table == nullptr) continue;
    EXPECT_GE(table->struct_size, PJRT_Memory_FunctionTable_STRUCT_SIZE);
    ASSERT_NE(table->set_user_data, nullptr);
    ASSERT_NE(table->get_user_data, nullptr);
    table->set_user_data(memory, &kKeyA, &value_a, &NoOpDestructor);
    table->set_user_data(memory, &kKeyB, &value_b, &NoOpDestructor);
    EXPECT_EQ(table->get_user_data(memory, &kKeyA), &value_a);
    EXPECT_EQ(table->get_user_data(memory, &kKeyB), &value_b);
    EXPECT_EQ(table->get_user_data(memory, &kKeyUnset), nullptr);
  }
}

// ---------------------------------------------------------------- memory stats

constexpr size_t kFlagOffsets[] = {
    offsetof(PJRT_Device_MemoryStats_Args, peak_bytes_in_use_is_set),
    offsetof(PJRT_Device_MemoryStats_Args, num_allocs_is_set),
    offsetof(PJRT_Device_MemoryStats_Args, largest_alloc_size_is_set),
    offsetof(PJRT_Device_MemoryStats_Args, bytes_limit_is_set),
    offsetof(PJRT_Device_MemoryStats_Args, bytes_reserved_is_set),
    offsetof(PJRT_Device_MemoryStats_Args, peak_bytes_reserved_is_set),
    offsetof(PJRT_Device_MemoryStats_Args, bytes_reservable_limit_is_set),
    offsetof(PJRT_Device_MemoryStats_Args, largest_free_block_bytes_is_set),
    offsetof(PJRT_Device_MemoryStats_Args, pool_bytes_is_set),
    offsetof(PJRT_Device_MemoryStats_Args, peak_pool_bytes_is_set),
    offsetof(PJRT_Device_MemoryStats_Args, peak_allocated_bytes_is_set),
};

// Calls MemoryStats the way jaxlib does: the struct is garbage except the inputs.
::testing::AssertionResult GarbageFilledStats(PJRT_Device* device, size_t struct_size,
                                              PJRT_Device_MemoryStats_Args* args) {
  std::memset(static_cast<void*>(args), 0xAB, sizeof(*args));
  args->struct_size = struct_size;
  args->extension_start = nullptr;
  args->device = device;
  ErrorInfo error = TakeError(Api()->PJRT_Device_MemoryStats(args));
  if (!error.ok()) {
    return ::testing::AssertionFailure()
           << "PJRT_Device_MemoryStats: " << error
           << " (UNIMPLEMENTED is legal ABI-wise, but Ember reports host memory stats)";
  }
  return ::testing::AssertionSuccess();
}

uint8_t RawByte(const PJRT_Device_MemoryStats_Args& args, size_t offset) {
  return reinterpret_cast<const uint8_t*>(&args)[offset];
}

TEST_F(CapiMemoryTest, MemoryStatsWritesEveryFlagAndCountsABuffer) {
  PJRT_Device_MemoryStats_Args before;
  ASSERT_TRUE(GarbageFilledStats(FirstDevice(), PJRT_Device_MemoryStats_Args_STRUCT_SIZE, &before));
  for (size_t offset : kFlagOffsets) {
    EXPECT_LE(RawByte(before, offset), 1) << "is_set flag at offset " << offset << " not written";
  }
  EXPECT_GE(before.bytes_in_use, 0);
  if (RawByte(before, offsetof(PJRT_Device_MemoryStats_Args, bytes_limit_is_set)) == 1) {
    EXPECT_GT(before.bytes_limit, 0);
  }

  constexpr int64_t kElements = 256 * 1024;  // 1 MiB of f32
  std::vector<float> data(kElements);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
  for (float& x : data) x = dist(rng);
  BufferPtr buffer = UploadF32(client_.get(), FirstDevice(), data, {kElements});
  ASSERT_NE(buffer, nullptr);
  PJRT_Device_MemoryStats_Args after;
  ASSERT_TRUE(GarbageFilledStats(FirstDevice(), PJRT_Device_MemoryStats_Args_STRUCT_SIZE, &after));
  EXPECT_GE(after.bytes_in_use - before.bytes_in_use, kElements * 4)
      << "bytes_in_use " << before.bytes_in_use << " -> " << after.bytes_in_use;
  if (RawByte(after, offsetof(PJRT_Device_MemoryStats_Args, peak_bytes_in_use_is_set)) == 1) {
    EXPECT_GE(after.peak_bytes_in_use, after.bytes_in_use);
  }

  // Destroying the buffer returns its bytes; allow a deferred free a moment to run.
  buffer.reset();
  PJRT_Device_MemoryStats_Args freed;
  for (int attempt = 0; attempt < 100; ++attempt) {
    ASSERT_TRUE(
        GarbageFilledStats(FirstDevice(), PJRT_Device_MemoryStats_Args_STRUCT_SIZE, &freed));
    if (freed.bytes_in_use <= after.bytes_in_use - kElements * 4) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_LE(freed.bytes_in_use, after.bytes_in_use - kElements * 4)
      << "PJRT_Buffer_Destroy did not release the buffer's bytes within 2 s";
}

// A 0.112 framework sends the struct without peak_allocated_bytes: nothing past its
// struct_size may be written (§3).
TEST_F(CapiMemoryTest, MemoryStatsWritesNothingPastTheCallersStructSize) {
  constexpr size_t kOldSize = EMBER_MIN_SIZE_PJRT_Device_MemoryStats_Args;
  static_assert(kOldSize <= offsetof(PJRT_Device_MemoryStats_Args, peak_allocated_bytes));
  PJRT_Device_MemoryStats_Args args;
  ASSERT_TRUE(GarbageFilledStats(FirstDevice(), kOldSize, &args));
  for (size_t offset : kFlagOffsets) {
    if (offset < kOldSize) {
      EXPECT_LE(RawByte(args, offset), 1) << "flag at " << offset;
    }
  }
  for (size_t offset = kOldSize; offset < sizeof(args); ++offset) {
    EXPECT_EQ(RawByte(args, offset), 0xAB) << "byte " << offset << " past struct_size written";
  }
}

}  // namespace
}  // namespace ember::capi_test
