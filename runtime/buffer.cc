#include "runtime/buffer.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/ir/byte_strides.h"
#include "runtime/client.h"
#include "runtime/host_layout.h"

namespace ember::runtime {

DeviceAllocation::~DeviceAllocation() {
  if (executor_ != nullptr && !memory_.is_null()) executor_->Deallocate(memory_);
}

absl::StatusOr<std::shared_ptr<DeviceAllocation>> DeviceAllocation::Allocate(se::Executor* executor,
                                                                             uint64_t size) {
  EMBER_ASSIGN_OR_RETURN(se::DeviceMemory memory, executor->Allocate(size));
  return std::make_shared<DeviceAllocation>(executor, memory);
}

Buffer::Buffer(std::shared_ptr<Client> client, Device* device, MemorySpace* memory,
               ir::ElementType type, std::vector<int64_t> dims,
               std::shared_ptr<DeviceAllocation> allocation, AsyncEventRef ready)
    : client_(std::move(client)),
      device_(device),
      memory_(memory),
      type_(type),
      dims_(std::move(dims)),
      size_(allocation ? allocation->memory().size : 0),
      allocation_(std::move(allocation)),
      ready_(std::move(ready)) {}

Buffer::~Buffer() = default;

bool Buffer::IsDeleted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocation_ == nullptr;
}

void Buffer::Delete() {
  std::shared_ptr<DeviceAllocation> dropped;
  std::lock_guard<std::mutex> lock(mu_);
  dropped = std::move(allocation_);
}

AsyncEventRef Buffer::ReadyEvent() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (allocation_ == nullptr) {
    return AsyncEvent::CreateReady(
        absl::FailedPreconditionError("buffer has been deleted or donated"));
  }
  return ready_;
}

absl::StatusOr<Buffer::Hold> Buffer::Acquire(const char* user, AsyncEventRef usage) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (allocation_ == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat(user, ": buffer has been deleted or donated"));
  }
  if (usage != nullptr) {
    usage_.erase(std::remove_if(usage_.begin(), usage_.end(),
                                [](const AsyncEventRef& e) { return e->IsReady(); }),
                 usage_.end());
    usage_.push_back(std::move(usage));
  }
  return Hold{allocation_, ready_};
}

bool Buffer::HasExternalReferences() const {
  std::lock_guard<std::mutex> lock(mu_);
  return external_references_ > 0;
}

std::optional<std::vector<AsyncEventRef>> Buffer::DeleteForDonation(const AsyncEvent* own) {
  std::shared_ptr<DeviceAllocation> dropped;
  std::lock_guard<std::mutex> lock(mu_);
  dropped = std::move(allocation_);
  if (dropped == nullptr || external_references_ > 0) return std::nullopt;
  std::vector<AsyncEventRef> pending;
  for (AsyncEventRef& e : usage_) {
    if (e.get() != own && !e->IsReady()) pending.push_back(std::move(e));
  }
  usage_.clear();
  return pending;
}

absl::StatusOr<AsyncEventRef> Buffer::ToHost(void* dst, absl::Span<const int64_t> dst_byte_strides) {
  const std::vector<int64_t> dense = RowMajorByteStrides(type_, dims_);
  const bool strided = !dst_byte_strides.empty() &&
                       !std::equal(dense.begin(), dense.end(), dst_byte_strides.begin(),
                                   dst_byte_strides.end());
  if (strided) EMBER_RETURN_IF_ERROR(ValidateByteStrides(type_, dims_, dst_byte_strides));
  AsyncEventRef done = AsyncEvent::Create();
  EMBER_ASSIGN_OR_RETURN(Hold hold, Acquire("ToHostBuffer", done));
  if (size_ == 0) {
    hold.ready->AndThen([done](absl::Status status) { done->Set(std::move(status)); });
    return done;
  }
  // Copy the dense device array into `dst`, or into staging memory that is then scattered into
  // `dst` with the requested strides.
  std::shared_ptr<std::vector<uint8_t>> staging;
  if (strided) staging = std::make_shared<std::vector<uint8_t>>(size_);
  void* copy_dst = strided ? staging->data() : dst;
  se::Stream* stream = device_->d2h_stream();
  std::vector<int64_t> dims = dims_;
  std::vector<int64_t> dst_strides(dst_byte_strides.begin(), dst_byte_strides.end());
  const int64_t element_bytes = ir::StorageBytes(type_);
  const uint64_t size = size_;
  // The copy's hold on the device memory goes back before `done` fires, as a launch's do: a
  // caller that waits for the copy and then deletes the buffer sees its memory free at once.
  // Each callback therefore moves the hold on, and the last one drops it before setting `done`.
  hold.ready->AndThen([=, allocation = hold.allocation](absl::Status status) mutable {
    if (!status.ok()) {
      allocation.reset();
      done->Set(std::move(status));
      return;
    }
    absl::Status enqueued = stream->MemcpyD2H(copy_dst, allocation->memory(), size);
    absl::StatusOr<std::shared_ptr<se::Event>> copied =
        enqueued.ok() ? stream->RecordEvent() : absl::StatusOr<std::shared_ptr<se::Event>>(enqueued);
    if (!copied.ok()) {
      allocation.reset();
      done->Set(copied.status());
      return;
    }
    (*copied)->AndThen([=, allocation = std::move(allocation)](absl::Status copy_status) mutable {
      allocation.reset();
      if (copy_status.ok() && staging != nullptr) {
        copy_status = ir::CopyStrided(staging->data(), dense, dst, dst_strides, dims, element_bytes);
      }
      done->Set(std::move(copy_status));
    });
  });
  return done;
}

