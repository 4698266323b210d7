#include "stream_executor/platform_factory.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "stream_executor/cuda/cuda_platform.h"
#include "stream_executor/host/host_platform.h"

namespace ember::se {
namespace {

thread_local std::string last_fallback_reason;

}  // namespace

absl::StatusOr<std::unique_ptr<Platform>> CreatePlatform(const PlatformOptions& opts,
                                                         std::string* fallback_reason) {
  if (fallback_reason != nullptr) fallback_reason->clear();
  if (opts.kind != "host" && opts.kind != "cuda" && opts.kind != "auto") {
    return absl::InvalidArgumentError(absl::StrCat("unknown platform kind \"", opts.kind,
                                                   "\"; expected \"host\", \"cuda\" or \"auto\""));
  }
  // Checked here so that "auto" cannot mistake bad options for a missing GPU.
  if (opts.memory_limit_bytes.has_value() && *opts.memory_limit_bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("memory limit must be positive, got ", *opts.memory_limit_bytes, " bytes"));
  }
  if (opts.kind == "host") {
    return CreateHostPlatform(opts.host_device_count, opts.memory_limit_bytes);
  }
  CudaPlatformOptions cuda_options;
  cuda_options.memory_limit_bytes = opts.memory_limit_bytes;
  cuda_options.library_directory = opts.cuda_library_path;
  absl::StatusOr<std::unique_ptr<Platform>> cuda = CreateCudaPlatform(cuda_options);
  if (cuda.ok() || opts.kind == "cuda") return cuda;
  if (fallback_reason != nullptr) *fallback_reason = std::string(cuda.status().message());
  return CreateHostPlatform(opts.host_device_count, opts.memory_limit_bytes);
}

absl::StatusOr<std::unique_ptr<Platform>> CreatePlatform(const PlatformOptions& opts) {
  return CreatePlatform(opts, &last_fallback_reason);
}

std::string LastAutoFallbackReason() { return last_fallback_reason; }

}  // namespace ember::se
