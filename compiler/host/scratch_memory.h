// Host memory a nested program needs for one run (a loop's next values, a branch's temporaries):
// 64-byte aligned blocks charged to the launch's memory account and freed together when the
// owner goes out of scope. Running out is a RESOURCE_EXHAUSTED status, never an abort.
#ifndef EMBER_COMPILER_HOST_SCRATCH_MEMORY_H_
#define EMBER_COMPILER_HOST_SCRATCH_MEMORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "base/memory_account.h"

namespace ember::host {

class ScratchMemory {
 public:
  ScratchMemory() = default;
  ScratchMemory(const ScratchMemory&) = delete;
  ScratchMemory& operator=(const ScratchMemory&) = delete;
  ~ScratchMemory();

  // `bytes` (at least one, so every buffer has an address); `what` names the user in errors.
  absl::StatusOr<void*> Allocate(uint64_t bytes, const std::string& what);

 private:
  struct Block {
    void* data;
    uint64_t bytes;
    MemoryAccount* account;
  };
  std::vector<Block> blocks_;
};

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_SCRATCH_MEMORY_H_
