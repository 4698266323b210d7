// Argument checks shared by every platform's copy and memset entry points, so that a bad size or
// a null region is an InvalidArgument error with the same wording everywhere, never a crash.
#ifndef EMBER_STREAM_EXECUTOR_COPY_CHECKS_H_
#define EMBER_STREAM_EXECUTOR_COPY_CHECKS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "stream_executor/device_memory.h"

namespace ember::se {

// `size` bytes must fit in `mem` (named `role`, e.g. "destination", in messages of `op`).
absl::Status CheckDeviceRange(absl::string_view op, absl::string_view role, DeviceMemory mem,
                              uint64_t size);
// A host pointer must be non-null unless `size` is 0.
absl::Status CheckHostPointer(absl::string_view op, absl::string_view role, const void* ptr,
                              uint64_t size);

}  // namespace ember::se

#endif  // EMBER_STREAM_EXECUTOR_COPY_CHECKS_H_
