// The process-wide memory of compiled host kernels: a kernel function's text (its tier and LLVM
// IR, with its name and the module's metadata numbering taken out) -> the entry point some
// executable compiled for it, for as long as some executable still holds that code. JAX compiles
// the same kernels again and again (a training step and its evaluation step share a forward
// pass; a retraced function keeps most of its kernels), and an entry found here costs nothing
// to optimize, generate or link. Thread-safe (JAX compiles from several threads). No LLVM types.
#ifndef EMBER_COMPILER_CODEGEN_COMPILED_KERNEL_CACHE_H_
#define EMBER_COMPILER_CODEGEN_COMPILED_KERNEL_CACHE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace ember::codegen {

class CompiledKernelCache {
 public:
  static CompiledKernelCache& Get();

  struct Entry {
    void* address = nullptr;
    std::shared_ptr<const void> owner;  // keeps the code alive
  };
  // The entry for `key`, when the code it points into is still held.
  std::optional<Entry> Find(const std::string& key);
  // Remembers `address` for `key` while `owner` lives (it is not kept alive by the cache).
  void Insert(const std::string& key, void* address, const std::shared_ptr<const void>& owner);
  // Entries whose code is still held (a sweep of the others first).
  int64_t live_entries();

 private:
  struct Stored {
    void* address = nullptr;
    std::weak_ptr<const void> owner;
  };
  void SweepLocked();

  std::mutex mutex_;
  std::unordered_map<std::string, Stored> entries_;
  int64_t inserts_since_sweep_ = 0;
};

// The cache's key of a function printed by LLVM: metadata references (!N, numbered per module)
// lose their numbers, so identical kernels of different modules have one key. The kernel emitters
// attach only access groups and parallel-loop markers, whose contents follow from the IR.
std::string KernelCacheKey(std::string function_text);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_COMPILED_KERNEL_CACHE_H_
