// CreateCudaPlatform for builds without the CUDA toolkit (EMBER_HAVE_CUDA OFF).
#include "stream_executor/cuda/cuda_platform.h"

namespace ember::se {

absl::StatusOr<std::unique_ptr<Platform>> CreateCudaPlatform() {
  return CreateCudaPlatform(CudaPlatformOptions());
}

absl::StatusOr<std::unique_ptr<Platform>> CreateCudaPlatform(const CudaPlatformOptions&) {
  return absl::UnimplementedError("Ember was built without CUDA support");
}

}  // namespace ember::se
