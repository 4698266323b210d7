#include "runtime/client.h"

#include <cstring>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/ir/byte_strides.h"
#include "runtime/host_layout.h"
#include "collectives/collectives_factory.h"
#include "runtime/process_topology.h"
#include "stream_executor/platform_factory.h"

namespace ember::runtime {

namespace {

absl::StatusOr<se::PlatformOptions> PlatformOptionsFor(const DeviceOptions& options) {
  if (options.host_device_count < 1 || options.host_device_count > 1024) {
    return absl::InvalidArgumentError(absl::StrCat(
        "host_device_count must be between 1 and 1024, got ", options.host_device_count));
  }
  se::PlatformOptions se_options;
  se_options.kind = options.platform;
  se_options.host_device_count = options.host_device_count;
  se_options.memory_limit_bytes = options.memory_limit_bytes;
  se_options.cuda_library_path = options.cuda_library_path;
  return se_options;
}

}  // namespace

absl::StatusOr<int> Client::CountDevices(const DeviceOptions& options) {
  EMBER_ASSIGN_OR_RETURN(se::PlatformOptions se_options, PlatformOptionsFor(options));
  EMBER_ASSIGN_OR_RETURN(std::unique_ptr<se::Platform> platform, se::CreatePlatform(se_options));
  return platform->DeviceCount();
}

absl::StatusOr<std::shared_ptr<Client>> Client::Create(
    const DeviceOptions& options, std::shared_ptr<collectives::KeyValueStore> kv_store) {
  if (options.process_count < 1 || options.process_index < 0 ||
      options.process_index >= options.process_count) {
    return absl::InvalidArgumentError(absl::StrCat("node_id ", options.process_index,
                                                   " is not a process of a job of num_nodes ",
                                                   options.process_count));
  }
  if (options.process_count > 1 && kv_store == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "num_nodes = ", options.process_count,
        " needs the job's key-value store, which JAX passes once jax.distributed.initialize() ran"));
  }
  EMBER_ASSIGN_OR_RETURN(se::PlatformOptions se_options, PlatformOptionsFor(options));
  if (options.process_count > 1) {
    // The n-th client process p creates in a job keeps its keys under "ember/client<n>/": every
    // process creates its clients in the same order, so they meet there, away from the keys of
    // the clients before (a framework may drop its client and make another).
    static absl::Mutex created_mu(absl::kConstInit);
    static auto* created = new std::map<int, int>();
    int incarnation;
    {
      absl::MutexLock lock(&created_mu);
      incarnation = (*created)[options.process_index]++;
    }
    kv_store = std::make_shared<collectives::PrefixedKeyValueStore>(
        std::move(kv_store), absl::StrCat("ember/client", incarnation, "/"));
  }
  std::shared_ptr<Client> client(new Client());
  EMBER_ASSIGN_OR_RETURN(client->platform_, se::CreatePlatform(se_options));
  if (options.platform == "auto" && client->platform_->Name() == "host") {
    client->fallback_reason_ = se::LastAutoFallbackReason();
  }
  client->options_ = options;
  const std::string platform(client->platform_->Name());
  const int count = client->platform_->DeviceCount();
  // The job's devices: this process's alone, or every process's from the key-value store.
  ProcessDevices local{platform, "", count, 0};
  if (count > 0) {
    EMBER_ASSIGN_OR_RETURN(se::Executor * first, client->platform_->ExecutorForDevice(0));
    local.kind = first->DeviceKind();
  }
  std::vector<ProcessDevices> processes = {local};
  if (options.process_count > 1) {
    EMBER_ASSIGN_OR_RETURN(processes,
                           ExchangeProcessDevices(*kv_store, options.process_index,
                                                  options.process_count, local,
                                                  options.collective_timeout));
  }
  // Collectives are optional: a platform without a transport still runs single-device work, and a
  // multi-device program on it fails when it is loaded, with the reason.
  collectives::CollectivesOptions transport;
  transport.timeout = options.collective_timeout;
  transport.process_count = options.process_count;
  transport.kv_store = kv_store;
  transport.platform = client->platform_.get();
  transport.library_directory = options.cuda_library_path;
  transport.first_device_id = processes[options.process_index].first_id;
  absl::StatusOr<std::shared_ptr<collectives::Collectives>> collectives =
      collectives::CreateCollectives(platform, transport);
  if (collectives.ok()) {
    client->collectives_ = *std::move(collectives);
  } else {
    client->no_collectives_reason_ = std::string(collectives.status().message());
  }
  for (int process = 0; process < static_cast<int>(processes.size()); ++process) {
    const ProcessDevices& devices = processes[process];
    for (int ordinal = 0; ordinal < devices.count; ++ordinal) {
      const int id = devices.first_id + ordinal;
      if (process != options.process_index) {
        client->device_ptrs_.push_back(
            client->devices_.emplace_back(Device::Remote(id, process, platform, devices.kind)).get());
        continue;
      }
      EMBER_ASSIGN_OR_RETURN(se::Executor * executor,
                             client->platform_->ExecutorForDevice(ordinal));
      EMBER_ASSIGN_OR_RETURN(auto compute, executor->CreateStream());
      EMBER_ASSIGN_OR_RETURN(auto h2d, executor->CreateStream());
      EMBER_ASSIGN_OR_RETURN(auto d2h, executor->CreateStream());
      auto device = std::make_unique<Device>(id, process, platform, executor, std::move(compute),
                                             std::move(h2d), std::move(d2h));
      // Memory kind ids are small positive integers, one per kind, stable across devices.
      auto memory = std::make_unique<MemorySpace>(id, "device", 1);
      memory->AddDevice(device.get());
      device->AddMemory(memory.get());
      client->device_ptrs_.push_back(device.get());
      client->addressable_ptrs_.push_back(device.get());
      client->memory_ptrs_.push_back(memory.get());
      client->devices_.push_back(std::move(device));
      client->memories_.push_back(std::move(memory));
    }
  }
  return client;
}

