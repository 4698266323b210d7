// RAII for CUDA contexts: PrimaryContext retains a device's primary context for its lifetime;
// ScopedContext makes a context current on the calling thread and restores the previous one.
// Every driver call Ember makes runs under a ScopedContext.
#ifndef EMBER_STREAM_EXECUTOR_CUDA_CUDA_CONTEXT_H_
#define EMBER_STREAM_EXECUTOR_CUDA_CUDA_CONTEXT_H_

#include <cuda.h>

#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "stream_executor/cuda/cuda_driver.h"

namespace ember::se::cuda {

class ScopedContext {
 public:
  ScopedContext(ScopedContext&& other) noexcept : driver_(std::exchange(other.driver_, nullptr)) {}
  ScopedContext& operator=(ScopedContext&&) = delete;
  ScopedContext(const ScopedContext&) = delete;
  ~ScopedContext();

 private:
  friend class PrimaryContext;
  explicit ScopedContext(const CudaDriver* driver) : driver_(driver) {}

  const CudaDriver* driver_;  // null once moved from
};

class PrimaryContext {
  struct PrivateTag {
    explicit PrivateTag() = default;
  };

 public:
  static absl::StatusOr<std::unique_ptr<PrimaryContext>> Retain(const CudaDriver& driver,
                                                                CUdevice device);
  // Public for std::make_unique only; use Retain.
  PrimaryContext(PrivateTag, const CudaDriver& driver, CUdevice device, CUcontext context)
      : driver_(driver), device_(device), context_(context) {}
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;
  ~PrimaryContext();

  absl::StatusOr<ScopedContext> Activate() const;
  CUcontext get() const { return context_; }

 private:
  const CudaDriver& driver_;
  const CUdevice device_;
  const CUcontext context_;
};

}  // namespace ember::se::cuda

#endif  // EMBER_STREAM_EXECUTOR_CUDA_CUDA_CONTEXT_H_
