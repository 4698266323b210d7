// PJRT_Client_Create options and environment variables -> runtime::ClientOptions.
#ifndef EMBER_PJRT_PLUGIN_CREATE_OPTIONS_H_
#define EMBER_PJRT_PLUGIN_CREATE_OPTIONS_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "pjrt_plugin/named_values.h"
#include "runtime/client.h"

namespace ember::pjrt {

// Options (names and accepted types):
//   platform           string  "host" | "cuda" | "auto"         (env EMBER_PLATFORM; default auto)
//   host_device_count  int64   number of host devices, 1..1024  (env EMBER_HOST_DEVICE_COUNT; 1)
//   memory_limit_bytes int64   per-device allocation limit      (env EMBER_MEMORY_LIMIT_BYTES)
//   cuda_library_path  string  open libcuda, cuBLASLt and NCCL from this directory first
//                              (env EMBER_CUDA_LIBRARY_PATH; build/virtual_gpu/lib: virtual GPUs)
//   node_id, num_nodes int64   sent by JAX in multi-process runs (only 1 node is supported yet)
// Integers may also come as decimal strings (JAX_PJRT_CLIENT_CREATE_OPTIONS sends strings).
// Options override environment variables; an unknown name or a bad value is an error naming it.
absl::StatusOr<runtime::ClientOptions> ParseClientOptions(
    const std::map<std::string, OptionValue>& options);

}  // namespace ember::pjrt

#endif  // EMBER_PJRT_PLUGIN_CREATE_OPTIONS_H_
