// PJRT_Client_*: creation (options, devices, memories, topology), lookups, device assignment
// and host-to-device transfers.
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "pjrt_plugin/bindings.h"
#include "pjrt_plugin/callback_key_value_store.h"
#include "pjrt_plugin/client_handle.h"
#include "compiler/registry/builtin_backends.h"
#include "pjrt_plugin/options.h"
#include "pjrt_plugin/element_types.h"
#include "pjrt_plugin/entry.h"
#include "pjrt_plugin/event_handle.h"
#include "pjrt_plugin/handles.h"

namespace ember::pjrt {
namespace {

void FillDescription(PJRT_DeviceDescription& d, runtime::Device* device, const runtime::Client& c) {
  d.device = device;
  d.kind = device->Kind();
  d.to_string = device->ToString();
  d.debug_string = device->DebugString();
  d.attributes.AddString("platform", std::string(c.se_platform_name()));
  d.attributes.AddInt64("local_hardware_id", device->local_hardware_id());
}

absl::StatusOr<std::unique_ptr<PJRT_Client>> WrapClient(std::shared_ptr<runtime::Client> client) {
  auto handle = std::make_unique<PJRT_Client>();
  handle->client = client;
  auto backends = std::make_shared<backend::BackendRegistry>();
  EMBER_RETURN_IF_ERROR(compiler::RegisterBuiltinBackends(*backends));
  handle->backends = std::move(backends);
  handle->platform_version = client->PlatformVersion();
  for (runtime::MemorySpace* memory : client->memories()) {
    auto m = std::make_unique<EmberMemory>();
    m->base.vtable = MemoryFunctionTable();
    m->client = handle.get();
    m->memory = memory;
    m->debug_string = memory->DebugString();
    m->to_string = memory->ToString();
    handle->memory_ptrs.push_back(&m->base);
    handle->memory_map[memory] = &m->base;
    handle->memories.push_back(std::move(m));
  }
  for (runtime::Device* device : client->devices()) {
    auto d = std::make_unique<PJRT_Device>();
    d->client = handle.get();
    d->device = device;
    FillDescription(d->description, device, *client);
    for (runtime::MemorySpace* memory : device->memories()) {
      d->memories.push_back(handle->memory_map.at(memory));
    }
    // Another process's device has no memory here.
    d->default_memory =
        device->addressable() ? handle->memory_map.at(device->default_memory()) : nullptr;
    handle->device_ptrs.push_back(d.get());
    if (device->addressable()) handle->addressable_device_ptrs.push_back(d.get());
    handle->device_map[device] = d.get();
    handle->devices.push_back(std::move(d));
  }
  for (auto& m : handle->memories) {
    for (runtime::Device* device : m->memory->devices()) {
      m->devices.push_back(handle->device_map.at(device));
    }
  }
  handle->topology.client = handle.get();
  for (auto& d : handle->devices) handle->topology.descriptions.push_back(&d->description);
  handle->topology.attributes.AddString("platform", std::string(client->se_platform_name()));
  handle->topology.attributes.AddInt64("device_count", client->devices().size());
  return handle;
}

EMBER_PJRT_ENTRY(PJRT_Client_Create) {
  EMBER_ASSIGN_OR_RETURN(auto options, ReadNamedValues(args->create_options, args->num_options));
  EMBER_ASSIGN_OR_RETURN(Options ember_options, ReadOptions(options));
  // The key-value store fields are garbage in single-process use (the framework does not zero
  // the struct), so they are looked at only in a job of several processes (num_nodes > 1).
  std::shared_ptr<collectives::KeyValueStore> kv_store;
  if (ember_options.devices.process_count > 1) {
    if (args->kv_get_callback == nullptr || args->kv_put_callback == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "num_nodes = ", ember_options.devices.process_count,
          " but PJRT_Client_Create got no key-value store callbacks (kv_get_callback, "
          "kv_put_callback): call jax.distributed.initialize() before using Ember"));
    }
    kv_store = std::make_shared<CallbackKeyValueStore>(args->kv_get_callback, args->kv_get_user_arg,
                                                       args->kv_put_callback, args->kv_put_user_arg);
  }
  EMBER_ASSIGN_OR_RETURN(auto client,
                         runtime::Client::Create(ember_options.devices, std::move(kv_store)));
  EMBER_ASSIGN_OR_RETURN(auto handle, WrapClient(std::move(client)));
  args->client = handle.release();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Client_Destroy) {
  std::unique_ptr<PJRT_Client> owned(args->client);
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Client_PlatformName) {
  EMBER_PJRT_REQUIRE(args->client);
  std::string_view name = args->client->client->platform_name();
  args->platform_name = name.data();
  args->platform_name_size = name.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Client_ProcessIndex) {
  EMBER_PJRT_REQUIRE(args->client);
  args->process_index = args->client->client->process_index();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Client_PlatformVersion) {
  EMBER_PJRT_REQUIRE(args->client);
  args->platform_version = args->client->platform_version.data();
  args->platform_version_size = args->client->platform_version.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Client_TopologyDescription) {
  EMBER_PJRT_REQUIRE(args->client);
  args->topology = &args->client->topology;
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Client_Devices) {
  EMBER_PJRT_REQUIRE(args->client);
  args->devices = args->client->device_ptrs.data();
  args->num_devices = args->client->device_ptrs.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Client_AddressableDevices) {
  EMBER_PJRT_REQUIRE(args->client);
  args->addressable_devices = args->client->addressable_device_ptrs.data();
  args->num_addressable_devices = args->client->addressable_device_ptrs.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Client_LookupDevice) {
  EMBER_PJRT_REQUIRE(args->client);
  absl::StatusOr<runtime::Device*> device = args->client->client->LookupDevice(args->id);
  if (!device.ok()) return Verbatim(device.status());
  args->device = args->client->device_map.at(*device);
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Client_LookupAddressableDevice) {
  EMBER_PJRT_REQUIRE(args->client);
  EMBER_ASSIGN_OR_RETURN(runtime::Device * device,
                         args->client->client->LookupAddressableDevice(args->local_hardware_id));
  args->addressable_device = args->client->device_map.at(device);
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Client_AddressableMemories) {
  EMBER_PJRT_REQUIRE(args->client);
  args->addressable_memories = args->client->memory_ptrs.data();
  args->num_addressable_memories = args->client->memory_ptrs.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Client_DefaultDeviceAssignment) {
  EMBER_PJRT_REQUIRE(args->client);
  if (args->num_replicas <= 0 || args->num_partitions <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "`num_replicas` and `num_partitions` must be positive, got ", args->num_replicas, " and ",
        args->num_partitions));
  }
  const int64_t needed = static_cast<int64_t>(args->num_replicas) * args->num_partitions;
  if (static_cast<int64_t>(args->default_assignment_size) < needed) {
    return absl::FailedPreconditionError(absl::StrCat(
        "`default_assignment_size` ", args->default_assignment_size,
        " < `num_replicas * num_partitions`, ", args->num_replicas, " * ", args->num_partitions,
        " = ", needed));
  }
  EMBER_PJRT_REQUIRE(args->default_assignment);
  EMBER_ASSIGN_OR_RETURN(std::vector<int> assignment,
                         args->client->client->DefaultDeviceAssignment(args->num_replicas,
                                                                       args->num_partitions));
  std::copy(assignment.begin(), assignment.end(), args->default_assignment);
  return absl::OkStatus();
}

