#include "compiler/host/conditional_thunk.h"

#include <cstdint>
#include <cstring>
#include <utility>

#include "base/status_macros.h"
#include "compiler/host/scratch_memory.h"

namespace ember::host {

absl::Status ConditionalThunk::Run(HostRunContext& context) const {
  const uint8_t* selector = context.Address(selector_);
  size_t branch = 0;
  if (is_if_) {
    branch = *selector != 0 ? 0 : 1;
  } else {
    int32_t index;
    std::memcpy(&index, selector, sizeof(index));
    const size_t n = branches_.size();
    branch = index < 0 || static_cast<size_t>(index) >= n ? n - 1 : static_cast<size_t>(index);
  }
  const backend::Executable& program = *branches_[branch];
  const backend::BufferLayout& layout = program.layout();
  ScratchMemory scratch;
  std::vector<se::DeviceMemory> buffers;
  buffers.reserve(layout.num_allocations());
  for (const ValueRef& operand : operands_) {
    buffers.push_back(se::DeviceMemory{context.Address(operand),
                                       static_cast<uint64_t>(
                                           operand.value->type().shape().ByteSize())});
  }
  for (const ValueRef& result : results_) {
    const uint64_t bytes = result.value->type().shape().ByteSize();
    void* data = context.Address(result);
    if (data == nullptr) {  // a result nothing reads, or an empty array
      EMBER_ASSIGN_OR_RETURN(data, scratch.Allocate(bytes, name()));
    }
    buffers.push_back(se::DeviceMemory{data, bytes});
  }
  if (layout.temp_bytes > 0) {
    EMBER_ASSIGN_OR_RETURN(void* temp, scratch.Allocate(layout.temp_bytes, name()));
    buffers.push_back(se::DeviceMemory{temp, static_cast<uint64_t>(layout.temp_bytes)});
  }
  const backend::BufferAllocations allocations(std::move(buffers));
  const auto& thunks = static_cast<const HostThunk&>(program.thunks());
  std::unique_ptr<HostRunContext> run = context.Nested(allocations, thunks.num_other_values());
  return thunks.Run(*run);
}

}  // namespace ember::host
