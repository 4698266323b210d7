// PJRT_Error: an absl::Status behind the C ABI. Errors start with a function-table pointer, as
// frameworks at PJRT C API >= 0.107 expect, and the four PJRT_Error_* entries forward to it.
#ifndef EMBER_PJRT_PLUGIN_ERROR_H_
#define EMBER_PJRT_PLUGIN_ERROR_H_

#include "absl/status/status.h"
#include "pjrt_plugin/include/pjrt_c_api.h"

namespace ember::pjrt {

// Null for OK; otherwise a new error the caller owns.
PJRT_Error* MakeError(absl::Status status);
// The status an Ember error holds (for tests and callbacks).
const absl::Status& ErrorStatus(const PJRT_Error* error);
PJRT_Error_Code ToPjrtErrorCode(absl::StatusCode code);
absl::StatusCode FromPjrtErrorCode(PJRT_Error_Code code);

void BindErrorEntries(PJRT_Api& api);

// The PJRT_CallbackError factory handed to framework callbacks (KV store).
PJRT_Error* CallbackError(PJRT_Error_Code code, const char* message, size_t message_size);
// The status of an error a framework callback returned (made by CallbackError), which it frees.
absl::Status TakeCallbackError(PJRT_Error* error);

}  // namespace ember::pjrt

#endif  // EMBER_PJRT_PLUGIN_ERROR_H_
