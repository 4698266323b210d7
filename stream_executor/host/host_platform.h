// The host platform: N devices whose memory is host memory and whose streams are worker threads.
// It runs everywhere and is the fallback when no CUDA driver is usable.
#ifndef EMBER_STREAM_EXECUTOR_HOST_HOST_PLATFORM_H_
#define EMBER_STREAM_EXECUTOR_HOST_HOST_PLATFORM_H_

#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "stream_executor/platform.h"

namespace ember::se {

inline constexpr int kMaxHostDevices = 4096;

// `device_count` in [1, kMaxHostDevices]. `memory_limit_bytes` (> 0) applies to each device;
// without it each device may use up to the machine's physical memory.
absl::StatusOr<std::unique_ptr<Platform>> CreateHostPlatform(
    int device_count, std::optional<int64_t> memory_limit_bytes);

}  // namespace ember::se

#endif  // EMBER_STREAM_EXECUTOR_HOST_HOST_PLATFORM_H_