absl::StatusOr<runtime::HostBufferSemantics> ToSemantics(int32_t semantics) {
  switch (semantics) {
    case PJRT_HostBufferSemantics_kImmutableOnlyDuringCall:
      return runtime::HostBufferSemantics::kImmutableOnlyDuringCall;
    case PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes:
      return runtime::HostBufferSemantics::kImmutableUntilTransferCompletes;
    case PJRT_HostBufferSemantics_kImmutableZeroCopy:
      return runtime::HostBufferSemantics::kImmutableZeroCopy;
    case PJRT_HostBufferSemantics_kMutableZeroCopy:
      return runtime::HostBufferSemantics::kMutableZeroCopy;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown host_buffer_semantics ", semantics));
}

// Only the default (row-major, untiled) device layout exists on Ember devices today.
absl::Status CheckDeviceLayout(const PJRT_Buffer_MemoryLayout* layout, size_t rank) {
  if (layout == nullptr) return absl::OkStatus();
  if (RawEnumValue(layout->type) == PJRT_Buffer_MemoryLayout_Type_Tiled) {
    const auto& tiled = layout->tiled;
    bool row_major = tiled.minor_to_major_size == rank && tiled.num_tiles == 0;
    for (size_t i = 0; row_major && i < rank; ++i) {
      row_major = tiled.minor_to_major != nullptr &&
                  tiled.minor_to_major[i] == static_cast<int64_t>(rank - 1 - i);
    }
    if (row_major) return absl::OkStatus();
  }
  return absl::UnimplementedError(
      "`device_layout`: only the default row-major layout is supported on Ember devices");
}

EMBER_PJRT_ENTRY(PJRT_Client_BufferFromHostBuffer) {
  EMBER_PJRT_REQUIRE(args->client);
  if (args->num_dims > 0) EMBER_PJRT_REQUIRE(args->dims);
  EMBER_ASSIGN_OR_RETURN(ir::ElementType type, FromPjrtBufferType(RawEnumValue(args->type)));
  EMBER_ASSIGN_OR_RETURN(runtime::HostBufferSemantics semantics,
                         ToSemantics(RawEnumValue(args->host_buffer_semantics)));
  runtime::MemorySpace* memory = nullptr;
  if (EMBER_PJRT_HAS_FIELD(args, memory) && args->memory != nullptr) {
    memory = AsEmber(args->memory)->memory;
    if (AsEmber(args->memory)->client != args->client) {
      return absl::InvalidArgumentError("`memory` belongs to another client");
    }
  } else if (args->device != nullptr) {
    memory = args->device->device->default_memory();
    if (memory == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "`device` ", args->device->device->DebugString(), " belongs to process ",
          args->device->device->process_index(), ": this process cannot put data on it"));
    }
  } else {
    return absl::InvalidArgumentError("one of `device` or `memory` must be set");
  }
  if (EMBER_PJRT_HAS_FIELD(args, device_layout)) {
    EMBER_RETURN_IF_ERROR(CheckDeviceLayout(args->device_layout, args->num_dims));
  }
  absl::Span<const int64_t> dims(args->dims, args->num_dims);
  absl::Span<const int64_t> strides;
  if (args->byte_strides != nullptr) {
    if (args->num_byte_strides != args->num_dims) {
      return absl::InvalidArgumentError(absl::StrCat("got ", args->num_byte_strides,
                                                     " byte_strides for ", args->num_dims, " dims"));
    }
    strides = absl::Span<const int64_t>(args->byte_strides, args->num_byte_strides);
  }
  AsyncEventRef done;
  EMBER_ASSIGN_OR_RETURN(auto buffer,
                         args->client->client->BufferFromHostBuffer(args->data, type, dims, strides,
                                                                    semantics, memory, &done));
  args->buffer = NewBufferHandle(args->client, std::move(buffer));
  args->done_with_host_buffer = NewEventHandle(std::move(done));
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Client_UpdateGlobalProcessInfo) {
  EMBER_PJRT_REQUIRE(args->client);
  if (args->num_process_infos > 0) EMBER_PJRT_REQUIRE(args->process_infos);
  std::vector<runtime::ProcessState> states;
  for (size_t i = 0; i < args->num_process_infos; ++i) {
    const PJRT_ProcessInfo& info = args->process_infos[i];
    runtime::ProcessState state;
    state.process_index = info.task_id;
    state.incarnation = info.incarnation_id;
    using Kind = runtime::ProcessState::Kind;
    switch (info.state) {
      case PJRT_ProcessState_kUninitialized: state.kind = Kind::kUninitialized; break;
      case PJRT_ProcessState_kDisconnected: state.kind = Kind::kDisconnected; break;
      case PJRT_ProcessState_kConnected: state.kind = Kind::kConnected; break;
      case PJRT_ProcessState_kError: state.kind = Kind::kError; break;
      default: state.kind = Kind::kUnspecified; break;
    }
    if (info.error_message != nullptr) {
      state.error.assign(info.error_message, info.error_message_size);
    }
    states.push_back(std::move(state));
  }
  args->client->client->SetProcessStates(std::move(states));
  return absl::OkStatus();
}

}  // namespace

