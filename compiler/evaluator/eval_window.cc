// Reference evaluation of the windowed ops: reduce_window (variadic, with base and window
// dilations and padding) and select_and_scatter.
//
// Choices where the spec leaves room:
// - reduce_window follows the spec literally: padding and base-dilation holes hold the init
//   values and take part in the reduction (XLA skips them; the two agree whenever the init value
//   is the body's identity, which is how frameworks use the op). Each window is reduced
//   sequentially in row-major window order, starting from the init values: acc = body(acc, x).
// - select_and_scatter selects among the window elements that lie inside the operand (padding is
//   never selected), scanning in row-major window order and keeping the current pick while
//   select(current, candidate) is true. Windows with no element inside the operand scatter
//   nothing. Each result element starts as init_value and is updated as
//   scatter(current, source) in row-major order of the source.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "compiler/evaluator/eval_elementwise.h"
#include "compiler/evaluator/eval_family_support.h"
#include "compiler/evaluator/evaluator.h"

namespace ember::eval {

namespace fs = family_support;

namespace family_support {

absl::StatusOr<std::vector<EvalValue>> ReduceWindowCore(
    const ir::Instruction& inst, const std::vector<const ir::Literal*>& inputs,
    const std::vector<const ir::Literal*>& inits, const WindowParams& p,
    const ir::Computation& body, Evaluator& evaluator) {
  const size_t n = inputs.size();
  if (n == 0 || inits.size() != n || inst.num_results() != n) {
    return OpError(inst, absl::StrCat("needs as many inputs, init values and results; got ", n,
                                      ", ", inits.size(), " and ", inst.num_results()));
  }
  const std::vector<int64_t>& dims = inputs[0]->shape().dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  for (size_t i = 0; i < n; ++i) {
    if (inputs[i]->shape().dims() != dims) return OpError(inst, "inputs differ in shape");
    if (inits[i]->shape().rank() != 0) return OpError(inst, "init values must be scalars");
  }
  auto size_ok = [&](const std::vector<int64_t>& v, int64_t want) {
    return static_cast<int64_t>(v.size()) == want;
  };
  if (!size_ok(p.window_dimensions, rank) || !size_ok(p.window_strides, rank) ||
      !size_ok(p.base_dilations, rank) || !size_ok(p.window_dilations, rank) ||
      !size_ok(p.padding, 2 * rank)) {
    return OpError(inst, absl::StrCat("window attributes do not match the input rank ", rank));
  }
  std::vector<int64_t> result_dims(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) {
    if (p.window_dimensions[i] <= 0 || p.window_strides[i] <= 0 || p.base_dilations[i] <= 0 ||
        p.window_dilations[i] <= 0) {
      return OpError(inst, "window dimensions, strides and dilations must be positive");
    }
    const int64_t dilated = dims[i] == 0 ? 0 : (dims[i] - 1) * p.base_dilations[i] + 1;
    const int64_t padded = p.padding[2 * i] + dilated + p.padding[2 * i + 1];
    const int64_t window = (p.window_dimensions[i] - 1) * p.window_dilations[i] + 1;
    result_dims[i] =
        (padded <= 0 || window > padded) ? 0 : (padded - window) / p.window_strides[i] + 1;
  }
  std::vector<ir::Literal> results;
  for (size_t i = 0; i < n; ++i) {
    EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ResultShape(inst, i));
    if (shape.dims() != result_dims) {
      return OpError(inst, absl::StrCat("result shape ", shape.ToString(), " does not match [",
                                        absl::StrJoin(result_dims, ", "), "]"));
    }
    if (shape.element_type() != inits[i]->element_type()) {
      return OpError(inst, "result element types must match the init values'");
    }
    EMBER_ASSIGN_OR_RETURN(ir::Literal r, ir::Literal::Create(shape));
    results.push_back(std::move(r));
  }
  if (Product(result_dims) == 0) {
    std::vector<EvalValue> out;
    for (ir::Literal& r : results) out.push_back(EvalValue::Array(std::move(r)));
    return out;
  }
  // For every result element (row-major) and window position (row-major), the input element
  // it reads, or -1 for padding and base-dilation holes (which hold the init value).
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  const int64_t window_size = Product(p.window_dimensions);
  const int64_t result_count = Product(result_dims);
  std::vector<int64_t> sources;
  sources.reserve(static_cast<size_t>(result_count * window_size));
  {
    std::vector<int64_t> ri(static_cast<size_t>(rank), 0), wi(static_cast<size_t>(rank), 0);
    do {
      std::fill(wi.begin(), wi.end(), 0);
      do {
        int64_t src = 0;
        for (int64_t d = 0; d < rank && src >= 0; ++d) {
          const int64_t q =
              ri[d] * p.window_strides[d] + wi[d] * p.window_dilations[d] - p.padding[2 * d];
          if (q < 0 || q % p.base_dilations[d] != 0 || q / p.base_dilations[d] >= dims[d]) {
            src = -1;
          } else {
            src += (q / p.base_dilations[d]) * strides[d];
          }
        }
        sources.push_back(src);
      } while (NextIndex(wi, p.window_dimensions));
    } while (NextIndex(ri, result_dims));
  }
  for (size_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < result_count; ++j) CopyElement(*inits[i], 0, results[i], j);
  }
  // Fast path: one input and a body that is a single foldable binary op (same element
  // functions as the elementwise ops, so bit-identical to running the body).
  if (n == 1 && inputs[0]->element_type() == results[0].element_type()) {
    if (std::optional<SimpleBinaryRegion> simple =
            MatchSimpleBinaryRegion(body, results[0].element_type())) {
      EMBER_ASSIGN_OR_RETURN(
          ir::Shape gathered_shape,
          ir::Shape::Make(results[0].element_type(), {static_cast<int64_t>(sources.size())}));
      EMBER_ASSIGN_OR_RETURN(ir::Literal gathered, ir::Literal::Create(gathered_shape));
      std::vector<int64_t> targets(sources.size());
      for (size_t k = 0; k < sources.size(); ++k) {
        if (sources[k] >= 0) {
          CopyElement(*inputs[0], sources[k], gathered, static_cast<int64_t>(k));
        } else {
          CopyElement(*inits[0], 0, gathered, static_cast<int64_t>(k));
        }
        targets[k] = static_cast<int64_t>(k) / window_size;
      }
      EMBER_ASSIGN_OR_RETURN(ir::Literal acc, results[0].Clone());
      if (FoldElements(*simple, gathered, targets, acc)) {
        std::vector<EvalValue> out;
        out.push_back(EvalValue::Array(std::move(acc)));
        return out;
      }
    }
  }
  for (int64_t linear = 0; linear < result_count; ++linear) {
    std::vector<ir::Literal> acc;
    for (size_t i = 0; i < n; ++i) {
      EMBER_ASSIGN_OR_RETURN(ir::Literal a, inits[i]->Clone());
      acc.push_back(std::move(a));
    }
    for (int64_t w = 0; w < window_size; ++w) {
      const int64_t src = sources[linear * window_size + w];
      std::vector<ir::Literal> args;
      for (ir::Literal& a : acc) args.push_back(std::move(a));
      for (size_t i = 0; i < n; ++i) {
        EMBER_ASSIGN_OR_RETURN(ir::Literal x,
                               src >= 0 ? ScalarAt(*inputs[i], src) : inits[i]->Clone());
        args.push_back(std::move(x));
      }
      EMBER_ASSIGN_OR_RETURN(std::vector<EvalValue> out,
                             RunRegion(evaluator, body, std::move(args)));
      if (out.size() != n) return OpError(inst, "body returned the wrong number of values");
      acc.clear();
      for (EvalValue& v : out) {
        if (v.kind != EvalValue::Kind::kArray || v.array.shape().rank() != 0) {
          return OpError(inst, "body must return scalars");
        }
        acc.push_back(std::move(v.array));
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (acc[i].element_type() != results[i].element_type()) {
        return OpError(inst, "body result type differs from the result element type");
      }
      CopyElement(acc[i], 0, results[i], linear);
    }
  }
  std::vector<EvalValue> out;
  for (ir::Literal& r : results) out.push_back(EvalValue::Array(std::move(r)));
  return out;
}

}  // namespace family_support

