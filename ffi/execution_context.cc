#include "ffi/execution_context.h"

#include "absl/strings/str_cat.h"

namespace ember::ffi {

ExecutionContext::~ExecutionContext() {
  for (auto& [id, entry] : entries_) {
    if (entry.deleter != nullptr) entry.deleter(entry.data);
  }
}

absl::Status ExecutionContext::Insert(int64_t type_id, void* data, void (*deleter)(void*)) {
  absl::MutexLock lock(&mu_);
  if (!entries_.emplace(type_id, Entry{data, deleter}).second) {
    return absl::AlreadyExistsError(
        absl::StrCat("the execute context already holds user data of type id ", type_id));
  }
  return absl::OkStatus();
}

absl::StatusOr<void*> ExecutionContext::Lookup(int64_t type_id) const {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(type_id);
  if (it == entries_.end()) {
    return absl::NotFoundError(
        absl::StrCat("the execute context holds no user data of type id ", type_id));
  }
  return it->second.data;
}

}  // namespace ember::ffi