void BindClientEntries(PJRT_Api& api) {
  api.PJRT_Client_Create = &PJRT_Client_Create_Entry;
  api.PJRT_Client_Destroy = &PJRT_Client_Destroy_Entry;
  api.PJRT_Client_PlatformName = &PJRT_Client_PlatformName_Entry;
  api.PJRT_Client_ProcessIndex = &PJRT_Client_ProcessIndex_Entry;
  api.PJRT_Client_PlatformVersion = &PJRT_Client_PlatformVersion_Entry;
  api.PJRT_Client_TopologyDescription = &PJRT_Client_TopologyDescription_Entry;
  api.PJRT_Client_Devices = &PJRT_Client_Devices_Entry;
  api.PJRT_Client_AddressableDevices = &PJRT_Client_AddressableDevices_Entry;
  api.PJRT_Client_LookupDevice = &PJRT_Client_LookupDevice_Entry;
  api.PJRT_Client_LookupAddressableDevice = &PJRT_Client_LookupAddressableDevice_Entry;
  api.PJRT_Client_AddressableMemories = &PJRT_Client_AddressableMemories_Entry;
  api.PJRT_Client_UpdateGlobalProcessInfo = &PJRT_Client_UpdateGlobalProcessInfo_Entry;
  api.PJRT_Client_DefaultDeviceAssignment = &PJRT_Client_DefaultDeviceAssignment_Entry;
  api.PJRT_Client_BufferFromHostBuffer = &PJRT_Client_BufferFromHostBuffer_Entry;
}

}  // namespace ember::pjrt
