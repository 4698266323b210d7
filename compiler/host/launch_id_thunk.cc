#include "compiler/host/launch_id_thunk.h"

#include <cstdint>
#include <cstring>
#include <utility>

namespace ember::host {

std::unique_ptr<LaunchIdThunk> LaunchIdThunk::Create(std::string name, const ir::Instruction& op,
                                                     ValueRef result) {
  const bool partition = op.opcode() == ir::Opcode::kPartitionId;
  if ((!partition && op.opcode() != ir::Opcode::kReplicaId) || op.num_results() != 1) {
    return nullptr;
  }
  const ir::ValueType& type = op.result(0)->type();
  if (!type.is_tensor() || type.element_type() != ir::ElementType::kU32 ||
      type.shape().element_count() != 1 || result.kind != ValueRef::Kind::kSlice) {
    return nullptr;
  }
  return std::unique_ptr<LaunchIdThunk>(new LaunchIdThunk(std::move(name), partition, result));
}

absl::Status LaunchIdThunk::Run(HostRunContext& context) const {
  // A single-device launch (no collectives) is partition 0 of replica 0.
  const std::shared_ptr<const backend::CollectiveParams>& launch = context.collectives();
  const int64_t id = launch == nullptr ? 0 : partition_ ? launch->partition_id : launch->replica_id;
  const uint32_t value = static_cast<uint32_t>(id);
  std::memcpy(context.Address(result_), &value, sizeof(value));
  return absl::OkStatus();
}

}  // namespace ember::host
