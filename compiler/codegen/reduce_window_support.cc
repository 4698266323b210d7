#include "compiler/codegen/reduce_window_support.h"

#include <string>
#include <string_view>

#include "compiler/codegen/elemental_support.h"
#include "compiler/codegen/reduce_support.h"
#include "compiler/evaluator/eval_family_support.h"

namespace ember::codegen {
namespace {

namespace fs = eval::family_support;

// Cumulative windows longer than this stay with the evaluator's O(n) scan.
constexpr int64_t kMaxCumulativeWindow = 64;

absl::Status Refuse(std::string_view why) {
  return absl::UnimplementedError(std::string(why));
}

}  // namespace

absl::StatusOr<WindowFold> ReduceWindowFold(const ir::Instruction& inst) {
  if (inst.opcode() != ir::Opcode::kReduceWindow || inst.operands().size() != 2 ||
      inst.num_results() != 1 || inst.regions().size() != 1) {
    return Refuse("not a reduce_window of one operand");
  }
  const ir::Value* in = inst.operand(0);
  const ir::Value* init = inst.operand(1);
  const ir::Value* out = inst.result();
  if (!ElementalArraySupported(in) || !ElementalArraySupported(init) ||
      !ElementalArraySupported(out)) {
    return Refuse("an element type or layout the emitter lacks");
  }
  const ir::ElementType t = out->type().element_type();
  if (in->type().element_type() != t || init->type().element_type() != t ||
      !init->type().dims().empty() || in->type().shape().element_count() == 0) {
    return Refuse("an empty operand, or an init value that is no scalar of its type");
  }
  const std::optional<ir::Opcode> op = BodyOp(inst, t);
  if (!op.has_value()) {
    return Refuse("its body is not one add, multiply, maximum, minimum, and, or or xor");
  }
  const std::vector<int64_t>& dims = in->type().dims();
  const size_t rank = dims.size();
  absl::StatusOr<fs::WindowParams> p = fs::ReadWindowParams(inst, static_cast<int64_t>(rank));
  if (!p.ok() || p->window_dimensions.size() != rank || p->window_strides.size() != rank ||
      p->base_dilations.size() != rank || p->window_dilations.size() != rank ||
      p->padding.size() != 2 * rank) {
    return Refuse("window attributes that do not match the operand's rank");
  }
  for (size_t d = 0; d < rank; ++d) {
    if (p->window_dimensions[d] <= 0 || p->window_strides[d] <= 0 || p->base_dilations[d] <= 0 ||
        p->window_dilations[d] <= 0) {
      return Refuse("a window, stride or dilation that is not positive");
    }
  }
  const std::vector<int64_t>& out_dims = out->type().dims();
  if (fs::WindowResultDims(dims, *p) != out_dims) return Refuse("a result of the wrong shape");
  if (std::optional<fs::CumulativeAxis> axis = fs::FindCumulativeAxis(dims, *p)) {
    const bool reordered =
        ir::IsFloat(t) && (*op == ir::Opcode::kAdd || *op == ir::Opcode::kMultiply);
    if (reordered) {
      return Refuse("a cumulative float sum or product (the evaluator folds it in XLA's order)");
    }
    if (p->window_dimensions[axis->axis] > kMaxCumulativeWindow) {
      return Refuse("a long cumulative window (the evaluator's scan is O(n), a fold per window "
                    "O(n^2))");
    }
  }
  WindowFold fold;
  fold.op = *op;
  fold.window = p->window_dimensions;
  fold.strides = p->window_strides;
  fold.base_dilations = p->base_dilations;
  fold.window_dilations = p->window_dilations;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t low = p->padding[2 * d];
    fold.padding_low.push_back(low);
    // The position read grows with the result index and the window index: the first one
    // (-low) and the last one bound all.
    const int64_t last = (out_dims[d] - 1) * fold.strides[d] +
                         (fold.window[d] - 1) * fold.window_dilations[d] - low;
    fold.always_inside.push_back(fold.base_dilations[d] == 1 && low <= 0 && last < dims[d]);
    fold.positions *= fold.window[d];
  }
  return fold;
}

}  // namespace ember::codegen
