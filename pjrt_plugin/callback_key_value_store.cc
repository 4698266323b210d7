#include "pjrt_plugin/callback_key_value_store.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "pjrt_plugin/error.h"

namespace ember::pjrt {
namespace {

// The framework's error, its code kept, with the key it was about.
absl::Status KeyError(const absl::Status& status, const char* what, std::string_view key) {
  return absl::Status(status.code(), absl::StrCat("key-value store ", what, " of '",
                                                  std::string(key), "': ", status.message()));
}

}  // namespace

absl::Status CallbackKeyValueStore::Set(std::string_view key, std::string_view value) {
  PJRT_CallbackError make_error = &CallbackError;
  PJRT_KeyValuePutCallback_Args args{};
  args.struct_size = PJRT_KeyValuePutCallback_Args_STRUCT_SIZE;
  args.key = key.data();
  args.key_size = key.size();
  args.value = value.data();
  args.value_size = value.size();
  args.callback_error = &make_error;
  args.user_arg = put_arg_;
  absl::Status status = TakeCallbackError(put_(&args));
  return status.ok() ? status : KeyError(status, "put", key);
}

absl::StatusOr<std::string> CallbackKeyValueStore::Get(std::string_view key,
                                                       absl::Duration timeout) {
  PJRT_CallbackError make_error = &CallbackError;
  PJRT_KeyValueGetCallback_Args args{};
  args.struct_size = PJRT_KeyValueGetCallback_Args_STRUCT_SIZE;
  args.key = key.data();
  args.key_size = key.size();
  args.timeout_in_ms = static_cast<int>(
      std::clamp<int64_t>(absl::ToInt64Milliseconds(timeout), 0, std::numeric_limits<int>::max()));
  args.callback_error = &make_error;
  args.user_arg = get_arg_;
  absl::Status status = TakeCallbackError(get_(&args));
  if (!status.ok()) return KeyError(status, "get", key);
  std::string value(args.value != nullptr ? args.value : "", args.value_size);
  if (args.value != nullptr && args.value_deleter_callback != nullptr) {
    args.value_deleter_callback(args.value);
  }
  return value;
}

}  // namespace ember::pjrt
