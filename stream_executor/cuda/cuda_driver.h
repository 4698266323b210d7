// CudaDriver: the CUDA Driver API opened with dlopen at run time. Ember never links libcuda, so
// it loads on machines without a driver; every function it calls is resolved here, by the ABI
// name cuda.h maps it to (cuMemAlloc -> cuMemAlloc_v2), and reached as `driver.cuMemAlloc(...)`.
#ifndef EMBER_STREAM_EXECUTOR_CUDA_CUDA_DRIVER_H_
#define EMBER_STREAM_EXECUTOR_CUDA_CUDA_DRIVER_H_

#include <cuda.h>

#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "stream_executor/cuda/cuda_library.h"

namespace ember::se::cuda {

// Every Driver API function Ember calls. Adding one here is all it takes to use it.
#define EMBER_CUDA_DRIVER_FUNCTIONS(X) \
  X(cuGetErrorName)                    \
  X(cuGetErrorString)                  \
  X(cuInit)                            \
  X(cuDeviceGetCount)                  \
  X(cuDeviceGet)                       \
  X(cuDeviceGetName)                   \
  X(cuDeviceTotalMem)                  \
  X(cuDevicePrimaryCtxRetain)          \
  X(cuDevicePrimaryCtxRelease)         \
  X(cuCtxPushCurrent)                  \
  X(cuCtxPopCurrent)                   \
  X(cuStreamCreate)                    \
  X(cuStreamDestroy)                   \
  X(cuStreamSynchronize)               \
  X(cuStreamWaitEvent)                 \
  X(cuEventCreate)                     \
  X(cuEventDestroy)                    \
  X(cuEventRecord)                     \
  X(cuEventSynchronize)                \
  X(cuLaunchHostFunc)                  \
  X(cuMemAlloc)                        \
  X(cuMemFree)                         \
  X(cuMemcpyHtoD)                      \
  X(cuMemcpyDtoH)                      \
  X(cuMemcpyHtoDAsync)                 \
  X(cuMemcpyDtoHAsync)                 \
  X(cuMemcpyAsync)                     \
  X(cuMemsetD8Async)

class CudaDriver {
  struct PrivateTag {
    explicit PrivateTag() = default;
  };

 public:
  // Opens `library` (from `library_directory` first, see cuda_library.h). FailedPrecondition
  // "no CUDA driver found (<dlerror>)" when it cannot be opened; FailedPrecondition naming the
  // symbol when a function is missing (a driver older than the toolkit Ember was built with).
  static absl::StatusOr<std::unique_ptr<CudaDriver>> Load(const std::string& library,
                                                          const std::string& library_directory = "");

  // Public for std::make_unique only; use Load.
  CudaDriver(PrivateTag, DlHandle handle, std::string library, std::string library_directory)
      : handle_(std::move(handle)),
        library_(std::move(library)),
        library_directory_(std::move(library_directory)) {}
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  // The path that was opened.
  const std::string& library() const { return library_; }
  // Where the other CUDA libraries (cuBLASLt, NCCL) are to be opened from first.
  const std::string& library_directory() const { return library_directory_; }

  // Function pointers, non-null after Load. Names expand like cuda.h's (cuMemAlloc_v2, ...).
#define EMBER_CUDA_DECLARE_FUNCTION(fn) decltype(&::fn) fn = nullptr;
  EMBER_CUDA_DRIVER_FUNCTIONS(EMBER_CUDA_DECLARE_FUNCTION)
#undef EMBER_CUDA_DECLARE_FUNCTION

 private:
  DlHandle handle_;
  std::string library_;
  std::string library_directory_;
};

}  // namespace ember::se::cuda

#endif  // EMBER_STREAM_EXECUTOR_CUDA_CUDA_DRIVER_H_
