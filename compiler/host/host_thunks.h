// The host backend's thunks. A host device's stream is a worker thread, so host thunks run
// synchronously there: each has Run(), and ExecuteOnStream enqueues one host callback that runs
// it. The backend's top-level HostThunkSequence runs all of a launch's thunks in one callback
// (no thread hop per kernel). Values live in the launch's buffers (slices from buffer
// assignment), in the IR (constants), or, when they are not arrays (tokens, tuples), in the run.
#ifndef EMBER_COMPILER_HOST_HOST_THUNKS_H_
#define EMBER_COMPILER_HOST_HOST_THUNKS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "compiler/backend/thunk.h"
#include "compiler/codegen/host_kernel_compiler.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/host/collective_hooks.h"
#include "compiler/host/fast_conv.h"
#include "compiler/host/fast_kernels.h"
#include "compiler/host/thread_pool.h"
#include "compiler/ir/module.h"
#include "ffi/execution_context.h"
#include "ffi/ffi_calls.h"

namespace ember::host {

// Where a value of the entry lives during a run.
struct ValueRef {
  // kTile: a value a row group makes and uses up tile by tile (its thunk gives each tile's rows
  // scratch memory; it has no address of its own).
  enum class Kind { kSlice, kConstant, kOther, kTile };
  Kind kind = Kind::kOther;
  backend::BufferSlice slice;         // kSlice
  const uint8_t* constant = nullptr;  // kConstant: the IR literal's bytes
  int other = -1;                     // kOther: index of the run's non-array values
  int64_t row_bytes = 0;              // kTile: bytes per row of the group
  const ir::Value* value = nullptr;
};

// One run of a launch on one host device.
class HostRunContext {
 public:
  // `device_ordinal`, `run_id` and `ffi_context` are what the FFI handlers the program calls see
  // (run id 0: a fresh one).
  HostRunContext(const backend::BufferAllocations& buffers,
                 std::shared_ptr<const backend::CollectiveParams> collectives, int num_other_values,
                 int32_t device_ordinal = 0, int64_t run_id = 0,
                 std::shared_ptr<const ffi::ExecutionContext> ffi_context = nullptr);

  uint8_t* Address(const ValueRef& ref) const;
  // A copy of the value for the evaluator's op table.
  absl::StatusOr<eval::EvalValue> Read(const ValueRef& ref) const;
  eval::EvalValue& other(int index) { return other_[index]; }
  const backend::BufferAllocations& buffers() const { return buffers_; }
  // The launch's collectives (where this device stands, its communicators); null, or without a
  // scope, for a single-device launch.
  const std::shared_ptr<const backend::CollectiveParams>& collectives() const {
    return collectives_;
  }
  // One evaluator per run (it keeps per-run state: probes, plans), with this device's
  // replica/partition ids, collective hooks and FFI handlers.
  eval::Evaluator& evaluator();
  ThreadPool& pool() { return ThreadPool::Default(); }
  // This device's FFI handlers (FfiCallThunk): its device ordinal, run id and user data.
  ffi::FfiCalls& ffi_calls() { return ffi_calls_; }

  // A context for a nested program (a loop's body) run as part of this run: other buffers, the
  // same device, run, collectives, FFI context and evaluator (its per-run state: probes).
  std::unique_ptr<HostRunContext> Nested(const backend::BufferAllocations& buffers,
                                         int num_other_values) {
    auto nested = std::make_unique<HostRunContext>(buffers, collectives_, num_other_values,
                                                   device_ordinal_, run_id_, ffi_context_);
    nested->parent_ = this;
    return nested;
  }

