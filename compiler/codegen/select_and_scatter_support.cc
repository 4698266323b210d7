#include "compiler/codegen/select_and_scatter_support.h"

#include <string>
#include <string_view>

#include "compiler/codegen/elemental_support.h"
#include "compiler/codegen/reduce_support.h"
#include "compiler/evaluator/eval_family_support.h"

namespace ember::codegen {
namespace {

namespace fs = eval::family_support;

// Element reads per result element (windows holding it times their positions) at most.
constexpr int64_t kMaxReads = 256;

absl::Status Refuse(std::string_view why) {
  return absl::UnimplementedError(std::string(why));
}

// The compare of a select region `(a, b) { return compare(a, b) }` (or compare(b, a)).
const ir::Instruction* SelectCompare(const ir::Computation& region, ir::ElementType type,
                                     bool& swapped) {
  if (region.parameters().size() != 2 || region.instructions().size() != 2) return nullptr;
  const ir::Instruction& cmp = *region.instructions()[0];
  const ir::Instruction& ret = *region.instructions()[1];
  if (cmp.opcode() != ir::Opcode::kCompare || ret.opcode() != ir::Opcode::kReturn ||
      ret.operands().size() != 1 || cmp.num_results() != 1 || ret.operand(0) != cmp.result() ||
      cmp.operands().size() != 2 || !ElementalOpSupported(cmp)) {
    return nullptr;
  }
  for (const auto& p : region.parameters()) {
    if (!p->type().is_tensor() || !p->type().dims().empty() || p->type().element_type() != type) {
      return nullptr;
    }
  }
  const ir::Value* p0 = region.parameter(0);
  const ir::Value* p1 = region.parameter(1);
  if (cmp.operand(0) == p0 && cmp.operand(1) == p1) {
    swapped = false;
  } else if (cmp.operand(0) == p1 && cmp.operand(1) == p0) {
    swapped = true;
  } else {
    return nullptr;
  }
  return &cmp;
}

}  // namespace

absl::StatusOr<WindowScatter> SelectAndScatterFold(const ir::Instruction& inst) {
  if (inst.opcode() != ir::Opcode::kSelectAndScatter || inst.operands().size() != 3 ||
      inst.num_results() != 1 || inst.regions().size() != 2) {
    return Refuse("not a select_and_scatter of one operand");
  }
  const ir::Value* operand = inst.operand(0);
  const ir::Value* source = inst.operand(1);
  const ir::Value* init = inst.operand(2);
  const ir::Value* out = inst.result();
  for (const ir::Value* v : {operand, source, init, out}) {
    if (!ElementalArraySupported(v)) return Refuse("an element type or layout the emitter lacks");
  }
  const ir::ElementType t = out->type().element_type();
  const std::vector<int64_t>& dims = operand->type().dims();
  const size_t rank = dims.size();
  if (source->type().element_type() != t || init->type().element_type() != t ||
      !init->type().dims().empty() || out->type().dims() != dims ||
      source->type().dims().size() != rank || operand->type().shape().element_count() == 0 ||
      source->type().shape().element_count() == 0) {
    return Refuse("empty or mismatched operand, source, init value or result");
  }
  WindowScatter s;
  s.compare = SelectCompare(*inst.regions()[0], operand->type().element_type(), s.swapped);
  if (s.compare == nullptr) return Refuse("its select is not one compare of its parameters");
  const std::optional<ir::Opcode> scatter = FoldOp(*inst.regions()[1], t);
  if (!scatter.has_value()) {
    return Refuse("its scatter is not one add, multiply, maximum, minimum, and, or or xor");
  }
  s.scatter_op = *scatter;
  const std::vector<int64_t> ones(rank, 1);
  absl::StatusOr<std::vector<int64_t>> window = fs::IntsAttr(inst, "window_dimensions");
  absl::StatusOr<std::vector<int64_t>> strides = fs::IntsAttr(inst, "window_strides", ones);
  absl::StatusOr<std::vector<int64_t>> padding =
      fs::IntsAttr(inst, "padding", std::vector<int64_t>(2 * rank, 0));
  if (!window.ok() || !strides.ok() || !padding.ok() || window->size() != rank ||
      strides->size() != rank || padding->size() != 2 * rank) {
    return Refuse("window attributes that do not match the operand's rank");
  }
  int64_t reads = 1;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t w = (*window)[d], stride = (*strides)[d];
    const int64_t low = (*padding)[2 * d], high = (*padding)[2 * d + 1];
    if (w <= 0 || stride <= 0 || low < 0 || high < 0) {
      return Refuse("a window or stride that is not positive, or negative padding");
    }
    if (w > kMaxReads) return Refuse("a window too large to gather per element");
    const int64_t padded = low + dims[d] + high;
    const int64_t windows = padded < w ? 0 : (padded - w) / stride + 1;
    if (source->type().dims()[d] != windows) return Refuse("a source of the wrong shape");
    s.window.push_back(w);
    s.strides.push_back(stride);
    s.padding_low.push_back(low);
    s.windows.push_back(windows);
    s.holding.push_back((w + stride - 1) / stride);
    reads *= s.holding.back() * w;
    if (reads > kMaxReads) return Refuse("a window too large to gather per element");
  }
  return s;
}

}  // namespace ember::codegen
