// A while loop run natively: its condition and body compiled as host programs of their own
// (fused, LLVM-compiled kernels, as any entry), run in turn on the loop-carried values, which
// live in the loop's result buffers. The body writes a carried value over its previous one where
// its buffer assignment allows (an elementwise update, a dynamic_update_slice of the value) and
// does not write one it passes through, so an iteration costs what its work touches, not the
// size of everything carried; other values go to scratch and are copied back.
#ifndef EMBER_COMPILER_HOST_WHILE_THUNK_H_
#define EMBER_COMPILER_HOST_WHILE_THUNK_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler/backend/executable.h"
#include "compiler/host/host_thunks.h"

namespace ember::host {

class WhileThunk final : public HostThunk {
 public:
  // `condition` takes the carried values and returns a pred scalar; `body` takes them and
  // returns the next ones (both host executables of the loop's regions). `operands` are the
  // loop's initial values, `results` where its final ones go. `in_place[i]`: the body may be
  // given carried value i's memory for its result i (it returns the value as it got it, or its
  // buffer assignment writes the result over the donated parameter).
  WhileThunk(std::string name, std::unique_ptr<backend::Executable> condition,
             std::unique_ptr<backend::Executable> body, std::vector<ValueRef> operands,
             std::vector<ValueRef> results, std::vector<bool> in_place)
      : HostThunk(Kind::kSequence, std::move(name)), condition_(std::move(condition)),
        body_(std::move(body)), operands_(std::move(operands)), results_(std::move(results)),
        in_place_(std::move(in_place)) {}
  absl::Status Run(HostRunContext& context) const override;

 private:
  std::unique_ptr<backend::Executable> condition_;
  std::unique_ptr<backend::Executable> body_;
  std::vector<ValueRef> operands_;
  std::vector<ValueRef> results_;
  std::vector<bool> in_place_;
};

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_WHILE_THUNK_H_
