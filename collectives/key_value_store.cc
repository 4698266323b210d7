#include "collectives/key_value_store.h"

#include "absl/strings/str_cat.h"

namespace ember::collectives {

absl::Status InMemoryKeyValueStore::Set(std::string_view key, std::string_view value) {
  absl::MutexLock lock(&mu_);
  // As JAX's coordination service: a key is written once.
  if (!values_.emplace(std::string(key), std::string(value)).second) {
    return absl::AlreadyExistsError(
        absl::StrCat("key-value store: key '", std::string(key), "' is already set"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> InMemoryKeyValueStore::Get(std::string_view key,
                                                       absl::Duration timeout) {
  const std::string name(key);
  absl::MutexLock lock(&mu_);
  auto present = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return values_.contains(name); };
  if (!mu_.AwaitWithTimeout(absl::Condition(&present), timeout)) {
    return absl::DeadlineExceededError(absl::StrCat("key-value store: no value for key '", name,
                                                    "' after ", absl::FormatDuration(timeout)));
  }
  return values_.at(name);
}

absl::Status PrefixedKeyValueStore::Set(std::string_view key, std::string_view value) {
  return store_->Set(absl::StrCat(prefix_, std::string(key)), value);
}

absl::StatusOr<std::string> PrefixedKeyValueStore::Get(std::string_view key,
                                                       absl::Duration timeout) {
  return store_->Get(absl::StrCat(prefix_, std::string(key)), timeout);
}

}  // namespace ember::collectives
