#include "compiler/host/scratch_memory.h"

#include <new>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace ember::host {

ScratchMemory::~ScratchMemory() {
  for (const Block& block : blocks_) {
    ::operator delete(block.data, std::align_val_t{64});
    if (block.account != nullptr) block.account->Release(block.bytes);
  }
}

absl::StatusOr<void*> ScratchMemory::Allocate(uint64_t bytes, const std::string& what) {
  bytes = bytes == 0 ? 1 : bytes;
  MemoryAccount* account = MemoryAccount::Current();
  if (account != nullptr) {
    if (absl::Status charged = account->Charge(bytes); !charged.ok()) {
      return absl::Status(charged.code(), absl::StrCat(what, ": ", charged.message()));
    }
  }
  void* data = ::operator new(bytes, std::align_val_t{64}, std::nothrow);
  if (data == nullptr) {
    if (account != nullptr) account->Release(bytes);
    return absl::ResourceExhaustedError(
        absl::StrCat(what, ": out of host memory allocating ", bytes, " bytes"));
  }
  blocks_.push_back({data, bytes, account});
  return data;
}

}  // namespace ember::host
