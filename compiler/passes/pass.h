// The pass manager: a Pass rewrites an ir::Module in place and says whether it changed it; a
// PassPipeline runs passes in order and can hand the module to a callback after each one (the
// driver's dumps use this, so every stage of a compile can be read back).
#ifndef EMBER_COMPILER_PASSES_PASS_H_
#define EMBER_COMPILER_PASSES_PASS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/ir/module.h"

namespace ember::passes {

class Pass {
 public:
  virtual ~Pass() = default;
  // Short, stable, file-name friendly ("inline", "cse", "algsimp").
  virtual std::string name() const = 0;
  // Returns whether the module changed.
  virtual absl::StatusOr<bool> Run(ir::Module& module) = 0;
};

class PassPipeline {
 public:
  // Called after each pass with its position (0, 1, ...), its name and whether it changed the
  // module. An error from the callback stops the pipeline.
  using AfterPass = std::function<absl::Status(int index, const std::string& pass_name,
                                               bool changed, const ir::Module& module)>;

  void Add(std::unique_ptr<Pass> pass) { passes_.push_back(std::move(pass)); }
  void set_after_pass(AfterPass callback) { after_pass_ = std::move(callback); }
  // When set, the module is verified after every pass that changed it (errors name the pass).
  void set_verify(bool verify) { verify_ = verify; }
  const std::vector<std::unique_ptr<Pass>>& passes() const { return passes_; }

  // Runs every pass once, in order. Returns whether any pass changed the module.
  absl::StatusOr<bool> Run(ir::Module& module);

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
  AfterPass after_pass_;
  bool verify_ = true;
};

// The passes (each in its own file).
std::unique_ptr<Pass> CreateInlinePass();             // func.call and composites -> their bodies
std::unique_ptr<Pass> CreateAlgebraicSimplifierPass();  // x+0, x*1, no-op shape ops, ...
std::unique_ptr<Pass> CreateConstantFoldingPass();    // small results of constant operands
std::unique_ptr<Pass> CreateCsePass();                // identical pure instructions
std::unique_ptr<Pass> CreateDcePass();                // unused pure instructions
// Values control flow's regions capture -> explicit operands and region parameters of while
// loops, ifs and cases (explicit_captures.cc).
std::unique_ptr<Pass> CreateExplicitCapturesPass();
// Batch-grouped convolutions -> feature-grouped ones (convolution_batch_groups.cc).
std::unique_ptr<Pass> CreateConvolutionBatchGroupsPass();
// Quantized tensors -> storage integers and float math (legalize_quantized.cc).
std::unique_ptr<Pass> CreateLegalizeQuantizedPass();

// Replica groups named by mesh axes -> explicit device-id groups (resolve_mesh_axes.cc).
std::unique_ptr<Pass> CreateResolveMeshAxesPass();

// Reductions of collectives -> ones a transport runs: a reduction kind on a transport type
// (legalize_collectives.cc).
std::unique_ptr<Pass> CreateLegalizeCollectivesPass();

// An SPMD program's entry -> the per-device program: split arguments gathered, the computation
// replicated, split results cut, manual computations per device (spmd_replicate.cc).
std::unique_ptr<Pass> CreateSpmdReplicatePass(int64_t num_partitions);

// An SPMD program's entry -> the per-device program with the work split: sharding propagation,
// then each op on its operands' blocks with the collectives that keep it correct; what it
// cannot split runs on global values, and programs it cannot handle go to spmd-replicate
// (spmd_partition.cc). What it did (collectives inserted, each fallback with the bytes it
// gathers) is the module's string attribute kSpmdReportAttribute.
inline constexpr char kSpmdReportAttribute[] = "ember.spmd_report";
std::unique_ptr<Pass> CreateSpmdPartitionPass(int64_t num_partitions);

// All-reduces that can run together -> one variadic all_reduce (combine_all_reduces.cc).
std::unique_ptr<Pass> CreateCombineAllReducesPass();

// Lowerings every backend needs before it can run a module (the evaluator included):
// resolve-mesh-axes, legalize-quantized, legalize-collectives.
PassPipeline CreateRequiredLoweringPipeline();

// The default optimization pipeline the driver runs before handing the module to a backend.
PassPipeline CreateDefaultPipeline();

}  // namespace ember::passes

#endif  // EMBER_COMPILER_PASSES_PASS_H_
