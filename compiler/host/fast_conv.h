// Internal to compiler/host: convolution of the fast host backend, for f64, and for f32 and the
// narrow floats in any mix (widened to f32, f32 accumulation, one rounding), with any
// dimension numbers, window strides, padding (negative too), lhs/rhs dilation, window reversal
// and feature groups. The input is brought to [batch, spatial..., feature] order (no copy when it
// already is), the kernel packed once per run into one [window x in-feature, out-feature]
// matrix per group, and the output rows are computed in blocks: each block gathers its windows
// (im2col, zeros for padding and between dilated elements) and multiplies them with the packed
// kernel through the Eigen GEMM of fast_dot.cc on one thread of the pool. Sums are reassociated,
// so results differ from the evaluator's in the last bits. batch_group_count > 1, other element
// types (integers, complex, f64 mixed with others) and non-row-major layouts are not handled:
// Create fails and the evaluator runs the op.
#ifndef EMBER_COMPILER_HOST_FAST_CONV_H_
#define EMBER_COMPILER_HOST_FAST_CONV_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/host/thread_pool.h"
#include "compiler/ir/module.h"

namespace ember::host::fast {

class ConvKernel {
 public:
  static absl::StatusOr<std::unique_ptr<ConvKernel>> Create(const ir::Instruction& convolution);
  // `lhs`, `rhs` and `out` are dense row-major in the instruction's types.
  void Run(const void* lhs, const void* rhs, void* out, ThreadPool& pool) const;

 private:
  ConvKernel() = default;
  template <typename T>
  void RunTyped(const T* lhs, const T* rhs, T* out, ThreadPool& pool) const;
  // The non-pointwise convolution of canonical `x` with packed kernel `w` into canonical `y`
  // when the input is dilated (a transposed convolution), one output phase at a time (see
  // fast_conv.cc); `coord` and `x_stride` as RunTyped computes them.
  template <typename T>
  void RunPhases(const T* x, const T* w, T* y, const std::vector<std::vector<int64_t>>& coord,
                 const std::vector<int64_t>& x_stride, ThreadPool& pool) const;

  bool f64_ = false;  // f64 throughout; else f32 and narrow floats, computed in f32
  ir::ElementType lhs_type_ = ir::ElementType::kF32, rhs_type_ = ir::ElementType::kF32,
                  out_type_ = ir::ElementType::kF32;
  int64_t batch_ = 0, in_features_ = 0, out_features_ = 0, groups_ = 1;
  int64_t rows_ = 0;        // batch x output spatial positions
  int64_t window_ = 1;      // kernel spatial positions
  std::vector<int64_t> in_spatial_, window_dims_, out_spatial_;
  std::vector<int64_t> strides_, pad_lo_, lhs_dilation_, rhs_dilation_;
  std::vector<bool> reversal_;
  // Element strides of the operands for their logical dims, in canonical order: lhs
  // [batch, spatial..., feature], rhs [spatial..., in feature, out feature], out
  // [batch, spatial..., feature].
  std::vector<int64_t> lhs_strides_, rhs_strides_, out_strides_;
  bool lhs_canonical_ = true, out_canonical_ = true;
  bool pointwise_ = false;  // 1x1 window, stride 1, no padding or dilation, one group
};

}  // namespace ember::host::fast

#endif  // EMBER_COMPILER_HOST_FAST_CONV_H_
