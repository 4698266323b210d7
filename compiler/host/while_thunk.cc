#include "compiler/host/while_thunk.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/host/scratch_memory.h"

namespace ember::host {
namespace {

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