 private:
  const backend::BufferAllocations& buffers_;
  std::shared_ptr<const backend::CollectiveParams> collectives_;
  int32_t device_ordinal_;
  int64_t run_id_;
  std::shared_ptr<const ffi::ExecutionContext> ffi_context_;
  std::vector<eval::EvalValue> other_;
  std::unique_ptr<CommunicatorHooks> hooks_;
  ffi::FfiCalls ffi_calls_;
  std::optional<eval::Evaluator> evaluator_;
  HostRunContext* parent_ = nullptr;  // a nested context's: whose evaluator it uses
};

class HostThunk : public backend::Thunk {
 public:
  using Thunk::Thunk;
  // Runs the thunk now, on the calling thread (a host stream's task).
  virtual absl::Status Run(HostRunContext& context) const = 0;
  // Non-array values the run keeps aside (ValueRef::kOther indices below this).
  virtual int num_other_values() const { return 0; }
  // Enqueues one host callback that runs this thunk; a failure goes to params.status and skips
  // the launch's later host work.
  absl::Status ExecuteOnStream(const backend::ExecuteParams& params) const final;
};

class HostThunkSequence final : public HostThunk {
 public:
  // `name`: the program it runs (the launch's name on traces).
  HostThunkSequence(std::string name, std::vector<std::unique_ptr<HostThunk>> thunks,
                    int num_other_values)
      : HostThunk(Kind::kSequence, std::move(name)),
        thunks_(std::move(thunks)),
        num_other_(num_other_values) {}
  absl::Status Run(HostRunContext& context) const override;
  int num_other_values() const override { return num_other_; }
  const std::vector<std::unique_ptr<HostThunk>>& thunks() const { return thunks_; }

 private:
  std::vector<std::unique_ptr<HostThunk>> thunks_;
  int num_other_;
};

// A loop or reduction kernel compiled to native code by the code generator (compiler/codegen/):
// its `units` (output elements of a loop kernel, rows of a reduction kernel, each touching
// `unit_elements` input elements) split across the thread pool.
class CompiledKernelThunk final : public HostThunk {
 public:
  CompiledKernelThunk(std::string name, codegen::HostLoopKernel kernel, int64_t units,
                      int64_t unit_elements, std::vector<ValueRef> inputs,
                      std::vector<ValueRef> outputs)
      : HostThunk(Kind::kKernel, std::move(name)), kernel_(std::move(kernel)), units_(units),
        unit_elements_(unit_elements), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}
  absl::Status Run(HostRunContext& context) const override;

 private:
  codegen::HostLoopKernel kernel_;
  int64_t units_;
  int64_t unit_elements_;
  std::vector<ValueRef> inputs_;
  std::vector<ValueRef> outputs_;
};

// A reduction kernel compiled as a split reduction (codegen::ReducePartsPerRow > 1, the contract
// in reduce_emitter.h): its `rows` * `parts` parts, each folding `part_elements` input elements,
// split across the thread pool into partials (scratch of the run), then the rows combined on the
// calling thread.
class SplitReductionThunk final : public HostThunk {
 public:
  SplitReductionThunk(std::string name, codegen::HostLoopKernel kernel, int64_t rows, int64_t parts,
                      int64_t part_elements, int reduces, std::vector<ValueRef> inputs,
                      std::vector<ValueRef> outputs)
      : HostThunk(Kind::kKernel, std::move(name)),
        kernel_(std::move(kernel)),
        rows_(rows),
        parts_(parts),
        part_elements_(part_elements),
        reduces_(reduces),
        inputs_(std::move(inputs)),
        outputs_(std::move(outputs)) {}
  absl::Status Run(HostRunContext& context) const override;

 private:
  codegen::HostLoopKernel kernel_;
  int64_t rows_;
  int64_t parts_;
  int64_t part_elements_;
  int reduces_;
  std::vector<ValueRef> inputs_;
  std::vector<ValueRef> outputs_;
};