namespace {

absl::StatusOr<fs::WindowParams> ReadWindow(const ir::Instruction& inst, int64_t rank) {
  fs::WindowParams p;
  const std::vector<int64_t> ones(static_cast<size_t>(rank), 1);
  EMBER_ASSIGN_OR_RETURN(p.window_dimensions, fs::IntsAttr(inst, "window_dimensions"));
  EMBER_ASSIGN_OR_RETURN(p.window_strides, fs::IntsAttr(inst, "window_strides", ones));
  EMBER_ASSIGN_OR_RETURN(p.base_dilations, fs::IntsAttr(inst, "base_dilations", ones));
  EMBER_ASSIGN_OR_RETURN(p.window_dilations, fs::IntsAttr(inst, "window_dilations", ones));
  EMBER_ASSIGN_OR_RETURN(
      p.padding,
      fs::IntsAttr(inst, "padding", std::vector<int64_t>(static_cast<size_t>(2 * rank), 0)));
  return p;
}

absl::StatusOr<std::vector<EvalValue>> EvalReduceWindow(const ir::Instruction& inst,
                                                        std::vector<EvalValue>& operands,
                                                        Evaluator& evaluator) {
  if (operands.empty() || operands.size() % 2 != 0) {
    return fs::OpError(inst, "expects inputs followed by as many init values");
  }
  if (inst.regions().size() != 1) return fs::OpError(inst, "expects one body region");
  const size_t n = operands.size() / 2;
  std::vector<const ir::Literal*> inputs, inits;
  for (size_t i = 0; i < 2 * n; ++i) {
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* p, fs::ArrayOperand(inst, operands, i));
    (i < n ? inputs : inits).push_back(p);
  }
  EMBER_ASSIGN_OR_RETURN(fs::WindowParams params, ReadWindow(inst, inputs[0]->shape().rank()));
  return fs::ReduceWindowCore(inst, inputs, inits, params, *inst.regions()[0], evaluator);
}

