// Internal to compiler/host: the library kernels of the compiled host path.
//  - DotKernel: dot_general through Eigen (batch dims, any contracting dims), rows split across
//    the thread pool; Eigen is also built for AVX2 + FMA and for AVX-512 (fast_dot_avx2.cc,
//    fast_dot_avx512.cc), the widest the CPU runs chosen at run time.
//    Sums are reassociated, so results differ from the evaluator's in the last bits. bf16/f16/f8
//    operands and results (mixed with f32 too) go through the f32 product with f32 accumulation and
//    one rounding, as XLA:CPU and the evaluator compute them. f64, c64 and c128 are computed in
//    their own type; integers of any widths in uint32 (results up to 32 bits) or uint64, so they
//    wrap in the result's width exactly as the evaluator's sums (bit-equal: integer sums do not
//    depend on their order). pred dots stay on the evaluator.
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
  template <typename T>
  void RunSameType(const void* lhs, const void* rhs, void* out, ThreadPool& pool) const;
  template <typename Acc>
  void RunIntegers(const void* lhs, const void* rhs, void* out, ThreadPool& pool) const;
  // How the product is computed: f32 and narrow floats in f32; f64, c64, c128 in their own type;
  // integers in uint32 (results up to 32 bits wide) or uint64.
  enum class Kind { kWidenedToF32, kF64, kC64, kC128, kInteger32, kInteger64 };
  Kind kind_ = Kind::kWidenedToF32;
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
