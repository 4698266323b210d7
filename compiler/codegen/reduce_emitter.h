// The reduction kernel emitter: one LLVM function for a reduction fusion of the fusion plan
// whose reduces fold the trailing dims (row reductions: sums, maxima and norms over the last
// axes, as softmax, layernorm and losses have them). For each row, the fused producers are
// generated element by element (element_generator.h) into one accumulator per reduce, then the
// epilogue and the reduce results are computed and stored at the row's output element; fused
// producers the program also reads are stored as they are generated. The function is
//   void name(const void* const* inputs, void* const* outputs, int64 row_begin, int64 row_end)
// over output elements (rows) [row_begin, row_end). Float sums and products are reassociated
// within a row (vector lanes, as the chunked kernels' partial sums), so their last bits may
// differ from the evaluator's sequential fold; maxima, minima and integer folds are exact.
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
