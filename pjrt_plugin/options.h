// Reads Ember's Options (base/options.h) from what the framework and the user give: the client
// create options and EMBER_* environment variables when a client is created, EMBER_FLAGS and
// the compile options' overrides when a program is compiled. This is the only place that reads
// the environment; everything below gets the typed struct.
#ifndef EMBER_PJRT_PLUGIN_OPTIONS_H_
#define EMBER_PJRT_PLUGIN_OPTIONS_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "base/options.h"
#include "compiler/frontend/options/compile_options.h"
#include "pjrt_plugin/named_values.h"

namespace ember::pjrt {

// Client create options (names and accepted types), each with its environment variable:
//   platform                   string  "host" | "cuda" | "auto"     (EMBER_PLATFORM; auto)
//   host_device_count          int64   host devices, 1..1024        (EMBER_HOST_DEVICE_COUNT; 1)
//   memory_limit_bytes         int64   per-device allocation limit  (EMBER_MEMORY_LIMIT_BYTES)
//   collective_timeout_seconds int64 or float, > 0                  (EMBER_COLLECTIVE_TIMEOUT_SECONDS; 300)
//   node_id, num_nodes         int64   this process of a job of num_nodes processes; JAX sends them
//                                      after jax.distributed.initialize(), with its key-value store
// Integers and floats may also come as decimal strings (JAX_PJRT_CLIENT_CREATE_OPTIONS sends
// strings). Options override environment variables; an unknown name or a bad value is an error
// naming it. The compiler part is read as ReadCompilerOptions({}) would.
absl::StatusOr<Options> ReadOptions(const std::map<std::string, OptionValue>& create_options);

// The compiler options for one program: EMBER_FLAGS (space-separated `--name=value`; read at
// every compile, so a process may change it between compiles):
//   --dump_to=DIR                          CompilerOptions::dump_to
//   --host_backend=compiled|evaluator      CompilerOptions::host_backend
//   --kernel_cache_dir=DIR                 CompilerOptions::kernel_cache_dir
//                                          (default: EMBER_KERNEL_CACHE_DIR; empty: off)
//   --tiered_compile=on|off                CompilerOptions::tiered_compile (default on)
// then the compile options' env_option_overrides: `xla_dump_to` wins over --dump_to.
absl::StatusOr<CompilerOptions> ReadCompilerOptions(const frontend::CompileOptions& compile_options);

}  // namespace ember::pjrt

#endif  // EMBER_PJRT_PLUGIN_OPTIONS_H_
