// The element generator of the kernel emitters: the LLVM value of one element of a kernel's
// value at an index, generated the way XLA's elemental IR emitter does. Index ops
// (broadcast_in_dim, reshape, transpose, slice, iota, reverse, pad, concatenate, dynamic_slice,
// gather) map the index to their operand's, kernel inputs are loaded at their index, elementwise
// ops go to the elemental emitter, a reduce_window folds its operand's elements over the window
// (straight-line code for small windows, loops for large ones), a select_and_scatter gathers
// what the windows holding the element scatter to it. Loop and reduction kernels
// (loop_emitter.h, reduce_emitter.h) share it; a GPU target would call it from a thread index.
#ifndef EMBER_COMPILER_CODEGEN_ELEMENT_GENERATOR_H_
#define EMBER_COMPILER_CODEGEN_ELEMENT_GENERATOR_H_

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/codegen/elemental_emitter.h"
#include "compiler/passes/fusion_plan.h"
#include "llvm/IR/IRBuilder.h"

namespace ember::codegen {

// Static bounds of an index component: lo <= component < hi.
struct IndexRange {
  int64_t lo = 0;
  int64_t hi = 0;
};

// An element index into a value of dims `dims`: the row-major linear index, and the index per
// dim, computed from the linear one only when an index op asks (`multi` empty until then).
// `ranges` holds bounds tighter than a dim's own where the caller knows them (the loop emitter's
// row segment, row_segments.h); index ops map them to their operands, and a concatenate or pad
// whose pick they fix reads the one operand (or the padding) without clamps and selects.
struct ElementIndex {
  int id = 0;
  const std::vector<int64_t>* dims = nullptr;
  llvm::Value* linear = nullptr;
  std::vector<llvm::Value*> multi;
  std::vector<std::optional<IndexRange>> ranges;  // empty, or one per dim
};

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);

// A kernel function `name` in `module`, as every host kernel has it:
//   void name(const void* const* inputs, void* const* outputs, int64 begin, int64 end)
llvm::Function* DeclareKernelFunction(llvm::Module& module, const std::string& name);

// Marks the element loops `back_edges` close as parallel (llvm.loop.parallel_accesses): no
// iteration reads what another writes (each writes its own output elements; an output shares
// memory only with an input read at the same element, before the store: buffer assignment frees
// a slot only after its last reader). LLVM then vectorizes without run-time overlap checks and
// the scalar copy of the body behind them, and also where it cannot prove the inputs and outputs
// apart (rows read at computed positions). Every memory access in `blocks` joins the loops'
// access group. With `interleave`, a body of at least kLatencyBoundFloatOps floating-point
// operations is interleaved by two (two vectors per iteration).
inline constexpr int kLatencyBoundFloatOps = 16;
void MarkLoopsParallel(const std::vector<llvm::BasicBlock*>& blocks,
                       const std::vector<llvm::BranchInst*>& back_edges, bool interleave = false);

class ElementGenerator {
 public:
  ElementGenerator(const passes::Kernel& kernel, llvm::IRBuilderBase& builder,
                   ElementalEmitter& elemental);

  // In the function's entry block: the kernel inputs' addresses from `inputs` (an array of
  // pointers in kernel.inputs order); rank-0 inputs are loaded (or folded, for constants) once.
  void LoadInputs(llvm::Value* inputs);

  // A new index into a value of `dims` (which must outlive the generator); its `linear` (and,
  // optionally, `multi`) are the caller's to set.
  ElementIndex& NewIndex(const std::vector<int64_t>* dims);

  // Element `index` of `value`: an input's load or the kernel's computation of it. Generated
  // code is reused for the same (value, index) until NewScope.
  absl::StatusOr<llvm::Value*> Generate(const ir::Value* value, ElementIndex& index);

  // `value` is `element` at every index asked until NewScope (a reduction's accumulator, read by
  // an epilogue whose index ops all keep the output element).
  void Bind(const ir::Value* value, llvm::Value* element);

  // Code generated from here on is in blocks the earlier code may not dominate (another loop):
  // nothing generated before is reused, except the entry block's scalars.
  void NewScope();

  // The index per dim of `index` (computed from its linear index the first time).
  const std::vector<llvm::Value*>& Multi(ElementIndex& index);
  // The row-major linear index of `multi` into `dims`.
  llvm::Value* Linearize(const std::vector<llvm::Value*>& multi, const std::vector<int64_t>& dims);
  // Component `k` of the index vectors of `indices` at batch index `batch` (an index without
  // `index_vector_dim`), widened to int64 by its signedness: gather's and scatter's starts.
  absl::StatusOr<llvm::Value*> IndexComponent(const ir::Value* indices, int64_t index_vector_dim,
                                              const std::vector<llvm::Value*>& batch, int64_t k);
  // An integer element of `type` as int64, by its signedness.
  llvm::Value* ToInt64(llvm::Value* element, ir::ElementType type);
  // The address of kernel input `value`'s buffer (after LoadInputs).
  absl::StatusOr<llvm::Value*> InputAddress(const ir::Value* value) const;

 private:
  ElementIndex& ScalarIndex();
  // The bounds of component `d` of `index`: its known range, else [0, dims[d]).
  static IndexRange RangeOf(const ElementIndex& index, size_t d);
  // Sets the known range of component `d` of `index`.
  static void SetRange(ElementIndex& index, size_t d, IndexRange range);
  absl::StatusOr<llvm::Value*> GenerateUncached(const ir::Value* value, ElementIndex& index);
  // A reduce_window's element: its window folded in row-major order from the init value, with
  // the init value at padding and base-dilation holes (the evaluator's definition).
  absl::StatusOr<llvm::Value*> GenerateReduceWindow(const ir::Instruction& instruction,
                                                    ElementIndex& index);
  // A select_and_scatter's element, gathered: the source elements of the windows holding it
  // whose pick it is, folded from the init value in the source's row-major order.
  absl::StatusOr<llvm::Value*> GenerateSelectAndScatter(const ir::Instruction& instruction,
                                                        ElementIndex& index);

  static inline const std::vector<int64_t> kNoDims;

  const passes::Kernel& kernel_;
  llvm::IRBuilderBase& b_;
  ElementalEmitter& elemental_;
  std::unordered_set<const ir::Instruction*> in_kernel_;
  std::map<const ir::Value*, llvm::Value*> input_base_;
  std::map<const ir::Value*, llvm::Value*> scalars_;
  std::map<const ir::Value*, llvm::Value*> bound_;
  std::deque<ElementIndex> indices_;
  ElementIndex* scalar_index_ = nullptr;
  std::map<std::pair<const ir::Value*, int>, llvm::Value*> memo_;
};

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_ELEMENT_GENERATOR_H_
