#include "stream_executor/cuda/cuda_context.h"

#include "base/status_macros.h"
#include "stream_executor/cuda/cuda_status.h"

namespace ember::se::cuda {

ScopedContext::~ScopedContext() {
  if (driver_ == nullptr) return;
  CUcontext popped = nullptr;
  // Cannot fail for a context this object pushed; nothing useful to do if it does.
  driver_->cuCtxPopCurrent(&popped);
}

absl::StatusOr<std::unique_ptr<PrimaryContext>> PrimaryContext::Retain(const CudaDriver& driver,
                                                                       CUdevice device) {
  CUcontext context = nullptr;
  EMBER_RETURN_IF_ERROR(EMBER_CU(driver, cuDevicePrimaryCtxRetain, &context, device));
  return std::make_unique<PrimaryContext>(PrivateTag{}, driver, device, context);
}

PrimaryContext::~PrimaryContext() { driver_.cuDevicePrimaryCtxRelease(device_); }

absl::StatusOr<ScopedContext> PrimaryContext::Activate() const {
  EMBER_RETURN_IF_ERROR(EMBER_CU(driver_, cuCtxPushCurrent, context_));
  return ScopedContext(&driver_);
}

}  // namespace ember::se::cuda
