#include "compiler/host/while_thunk.h"

#include <cstring>
#include <new>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/memory_account.h"
#include "base/status_macros.h"

namespace ember::host {
namespace {

// Host memory for the loop's scratch, counted on the launch's memory account.
class ScratchMemory {
 public:
  ScratchMemory() = default;
  ScratchMemory(const ScratchMemory&) = delete;
  ScratchMemory& operator=(const ScratchMemory&) = delete;
  ~ScratchMemory() {
    for (const Block& block : blocks_) {
      ::operator delete(block.data, std::align_val_t{64});
      if (block.account != nullptr) block.account->Release(block.bytes);
    }
  }

  // `bytes` (at least one, so every buffer has an address), or RESOURCE_EXHAUSTED.
  absl::StatusOr<void*> Allocate(uint64_t bytes, const std::string& what) {
    bytes = bytes == 0 ? 1 : bytes;
    MemoryAccount* account = MemoryAccount::Current();
    if (account != nullptr) EMBER_RETURN_IF_ERROR(account->Charge(bytes));
    void* data = ::operator new(bytes, std::align_val_t{64}, std::nothrow);
    if (data == nullptr) {
      if (account != nullptr) account->Release(bytes);
      return absl::ResourceExhaustedError(
          absl::StrCat(what, ": out of host memory allocating ", bytes, " bytes"));
    }
    blocks_.push_back({data, bytes, account});
    return data;
  }

 private:
  struct Block {
    void* data;
    uint64_t bytes;
    MemoryAccount* account;
  };
  std::vector<Block> blocks_;
};

se::DeviceMemory Memory(void* data, uint64_t bytes) { return se::DeviceMemory{data, bytes}; }

const HostThunk& Program(const backend::Executable& executable) {
  return static_cast<const HostThunk&>(executable.thunks());
}

}  // namespace

absl::Status WhileThunk::Run(HostRunContext& context) const {
  const size_t n = results_.size();
  const backend::BufferLayout& cond = condition_->layout();
  const backend::BufferLayout& body = body_->layout();
  ScratchMemory scratch;
  // The carried values live in the loop's result buffers, holding the initial values first; the
  // body's results that cannot be written over them go to scratch and are copied back.
  std::vector<se::DeviceMemory> state(n), next(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t bytes = results_[i].value->type().shape().ByteSize();
    state[i] = Memory(context.Address(results_[i]), bytes);
    if (state[i].opaque == nullptr) {  // a result nothing reads, or an empty array
      EMBER_ASSIGN_OR_RETURN(void* unread, scratch.Allocate(bytes, name()));
      state[i] = Memory(unread, bytes);
    }
    const uint8_t* initial = context.Address(operands_[i]);
    if (bytes > 0 && initial != state[i].opaque) std::memmove(state[i].opaque, initial, bytes);
    next[i] = state[i];
    if (!in_place_[i]) {
      EMBER_ASSIGN_OR_RETURN(void* data, scratch.Allocate(bytes, name()));
      next[i] = Memory(data, bytes);
    }
  }
  EMBER_ASSIGN_OR_RETURN(void* pred, scratch.Allocate(1, name()));
  EMBER_ASSIGN_OR_RETURN(void* cond_temp, scratch.Allocate(cond.temp_bytes, name()));
  EMBER_ASSIGN_OR_RETURN(void* body_temp, scratch.Allocate(body.temp_bytes, name()));
  auto allocations = [&](const backend::BufferLayout& layout, const std::vector<se::DeviceMemory>& out,
                         void* temp) {
    std::vector<se::DeviceMemory> all(state);
    all.insert(all.end(), out.begin(), out.end());
    if (layout.temp_bytes > 0) all.push_back(Memory(temp, layout.temp_bytes));
    return backend::BufferAllocations(std::move(all));
  };
  const backend::BufferAllocations cond_buffers = allocations(cond, {Memory(pred, 1)}, cond_temp);
  const backend::BufferAllocations body_buffers = allocations(body, next, body_temp);
  std::unique_ptr<HostRunContext> run_cond =
      context.Nested(cond_buffers, Program(*condition_).num_other_values());
  std::unique_ptr<HostRunContext> run_body =
      context.Nested(body_buffers, Program(*body_).num_other_values());
  while (true) {
    EMBER_RETURN_IF_ERROR(Program(*condition_).Run(*run_cond));
    if (*static_cast<const uint8_t*>(pred) == 0) break;
    EMBER_RETURN_IF_ERROR(Program(*body_).Run(*run_body));
    for (size_t i = 0; i < n; ++i) {
      if (!in_place_[i] && state[i].size > 0) {
        std::memcpy(state[i].opaque, next[i].opaque, state[i].size);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace ember::host
