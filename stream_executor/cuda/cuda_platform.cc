// CreateCudaPlatform and the CUDA Platform: executors are created on first use, so that a process
// that uses one GPU does not retain a context on every GPU.
#include "stream_executor/cuda/cuda_platform.h"

#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "stream_executor/cuda/cuda_driver.h"
#include "stream_executor/cuda/cuda_executor.h"
#include "stream_executor/cuda/cuda_status.h"

namespace ember::se {
namespace {

class CudaPlatform final : public Platform {
 public:
  CudaPlatform(std::unique_ptr<cuda::CudaDriver> driver, int device_count,
               std::optional<int64_t> memory_limit_bytes)
      : driver_(std::move(driver)),
        memory_limit_bytes_(memory_limit_bytes),
        executors_(device_count) {}

  std::string_view Name() const override { return "cuda"; }
  int DeviceCount() const override { return static_cast<int>(executors_.size()); }

  absl::StatusOr<Executor*> ExecutorForDevice(int ordinal) override {
    if (ordinal < 0 || ordinal >= DeviceCount()) {
      return absl::InvalidArgumentError(absl::StrCat("cuda platform: device ordinal ", ordinal,
                                                     " out of range [0, ", DeviceCount(), ")"));
    }
    absl::MutexLock lock(&mu_);
    std::unique_ptr<cuda::CudaExecutor>& executor = executors_[ordinal];
    if (executor == nullptr) {
      EMBER_ASSIGN_OR_RETURN(executor,
                             cuda::CudaExecutor::Create(*driver_, ordinal, memory_limit_bytes_));
    }
    return executor.get();
  }

 private:
  const std::unique_ptr<cuda::CudaDriver> driver_;  // first: outlives the executors
  const std::optional<int64_t> memory_limit_bytes_;
  absl::Mutex mu_;
  // Sized once in the constructor; only the elements change, under mu_.
  std::vector<std::unique_ptr<cuda::CudaExecutor>> executors_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Platform>> CreateCudaPlatform() {
  return CreateCudaPlatform(CudaPlatformOptions());
}

absl::StatusOr<std::unique_ptr<Platform>> CreateCudaPlatform(const CudaPlatformOptions& options) {
  if (options.memory_limit_bytes.has_value() && *options.memory_limit_bytes <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cuda platform: memory limit must be positive, got ",
                     *options.memory_limit_bytes, " bytes"));
  }
  if (options.driver_library.empty()) {
    return absl::InvalidArgumentError("cuda platform: empty driver library name");
  }
  EMBER_ASSIGN_OR_RETURN(std::unique_ptr<cuda::CudaDriver> driver,
                         cuda::CudaDriver::Load(options.driver_library,
                                                options.library_directory));
  if (absl::Status status = EMBER_CU(*driver, cuInit, 0); !status.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("CUDA driver found but not usable: ", status.message()));
  }
  int count = 0;
  if (absl::Status status = EMBER_CU(*driver, cuDeviceGetCount, &count); !status.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("CUDA driver found but not usable: ", status.message()));
  }
  if (count <= 0) {
    return absl::FailedPreconditionError("CUDA driver found but it reports no GPU");
  }
  return std::make_unique<CudaPlatform>(std::move(driver), count, options.memory_limit_bytes);
}

}  // namespace ember::se
