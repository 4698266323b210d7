// The reference evaluator: runs an ir::Computation on host literals with the StableHLO
// specification's exact semantics. It is the oracle for every other execution path (fast host
// backend, CUDA kernels, constant folding), so it is written to be obviously right first.
#ifndef EMBER_COMPILER_EVALUATOR_EVALUATOR_H_
#define EMBER_COMPILER_EVALUATOR_EVALUATOR_H_

#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/evaluator/eval_value.h"
#include "compiler/ir/module.h"

namespace ember::eval {

// Hooks for ops that reach outside one device: collectives and process ids. The default (no
// hooks) evaluates a single-device program: replica_id/partition_id 0, and collectives over a
// group of one behave as the identity where the spec allows.
struct CollectiveHooks {
  virtual ~CollectiveHooks() = default;
  // Called by every participant with its operand; returns what this participant receives.
  virtual absl::StatusOr<std::vector<EvalValue>> Run(const ir::Instruction& op,
                                                      std::vector<EvalValue> operands) = 0;
};

// Custom-call targets that live outside the compiler and are bound when a program runs: the
// XLA FFI handlers a framework or its users registered with the plugin (ffi/). The evaluator
// consults them for custom calls it does not implement itself.
struct ExternalCalls {
  virtual ~ExternalCalls() = default;
  virtual bool Has(std::string_view target) const = 0;
  // Runs `op`, a custom_call whose target Has() accepts, on its operand values.
  virtual absl::StatusOr<std::vector<EvalValue>> Call(const ir::Instruction& op,
                                                      std::vector<EvalValue>& operands) = 0;
};

struct EvalOptions {
  int64_t replica_id = 0;
  int64_t partition_id = 0;
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  CollectiveHooks* collectives = nullptr;  // null: single device
  ExternalCalls* external_calls = nullptr;  // null: no run-time custom-call targets
  // Bound on while-loop iterations (0: none), so a runaway program becomes an error.
  int64_t max_loop_iterations = 0;
};

class Evaluator {
 public:
  explicit Evaluator(EvalOptions options = {});
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // Runs `computation` on `arguments` (one per parameter, types must match) and returns its
  // results. Errors name the instruction (`Instruction::Describe()`) and what went wrong.
  absl::StatusOr<std::vector<EvalValue>> Run(const ir::Computation& computation,
                                             std::vector<EvalValue> arguments);

  const EvalOptions& options() const { return options_; }

  // The StableHLO interpreter's probes (`interpreter.probe`): each visit of a probe id records
  // its value, in order, for `check.expect_serialized_eq` (probe id and `iter`) to compare
  // against, for as long as this evaluator lives (one execution).
  void RecordProbe(const std::string& id, ir::Literal value);
  const ir::Literal* FindProbe(const std::string& id, int64_t iteration) const;

 private:
  struct Frame;
  struct Plan;
  absl::StatusOr<EvalValue> TakeOperand(const ir::Value* value, Frame& frame, const Plan& plan);
  const Plan& GetPlan(const ir::Computation& computation);

  EvalOptions options_;
  // Frames of the computations being run, innermost last: a region (while body, if branch, ...)
  // reads values of the computations around it (implicit capture) by looking further down.
  std::vector<Frame*> frames_;
  // Per-computation use counts, built on first use and dropped when the outermost Run returns
  // (so a later Run sees the IR as it is then).
  std::vector<std::pair<const ir::Computation*, std::unique_ptr<Plan>>> plans_;
  std::map<std::string, std::vector<ir::Literal>> probes_;
};

// ---- For op implementations (compiler/evaluator/eval_*.cc) ----

// Evaluates one instruction given its operand values. `evaluator` runs nested regions
// (reduce bodies, while cond/body, sort comparators, ...) through Evaluator::Run.
using OpEvaluator = absl::StatusOr<std::vector<EvalValue>> (*)(
    const ir::Instruction& instruction, std::vector<EvalValue>& operands, Evaluator& evaluator);

// The dispatch table: one entry per opcode, filled once by the Register*Ops functions below.
class OpTable {
 public:
  void Register(ir::Opcode opcode, OpEvaluator fn);
  OpEvaluator Find(ir::Opcode opcode) const;
  static const OpTable& Get();

 private:
  std::vector<OpEvaluator> table_;
};

// Each op family file registers its opcodes (explicit calls, no static initializers).
void RegisterElementwiseOps(OpTable& table);     // unary/binary/ternary math, compare, convert, select, clamp, bitcast, reduce_precision
void RegisterDataMovementOps(OpTable& table);    // constant, iota, broadcast(_in_dim), reshape, transpose, slice, dynamic_(update_)slice, concatenate, pad, reverse, tuple, get_tuple_element
void RegisterControlFlowOps(OpTable& table);     // while, if, case, call, return, optimization_barrier, map, after_all, async_start, async_done
void RegisterReductionOps(OpTable& table);       // reduce, sort
void RegisterWindowOps(OpTable& table);          // reduce_window, select_and_scatter
void RegisterLinalgOps(OpTable& table);          // dot, dot_general, convolution, fft, cholesky, triangular_solve, batch_norm_*
void RegisterIndexingOps(OpTable& table);        // gather, scatter, dynamic_gather, torch_index_select
void RegisterRandomOps(OpTable& table);          // rng_bit_generator, rng
void RegisterCollectiveOps(OpTable& table);      // replica_id, partition_id, all_reduce, all_gather, reduce_scatter, all_to_all, collective_permute, collective_broadcast
void RegisterCustomCallOps(OpTable& table);      // custom_call targets of JAX's generic lowerings, composite

}  // namespace ember::eval

#endif  // EMBER_COMPILER_EVALUATOR_EVALUATOR_H_
