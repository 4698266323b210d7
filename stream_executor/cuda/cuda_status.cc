#include "stream_executor/cuda/cuda_status.h"

#include "absl/strings/str_cat.h"

namespace ember::se::cuda {
namespace {

absl::StatusCode CodeFor(CUresult result) {
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return absl::StatusCode::kResourceExhausted;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_INVALID_DEVICE:
      return absl::StatusCode::kInvalidArgument;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case CUDA_ERROR_NOT_PERMITTED:
    case CUDA_ERROR_NOT_SUPPORTED:
      return absl::StatusCode::kFailedPrecondition;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::Status CudaErrorToStatus(const CudaDriver& driver, CUresult result, absl::string_view call) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (driver.cuGetErrorName == nullptr || driver.cuGetErrorName(result, &name) != CUDA_SUCCESS ||
      name == nullptr) {
    name = "unknown CUresult";
  }
  if (driver.cuGetErrorString == nullptr ||
      driver.cuGetErrorString(result, &text) != CUDA_SUCCESS || text == nullptr) {
    text = "no description";
  }
  return absl::Status(CodeFor(result), absl::StrCat(call, " failed: ", name, " (", text,
                                                    ", CUresult ", static_cast<int>(result), ")"));
}

}  // namespace ember::se::cuda
