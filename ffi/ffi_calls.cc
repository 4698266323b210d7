#include "ffi/ffi_calls.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "ffi/registry.h"

namespace ember::ffi {

FfiCalls::FfiCalls(int32_t device_ordinal, int64_t run_id,
                   std::shared_ptr<const ExecutionContext> user_data)
    : user_data_(std::move(user_data)) {
  ctx_.device_ordinal = device_ordinal;
  ctx_.run_id = run_id;
  ctx_.user_data = user_data_.get();
}

int64_t FfiCalls::NewRunId() {
  static std::atomic<int64_t> next{1};
  return next.fetch_add(1);
}

bool FfiCalls::Has(std::string_view target) const {
  return Registry::Global().FindHandler(target).has_value();
}

absl::StatusOr<std::vector<eval::EvalValue>> FfiCalls::Call(
    const ir::Instruction& op, std::vector<eval::EvalValue>& operands) {
  EMBER_ASSIGN_OR_RETURN(std::unique_ptr<CallFrame> frame, CallFrame::Build(op, operands, &ctx_));
  EMBER_RETURN_IF_ERROR(Invoke(op, *frame));
  return frame->TakeResults();
}

absl::Status FfiCalls::CallOnBuffers(const ir::Instruction& op, const std::vector<void*>& args,
                                     const std::vector<void*>& rets) {
  EMBER_ASSIGN_OR_RETURN(std::unique_ptr<CallFrame> frame,
                         CallFrame::BuildOnBuffers(op, args, rets, &ctx_));
  return Invoke(op, *frame);
}

absl::Status FfiCalls::Invoke(const ir::Instruction& op, CallFrame& frame) {
  const ir::Attribute* name = op.attribute("call_target_name");
  if (name == nullptr || name->kind != ir::Attribute::Kind::kString) {
    return absl::InvalidArgumentError(absl::StrCat(op.Describe(), ": no call_target_name"));
  }
  std::optional<Handler> handler = Registry::Global().FindHandler(name->s);
  if (!handler.has_value()) {
    return absl::NotFoundError(
        absl::StrCat(op.Describe(), ": no FFI handler is registered for '", name->s, "' on Ember"));
  }
  frame.frame()->api = GetXlaFfiApi();
  absl::Status status = ConsumeError(handler->bundle.execute(frame.frame()));
  if (XLA_FFI_Future* future = frame.frame()->future) {
    // An asynchronous handler: its buffers stay alive (in `frame`) until it completes.
    future->done.WaitForNotification();
    if (status.ok()) status = future->status;
    delete future;
  }
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat(op.Describe(), ": FFI handler '", name->s,
                                                    "' failed: ", status.message()));
  }
  return absl::OkStatus();
}

}  // namespace ember::ffi
