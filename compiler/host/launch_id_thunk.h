// partition_id and replica_id: where this device stands in the launch, written as the op's u32
// scalar (an SPMD program reads it to find its block, so nearly every partitioned program has
// one; the evaluator's op table ran it before).
#ifndef EMBER_COMPILER_HOST_LAUNCH_ID_THUNK_H_
#define EMBER_COMPILER_HOST_LAUNCH_ID_THUNK_H_

#include <memory>
#include <string>

#include "compiler/host/host_thunks.h"

namespace ember::host {

class LaunchIdThunk final : public HostThunk {
 public:
  // Null unless `op` is a partition_id or replica_id whose ui32 scalar result has a buffer.
  static std::unique_ptr<LaunchIdThunk> Create(std::string name, const ir::Instruction& op,
                                               ValueRef result);
  absl::Status Run(HostRunContext& context) const override;

 private:
  LaunchIdThunk(std::string name, bool partition, ValueRef result)
      : HostThunk(Kind::kLibraryCall, std::move(name)), partition_(partition), result_(result) {}

  bool partition_;
  ValueRef result_;
};

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_LAUNCH_ID_THUNK_H_