// A select region that is one compare of its two parameters with the natural compare type
// (IEEE quiet predicates for floats, by value for integers), evaluated without running it.
// Unsigned 64-bit and every type the region might order differently are left to the region.
struct SimpleSelect {
  std::string direction;
  bool swapped;  // compare(p1, p0)
};

std::optional<SimpleSelect> MatchSelect(const ir::Computation& region, ir::ElementType type) {
  if (!(ir::IsFloat(type) || (ir::IsInteger(type) && type != ir::ElementType::kU64))) {
    return std::nullopt;
  }
  if (region.parameters().size() != 2 || region.instructions().size() != 2) return std::nullopt;
  const ir::Instruction& cmp = *region.instructions()[0];
  const ir::Instruction& ret = *region.instructions()[1];
  if (cmp.opcode() != ir::Opcode::kCompare || ret.opcode() != ir::Opcode::kReturn ||
      ret.operands().size() != 1 || cmp.num_results() != 1 || ret.operand(0) != cmp.result(0) ||
      cmp.operands().size() != 2) {
    return std::nullopt;
  }
  for (const auto& p : region.parameters()) {
    if (!p->type().is_tensor() || !p->type().dims().empty() || p->type().element_type() != type) {
      return std::nullopt;
    }
  }
  const ir::Attribute* dir = cmp.attribute("comparison_direction");
  if (dir == nullptr || dir->kind != ir::Attribute::Kind::kString) return std::nullopt;
  const std::string& d = dir->s;
  if (d != "EQ" && d != "NE" && d != "GE" && d != "GT" && d != "LE" && d != "LT") {
    return std::nullopt;
  }
  if (const ir::Attribute* ct = cmp.attribute("compare_type")) {
    const std::string natural =
        ir::IsFloat(type) ? "FLOAT" : (ir::IsSignedInteger(type) ? "SIGNED" : "UNSIGNED");
    if (ct->kind != ir::Attribute::Kind::kString || (ct->s != natural && ct->s != "NOTYPE")) {
      return std::nullopt;
    }
  }
  for (const auto& [name, value] : cmp.attributes().entries()) {
    if (name != "comparison_direction" && name != "compare_type") return std::nullopt;
  }
  const ir::Value* p0 = region.parameter(0);
  const ir::Value* p1 = region.parameter(1);
  if (cmp.operand(0) == p0 && cmp.operand(1) == p1) return SimpleSelect{d, false};
  if (cmp.operand(0) == p1 && cmp.operand(1) == p0) return SimpleSelect{d, true};
  return std::nullopt;
}

