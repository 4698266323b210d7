// PJRT_DeviceDescription_* and PJRT_Device_*.
#include "absl/strings/str_cat.h"
#include "pjrt_plugin/bindings.h"
#include "pjrt_plugin/entry.h"
#include "pjrt_plugin/handles.h"

namespace ember::pjrt {
namespace {

EMBER_PJRT_ENTRY(PJRT_DeviceDescription_Id) {
  EMBER_PJRT_REQUIRE(args->device_description);
  args->id = args->device_description->device->id();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_DeviceDescription_ProcessIndex) {
  EMBER_PJRT_REQUIRE(args->device_description);
  args->process_index = args->device_description->device->process_index();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_DeviceDescription_Attributes) {
  EMBER_PJRT_REQUIRE(args->device_description);
  args->attributes = args->device_description->attributes.data();
  args->num_attributes = args->device_description->attributes.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_DeviceDescription_Kind) {
  EMBER_PJRT_REQUIRE(args->device_description);
  args->device_kind = args->device_description->kind.data();
  args->device_kind_size = args->device_description->kind.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_DeviceDescription_DebugString) {
  EMBER_PJRT_REQUIRE(args->device_description);
  args->debug_string = args->device_description->debug_string.data();
  args->debug_string_size = args->device_description->debug_string.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_DeviceDescription_ToString) {
  EMBER_PJRT_REQUIRE(args->device_description);
  args->to_string = args->device_description->to_string.data();
  args->to_string_size = args->device_description->to_string.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Device_GetDescription) {
  EMBER_PJRT_REQUIRE(args->device);
  args->device_description = &args->device->description;
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Device_IsAddressable) {
  EMBER_PJRT_REQUIRE(args->device);
  args->is_addressable = args->device->device->addressable();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Device_LocalHardwareId) {
  EMBER_PJRT_REQUIRE(args->device);
  args->local_hardware_id = args->device->device->local_hardware_id();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Device_AddressableMemories) {
  EMBER_PJRT_REQUIRE(args->device);
  args->memories = args->device->memories.data();
  args->num_memories = args->device->memories.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Device_DefaultMemory) {
  EMBER_PJRT_REQUIRE(args->device);
  if (args->device->default_memory == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(args->device->device->DebugString(), " belongs to process ",
                     args->device->device->process_index(), ": it has no memory in this process"));
  }
  args->memory = args->device->default_memory;
  return absl::OkStatus();
}

// Writes a statistic and its *_is_set flag: the framework does not zero the struct, so every
// flag must be written, set or not.
void SetStat(const std::optional<int64_t>& value, int64_t& out, bool& is_set) {
  is_set = value.has_value();
  out = value.value_or(0);
}

EMBER_PJRT_ENTRY(PJRT_Device_MemoryStats) {
  EMBER_PJRT_REQUIRE(args->device);
  se::MemoryStats stats = args->device->device->executor()->GetMemoryStats();
  args->bytes_in_use = stats.bytes_in_use;
  SetStat(stats.peak_bytes_in_use, args->peak_bytes_in_use, args->peak_bytes_in_use_is_set);
  SetStat(stats.num_allocs, args->num_allocs, args->num_allocs_is_set);
  SetStat(stats.largest_alloc_size, args->largest_alloc_size, args->largest_alloc_size_is_set);
  SetStat(stats.bytes_limit, args->bytes_limit, args->bytes_limit_is_set);
  SetStat(stats.bytes_reserved, args->bytes_reserved, args->bytes_reserved_is_set);
  SetStat(stats.peak_bytes_reserved, args->peak_bytes_reserved, args->peak_bytes_reserved_is_set);
  SetStat(stats.bytes_reservable_limit, args->bytes_reservable_limit,
          args->bytes_reservable_limit_is_set);
  SetStat(stats.largest_free_block_bytes, args->largest_free_block_bytes,
          args->largest_free_block_bytes_is_set);
  SetStat(stats.pool_bytes, args->pool_bytes, args->pool_bytes_is_set);
  SetStat(stats.peak_pool_bytes, args->peak_pool_bytes, args->peak_pool_bytes_is_set);
  if (EMBER_PJRT_HAS_FIELD(args, peak_allocated_bytes_is_set)) {
    SetStat(stats.peak_bytes_in_use, args->peak_allocated_bytes, args->peak_allocated_bytes_is_set);
  }
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Device_ClearMemoryStats) {
  EMBER_PJRT_REQUIRE(args->device);
  return args->device->device->executor()->ClearMemoryStats();
}

void NoDeviceAttributesToDelete(PJRT_Device_Attributes*) {}

EMBER_PJRT_ENTRY(PJRT_Device_GetAttributes) {
  EMBER_PJRT_REQUIRE(args->device);
  // The attributes live as long as the device; the deleter the framework must call is a no-op.
  args->attributes = args->device->description.attributes.data();
  args->num_attributes = args->device->description.attributes.size();
  args->device_attributes = reinterpret_cast<PJRT_Device_Attributes*>(args->device);
  args->attributes_deleter = &NoDeviceAttributesToDelete;
  return absl::OkStatus();
}

}  // namespace

void BindDeviceEntries(PJRT_Api& api) {
  api.PJRT_DeviceDescription_Id = &PJRT_DeviceDescription_Id_Entry;
  api.PJRT_DeviceDescription_ProcessIndex = &PJRT_DeviceDescription_ProcessIndex_Entry;
  api.PJRT_DeviceDescription_Attributes = &PJRT_DeviceDescription_Attributes_Entry;
  api.PJRT_DeviceDescription_Kind = &PJRT_DeviceDescription_Kind_Entry;
  api.PJRT_DeviceDescription_DebugString = &PJRT_DeviceDescription_DebugString_Entry;
  api.PJRT_DeviceDescription_ToString = &PJRT_DeviceDescription_ToString_Entry;
  api.PJRT_Device_GetDescription = &PJRT_Device_GetDescription_Entry;
  api.PJRT_Device_IsAddressable = &PJRT_Device_IsAddressable_Entry;
  api.PJRT_Device_LocalHardwareId = &PJRT_Device_LocalHardwareId_Entry;
  api.PJRT_Device_AddressableMemories = &PJRT_Device_AddressableMemories_Entry;
  api.PJRT_Device_DefaultMemory = &PJRT_Device_DefaultMemory_Entry;
  api.PJRT_Device_MemoryStats = &PJRT_Device_MemoryStats_Entry;
  api.PJRT_Device_ClearMemoryStats = &PJRT_Device_ClearMemoryStats_Entry;
  api.PJRT_Device_GetAttributes = &PJRT_Device_GetAttributes_Entry;
}

}  // namespace ember::pjrt
