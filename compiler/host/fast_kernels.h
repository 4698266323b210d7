// Internal to compiler/host: the fast host kernels the compiled path runs.
//  - FusedKernel: a loop or reduction kernel of the fusion plan, with one or more outputs. It runs
//    over its output space (loop) or its input space (reductions; then the epilogue over the
//    reduces' output space) in chunks of kChunk elements; each fused instruction is a
//    tight loop over the chunk (the compiler vectorizes those), and operand indices for
//    broadcast_in_dim / transpose / slice are computed per chunk (contiguous runs are copied,
//    filled or requested from the operand run by run; index lists only where runs are strided).
//    Results match the reference evaluator bit for bit except in two principled ways: f32 exp,
//    log, tanh and logistic are vectorized polynomials within a few ulp (fast_math.h, with an
//    AVX2 + FMA build chosen at run time), and reductions are reassociated (16 partial
//    accumulators per run; reductions to few outputs split the input across threads with
//    partials started from the op's identity), as XLA:CPU does. Integer, max/min and/or results
//    stay exact. tests/compiler/host/host_backend_test.cc states the tolerances.
//  - DotKernel: dot_general through Eigen (batch dims, any contracting dims), rows split across
//    the thread pool; Eigen is also built for AVX2 + FMA (fast_dot_avx2.cc) and chosen by CPU. Sums are reassociated, so results differ from the evaluator's in the last
//    bits. bf16/f16/f8 operands and results (mixed with f32 too) go through the f32 product
//    with f32 accumulation and one rounding, as XLA:CPU and the evaluator compute them.
#ifndef EMBER_COMPILER_HOST_FAST_KERNELS_H_
#define EMBER_COMPILER_HOST_FAST_KERNELS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/host/thread_pool.h"
#include "compiler/ir/module.h"
#include "compiler/passes/fusion_plan.h"

namespace ember::host::fast {

inline constexpr int64_t kChunk = 1024;

// Element types the fast kernels compute: pred, s32, s64, u8, u32, f32, f64.
bool SupportedType(ir::ElementType type);
// Predicates for the fusion plan.
bool LoopFusible(const ir::Instruction& instruction);
bool ReduceFusible(const ir::Instruction& instruction);
bool DotSupported(const ir::Instruction& instruction);

class FusedKernel {
 public:
  // `kernel.kind` is kLoop or kReduce; an error when some instruction is not one this code runs
  // (the caller then runs the kernel's instructions through the evaluator's op table).
  static absl::StatusOr<std::unique_ptr<FusedKernel>> Create(const passes::Kernel& kernel);
  ~FusedKernel();
  // `inputs[i]` holds kernel.inputs[i] and `outputs[i]` receives kernel.outputs[i] (dense,
  // row-major).
  void Run(absl::Span<const void* const> inputs, absl::Span<void* const> outputs,
           ThreadPool& pool) const;

  // Row groups (passes::RowGroup): whether the kernel can run a range of its rows on its own (loop
  // kernels, and reductions over trailing dims), and that run, on the calling thread: rows
  // [begin, end) of `rows` (which must divide the kernel's outputs; a reduction's input rows
  // follow its output rows). Writes only those rows of the outputs.
  bool RunsByRows() const { return reductions_.empty() || row_ > 0; }
  void RunRows(absl::Span<const void* const> inputs, absl::Span<void* const> outputs,
               int64_t rows, int64_t begin, int64_t end) const;

  struct Node;
  // A value computed per element of the body (the loop space, or a reduction's input space) or of
  // the epilogue (a reduction's output space), written to kernel output `output`.
  struct Store {
    int node = -1;
    int output = -1;
  };
  struct Reduction {
    int input_node = -1;
    int init_input = -1;
    int op = 0;  // ir::Opcode
    bool accumulator_first = true;
    ir::ElementType type = ir::ElementType::kInvalid;
    int output = -1;  // the kernel output it is, or -1 (read only by the epilogue)
  };

 private:
  FusedKernel() = default;
  // Loop kernels: body elements [begin, end). Reductions: body elements [begin, end), folded into
  // `accs` (accumulator r holds outputs [acc_base, ...)).
  void LoopRange(absl::Span<const void* const> inputs, absl::Span<void* const> outs,
                 int64_t begin, int64_t end) const;
  void FoldRange(absl::Span<const void* const> inputs, absl::Span<void* const> outs,
                 int64_t begin, int64_t end, absl::Span<void* const> accs,
                 int64_t acc_base) const;
  // The epilogue's outputs [begin, end), from finished accumulators.
  void EpilogueRange(absl::Span<const void* const> inputs, absl::Span<void* const> outs,
                     absl::Span<void* const> accs, int64_t acc_base, int64_t begin,
                     int64_t end) const;
  void FillInit(absl::Span<const void* const> inputs, absl::Span<void* const> accs,
                int64_t n) const;
  std::vector<Node> nodes_;
  int slots_ = 0;  // scratch slots of kChunk 8-byte words each
  int num_inputs_ = 0;
  std::vector<Store> body_stores_;
  std::vector<Store> epilogue_stores_;
  std::vector<Reduction> reductions_;  // all over the same input dims and reduced dims
  int64_t body_elements_ = 0;    // loop: output elements; reduction: input elements
  int64_t output_elements_ = 0;  // reduction outputs
  std::vector<int64_t> input_dims_;
  std::vector<int64_t> out_index_stride_;  // per input dim: stride in the output (0: reduced)
  int64_t row_ = 0;  // > 0: the reduced dims are the trailing ones, each output reads `row_`
                     // consecutive inputs (rows can then be split across threads)
};

class DotKernel {
 public:
  static absl::StatusOr<std::unique_ptr<DotKernel>> Create(const ir::Instruction& instruction);
  void Run(const void* lhs, const void* rhs, void* out, ThreadPool& pool) const;

 private:
  DotKernel() = default;
  bool f64_ = false;  // f64 throughout; else f32 and narrow floats, computed in f32
  ir::ElementType lhs_type_ = ir::ElementType::kF32, rhs_type_ = ir::ElementType::kF32,
                  out_type_ = ir::ElementType::kF32;
  int64_t batch_ = 1, m_ = 1, k_ = 1, n_ = 1;
  // Operand views: true when the operand is already [B, M, K] (lhs) / [B, K, N] (rhs) row-major,
  // false when it is [B, K, M] / [B, N, K]; `*_perm_` non-empty: copy through that permutation
  // into [B, M, K] / [B, K, N] first.
  bool lhs_row_major_ = true, rhs_row_major_ = true;
  std::vector<int64_t> lhs_perm_, rhs_perm_, lhs_dims_, rhs_dims_;
};

}  // namespace ember::host::fast

#endif  // EMBER_COMPILER_HOST_FAST_KERNELS_H_
