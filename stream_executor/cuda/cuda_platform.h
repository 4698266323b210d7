// The CUDA platform: one executor per GPU, on the Driver API loaded with dlopen at run time, so
// that Ember loads and runs (on host devices) where no driver is installed. Vendor-free header.
#ifndef EMBER_STREAM_EXECUTOR_CUDA_CUDA_PLATFORM_H_
#define EMBER_STREAM_EXECUTOR_CUDA_CUDA_PLATFORM_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "stream_executor/platform.h"

namespace ember::se {

struct CudaPlatformOptions {
  std::string driver_library = "libcuda.so.1";
  // Where CUDA libraries are opened from first (see cuda_library.h); empty: the loader's search.
  std::string library_directory;
  std::optional<int64_t> memory_limit_bytes;    // per device (> 0); default: the device's memory
};

// FailedPrecondition containing "no CUDA driver found" when the driver library cannot be opened,
// FailedPrecondition when it lacks a needed symbol or has no usable GPU, Unimplemented "Ember was
// built without CUDA support" in a build without the CUDA toolkit.
absl::StatusOr<std::unique_ptr<Platform>> CreateCudaPlatform();
absl::StatusOr<std::unique_ptr<Platform>> CreateCudaPlatform(const CudaPlatformOptions& options);

}  // namespace ember::se

#endif  // EMBER_STREAM_EXECUTOR_CUDA_CUDA_PLATFORM_H_
