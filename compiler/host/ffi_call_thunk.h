// A custom call to an XLA FFI handler registered with Ember (jax.ffi targets, and the Python
// callbacks of jax.pure_callback / io_callback / jax.debug.print, which Ember's package lowers to
// the handler "ember_python_callback") as a library call on the launch's buffers: the handler's
// call frame points at the operands' and results' own memory, so nothing is copied on the way in
// or out (the evaluator's op table, which runs a handler registered only after the program
// compiled, hands it copies). A result that shares memory with an operand gets a copy of that
// operand first: XLA gives handlers distinct buffers unless the op declares aliases. Tokens are
// passed as XLA does (dtype TOKEN, no data). An op whose handler is missing at compile time, whose
// operands or results are not dense row-major arrays or tokens, or whose attributes do not encode
// as FFI attributes stays on the evaluator's op table, which reports the error (Refusal says why;
// the cost report shows it).
#ifndef EMBER_COMPILER_HOST_FFI_CALL_THUNK_H_
#define EMBER_COMPILER_HOST_FFI_CALL_THUNK_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler/host/host_thunks.h"

namespace ember::host {

class FfiCallThunk final : public HostThunk {
 public:
  // "" when this thunk runs `instruction` (a custom call), else why not.
  static std::string Refusal(const ir::Instruction& instruction);
  // `operands` and `results` in the op's order (a result nothing reads has kind kOther). Null
  // when Refusal(instruction) is not empty.
  static std::unique_ptr<FfiCallThunk> Create(std::string name, const ir::Instruction& instruction,
                                              std::vector<ValueRef> operands,
                                              std::vector<ValueRef> results);
  absl::Status Run(HostRunContext& context) const override;

 private:
  FfiCallThunk(std::string name, const ir::Instruction& op, std::vector<ValueRef> operands,
               std::vector<ValueRef> results)
      : HostThunk(Kind::kLibraryCall, std::move(name)),
        op_(op),
        operands_(std::move(operands)),
        results_(std::move(results)) {}

  const ir::Instruction& op_;  // the executable keeps its program
  std::vector<ValueRef> operands_;
  std::vector<ValueRef> results_;
  std::vector<int64_t> operand_bytes_, result_bytes_;  // 0 for tokens
};

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_FFI_CALL_THUNK_H_
