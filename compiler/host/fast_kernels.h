// Internal to compiler/host: the library kernels of the compiled host path.
//  - DotKernel: dot_general through Eigen (batch dims, any contracting dims), rows split across
//    the thread pool; Eigen is also built for AVX2 + FMA (fast_dot_avx2.cc) and chosen by CPU.
//    Sums are reassociated, so results differ from the evaluator's in the last bits. bf16/f16/f8
//    operands and results (mixed with f32 too) go through the f32 product with f32 accumulation and
//    one rounding, as XLA:CPU and the evaluator compute them.
#ifndef EMBER_COMPILER_HOST_FAST_KERNELS_H_
#define EMBER_COMPILER_HOST_FAST_KERNELS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/host/thread_pool.h"
#include "compiler/ir/module.h"

namespace ember::host::fast {

// The fusion plan's predicate for dot kernels.
bool DotSupported(const ir::Instruction& instruction);

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
