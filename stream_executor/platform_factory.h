// Creates a Platform by explicit call (no static registration): "host", "cuda", or "auto" (CUDA
// when a driver and a GPU are usable, otherwise host devices, with the reason recorded).
#ifndef EMBER_STREAM_EXECUTOR_PLATFORM_FACTORY_H_
#define EMBER_STREAM_EXECUTOR_PLATFORM_FACTORY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "stream_executor/platform.h"

namespace ember::se {

struct PlatformOptions {
  std::string kind = "auto";                  // "host" | "cuda" | "auto"
  int host_device_count = 1;                  // host platform only
  std::optional<int64_t> memory_limit_bytes;  // per device; default: physical / device memory
  // CUDA only: open libcuda (and later cuBLASLt, NCCL) from this directory first, e.g. the virtual
  // GPU's build/virtual_gpu/lib (pjrt_plugin fills it from EMBER_CUDA_LIBRARY_PATH).
  std::string cuda_library_path;
};

// InvalidArgument for an unknown kind or bad counts. For "auto", a CUDA failure is not an error:
// the host platform is returned and the CUDA error message becomes the fallback reason.
absl::StatusOr<std::unique_ptr<Platform>> CreatePlatform(const PlatformOptions& opts);

// As above; `fallback_reason` (if non-null) is set to why "auto" did not give CUDA, or cleared.
absl::StatusOr<std::unique_ptr<Platform>> CreatePlatform(const PlatformOptions& opts,
                                                         std::string* fallback_reason);

// Why the last CreatePlatform call on this thread fell back from CUDA to host devices, e.g.
// "no CUDA driver found (libcuda.so.1: cannot open shared object file: ...)"; empty when that
// call did not fall back. Thread-local, so concurrent clients do not see each other's reasons.
std::string LastAutoFallbackReason();

}  // namespace ember::se

#endif  // EMBER_STREAM_EXECUTOR_PLATFORM_FACTORY_H_
