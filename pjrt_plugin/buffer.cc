// PJRT_Buffer_*: queries, transfers to host and between devices, deletion, external references.
#include <memory>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "pjrt_plugin/bindings.h"
#include "pjrt_plugin/client_handle.h"
#include "pjrt_plugin/element_types.h"
#include "pjrt_plugin/entry.h"
#include "pjrt_plugin/event_handle.h"
#include "pjrt_plugin/handles.h"
#include "runtime/host_layout.h"

namespace ember::pjrt {

PJRT_Buffer* NewBufferHandle(PJRT_Client* client, std::unique_ptr<runtime::Buffer> buffer) {
  auto* handle = new PJRT_Buffer();
  handle->client = client;
  if (client != nullptr) handle->client_alive = client->alive;
  handle->buffer = std::move(buffer);
  return handle;
}

namespace {

// The device and memory handles of a buffer belong to its client; once that is destroyed there
// are none to return or copy next to.
absl::Status RequireLiveClient(const PJRT_Buffer& buffer, const char* what) {
  if (buffer.client_destroyed()) {
    return absl::FailedPreconditionError(absl::StrCat(
        what, ": the buffer belongs to a client that was destroyed (its data can still be read "
        "with PJRT_Buffer_ToHostBuffer)"));
  }
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_Destroy) {
  std::unique_ptr<PJRT_Buffer> owned(args->buffer);
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_ElementType) {
  EMBER_PJRT_REQUIRE(args->buffer);
  args->type = ToPjrtBufferType(args->buffer->buffer->element_type());
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_Dimensions) {
  EMBER_PJRT_REQUIRE(args->buffer);
  const std::vector<int64_t>& dims = args->buffer->buffer->dims();
  args->dims = dims.data();
  args->num_dims = dims.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_UnpaddedDimensions) {
  EMBER_PJRT_REQUIRE(args->buffer);
  const std::vector<int64_t>& dims = args->buffer->buffer->dims();
  args->unpadded_dims = dims.data();
  args->num_dims = dims.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_DynamicDimensionIndices) {
  EMBER_PJRT_REQUIRE(args->buffer);
  args->dynamic_dim_indices = nullptr;  // Ember shapes are static
  args->num_dynamic_dims = 0;
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_GetMemoryLayout) {
  EMBER_PJRT_REQUIRE(args->buffer);
  const size_t rank = args->buffer->buffer->dims().size();
  std::lock_guard<std::mutex> lock(args->buffer->layout_mu);
  if (args->buffer->minor_to_major.empty() && rank > 0) {
    for (size_t i = 0; i < rank; ++i) args->buffer->minor_to_major.push_back(rank - 1 - i);
  }
  PJRT_Buffer_MemoryLayout& layout = args->layout;
  layout = {};
  layout.struct_size = PJRT_Buffer_MemoryLayout_STRUCT_SIZE;
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  layout.tiled.minor_to_major = args->buffer->minor_to_major.data();
  layout.tiled.minor_to_major_size = rank;
  layout.tiled.num_tiles = 0;
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_OnDeviceSizeInBytes) {
  EMBER_PJRT_REQUIRE(args->buffer);
  args->on_device_size_in_bytes = args->buffer->buffer->on_device_size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_Device) {
  EMBER_PJRT_REQUIRE(args->buffer);
  EMBER_RETURN_IF_ERROR(RequireLiveClient(*args->buffer, "PJRT_Buffer_Device"));
  args->device = args->buffer->client->device_map.at(args->buffer->buffer->device());
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_Memory) {
  EMBER_PJRT_REQUIRE(args->buffer);
  EMBER_RETURN_IF_ERROR(RequireLiveClient(*args->buffer, "PJRT_Buffer_Memory"));
  args->memory = args->buffer->client->memory_map.at(args->buffer->buffer->memory());
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_Delete) {
  EMBER_PJRT_REQUIRE(args->buffer);
  args->buffer->buffer->Delete();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_IsDeleted) {
  EMBER_PJRT_REQUIRE(args->buffer);
  args->is_deleted = args->buffer->buffer->IsDeleted();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_IsOnCpu) {
  EMBER_PJRT_REQUIRE(args->buffer);
  args->is_on_cpu = args->buffer->buffer->device()->executor()->MemoryIsHostAccessible();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_ReadyEvent) {
  EMBER_PJRT_REQUIRE(args->buffer);
  args->event = NewEventHandle(args->buffer->buffer->ReadyEvent());
  return absl::OkStatus();
}

// Host byte strides requested through a PJRT_Buffer_MemoryLayout (null: dense row-major).
absl::StatusOr<std::vector<int64_t>> HostByteStrides(const PJRT_Buffer_MemoryLayout* layout,
                                                     const runtime::Buffer& buffer) {
  if (layout == nullptr) return std::vector<int64_t>();
  const size_t rank = buffer.dims().size();
  const int32_t layout_type = RawEnumValue(layout->type);
  if (layout_type == PJRT_Buffer_MemoryLayout_Type_Strides) {
    if (layout->strides.num_byte_strides > 0 && layout->strides.byte_strides == nullptr) {
      return absl::InvalidArgumentError("`host_layout.strides.byte_strides` is null");
    }
    std::vector<int64_t> strides(layout->strides.byte_strides,
                                 layout->strides.byte_strides + layout->strides.num_byte_strides);
    EMBER_RETURN_IF_ERROR(runtime::ValidateByteStrides(buffer.element_type(), buffer.dims(), strides));
    return strides;
  }
  if (layout_type == PJRT_Buffer_MemoryLayout_Type_Tiled) {
    if (layout->tiled.num_tiles != 0) {
      return absl::UnimplementedError("`host_layout` with tiles is not supported");
    }
    if (layout->tiled.minor_to_major_size != rank ||
        (rank > 0 && layout->tiled.minor_to_major == nullptr)) {
      return absl::InvalidArgumentError(absl::StrCat("`host_layout.tiled.minor_to_major` has ",
                                                     layout->tiled.minor_to_major_size,
                                                     " entries for a rank-", rank, " buffer"));
    }
    return runtime::ByteStridesForMinorToMajor(
        buffer.element_type(), buffer.dims(),
        absl::Span<const int64_t>(layout->tiled.minor_to_major, rank));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown host_layout type ", RawEnumValue(layout->type)));
}

EMBER_PJRT_ENTRY(PJRT_Buffer_ToHostBuffer) {
  EMBER_PJRT_REQUIRE(args->src);
  runtime::Buffer& buffer = *args->src->buffer;
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> strides, HostByteStrides(args->host_layout, buffer));
  const uint64_t needed = buffer.on_device_size();
  if (args->dst == nullptr) {
    args->dst_size = needed;  // a size query
    return absl::OkStatus();
  }
  if (args->dst_size < needed) {
    return absl::InvalidArgumentError(
        absl::StrCat("`dst_size` is ", args->dst_size, " bytes; the buffer needs ", needed));
  }
  EMBER_ASSIGN_OR_RETURN(AsyncEventRef done, buffer.ToHost(args->dst, strides));
  args->event = NewEventHandle(std::move(done));
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_CopyToDevice) {
  EMBER_PJRT_REQUIRE(args->buffer);
  EMBER_PJRT_REQUIRE(args->dst_device);
  EMBER_RETURN_IF_ERROR(RequireLiveClient(*args->buffer, "PJRT_Buffer_CopyToDevice"));
  if (args->dst_device->client != args->buffer->client) {
    return absl::InvalidArgumentError("`dst_device` belongs to another client");
  }
  EMBER_ASSIGN_OR_RETURN(auto copy, args->buffer->buffer->CopyTo(args->dst_device->device, nullptr));
  args->dst_buffer = NewBufferHandle(args->buffer->client, std::move(copy));
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_CopyToMemory) {
  EMBER_PJRT_REQUIRE(args->buffer);
  EMBER_PJRT_REQUIRE(args->dst_memory);
  EMBER_RETURN_IF_ERROR(RequireLiveClient(*args->buffer, "PJRT_Buffer_CopyToMemory"));
  EmberMemory* memory = AsEmber(args->dst_memory);
  if (memory->client != args->buffer->client) {
    return absl::InvalidArgumentError("`dst_memory` belongs to another client");
  }
  if (memory->devices.empty()) {
    return absl::InvalidArgumentError("`dst_memory` is not attached to any device");
  }
  EMBER_ASSIGN_OR_RETURN(auto copy, args->buffer->buffer->CopyTo(memory->devices.front()->device,
                                                                  memory->memory));
  args->dst_buffer = NewBufferHandle(args->buffer->client, std::move(copy));
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_IncreaseExternalReferenceCount) {
  EMBER_PJRT_REQUIRE(args->buffer);
  return args->buffer->buffer->IncreaseExternalReference();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_DecreaseExternalReferenceCount) {
  EMBER_PJRT_REQUIRE(args->buffer);
  return Verbatim(args->buffer->buffer->DecreaseExternalReference());
}

EMBER_PJRT_ENTRY(PJRT_Buffer_OpaqueDeviceMemoryDataPointer) {
  EMBER_PJRT_REQUIRE(args->buffer);
  EMBER_ASSIGN_OR_RETURN(args->device_memory_ptr, args->buffer->buffer->OpaqueDevicePointer());
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Buffer_UnsafePointer) {
  EMBER_PJRT_REQUIRE(args->buffer);
  EMBER_ASSIGN_OR_RETURN(void* pointer, args->buffer->buffer->OpaqueDevicePointer());
  args->buffer_pointer = reinterpret_cast<uintptr_t>(pointer);
  return absl::OkStatus();
}

}  // namespace

void BindBufferEntries(PJRT_Api& api) {
  api.PJRT_Buffer_Destroy = &PJRT_Buffer_Destroy_Entry;
  api.PJRT_Buffer_ElementType = &PJRT_Buffer_ElementType_Entry;
  api.PJRT_Buffer_Dimensions = &PJRT_Buffer_Dimensions_Entry;
  api.PJRT_Buffer_UnpaddedDimensions = &PJRT_Buffer_UnpaddedDimensions_Entry;
  api.PJRT_Buffer_DynamicDimensionIndices = &PJRT_Buffer_DynamicDimensionIndices_Entry;
  api.PJRT_Buffer_GetMemoryLayout = &PJRT_Buffer_GetMemoryLayout_Entry;
  api.PJRT_Buffer_OnDeviceSizeInBytes = &PJRT_Buffer_OnDeviceSizeInBytes_Entry;
  api.PJRT_Buffer_Device = &PJRT_Buffer_Device_Entry;
  api.PJRT_Buffer_Memory = &PJRT_Buffer_Memory_Entry;
  api.PJRT_Buffer_Delete = &PJRT_Buffer_Delete_Entry;
  api.PJRT_Buffer_IsDeleted = &PJRT_Buffer_IsDeleted_Entry;
  api.PJRT_Buffer_IsOnCpu = &PJRT_Buffer_IsOnCpu_Entry;
  api.PJRT_Buffer_ReadyEvent = &PJRT_Buffer_ReadyEvent_Entry;
  api.PJRT_Buffer_ToHostBuffer = &PJRT_Buffer_ToHostBuffer_Entry;
  api.PJRT_Buffer_CopyToDevice = &PJRT_Buffer_CopyToDevice_Entry;
  api.PJRT_Buffer_CopyToMemory = &PJRT_Buffer_CopyToMemory_Entry;
  api.PJRT_Buffer_IncreaseExternalReferenceCount = &PJRT_Buffer_IncreaseExternalReferenceCount_Entry;
  api.PJRT_Buffer_DecreaseExternalReferenceCount = &PJRT_Buffer_DecreaseExternalReferenceCount_Entry;
  api.PJRT_Buffer_OpaqueDeviceMemoryDataPointer = &PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Entry;
  api.PJRT_Buffer_UnsafePointer = &PJRT_Buffer_UnsafePointer_Entry;
}

}  // namespace ember::pjrt