void Client::SetProcessStates(std::vector<ProcessState> states) {
  absl::MutexLock lock(&process_states_mu_);
  process_states_ = std::move(states);
}

std::vector<ProcessState> Client::process_states() const {
  absl::MutexLock lock(&process_states_mu_);
  return process_states_;
}

Client::~Client() {
  for (auto& device : devices_) device->Drain();
}

std::string Client::PlatformVersion() const {
  return absl::StrCat("ember 0.1 (", std::string(platform_->Name()), ", ", devices_.size(), " device",
                      devices_.size() == 1 ? "" : "s", ")");
}

absl::StatusOr<Device*> Client::LookupDevice(int64_t id) const {
  for (Device* device : device_ptrs_) {
    if (device->id() == id) return device;
  }
  return absl::InvalidArgumentError(absl::StrCat("No matching device found for device_id ", id));
}

absl::StatusOr<Device*> Client::LookupAddressableDevice(int64_t local_hardware_id) const {
  for (Device* device : addressable_ptrs_) {
    if (device->local_hardware_id() == local_hardware_id) return device;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("No matching device found for local_hardware_id ", local_hardware_id));
}

absl::StatusOr<std::vector<int>> Client::DefaultDeviceAssignment(int num_replicas,
                                                                 int num_partitions) const {
  if (num_replicas <= 0 || num_partitions <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("num_replicas and num_partitions must be positive, got ",
                                                   num_replicas, " and ", num_partitions));
  }
  // Like XLA's placer, the default assignment numbers devices in order whether or not that many
  // exist here: compiling for more devices than this client has is allowed (AOT, portability);
  // running such a program on missing devices is what fails.
  const int64_t needed = static_cast<int64_t>(num_replicas) * num_partitions;
  std::vector<int> assignment(needed);
  for (int64_t i = 0; i < needed; ++i) {
    assignment[i] = i < static_cast<int64_t>(device_ptrs_.size()) ? device_ptrs_[i]->id()
                                                                   : static_cast<int>(i);
  }
  return assignment;
}

