// Ember's implementation of the XLA FFI C API: the function table handlers get in their call
// frame (errors, type registration, execution-context user data, device memory, thread pool,
// futures, run id, device ordinal), and the per-call state those functions read.
#ifndef EMBER_FFI_FFI_API_H_
#define EMBER_FFI_FFI_API_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "ffi/execution_context.h"
#include "ffi/xla_ffi_api.h"

// What a handler's opaque context pointer refers to: the launch the call belongs to.
struct XLA_FFI_ExecutionContext {
  int32_t device_ordinal = 0;
  int64_t run_id = 0;
  const ember::ffi::ExecutionContext* user_data = nullptr;  // null: none attached
};

struct XLA_FFI_Error {
  absl::Status status;
  std::string message;  // NUL-terminated copy of the status message (Error_GetMessage)
};

// Completed by an asynchronous handler (Future_SetAvailable / Future_SetError).
struct XLA_FFI_Future {
  absl::Notification done;
  absl::Status status;
};

namespace ember::ffi {

const XLA_FFI_Api* GetXlaFfiApi();

// An XLA_FFI_Error owned by the caller (null for OK).
XLA_FFI_Error* MakeError(const absl::Status& status);
// The status of `error` (OK for null); destroys it.
absl::Status ConsumeError(XLA_FFI_Error* error);

}  // namespace ember::ffi

#endif  // EMBER_FFI_FFI_API_H_
