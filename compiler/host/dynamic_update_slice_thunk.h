// dynamic_update_slice on the host: the operand copied to the result (nothing to copy when the
// result was given the operand's memory: a loop-carried array updated in place, a donated
// argument), then the update's window written at the start indices, clamped into range as the
// spec says. Moves bytes only, so every element type runs here.
#ifndef EMBER_COMPILER_HOST_DYNAMIC_UPDATE_SLICE_THUNK_H_
#define EMBER_COMPILER_HOST_DYNAMIC_UPDATE_SLICE_THUNK_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler/host/host_thunks.h"

namespace ember::host {

class DynamicUpdateSliceThunk final : public HostThunk {
 public:
  // Null when `instruction` is not a dynamic_update_slice of dense arrays with scalar integer
  // start indices (the evaluator's op table runs it then).
  static std::unique_ptr<DynamicUpdateSliceThunk> Create(std::string name,
                                                         const ir::Instruction& instruction,
                                                         std::vector<ValueRef> operands,
                                                         ValueRef result);
  absl::Status Run(HostRunContext& context) const override;

 private:
  DynamicUpdateSliceThunk(std::string name, std::vector<ValueRef> operands, ValueRef result)
      : HostThunk(Kind::kKernel, std::move(name)), operands_(std::move(operands)),
        result_(result) {}

  std::vector<ValueRef> operands_;  // operand, update, start indices
  ValueRef result_;
  std::vector<int64_t> dims_;
  std::vector<int64_t> update_dims_;
  int64_t element_bytes_ = 0;
};

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_DYNAMIC_UPDATE_SLICE_THUNK_H_
