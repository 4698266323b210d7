#include "stream_executor/copy_checks.h"

#include "absl/strings/str_cat.h"

namespace ember::se {

absl::Status CheckDeviceRange(absl::string_view op, absl::string_view role, DeviceMemory mem,
                              uint64_t size) {
  if (size == 0) return absl::OkStatus();
  if (mem.is_null()) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", role, " is null device memory (", size, " bytes requested)"));
  }
  if (size > mem.size) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", size, " bytes do not fit in the ",
                                                   role, " region of ", mem.size, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status CheckHostPointer(absl::string_view op, absl::string_view role, const void* ptr,
                              uint64_t size) {
  if (size != 0 && ptr == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": ", role, " host pointer is null (", size, " bytes requested)"));
  }
  return absl::OkStatus();
}

}  // namespace ember::se