absl::StatusOr<std::unique_ptr<Buffer>> Buffer::CopyTo(Device* device, MemorySpace* memory) {
  if (!device->addressable()) {
    return absl::InvalidArgumentError(absl::StrCat(device->DebugString(), " belongs to process ",
                                                   device->process_index(),
                                                   ": this process cannot copy data to it"));
  }
  AsyncEventRef ready = AsyncEvent::Create();
  EMBER_ASSIGN_OR_RETURN(Hold hold, Acquire("CopyToDevice", ready));
  if (memory == nullptr) memory = device->default_memory();
  absl::StatusOr<std::shared_ptr<DeviceAllocation>> allocated =
      DeviceAllocation::Allocate(device->executor(), size_);
  if (!allocated.ok()) {
    ready->Set(allocated.status());  // recorded as a use of this buffer: it must fire
    return allocated.status();
  }
  std::shared_ptr<DeviceAllocation> allocation = *std::move(allocated);
  auto result = std::make_unique<Buffer>(client_, device, memory, type_, dims_, allocation, ready);
  if (size_ == 0) {
    hold.ready->AndThen([ready](absl::Status status) { ready->Set(std::move(status)); });
    return result;
  }
  se::Stream* stream = device->h2d_stream();
  const uint64_t size = size_;
  // As in ToHost: the copy's holds on both memories go back before `ready` fires.
  hold.ready->AndThen([=, src = hold.allocation](absl::Status status) mutable {
    if (!status.ok()) {
      src.reset();
      allocation.reset();
      ready->Set(std::move(status));
      return;
    }
    absl::Status enqueued = stream->MemcpyD2D(allocation->memory(), src->memory(), size);
    absl::StatusOr<std::shared_ptr<se::Event>> copied =
        enqueued.ok() ? stream->RecordEvent() : absl::StatusOr<std::shared_ptr<se::Event>>(enqueued);
    if (!copied.ok()) {
      src.reset();
      allocation.reset();
      ready->Set(copied.status());
      return;
    }
    (*copied)->AndThen([ready, src = std::move(src), dst = std::move(allocation)](
                           absl::Status copy_status) mutable {
      src.reset();
      dst.reset();
      ready->Set(std::move(copy_status));
    });
  });
  return result;
}

absl::Status Buffer::IncreaseExternalReference() {
  std::lock_guard<std::mutex> lock(mu_);
  if (allocation_ == nullptr) {
    return absl::FailedPreconditionError(
        "IncreaseExternalReferenceCount: buffer has been deleted or donated");
  }
  if (external_references_++ == 0) external_hold_ = allocation_;
  return absl::OkStatus();
}

absl::Status Buffer::DecreaseExternalReference() {
  std::lock_guard<std::mutex> lock(mu_);
  if (external_references_ == 0) {
    return absl::InvalidArgumentError(
        "Attempting to decrease reference on a buffer with zero reference count.");
  }
  if (--external_references_ == 0) external_hold_.reset();
  return absl::OkStatus();
}

absl::StatusOr<void*> Buffer::OpaqueDevicePointer() const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto& allocation = allocation_ ? allocation_ : external_hold_;
  if (allocation == nullptr) {
    return absl::FailedPreconditionError(
        "OpaqueDeviceMemoryDataPointer: buffer has been deleted or donated");
  }
  return allocation->memory().opaque;
}

}  // namespace ember::runtime
