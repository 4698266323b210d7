// Options: everything a user can set about Ember, in one typed struct. pjrt_plugin/ reads it once
// from the client create options, the EMBER_* environment variables and EMBER_FLAGS (and, per
// program, the compile options' overrides) and passes it down; no folder below pjrt_plugin/ reads
// the environment.
#ifndef EMBER_BASE_OPTIONS_H_
#define EMBER_BASE_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"

namespace ember {

// Which devices a client opens and how they behave.
struct DeviceOptions {
  std::string platform = "auto";  // "host", "cuda" or "auto" (CUDA when usable, else host)
  int host_device_count = 1;
  std::optional<int64_t> memory_limit_bytes;  // per device; default: the device's memory
  int process_index = 0;                      // node_id of a multi-process run
  int process_count = 1;                      // num_nodes
  // How long a device waits at a collective for its peers before the launch fails.
  absl::Duration collective_timeout = absl::Minutes(5);  // as XLA
  // A directory the CUDA platform opens libcuda, cuBLASLt and NCCL from before the system's
  // (empty: the system's only); build/virtual_gpu/lib holds the virtual GPU's.
  std::string cuda_library_path;
};

// How programs are compiled.
struct CompilerOptions {
  // Write each program as received, imported and after each pass, and the backend's reports,
  // to this directory (empty: no dumps).
  std::string dump_to;
  // The host backend's mode: "compiled" (fused kernels, the default) or "evaluator" (the
  // reference evaluator runs the unoptimized program).
  std::string host_backend = "compiled";
  // A directory for the persistent cache of the LLVM code generator's object code, shared by
  // processes (empty: no cache). Entries are keyed by the kernels' IR, the host CPU and the LLVM
  // version; a damaged entry is recompiled and rewritten.
  std::string kernel_cache_dir;
  // Tiered compilation of the host's kernels (codegen::KernelTier::kTiered): a program's kernels
  // outside loops start on quickly compiled code while their optimized code compiles in the
  // background. Off: every such kernel is optimized before the compile returns. No effect with a
  // kernel_cache_dir (its optimized code is read back from the cache instead) or with dump_to
  // (the dumps show the code that runs).
  bool tiered_compile = true;
};

struct Options {
  DeviceOptions devices;
  CompilerOptions compiler;
};

}  // namespace ember

#endif  // EMBER_BASE_OPTIONS_H_
