#include "compiler/host/ffi_call_thunk.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/host/op_attributes.h"
#include "compiler/host/scratch_memory.h"
#include "ffi/call_frame.h"
#include "ffi/registry.h"

namespace ember::host {
namespace {

// The bytes of an array value (0 for a token).
int64_t Bytes(const ir::ValueType& type) {
  if (type.is_token()) return 0;
  return type.shape().element_count() * ir::StorageBytes(type.element_type());
}

bool Overlap(const uint8_t* a, int64_t a_bytes, const uint8_t* b, int64_t b_bytes) {
  return a != nullptr && b != nullptr && a < b + b_bytes && b < a + a_bytes;
}

}  // namespace

std::string FfiCallThunk::Refusal(const ir::Instruction& inst) {
  const std::string target = CustomCallTarget(inst);
  if (target.empty()) return "not a custom call";
  if (!ffi::Registry::Global().FindHandler(target).has_value()) {
    return absl::StrCat("no FFI handler is registered for '", target,
                        "' (when the program compiled), and no library thunk takes it");
  }
  auto takes = [](const ir::ValueType& t) { return t.is_token() || IsRowMajor(t); };
  for (const ir::Value* v : inst.operands()) {
    if (!takes(v->type())) return "an operand that is not a row-major array or a token";
  }
  for (size_t r = 0; r < inst.num_results(); ++r) {
    if (!takes(inst.result(r)->type())) return "a result that is not a row-major array or a token";
  }
  // (A frame on no buffers: whether the attributes encode.)
  absl::StatusOr<std::unique_ptr<ffi::CallFrame>> frame = ffi::CallFrame::BuildOnBuffers(
      inst, std::vector<void*>(inst.operands().size()), std::vector<void*>(inst.num_results()),
      nullptr);
  if (!frame.ok()) return std::string(frame.status().message());
  return "";
}

std::unique_ptr<FfiCallThunk> FfiCallThunk::Create(std::string name, const ir::Instruction& inst,
                                                   std::vector<ValueRef> operands,
                                                   std::vector<ValueRef> results) {
  if (!Refusal(inst).empty() || operands.size() != inst.operands().size() ||
      results.size() != inst.num_results()) {
    return nullptr;
  }
  std::unique_ptr<FfiCallThunk> thunk(
      new FfiCallThunk(std::move(name), inst, std::move(operands), std::move(results)));
  for (const ir::Value* v : inst.operands()) thunk->operand_bytes_.push_back(Bytes(v->type()));
  for (size_t r = 0; r < inst.num_results(); ++r) {
    thunk->result_bytes_.push_back(Bytes(inst.result(r)->type()));
  }
  return thunk;
}

absl::Status FfiCallThunk::Run(HostRunContext& context) const {
  ScratchMemory memory;
  std::vector<void*> rets;
  for (size_t r = 0; r < results_.size(); ++r) {
    uint8_t* at = context.Address(results_[r]);
    if (at == nullptr && result_bytes_[r] > 0) {  // an array nothing reads: scratch
      EMBER_ASSIGN_OR_RETURN(void* p, memory.Allocate(result_bytes_[r], name()));
      at = static_cast<uint8_t*>(p);
    }
    rets.push_back(result_bytes_[r] > 0 ? at : nullptr);
  }
  std::vector<void*> args;
  for (size_t i = 0; i < operands_.size(); ++i) {
    uint8_t* at = operand_bytes_[i] > 0 ? context.Address(operands_[i]) : nullptr;
    for (size_t r = 0; r < rets.size(); ++r) {
      if (Overlap(at, operand_bytes_[i], static_cast<uint8_t*>(rets[r]), result_bytes_[r])) {
        EMBER_ASSIGN_OR_RETURN(void* copy, memory.Allocate(operand_bytes_[i], name()));
        std::memcpy(copy, at, static_cast<size_t>(operand_bytes_[i]));
        at = static_cast<uint8_t*>(copy);
        break;
      }
    }
    args.push_back(at);
  }
  EMBER_RETURN_IF_ERROR(context.ffi_calls().CallOnBuffers(op_, args, rets));
  // Token results other ops read are values of the run.
  for (size_t r = 0; r < results_.size(); ++r) {
    if (op_.result(r)->type().is_token() && results_[r].kind == ValueRef::Kind::kOther &&
        results_[r].other >= 0) {
      context.other(results_[r].other) = eval::EvalValue::Token();
    }
  }
  return absl::OkStatus();
}

}  // namespace ember::host
