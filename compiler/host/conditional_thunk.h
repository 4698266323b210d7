// An if or case run natively: each branch compiled as a host program of its own (fused,
// LLVM-compiled kernels, as any entry) taking the op's operands after the selector, and the one
// the selector picks run on them, its results written into the op's result buffers. A case
// index outside [0, N) runs the last branch, as the StableHLO spec says.
#ifndef EMBER_COMPILER_HOST_CONDITIONAL_THUNK_H_
#define EMBER_COMPILER_HOST_CONDITIONAL_THUNK_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler/backend/executable.h"
#include "compiler/host/host_thunks.h"

namespace ember::host {

class ConditionalThunk final : public HostThunk {
 public:
  // `selector`: an if's pred (its true branch first) or a case's s32 index. `branches`: host
  // executables of the branch regions, in the op's order; each takes `operands` and returns
  // values of the types of `results`.
  ConditionalThunk(std::string name, ValueRef selector,
                   std::vector<std::unique_ptr<backend::Executable>> branches,
                   std::vector<ValueRef> operands, std::vector<ValueRef> results, bool is_if)
      : HostThunk(Kind::kSequence, std::move(name)), selector_(std::move(selector)),
        branches_(std::move(branches)), operands_(std::move(operands)),
        results_(std::move(results)), is_if_(is_if) {}
  absl::Status Run(HostRunContext& context) const override;

 private:
  ValueRef selector_;
  std::vector<std::unique_ptr<backend::Executable>> branches_;
  std::vector<ValueRef> operands_;
  std::vector<ValueRef> results_;
  bool is_if_;
};

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_CONDITIONAL_THUNK_H_
