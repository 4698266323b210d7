// The reduction kernel emitter: one LLVM function for a reduction fusion of the fusion plan
// whose reduces fold the trailing dims (row reductions: sums, maxima and norms over the last
// axes, as softmax, layernorm and losses have them). For each row, the fused producers are
// generated element by element (element_generator.h) into one accumulator per reduce, then the
// epilogue and the reduce results are computed and stored at the row's output element; fused
// producers the program also reads are stored as they are generated. The function is
//   void name(const void* const* inputs, void* const* outputs, int64 row_begin, int64 row_end)
// over output elements (rows) [row_begin, row_end). f32/f64 sums and products of a row fold in
// 32 lanes (element j into lane j mod 32, in order; then the lanes pairwise, and the total after
// the init), so their last bits may differ from the evaluator's sequential fold, but not between
// machines, vector widths or tiers (KernelTier); maxima, minima, integer and bf16/f16 folds are
// exact.
//
// A split reduction (ReducePartsPerRow(layout) = P > 1, reduce_support.h: few long lines) takes
// its partial accumulators after its outputs: outputs[n + k], n = kernel.outputs.size(), is
// reduce k's array of rows * P slots of kSplitSlotBytes each. Its units are the parts first:
// unit r * P + p, for r < rows, folds part p of line r into slot r * P + p (from the fold's
// identity) and stores the outputs over the input space there; then the rows: unit
// rows * P + r folds row r's P partials in order after the init value and stores its outputs.
// Every part must be done before any row is started.
#ifndef EMBER_COMPILER_CODEGEN_REDUCE_EMITTER_H_
#define EMBER_COMPILER_CODEGEN_REDUCE_EMITTER_H_

#include <string>

#include "absl/status/status.h"
#include "compiler/passes/fusion_plan.h"
#include "llvm/IR/Module.h"

namespace ember::codegen {

// Whether EmitReduceKernel takes `kernel`: LayOutReduceKernel (reduce_support.h).
absl::Status EmitReduceKernel(const passes::Kernel& kernel, const std::string& name,
                              llvm::Module& module);

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_REDUCE_EMITTER_H_
