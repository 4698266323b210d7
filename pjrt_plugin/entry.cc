#include "pjrt_plugin/entry.h"

#include "absl/strings/match.h"

namespace ember::pjrt {

absl::Status CheckArgsHeader(const void* args, size_t struct_size, const char* function,
                             size_t min_size) {
  if (args == nullptr) return absl::InvalidArgumentError("args is null");
  if (struct_size < min_size) {
    return absl::InvalidArgumentError(absl::StrCat(
        function, "_Args.struct_size is ", struct_size, ", smaller than the ", min_size,
        " bytes of the oldest layout Ember accepts; the caller was built against an "
        "incompatible PJRT C API header"));
  }
  return absl::OkStatus();
}

absl::Status CheckNestedStructSize(const char* what, size_t struct_size, size_t min_size) {
  constexpr size_t kMaxPlausible = 64 * 1024;
  if (struct_size < min_size || struct_size > kMaxPlausible) {
    return absl::InvalidArgumentError(absl::StrCat(
        "`", what, "->struct_size` is ", struct_size, "; Ember reads ", min_size,
        " bytes of it (the caller was built against an incompatible PJRT C API header, or the "
        "struct is not initialized)"));
  }
  return absl::OkStatus();
}

namespace {
constexpr char kVerbatimPayload[] = "ember.verbatim";
}  // namespace

absl::Status Verbatim(absl::Status status) {
  status.SetPayload(kVerbatimPayload, absl::Cord());
  return status;
}

absl::Status AnnotateWithFunction(absl::Status status, const char* function) {
  if (status.GetPayload(kVerbatimPayload).has_value()) {
    status.ErasePayload(kVerbatimPayload);
    return status;
  }
  if (absl::StartsWith(status.message(), function)) return status;
  absl::Status annotated(status.code(), absl::StrCat(function, ": ", status.message()));
  status.ForEachPayload([&](absl::string_view key, const absl::Cord& value) {
    annotated.SetPayload(key, value);
  });
  return annotated;
}

}  // namespace ember::pjrt
