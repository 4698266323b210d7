#include "compiler/host/collective_thunk.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/host/collective_hooks.h"

namespace ember::host {
namespace {

bool IsRowMajorTensor(const ir::Value* v) {
  return v->type().is_tensor() && v->type().is_static() && v->type().shape().layout().IsRowMajor();
}

}  // namespace

bool CollectiveThunk::Runs(ir::Opcode opcode) {
  switch (opcode) {
    case ir::Opcode::kAllReduce:
    case ir::Opcode::kAllGather:
    case ir::Opcode::kReduceScatter:
    case ir::Opcode::kAllToAll:
    case ir::Opcode::kCollectivePermute:
      return true;
    default:
      return false;
  }
}

std::unique_ptr<CollectiveThunk> CollectiveThunk::Create(
    std::string name, const ir::Instruction& op, std::vector<ValueRef> operands,
    std::vector<ValueRef> results, std::unique_ptr<HostThunk> fallback, std::string* why) {
  if (!Runs(op.opcode())) {
    *why = "not a collective it runs";
    return nullptr;
  }
  if (op.operands().size() != operands.size() || op.num_results() != results.size() ||
      (op.opcode() == ir::Opcode::kCollectivePermute && op.operands().size() != 1) ||
      op.operands().size() != op.num_results()) {
    *why = "its operands and results do not pair up";
    return nullptr;
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!IsRowMajorTensor(op.operand(i)) || !IsRowMajorTensor(op.result(i))) {
      *why = "a value that is not a row-major array";
      return nullptr;
    }
    if (operands[i].kind == ValueRef::Kind::kOther || results[i].kind == ValueRef::Kind::kOther) {
      *why = "a value without a buffer";
      return nullptr;
    }
  }
  return std::unique_ptr<CollectiveThunk>(new CollectiveThunk(
      std::move(name), op, std::move(operands), std::move(results), std::move(fallback)));
}

absl::Status CollectiveThunk::Run(HostRunContext& context) const {
  const std::shared_ptr<const backend::CollectiveParams>& launch = context.collectives();
  if (launch == nullptr || launch->scope == nullptr) return fallback_->Run(context);
  std::vector<absl::Span<const uint8_t>> in;
  std::vector<absl::Span<uint8_t>> out;
  for (size_t i = 0; i < operands_.size(); ++i) {
    in.emplace_back(context.Address(operands_[i]),
                    static_cast<size_t>(op_.operand(i)->type().shape().ByteSize()));
    out.emplace_back(context.Address(results_[i]),
                     static_cast<size_t>(op_.result(i)->type().shape().ByteSize()));
  }
  return RunCollective(op_, *launch, in, out);
}

}  // namespace ember::host
