// Device buffers: a dense array on one device, its allocation, and the event that says when its
// contents are defined. Transfers are asynchronous: each one is queued once its inputs are ready.
#ifndef EMBER_RUNTIME_BUFFER_H_
#define EMBER_RUNTIME_BUFFER_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/ir/element_type.h"
#include "base/async_event.h"
#include "runtime/device.h"
#include "stream_executor/device_memory.h"

namespace ember::runtime {

class Client;

// Owns one device allocation; frees it when the last user (buffer or in-flight transfer) is done.
class DeviceAllocation {
 public:
  DeviceAllocation(se::Executor* executor, se::DeviceMemory memory)
      : executor_(executor), memory_(memory) {}
  ~DeviceAllocation();
  DeviceAllocation(const DeviceAllocation&) = delete;
  DeviceAllocation& operator=(const DeviceAllocation&) = delete;
  se::DeviceMemory memory() const { return memory_; }

  static absl::StatusOr<std::shared_ptr<DeviceAllocation>> Allocate(se::Executor* executor,
                                                                      uint64_t size);

 private:
  se::Executor* executor_;
  se::DeviceMemory memory_;
};

class Buffer {
 public:
  Buffer(std::shared_ptr<Client> client, Device* device, MemorySpace* memory,
         ir::ElementType type, std::vector<int64_t> dims,
         std::shared_ptr<DeviceAllocation> allocation, AsyncEventRef ready);
  ~Buffer();

  Client* client() const { return client_.get(); }
  Device* device() const { return device_; }
  MemorySpace* memory() const { return memory_; }
  ir::ElementType element_type() const { return type_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  uint64_t on_device_size() const { return size_; }

  bool IsDeleted() const;
  // Drops this buffer's hold on its memory. The memory is freed once in-flight work using it and
  // external references are done. Deleting twice is harmless.
  void Delete();
  // Ready when the contents are defined; an error event if the buffer was deleted.
  AsyncEventRef ReadyEvent() const;

  // Copies the contents to host memory `dst` laid out with `dst_byte_strides` (empty: dense
  // row-major). `dst` must stay valid until the returned event is ready.
  absl::StatusOr<AsyncEventRef> ToHost(void* dst, absl::Span<const int64_t> dst_byte_strides);
  // A new buffer with the same contents on `device` (in `memory`, its default when null).
  absl::StatusOr<std::unique_ptr<Buffer>> CopyTo(Device* device, MemorySpace* memory);

  absl::Status IncreaseExternalReference();
  absl::Status DecreaseExternalReference();
  // The allocation's address; only meaningful to the caller on host-accessible memory.
  absl::StatusOr<void*> OpaqueDevicePointer() const;

  // For executions and transfers: the allocation and definition event, or an error naming why
  // not. `usage` (optional) is set when the user is done reading the memory; it is recorded with
  // the hold, so a launch that later takes the memory over (donation) waits for it. A user that
  // fails after acquiring must still set it.
  struct Hold {
    std::shared_ptr<DeviceAllocation> allocation;
    AsyncEventRef ready;
  };
  absl::StatusOr<Hold> Acquire(const char* user, AsyncEventRef usage = nullptr) const;

  bool HasExternalReferences() const;
  // Deletes the buffer for a launch that writes its result into this memory. Returns the
  // recorded uses that launch must wait for (all but `own`, the launch's own usage event), or
  // nullopt when the memory cannot be taken over (something outside Ember still sees it); the
  // buffer is deleted either way.
  std::optional<std::vector<AsyncEventRef>> DeleteForDonation(const AsyncEvent* own);

 private:
  std::shared_ptr<Client> client_;  // keeps devices and executors alive
  Device* device_;
  MemorySpace* memory_;
  ir::ElementType type_;
  std::vector<int64_t> dims_;
  uint64_t size_;
  mutable std::mutex mu_;
  std::shared_ptr<DeviceAllocation> allocation_;   // null once deleted
  std::shared_ptr<DeviceAllocation> external_hold_;  // kept while external references exist
  int external_references_ = 0;
  AsyncEventRef ready_;
  mutable std::vector<AsyncEventRef> usage_;  // pending uses of the memory (see Acquire)
};

}  // namespace ember::runtime

#endif  // EMBER_RUNTIME_BUFFER_H_
