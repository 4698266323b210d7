// The persistent kernel cache: object code of compiled host kernel modules in files of one
// directory, named by a key the caller derives from the module's IR, the host CPU and the LLVM
// version. Off unless a directory is set (CompilerOptions::kernel_cache_dir). Entries are
// written atomically (a temporary file, then a rename) and checked when read: a missing,
// truncated or corrupt entry reads as a miss and is rewritten by the next compile.
#ifndef EMBER_COMPILER_CODEGEN_KERNEL_DISK_CACHE_H_
#define EMBER_COMPILER_CODEGEN_KERNEL_DISK_CACHE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace ember::codegen {

// The process-wide cache directory ("" turns the cache off). Set from the compiler options at
// each compile; the backends' Compile does not receive the options.

// What the cache did since the process started (tests observe hits and skipped compiles).
struct KernelCacheCounters {
  int64_t hits = 0;
  int64_t misses = 0;    // no entry
  int64_t corrupt = 0;   // an entry that failed its checks (counted as a miss too)
  int64_t writes = 0;
  int64_t compiles = 0;  // modules optimized and compiled to object code (cache or not)
};
KernelCacheCounters GetKernelCacheCounters();
void CountKernelCompile();

// The entry for `key` (a file name: letters, digits, '-' and '_') in `dir`, if present and
// intact.
std::optional<std::string> ReadCachedKernels(std::string_view dir, std::string_view key);
// Stores `object` under `key`, creating `dir` if needed.
absl::Status WriteCachedKernels(std::string_view dir, std::string_view key,
                                std::string_view object);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_KERNEL_DISK_CACHE_H_
