// The XLA FFI handlers registered with Ember, as the run-time custom-call targets of one launch
// on one device (eval::ExternalCalls): a custom call whose target has a handler is run by
// building its call frame and calling the handler on the launch's thread.
#ifndef EMBER_FFI_FFI_CALLS_H_
#define EMBER_FFI_FFI_CALLS_H_

#include <cstdint>
#include <memory>

#include "compiler/evaluator/evaluator.h"
#include "ffi/call_frame.h"
#include "ffi/execution_context.h"
#include "ffi/ffi_api.h"

namespace ember::ffi {

class FfiCalls final : public eval::ExternalCalls {
 public:
  // `user_data`: what the framework attached to this execution (may be null).
  FfiCalls(int32_t device_ordinal, int64_t run_id,
           std::shared_ptr<const ExecutionContext> user_data);

  bool Has(std::string_view target) const override;
  absl::StatusOr<std::vector<eval::EvalValue>> Call(
      const ir::Instruction& op, std::vector<eval::EvalValue>& operands) override;
  // Calls the handler of `op` on a launch's buffers (CallFrame::BuildOnBuffers): the host
  // backend's FfiCallThunk, which hands it the launch's memory without copies.
  absl::Status CallOnBuffers(const ir::Instruction& op, const std::vector<void*>& args,
                             const std::vector<void*>& rets);

  // A fresh id for a launch (XLA_FFI_RunId_Get) that has none from its collectives.
  static int64_t NewRunId();

 private:
  // Runs `frame` through the handler of `op`'s target, waiting for an asynchronous one; errors
  // name the op and the target.
  absl::Status Invoke(const ir::Instruction& op, CallFrame& frame);

  std::shared_ptr<const ExecutionContext> user_data_;
  XLA_FFI_ExecutionContext ctx_;
};

}  // namespace ember::ffi

#endif  // EMBER_FFI_FFI_CALLS_H_
