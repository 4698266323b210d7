// The runtime client: one platform's devices and memories, and host-to-device transfers.
// The PJRT layer wraps it as PJRT_Client; nothing here knows the C ABI.
#ifndef EMBER_RUNTIME_CLIENT_H_
#define EMBER_RUNTIME_CLIENT_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "compiler/ir/element_type.h"
#include "base/async_event.h"
#include "base/options.h"
#include "collectives/collectives.h"
#include "collectives/key_value_store.h"
#include "runtime/buffer.h"
#include "runtime/device.h"
#include "runtime/process_topology.h"
#include "stream_executor/platform.h"

namespace ember::runtime {

// How long the caller keeps a host buffer unchanged (PJRT's host-buffer semantics).
enum class HostBufferSemantics {
  kImmutableOnlyDuringCall,
  kImmutableUntilTransferCompletes,
  kImmutableZeroCopy,
  kMutableZeroCopy,
};

class Client : public std::enable_shared_from_this<Client> {
 public:
  // With options.process_count > 1, `kv_store` is the job's key-value store: the processes
  // exchange their device lists there (every client lists every device of the job; its own are
  // the addressable ones) and their collectives meet there.
  static absl::StatusOr<std::shared_ptr<Client>> Create(
      const DeviceOptions& options, std::shared_ptr<collectives::KeyValueStore> kv_store = nullptr);
  // How many devices Create(options) would open, without opening them (TensorFlow asks before
  // it creates a client).
  static absl::StatusOr<int> CountDevices(const DeviceOptions& options);
  ~Client();

  // "ember" for every platform: JAX selects the plugin by this name.
  std::string_view platform_name() const { return "ember"; }
  // The stream-executor platform in use ("host" or "cuda") and why, when "auto" fell back.
  std::string_view se_platform_name() const { return platform_->Name(); }
  const std::string& fallback_reason() const { return fallback_reason_; }
  std::string PlatformVersion() const;
  int process_index() const { return options_.process_index; }
  const DeviceOptions& options() const { return options_; }
  // The transport collectives among this client's devices run on (its communicators are cached
  // there, shared by every executable). Null when the platform has none.
  const std::shared_ptr<collectives::Collectives>& collectives() const { return collectives_; }
  // Why collectives() is null.
  const std::string& no_collectives_reason() const { return no_collectives_reason_; }
  // Multi-device launches are put on the devices' streams under this lock, so every stream sees
  // them in the same order: a launch waiting at a collective on one device can never wait for a
  // peer stuck behind a later launch on another. Shared, so that a launch's callbacks hold the
  // lock and not the client (a client must never be destroyed on one of its own stream threads).
  const std::shared_ptr<absl::Mutex>& launch_order_mutex() const { return launch_order_mu_; }

  // Every device of the job, in global id order; this process's own are the addressable ones.
  const std::vector<Device*>& devices() const { return device_ptrs_; }
  const std::vector<Device*>& addressable_devices() const { return addressable_ptrs_; }
  // The job's processes as its coordination service last reported them (empty until it does).
  void SetProcessStates(std::vector<ProcessState> states);
  std::vector<ProcessState> process_states() const;
  const std::vector<MemorySpace*>& memories() const { return memory_ptrs_; }

  absl::StatusOr<Device*> LookupDevice(int64_t id) const;
  absl::StatusOr<Device*> LookupAddressableDevice(int64_t local_hardware_id) const;
  // Row-major (replica, partition) device ids.
  absl::StatusOr<std::vector<int>> DefaultDeviceAssignment(int num_replicas,
                                                           int num_partitions) const;

  // Copies a host array into a new buffer in `memory`. `byte_strides` empty = dense row-major.
  // `done_with_host_buffer` is set when `data` may be reused by the caller.
  absl::StatusOr<std::unique_ptr<Buffer>> BufferFromHostBuffer(
      const void* data, ir::ElementType type, absl::Span<const int64_t> dims,
      absl::Span<const int64_t> byte_strides, HostBufferSemantics semantics, MemorySpace* memory,
      AsyncEventRef* done_with_host_buffer);

 private:
  Client() = default;
  std::unique_ptr<se::Platform> platform_;
  std::string fallback_reason_;
  DeviceOptions options_;
  std::shared_ptr<collectives::Collectives> collectives_;
  std::string no_collectives_reason_;
  std::shared_ptr<absl::Mutex> launch_order_mu_ = std::make_shared<absl::Mutex>();
  std::vector<std::unique_ptr<MemorySpace>> memories_;
  std::vector<std::unique_ptr<Device>> devices_;
  std::vector<Device*> device_ptrs_;
  std::vector<Device*> addressable_ptrs_;
  mutable absl::Mutex process_states_mu_;
  std::vector<ProcessState> process_states_ ABSL_GUARDED_BY(process_states_mu_);
  std::vector<MemorySpace*> memory_ptrs_;
};

}  // namespace ember::runtime

#endif  // EMBER_RUNTIME_CLIENT_H_
