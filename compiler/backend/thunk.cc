#include "compiler/backend/thunk.h"

#include "base/status_macros.h"

namespace ember::backend {

se::DeviceMemory BufferAllocations::Slice(const BufferSlice& slice) const {
  if (slice.allocation < 0 || static_cast<size_t>(slice.allocation) >= allocations_.size()) {
    return se::DeviceMemory{};
  }
  const se::DeviceMemory base = allocations_[slice.allocation];
  if (base.opaque == nullptr) return se::DeviceMemory{nullptr, static_cast<uint64_t>(slice.size)};
  return se::DeviceMemory{static_cast<uint8_t*>(base.opaque) + slice.offset,
                          static_cast<uint64_t>(slice.size)};
}

void LaunchStatus::Fail(const absl::Status& status) {
  if (status.ok()) return;
  absl::MutexLock lock(&mu_);
  if (status_.ok()) status_ = status;
}

absl::Status LaunchStatus::status() const {
  absl::MutexLock lock(&mu_);
  return status_;
}

const char* ThunkKindName(Thunk::Kind kind) {
  switch (kind) {
    case Thunk::Kind::kKernel: return "kernel";
    case Thunk::Kind::kLibraryCall: return "library-call";
    case Thunk::Kind::kCopy: return "copy";
    case Thunk::Kind::kMemset: return "memset";
    case Thunk::Kind::kCollective: return "collective";
    case Thunk::Kind::kWhile: return "while";
    case Thunk::Kind::kConditional: return "conditional";
    case Thunk::Kind::kHostCallback: return "host-callback";
    case Thunk::Kind::kEvaluator: return "evaluator";
    case Thunk::Kind::kSequence: return "sequence";
  }
  return "thunk";
}

absl::Status ThunkSequence::ExecuteOnStream(const ExecuteParams& params) const {
  for (const auto& thunk : thunks_) EMBER_RETURN_IF_ERROR(thunk->ExecuteOnStream(params));
  return absl::OkStatus();
}

}  // namespace ember::backend
