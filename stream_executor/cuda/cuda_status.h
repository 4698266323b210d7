// The one place a CUresult becomes an absl::Status: the message names the failing call and
// carries cuGetErrorName / cuGetErrorString text. The success path is inline and free.
#ifndef EMBER_STREAM_EXECUTOR_CUDA_CUDA_STATUS_H_
#define EMBER_STREAM_EXECUTOR_CUDA_CUDA_STATUS_H_

#include <cuda.h>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "stream_executor/cuda/cuda_driver.h"

namespace ember::se::cuda {

// Out of line: "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)". Codes:
// out of memory -> ResourceExhausted, invalid value/handle -> InvalidArgument, no device / driver
// problems -> FailedPrecondition, everything else -> Internal.
absl::Status CudaErrorToStatus(const CudaDriver& driver, CUresult result, absl::string_view call);

inline absl::Status CudaStatus(const CudaDriver& driver, CUresult result, absl::string_view call) {
  if (ABSL_PREDICT_TRUE(result == CUDA_SUCCESS)) return absl::OkStatus();
  return CudaErrorToStatus(driver, result, call);
}

}  // namespace ember::se::cuda

// EMBER_CU(driver, cuMemAlloc, &ptr, size): calls driver.cuMemAlloc(&ptr, size) and returns its
// absl::Status, naming "cuMemAlloc" (the API name, not the _v2 symbol) on failure.
#define EMBER_CU(driver, fn, ...) \
  ::ember::se::cuda::CudaStatus((driver), (driver).fn(__VA_ARGS__), #fn)

#endif  // EMBER_STREAM_EXECUTOR_CUDA_CUDA_STATUS_H_