absl::StatusOr<std::unique_ptr<Buffer>> Client::BufferFromHostBuffer(
    const void* data, ir::ElementType type, absl::Span<const int64_t> dims,
    absl::Span<const int64_t> byte_strides, HostBufferSemantics semantics, MemorySpace* memory,
    AsyncEventRef* done_with_host_buffer) {
  if (ir::StorageBytes(type) == 0) {
    return absl::InvalidArgumentError(absl::StrCat("cannot create a buffer of element type ",
                                                   std::string(ir::ElementTypeName(type))));
  }
  EMBER_ASSIGN_OR_RETURN(uint64_t size, DenseByteSize(type, dims));
  if (data == nullptr && size != 0) {
    return absl::InvalidArgumentError("host data pointer is null for a non-empty array");
  }
  const std::vector<int64_t> dense = RowMajorByteStrides(type, dims);
  const bool strided = !byte_strides.empty() &&
                       !std::equal(dense.begin(), dense.end(), byte_strides.begin(), byte_strides.end());
  if (strided) {
    EMBER_RETURN_IF_ERROR(ValidateByteStrides(type, dims, byte_strides, StrideSigns::kAny));
  }
  Device* device = memory->devices().front();
  EMBER_ASSIGN_OR_RETURN(auto allocation, DeviceAllocation::Allocate(device->executor(), size));
  AsyncEventRef ready = AsyncEvent::Create();
  auto buffer = std::make_unique<Buffer>(shared_from_this(), device, memory, type,
                                         std::vector<int64_t>(dims.begin(), dims.end()), allocation,
                                         ready);
  if (size == 0) {
    ready->Set(absl::OkStatus());
    *done_with_host_buffer = ready;
    return buffer;
  }
  // Small arrays are copied before the call returns, whatever the semantics: callers do change
  // "immutable" memory right after handing it over (scipy's LAPACK wrappers shift pivot arrays in
  // place while they run, next to an Ember computation that was given the same array), and a
  // copy this small costs less than a trip through the stream. XLA's CPU client draws the same
  // line (100 KiB).
  constexpr uint64_t kSmallTransferBytes = 100 * 1024;
  if (!strided && size <= kSmallTransferBytes) {
    EMBER_RETURN_IF_ERROR(
        device->executor()->SynchronousMemcpyH2D(allocation->memory(), data, size));
    ready->Set(absl::OkStatus());
    *done_with_host_buffer = ready;
    return buffer;
  }
  // The caller's memory is read on the transfer stream unless it may change as soon as we
  // return, or needs a relayout: then we stage a dense copy now and the caller is free at once.
  std::shared_ptr<std::vector<uint8_t>> staging;
  const void* src = data;
  if (strided || semantics == HostBufferSemantics::kImmutableOnlyDuringCall) {
    staging = std::make_shared<std::vector<uint8_t>>(size);
    if (strided) {
      EMBER_RETURN_IF_ERROR(
          ir::CopyStrided(data, byte_strides, staging->data(), dense, dims, ir::StorageBytes(type)));
    } else {
      std::memcpy(staging->data(), data, size);
    }
    src = staging->data();
  }
  se::Stream* stream = device->h2d_stream();
  absl::Status enqueued = stream->MemcpyH2D(allocation->memory(), src, size);
  absl::StatusOr<std::shared_ptr<se::Event>> copied =
      enqueued.ok() ? stream->RecordEvent() : absl::StatusOr<std::shared_ptr<se::Event>>(enqueued);
  if (!copied.ok()) return copied.status();
  // The copy keeps the device memory (and the staging copy) until it is done, and lets go of
  // them before `ready` fires: whoever waits on it and then deletes the buffer sees the memory
  // free at once.
  (*copied)->AndThen([ready, staging, allocation](absl::Status status) mutable {
    allocation.reset();
    staging.reset();
    ready->Set(std::move(status));
  });
  *done_with_host_buffer = staging != nullptr ? AsyncEvent::CreateReady() : ready;
  return buffer;
}

}  // namespace ember::runtime
