// Reports an absl::Status through TensorFlow's TF_Status. The plugin never links TensorFlow, so
// TF_SetStatus is looked up at run time: in the process's global scope first (a test binary may
// provide it), then in the already loaded libtensorflow_framework.so.2 (TF loads its libraries
// with local binding, so the global scope alone does not find it there).
#ifndef EMBER_PJRT_PLUGIN_TF_STATUS_H_
#define EMBER_PJRT_PLUGIN_TF_STATUS_H_

#include "absl/status/status.h"
#include "pjrt_plugin/include/tf_plugin_c_api.h"

namespace ember::pjrt {

// Sets `tf_status` to `status` (TF's codes are absl's). When `tf_status` is null or TF_SetStatus
// cannot be found, a failed status is written to stderr instead, so it is never lost silently.
void SetTfStatus(TF_Status* tf_status, const absl::Status& status);

}  // namespace ember::pjrt

#endif  // EMBER_PJRT_PLUGIN_TF_STATUS_H_
