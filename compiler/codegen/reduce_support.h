// Which reduction fusions the code generator takes, and their layout (asked without LLVM, by
// backends planning kernels, and by the reduction emitter).
#ifndef EMBER_COMPILER_CODEGEN_REDUCE_SUPPORT_H_
#define EMBER_COMPILER_CODEGEN_REDUCE_SUPPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/passes/fusion_plan.h"

namespace ember::codegen {

// A reduction kernel whose reduces all fold the same consecutive dims of one input space, seen
// as [outer, row_length, inner] (kept dims before, folded dims, kept dims after): its output
// space is `rows` = outer * inner elements, each the fold of `row_length` input elements
// `inner` apart (consecutive ones when inner is 1: a row reduction).
struct ReduceKernelLayout {
  std::vector<const ir::Instruction*> reduces;
  std::vector<ir::Opcode> ops;  // per reduce: its body's op (add, multiply, maximum, ...)
  const std::vector<int64_t>* input_dims = nullptr;
  const std::vector<int64_t>* output_dims = nullptr;
  int64_t rows = 0;
  int64_t row_length = 0;
  int64_t outer = 1;
  int64_t inner = 1;
  int first_folded = 0;  // the first folded dim
  // Per kernel output: computed over the output space (a reduce result or its epilogue), else
  // over the input space (a fused producer the program also reads).
  std::vector<bool> over_output;
};

// Reductions over few long lines fold each line in parts on several threads (a split
// reduction): parts of at least kSplitPartElements input elements, at most kSplitMaxParts a line,
// where the kernel has fewer than kSplitMaxRows output elements. The part count depends on the
// shapes alone, so results do not depend on the machine's thread count.
inline constexpr int64_t kSplitMaxRows = 16;
inline constexpr int64_t kSplitPartElements = 32768;
inline constexpr int64_t kSplitMaxParts = 64;
// The bytes of one partial accumulator's slot (any element type's fits).
inline constexpr int64_t kSplitSlotBytes = 16;

// Parts per output element of `layout` (1: not split). Only folds whose order may change are
// split: integer and pred folds (exact in any order), maxima and minima, and f32/f64 sums and
// products (reassociated, as row folds already are); bf16/f16 folds round after every step in
// the evaluator's order, and complex folds have no exact identity to start a part from: neither
// is split.
int64_t ReducePartsPerRow(const ReduceKernelLayout& layout);

// The op of a fold region `(a, b) { return op(a, b) }` (either operand order) over scalars of
// `type` (the evaluator's MatchSimpleBinaryRegion), when the emitters fold with it: add,
// multiply, maximum, minimum, and and, or and xor of integers and pred only.
std::optional<ir::Opcode> FoldOp(const ir::Computation& region, ir::ElementType type);
// FoldOp of the one region of `instruction` (a reduce, a reduce_window).
std::optional<ir::Opcode> BodyOp(const ir::Instruction& instruction, ir::ElementType type);

// Whether `instruction` is a reduce the reduction emitter folds (one input of a supported type,
// a scalar init, a body of one add, multiply, maximum, minimum, and, or or xor): a backend's
// fusion predicate (which dims it folds is the kernel's question, LayOutReduceKernel).
bool ReduceFusibleByCodegen(const ir::Instruction& instruction);

// The layout of `kernel` when EmitReduceKernel (reduce_emitter.h) emits it, else why not.
absl::StatusOr<ReduceKernelLayout> LayOutReduceKernel(const passes::Kernel& kernel);

// Empty when EmitRegionReduceKernel (region_reduce_emitter.h) emits `kernel`: one reduce (its
// root, with fused elementwise and index producers, no epilogue), of any number of inputs, over
// any dims, whose body is a scalar region the elemental emitter takes (argmax's value-and-index
// fold, a sum over dims apart); else why not.
std::string RegionReduceKernelRefusal(const passes::Kernel& kernel);
// The reduce of a kernel RegionReduceKernelRefusal takes.
const ir::Instruction& RegionReduceOf(const passes::Kernel& kernel);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_REDUCE_SUPPORT_H_
