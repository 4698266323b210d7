// PJRT_Memory_* and the memory function table (user data the framework attaches to memories).
#include "pjrt_plugin/bindings.h"
#include "pjrt_plugin/client_handle.h"
#include "pjrt_plugin/entry.h"
#include "pjrt_plugin/handles.h"

namespace ember::pjrt {

EmberMemory::~EmberMemory() {
  for (auto& [key, entry] : user_data) {
    if (entry.second != nullptr) entry.second(entry.first);
  }
}

namespace {

void* GetUserData(PJRT_Memory* memory, const void* key) {
  EmberMemory* m = AsEmber(memory);
  std::lock_guard<std::mutex> lock(m->user_data_mu);
  auto it = m->user_data.find(key);
  return it == m->user_data.end() ? nullptr : it->second.first;
}

void SetUserData(PJRT_Memory* memory, const void* key, void* data, void (*destructor)(void*)) {
  EmberMemory* m = AsEmber(memory);
  std::pair<void*, void (*)(void*)> old{nullptr, nullptr};
  {
    std::lock_guard<std::mutex> lock(m->user_data_mu);
    auto& slot = m->user_data[key];
    old = slot;
    slot = {data, destructor};
  }
  if (old.second != nullptr && old.first != data) old.second(old.first);
}

const PJRT_Memory_FunctionTable kMemoryTable = {
    .struct_size = PJRT_Memory_FunctionTable_STRUCT_SIZE,
    .extension_start = nullptr,
    .instance_struct_size = PJRT_Memory_STRUCT_SIZE,
    .get_user_data = &GetUserData,
    .set_user_data = &SetUserData,
};

EMBER_PJRT_ENTRY(PJRT_Memory_Id) {
  EMBER_PJRT_REQUIRE(args->memory);
  args->id = AsEmber(args->memory)->memory->id();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Memory_Kind) {
  EMBER_PJRT_REQUIRE(args->memory);
  const std::string& kind = AsEmber(args->memory)->memory->kind();
  args->kind = kind.data();
  args->kind_size = kind.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Memory_Kind_Id) {
  EMBER_PJRT_REQUIRE(args->memory);
  args->kind_id = AsEmber(args->memory)->memory->kind_id();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Memory_DebugString) {
  EMBER_PJRT_REQUIRE(args->memory);
  args->debug_string = AsEmber(args->memory)->debug_string.data();
  args->debug_string_size = AsEmber(args->memory)->debug_string.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Memory_ToString) {
  EMBER_PJRT_REQUIRE(args->memory);
  args->to_string = AsEmber(args->memory)->to_string.data();
  args->to_string_size = AsEmber(args->memory)->to_string.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Memory_AddressableByDevices) {
  EMBER_PJRT_REQUIRE(args->memory);
  args->devices = AsEmber(args->memory)->devices.data();
  args->num_devices = AsEmber(args->memory)->devices.size();
  return absl::OkStatus();
}

}  // namespace

const PJRT_Memory_FunctionTable* MemoryFunctionTable() { return &kMemoryTable; }

void BindMemoryEntries(PJRT_Api& api) {
  api.PJRT_Memory_Id = &PJRT_Memory_Id_Entry;
  api.PJRT_Memory_Kind = &PJRT_Memory_Kind_Entry;
  api.PJRT_Memory_Kind_Id = &PJRT_Memory_Kind_Id_Entry;
  api.PJRT_Memory_DebugString = &PJRT_Memory_DebugString_Entry;
  api.PJRT_Memory_ToString = &PJRT_Memory_ToString_Entry;
  api.PJRT_Memory_AddressableByDevices = &PJRT_Memory_AddressableByDevices_Entry;
}

}  // namespace ember::pjrt