template <typename K>
bool Holds(const std::string& d, K a, K b) {
  if (d == "EQ") return a == b;
  if (d == "NE") return a != b;
  if (d == "GE") return a >= b;
  if (d == "GT") return a > b;
  if (d == "LE") return a <= b;
  return a < b;
}

absl::StatusOr<bool> PredResult(const ir::Instruction& inst, std::vector<EvalValue> out) {
  if (out.size() != 1 || out[0].kind != EvalValue::Kind::kArray ||
      out[0].array.element_type() != ir::ElementType::kPred ||
      out[0].array.shape().element_count() != 1) {
    return fs::OpError(inst, "select must return a pred scalar");
  }
  return out[0].array.bytes()[0] != 0;
}

absl::StatusOr<std::vector<EvalValue>> EvalSelectAndScatter(const ir::Instruction& inst,
                                                            std::vector<EvalValue>& operands,
                                                            Evaluator& evaluator) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 3));
  if (inst.regions().size() != 2) return fs::OpError(inst, "expects select and scatter regions");
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* source, fs::ArrayOperand(inst, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* init, fs::ArrayOperand(inst, operands, 2));
  const std::vector<int64_t>& dims = operand->shape().dims();
  const int64_t rank = static_cast<int64_t>(dims.size());
  const std::vector<int64_t> ones(static_cast<size_t>(rank), 1);
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> window, fs::IntsAttr(inst, "window_dimensions"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> strides, fs::IntsAttr(inst, "window_strides", ones));
  EMBER_ASSIGN_OR_RETURN(
      std::vector<int64_t> padding,
      fs::IntsAttr(inst, "padding", std::vector<int64_t>(static_cast<size_t>(2 * rank), 0)));
  if (static_cast<int64_t>(window.size()) != rank || static_cast<int64_t>(strides.size()) != rank ||
      static_cast<int64_t>(padding.size()) != 2 * rank) {
    return fs::OpError(inst, "window attributes do not match the operand rank");
  }
  std::vector<int64_t> num_windows(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    if (window[d] <= 0 || strides[d] <= 0) {
      return fs::OpError(inst, "window dimensions and strides must be positive");
    }
    const int64_t padded = padding[2 * d] + dims[d] + padding[2 * d + 1];
    num_windows[d] =
        (padded <= 0 || window[d] > padded) ? 0 : (padded - window[d]) / strides[d] + 1;
  }
  if (source->shape().dims() != num_windows) {
    return fs::OpError(inst, absl::StrCat("source shape ", source->shape().ToString(),
                                          " does not match the window count [",
                                          absl::StrJoin(num_windows, ", "), "]"));
  }
  if (init->shape().rank() != 0) return fs::OpError(inst, "init_value must be a scalar");
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, fs::ZeroResult(inst, 0));
  if (result.shape().dims() != dims || result.element_type() != init->element_type()) {
    return fs::OpError(inst, "result must have the operand's shape and the init value's type");
  }
  const int64_t count = operand->shape().element_count();
  for (int64_t i = 0; i < count; ++i) fs::CopyElement(*init, 0, result, i);
  if (fs::Product(num_windows) == 0 || count == 0) {
    std::vector<EvalValue> out;
    out.push_back(EvalValue::Array(std::move(result)));
    return out;
  }
  const ir::Computation& select = *inst.regions()[0];
  const ir::Computation& scatter = *inst.regions()[1];
  const std::optional<SimpleSelect> simple_select = MatchSelect(select, operand->element_type());
  std::vector<double> float_keys;
  std::vector<int64_t> int_keys;
  if (simple_select.has_value()) {
    if (ir::IsFloat(operand->element_type())) {
      EMBER_ASSIGN_OR_RETURN(float_keys, fs::LiteralTo<double>(*operand));
    } else {
      EMBER_ASSIGN_OR_RETURN(int_keys, fs::IntegerValues(*operand));
    }
  }
  // Phase 1: the selected operand element of every window (source order), or -1.
  const std::vector<int64_t> ostr = fs::RowMajorStrides(dims);
  std::vector<int64_t> selected_of;
  selected_of.reserve(static_cast<size_t>(fs::Product(num_windows)));
  std::vector<int64_t> si(static_cast<size_t>(rank), 0), wi(static_cast<size_t>(rank), 0);
  do {
    int64_t selected = -1;
    std::fill(wi.begin(), wi.end(), 0);
    do {
      int64_t pos = 0;
      bool inside = true;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t q = si[d] * strides[d] + wi[d] - padding[2 * d];
        if (q < 0 || q >= dims[d]) {
          inside = false;
          break;
        }
        pos += q * ostr[d];
      }
      if (!inside) continue;
      if (selected < 0) {
        selected = pos;
        continue;
      }
      bool keep;
      if (simple_select.has_value()) {
        const int64_t a = simple_select->swapped ? pos : selected;
        const int64_t b = simple_select->swapped ? selected : pos;
        keep = float_keys.empty() ? Holds(simple_select->direction, int_keys[a], int_keys[b])
                                  : Holds(simple_select->direction, float_keys[a], float_keys[b]);
      } else {
        std::vector<ir::Literal> args;
        EMBER_ASSIGN_OR_RETURN(ir::Literal current, fs::ScalarAt(*operand, selected));
        EMBER_ASSIGN_OR_RETURN(ir::Literal candidate, fs::ScalarAt(*operand, pos));
        args.push_back(std::move(current));
        args.push_back(std::move(candidate));
        EMBER_ASSIGN_OR_RETURN(std::vector<EvalValue> out,
                               fs::RunRegion(evaluator, select, std::move(args)));
        EMBER_ASSIGN_OR_RETURN(keep, PredResult(inst, std::move(out)));
      }
      if (!keep) selected = pos;
    } while (fs::NextIndex(wi, window));
    selected_of.push_back(selected);
  } while (fs::NextIndex(si, num_windows));

  // Phase 2: scatter the source values in source order.
  std::vector<int64_t> targets, sources;
  for (size_t k = 0; k < selected_of.size(); ++k) {
    if (selected_of[k] < 0) continue;
    targets.push_back(selected_of[k]);
    sources.push_back(static_cast<int64_t>(k));
  }
  if (source->element_type() == result.element_type()) {
    if (std::optional<SimpleBinaryRegion> simple =
            MatchSimpleBinaryRegion(scatter, result.element_type())) {
      EMBER_ASSIGN_OR_RETURN(
          ir::Shape gathered_shape,
          ir::Shape::Make(result.element_type(), {static_cast<int64_t>(sources.size())}));
      EMBER_ASSIGN_OR_RETURN(ir::Literal gathered, ir::Literal::Create(gathered_shape));
      for (size_t k = 0; k < sources.size(); ++k) {
        fs::CopyElement(*source, sources[k], gathered, static_cast<int64_t>(k));
      }
      EMBER_ASSIGN_OR_RETURN(ir::Literal acc, result.Clone());
      if (FoldElements(*simple, gathered, targets, acc)) {
        std::vector<EvalValue> out;
        out.push_back(EvalValue::Array(std::move(acc)));
        return out;
      }
    }
  }
  for (size_t k = 0; k < sources.size(); ++k) {
    std::vector<ir::Literal> args;
    EMBER_ASSIGN_OR_RETURN(ir::Literal current, fs::ScalarAt(result, targets[k]));
    EMBER_ASSIGN_OR_RETURN(ir::Literal src, fs::ScalarAt(*source, sources[k]));
    args.push_back(std::move(current));
    args.push_back(std::move(src));
    EMBER_ASSIGN_OR_RETURN(std::vector<EvalValue> out,
                           fs::RunRegion(evaluator, scatter, std::move(args)));
    if (out.size() != 1 || out[0].kind != EvalValue::Kind::kArray ||
        out[0].array.element_type() != result.element_type()) {
      return fs::OpError(inst, "scatter must return one scalar of the result type");
    }
    fs::CopyElement(out[0].array, 0, result, targets[k]);
  }
  std::vector<EvalValue> out;
  out.push_back(EvalValue::Array(std::move(result)));
  return out;
}

}  // namespace

void RegisterWindowOps(OpTable& table) {
  table.Register(ir::Opcode::kReduceWindow, EvalReduceWindow);
  table.Register(ir::Opcode::kSelectAndScatter, EvalSelectAndScatter);
}

}  // namespace ember::eval
