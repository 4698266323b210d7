#include "compiler/host/collective_thunk.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/host/collective_hooks.h"

namespace ember::host {
namespace {

bool IsRowMajorTensor(const ir::Value* v) {
  return v->type().is_tensor() && v->type().is_static() && v->type().shape().layout().IsRowMajor();
}

}  // namespace

std::unique_ptr<CollectiveThunk> CollectiveThunk::Create(
    std::string name, const ir::Instruction& op, std::vector<ValueRef> operands,
    std::vector<ValueRef> results, std::unique_ptr<HostThunk> fallback, std::string* why) {
  switch (op.opcode()) {
    case ir::Opcode::kAllReduce:
    case ir::Opcode::kAllGather:
    case ir::Opcode::kReduceScatter:
    case ir::Opcode::kAllToAll:
    case ir::Opcode::kCollectivePermute:
      break;
    default:
      *why = "not a collective it runs";
      return nullptr;
  }
  if (op.operands().size() != 1 || op.num_results() != 1 || operands.size() != 1 ||
      results.size() != 1) {
    *why = "it has several operands";
    return nullptr;
  }
  if (!IsRowMajorTensor(op.operand(0)) || !IsRowMajorTensor(op.result(0))) {
    *why = "a value that is not a row-major array";
    return nullptr;
  }
  if (operands[0].kind == ValueRef::Kind::kOther || results[0].kind == ValueRef::Kind::kOther) {
    *why = "a value without a buffer";
    return nullptr;
  }
  return std::unique_ptr<CollectiveThunk>(new CollectiveThunk(
      std::move(name), op, std::move(operands), std::move(results), std::move(fallback)));
}

absl::Status CollectiveThunk::Run(HostRunContext& context) const {
  const std::shared_ptr<const backend::CollectiveParams>& launch = context.collectives();
  if (launch == nullptr || launch->scope == nullptr) return fallback_->Run(context);
  const absl::Span<const uint8_t> in(
      context.Address(operands_[0]),
      static_cast<size_t>(op_.operand(0)->type().shape().ByteSize()));
  const absl::Span<uint8_t> out(context.Address(results_[0]),
                                static_cast<size_t>(op_.result(0)->type().shape().ByteSize()));
  return RunCollective(op_, *launch, absl::MakeConstSpan(&in, 1), absl::MakeConstSpan(&out, 1));
}

}  // namespace ember::host