// Consecutive row kernels run tile of rows by tile of rows (passes::RowGroup): a tile's values
// stay in the core's cache between the group's kernels.
class RowGroupThunk final : public HostThunk {
 public:
  // A compiled kernel that computes `units_per_row` of its units (elements or reduction rows)
  // per row of the group.
  struct Member {
    codegen::HostLoopKernel compiled;
    int64_t units_per_row = 0;
    int64_t elements = 0;  // that a launch computes or reads (at most): see HostLoopKernel::code
    std::vector<ValueRef> inputs;
    std::vector<ValueRef> outputs;
  };
  RowGroupThunk(std::string name, std::vector<Member> members, int64_t rows, int64_t tile_rows)
      : HostThunk(Kind::kKernel, std::move(name)), members_(std::move(members)), rows_(rows),
        tile_rows_(tile_rows) {}
  absl::Status Run(HostRunContext& context) const override;

 private:
  std::vector<Member> members_;
  int64_t rows_;
  int64_t tile_rows_;
};

// dot_general through Eigen.
class DotThunk final : public HostThunk {
 public:
  DotThunk(std::string name, std::unique_ptr<fast::DotKernel> kernel, ValueRef lhs, ValueRef rhs,
           ValueRef out)
      : HostThunk(Kind::kLibraryCall, std::move(name)), kernel_(std::move(kernel)), lhs_(lhs),
        rhs_(rhs), out_(out) {}
  absl::Status Run(HostRunContext& context) const override;

 private:
  std::unique_ptr<fast::DotKernel> kernel_;
  ValueRef lhs_, rhs_, out_;
};

// convolution as im2col blocks times the Eigen GEMM.
class ConvThunk final : public HostThunk {
 public:
  ConvThunk(std::string name, std::unique_ptr<fast::ConvKernel> kernel, ValueRef lhs, ValueRef rhs,
            ValueRef out)
      : HostThunk(Kind::kLibraryCall, std::move(name)), kernel_(std::move(kernel)), lhs_(lhs),
        rhs_(rhs), out_(out) {}
  absl::Status Run(HostRunContext& context) const override;

 private:
  std::unique_ptr<fast::ConvKernel> kernel_;
  ValueRef lhs_, rhs_, out_;
};

// Instructions the fast kernels do not run (control flow, sort, scatter, gather, collectives,
// custom calls, types the kernels lack, ...), one by one through the reference evaluator's op
// table, reading their operands from the run's values and writing their results back.
class EvaluatorOpsThunk final : public HostThunk {
 public:
  EvaluatorOpsThunk(std::string name, std::vector<const ir::Instruction*> instructions,
                    std::unordered_map<const ir::Value*, ValueRef> inputs,
                    std::vector<ValueRef> results)
      : HostThunk(Kind::kEvaluator, std::move(name)), instructions_(std::move(instructions)),
        inputs_(std::move(inputs)), results_(std::move(results)) {}
  absl::Status Run(HostRunContext& context) const override;

 private:
  std::vector<const ir::Instruction*> instructions_;
  std::unordered_map<const ir::Value*, ValueRef> inputs_;  // values made outside the thunk
  std::vector<ValueRef> results_;                          // where the thunk's outputs go
};

class CopyThunk final : public HostThunk {
 public:
  CopyThunk(std::string name, ValueRef from, ValueRef to, int64_t bytes)
      : HostThunk(Kind::kCopy, std::move(name)), from_(from), to_(to), bytes_(bytes) {}
  absl::Status Run(HostRunContext& context) const override;

 private:
  ValueRef from_, to_;
  int64_t bytes_;
};

// The reference evaluator runs a whole computation on copies of the arguments.
class EvaluatorProgramThunk final : public HostThunk {
 public:
  EvaluatorProgramThunk(std::string name, const ir::Computation& entry,
                        std::vector<ValueRef> parameters, std::vector<ValueRef> results)
      : HostThunk(Kind::kEvaluator, std::move(name)), entry_(entry),
        parameters_(std::move(parameters)), results_(std::move(results)) {}
  absl::Status Run(HostRunContext& context) const override;

 private:
  const ir::Computation& entry_;
  std::vector<ValueRef> parameters_;
  std::vector<ValueRef> results_;
};

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_HOST_THUNKS_H_
