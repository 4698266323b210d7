// A collective op (all_reduce, all_gather, reduce_scatter, all_to_all, collective_permute) run on
// the launch's own buffers: the communicator reads the operand's memory and writes the result's,
// with no copies in between (the evaluator's op table copied both, and held two extra copies of
// every collective's data while it ran).
#ifndef EMBER_COMPILER_HOST_COLLECTIVE_THUNK_H_
#define EMBER_COMPILER_HOST_COLLECTIVE_THUNK_H_

#include <memory>
#include <string>
#include <vector>

#include "compiler/host/host_thunks.h"

namespace ember::host {

class CollectiveThunk final : public HostThunk {
 public:
  // The collectives it runs (others go to the evaluator's op table).
  static bool Runs(ir::Opcode opcode);
  // Null with the reason in `why` when `op` is not one this thunk runs (other ops, operands
  // that do not pair with results, layouts that are not row-major, values without a buffer).
  // Variadic ops (a combined all_reduce) run operand by operand.
  // `fallback` runs the op where the launch has no communicators (a single-device launch).
  static std::unique_ptr<CollectiveThunk> Create(std::string name, const ir::Instruction& op,
                                                 std::vector<ValueRef> operands,
                                                 std::vector<ValueRef> results,
                                                 std::unique_ptr<HostThunk> fallback,
                                                 std::string* why);
  absl::Status Run(HostRunContext& context) const override;

 private:
  CollectiveThunk(std::string name, const ir::Instruction& op, std::vector<ValueRef> operands,
                  std::vector<ValueRef> results, std::unique_ptr<HostThunk> fallback)
      : HostThunk(Kind::kLibraryCall, std::move(name)),
        op_(op),
        operands_(std::move(operands)),
        results_(std::move(results)),
        fallback_(std::move(fallback)) {}

  const ir::Instruction& op_;
  std::vector<ValueRef> operands_;
  std::vector<ValueRef> results_;
  std::unique_ptr<HostThunk> fallback_;
};

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_COLLECTIVE_THUNK_H_
