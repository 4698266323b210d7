#include "collectives/gloo/gloo_store_adapter.h"

#include <algorithm>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace ember::collectives {
namespace {

// How long one Get may block before the adapter looks at the cancellation again.
constexpr absl::Duration kPollSlice = absl::Milliseconds(50);

}  // namespace

int GlooStoreError::rank() const {
  std::string_view digits = key_;
  if (digits.substr(0, 5) == "rank_") digits.remove_prefix(5);
  int rank = -1;
  if (!absl::SimpleAtoi(absl::string_view(digits.data(), digits.size()), &rank)) return -1;
  return rank;
}

GlooStoreAdapter::GlooStoreAdapter(std::shared_ptr<KeyValueStore> store, std::string prefix,
                                   absl::Time deadline, std::function<absl::Status()> cancelled)
    : store_(std::move(store)),
      prefix_(std::move(prefix)),
      deadline_(deadline),
      cancelled_(std::move(cancelled)) {}

void GlooStoreAdapter::set(const std::string& key, const std::vector<char>& data) {
  std::string value = absl::Base64Escape(absl::string_view(data.data(), data.size()));
  absl::Status status = store_->Set(prefix_ + key, value);
  if (!status.ok()) throw GlooStoreError(std::move(status), key);
}

std::vector<char> GlooStoreAdapter::get(const std::string& key) {
  std::string value = Fetch(key, deadline_);
  std::string bytes;
  if (!absl::Base64Unescape(value, &bytes)) {
    throw GlooStoreError(absl::DataLossError(absl::StrCat("key-value store: the value of '",
                                                          prefix_, key, "' is not base64")),
                         key);
  }
  return std::vector<char>(bytes.begin(), bytes.end());
}

void GlooStoreAdapter::wait(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) Fetch(key, deadline_);
}

void GlooStoreAdapter::wait(const std::vector<std::string>& keys,
                            const std::chrono::milliseconds& timeout) {
  const absl::Time deadline = std::min(deadline_, absl::Now() + absl::FromChrono(timeout));
  for (const std::string& key : keys) Fetch(key, deadline);
}

std::string GlooStoreAdapter::Fetch(const std::string& key, absl::Time deadline) {
  const std::string full = prefix_ + key;
  for (;;) {
    absl::Status cancelled = cancelled_();
    if (!cancelled.ok()) throw GlooStoreError(std::move(cancelled), key);
    const absl::Duration left = deadline - absl::Now();
    absl::StatusOr<std::string> value =
        store_->Get(full, std::max(absl::ZeroDuration(), std::min(left, kPollSlice)));
    if (value.ok()) return *std::move(value);
    // Only a deadline of our own ends the wait; a slice running out is the store's
    // DeadlineExceeded too, and other errors (the store failed) end it at once.
    if (!absl::IsDeadlineExceeded(value.status())) throw GlooStoreError(value.status(), key);
    if (left <= kPollSlice) {
      throw GlooStoreError(
          absl::DeadlineExceededError(absl::StrCat("no value for key '", full, "' in the store")),
          key);
    }
  }
}

}  // namespace ember::collectives
