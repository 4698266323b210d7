// Reference evaluation of the windowed ops: reduce_window (variadic, with base and window
// dilations and padding) and select_and_scatter.
//
// Choices where the spec leaves room:
// - reduce_window follows the spec literally: padding and base-dilation holes hold the init
//   values and take part in the reduction (XLA skips them; the two agree whenever the init value
//   is the body's identity, which is how frameworks use the op). Each window is reduced
//   sequentially in row-major window order, starting from the init values: acc = body(acc, x).
//   The spec leaves the order to the implementation, and two kinds of window take another one,
//   when body(init, init) == init (so extra applications of the init values change nothing):
//   cumulative windows (all of one axis up to, or from, each element: cumsum and its kin) are
//   folded in XLA's blocked order (tree_scan.h), in O(n), so floats match XLA:CPU's bits; windows
//   over several axes of a single op that is exactly associative and commutative on its type
//   (integer or pred sums and products, min, max, and, or, xor) reduce one axis at a time, which
//   gives the same bits. No path builds per-element index lists, so memory stays proportional to
//   the data whatever the window.
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
#include "compiler/evaluator/tree_scan.h"

namespace ember::eval {

namespace fs = family_support;
using fs::CumulativeAxis;
using fs::FindCumulativeAxis;
using fs::WindowResultDims;

namespace {

// Sources gathered at a time by the folding paths (bounded memory whatever the window size).
constexpr int64_t kFoldChunk = int64_t{1} << 20;

// Where window position `wi` of result element `ri` reads: the input's linear index, or -1 for
// padding and base-dilation holes (which hold the init value).
int64_t WindowSource(absl::Span<const int64_t> ri, absl::Span<const int64_t> wi,
                     absl::Span<const int64_t> dims, absl::Span<const int64_t> strides,
                     const fs::WindowParams& p) {
  int64_t src = 0;
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t q =
        ri[d] * p.window_strides[d] + wi[d] * p.window_dilations[d] - p.padding[2 * d];
    if (q < 0 || q % p.base_dilations[d] != 0 || q / p.base_dilations[d] >= dims[d]) return -1;
    src += (q / p.base_dilations[d]) * strides[d];
  }
  return src;
}

// body(init, init) == init for every input, bit for bit: then extra applications of the init
// values (padding, holes, a window's start) change nothing, so windows may be folded in parts.
absl::StatusOr<bool> InitIsIdempotent(const ir::Computation& body,
                                      const std::vector<const ir::Literal*>& inits,
                                      Evaluator& evaluator) {
  std::vector<ir::Literal> args;
  for (int twice = 0; twice < 2; ++twice) {
    for (const ir::Literal* init : inits) {
      EMBER_ASSIGN_OR_RETURN(ir::Literal a, init->Clone());
      args.push_back(std::move(a));
    }
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<EvalValue> out, fs::RunRegion(evaluator, body, std::move(args)));
  if (out.size() != inits.size()) return false;
  for (size_t i = 0; i < inits.size(); ++i) {
    if (out[i].kind != EvalValue::Kind::kArray || !(out[i].array == *inits[i])) return false;
  }
  return true;
}

// Runs the body on (acc..., x...) and stores what it returns in acc.
absl::Status Step(const ir::Instruction& inst, const ir::Computation& body, Evaluator& evaluator,
                  std::vector<ir::Literal>& acc, std::vector<ir::Literal> xs) {
  std::vector<ir::Literal> args;
  for (ir::Literal& a : acc) args.push_back(std::move(a));
  for (ir::Literal& x : xs) args.push_back(std::move(x));
  EMBER_ASSIGN_OR_RETURN(std::vector<EvalValue> out, fs::RunRegion(evaluator, body, std::move(args)));
  if (out.size() != acc.size()) return fs::OpError(inst, "body returned the wrong number of values");
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].kind != EvalValue::Kind::kArray || out[i].array.shape().rank() != 0) {
      return fs::OpError(inst, "body must return scalars");
    }
    acc[i] = std::move(out[i].array);
  }
  return absl::OkStatus();
}

// Whether folding in another order gives the same bits: integer and pred arithmetic wraps
// exactly, min, max and the bitwise ops pick or combine bits; float sums and products round.
bool ExactlyAssociative(const SimpleBinaryRegion& simple, ir::ElementType type) {
  switch (simple.opcode) {
    case ir::Opcode::kAdd:
    case ir::Opcode::kMultiply:
      return ir::IsInteger(type) || type == ir::ElementType::kPred;
    default:
      return true;
  }
}

class WindowReducer {
 public:
  WindowReducer(const ir::Instruction& inst, const ir::Computation& body, Evaluator& evaluator,
                const std::vector<const ir::Literal*>& inits)
      : inst_(inst), body_(body), evaluator_(evaluator), inits_(inits) {}

  // results[i] has the result dims and the init values' types.
  absl::Status Run(const std::vector<const ir::Literal*>& inputs, const fs::WindowParams& p,
                   std::vector<ir::Literal>& results) {
    const std::vector<int64_t>& dims = inputs[0]->shape().dims();
    const int64_t count = results[0].shape().element_count();
    for (size_t i = 0; i < results.size(); ++i) {
      for (int64_t j = 0; j < count; ++j) fs::CopyElement(*inits_[i], 0, results[i], j);
    }
    if (count == 0) return absl::OkStatus();
    std::optional<SimpleBinaryRegion> simple;
    if (inputs.size() == 1 && inputs[0]->element_type() == results[0].element_type()) {
      simple = MatchSimpleBinaryRegion(body_, results[0].element_type());
    }
    bool same_types = true;  // the scan feeds partial results back in as inputs
    for (size_t i = 0; i < inputs.size(); ++i) {
      same_types = same_types && inputs[i]->element_type() == inits_[i]->element_type();
    }
    if (std::optional<CumulativeAxis> axis = FindCumulativeAxis(dims, p);
        axis.has_value() && same_types) {
      EMBER_ASSIGN_OR_RETURN(bool idempotent, Idempotent());
      if (idempotent) return Scan(inputs, dims, *axis, simple, results);
    }
    if (simple.has_value()) {
      std::vector<size_t> windowed;
      for (size_t d = 0; d < dims.size(); ++d) {
        if (p.window_dimensions[d] > 1) windowed.push_back(d);
      }
      if (windowed.size() > 1 && ExactlyAssociative(*simple, results[0].element_type())) {
        EMBER_ASSIGN_OR_RETURN(bool idempotent, Idempotent());
        if (idempotent) return Separable(*inputs[0], p, windowed, *simple, results[0]);
      }
      return FoldFast(*inputs[0], p, *simple, results[0]);
    }
    return FoldGeneral(inputs, p, results);
  }

 private:
  absl::StatusOr<bool> Idempotent() {
    if (!idempotent_.has_value()) {
      EMBER_ASSIGN_OR_RETURN(idempotent_, InitIsIdempotent(body_, inits_, evaluator_));
    }
    return *idempotent_;
  }

  // Cumulative windows in XLA's order (tree_scan.h): blocks scanned on their own, then joined
  // with the scan of the blocks' totals. Suffixes through an interpreted region fold each block
  // from its end, which keeps them O(n).
  absl::Status Scan(const std::vector<const ir::Literal*>& inputs, absl::Span<const int64_t> dims,
                    const CumulativeAxis& axis, const std::optional<SimpleBinaryRegion>& simple,
                    std::vector<ir::Literal>& results) {
    int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (d < axis.axis) outer *= dims[d];
      if (d > axis.axis) inner *= dims[d];
    }
    const int64_t n = dims[axis.axis];
    if (simple.has_value() &&
        ScanElements(*simple, *inputs[0], outer, n, inner, axis.reverse, results[0])) {
      return absl::OkStatus();
    }
    // Values are handles into `store` (handle 0 holds the init values), so the scan copies
    // integers and the region runs once per combination.
    std::vector<std::vector<ir::Literal>> store;
    auto add = [&store](std::vector<ir::Literal> v) {
      store.push_back(std::move(v));
      return static_cast<int64_t>(store.size() - 1);
    };
    auto clones = [](const std::vector<ir::Literal>& v) -> absl::StatusOr<std::vector<ir::Literal>> {
      std::vector<ir::Literal> out;
      for (const ir::Literal& l : v) {
        EMBER_ASSIGN_OR_RETURN(ir::Literal c, l.Clone());
        out.push_back(std::move(c));
      }
      return out;
    };
    auto combine = [&](int64_t a, int64_t b, int64_t& out) -> absl::Status {
      EMBER_ASSIGN_OR_RETURN(std::vector<ir::Literal> acc, clones(store[a]));
      EMBER_ASSIGN_OR_RETURN(std::vector<ir::Literal> x, clones(store[b]));
      EMBER_RETURN_IF_ERROR(Step(inst_, body_, evaluator_, acc, std::move(x)));
      for (size_t i = 0; i < acc.size(); ++i) {
        if (acc[i].element_type() != results[i].element_type()) {
          return fs::OpError(inst_, "body result type differs from the result element type");
        }
      }
      out = add(std::move(acc));
      return absl::OkStatus();
    };
    const TreeScanOrder order{.reverse = axis.reverse, .suffix_from_end = true};
    std::vector<int64_t> line(n), scanned;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < inner; ++j) {
        store.clear();
        std::vector<ir::Literal> init_values;
        for (const ir::Literal* init : inits_) {
          EMBER_ASSIGN_OR_RETURN(ir::Literal a, init->Clone());
          init_values.push_back(std::move(a));
        }
        const int64_t init = add(std::move(init_values));
        for (int64_t i = 0; i < n; ++i) {
          std::vector<ir::Literal> xs;
          for (const ir::Literal* in : inputs) {
            EMBER_ASSIGN_OR_RETURN(ir::Literal x, fs::ScalarAt(*in, (o * n + i) * inner + j));
            xs.push_back(std::move(x));
          }
          line[i] = add(std::move(xs));
        }
        EMBER_RETURN_IF_ERROR(TreeScan(line, init, order, combine, scanned));
        for (int64_t i = 0; i < n; ++i) {
          for (size_t r = 0; r < results.size(); ++r) {
            fs::CopyElement(store[scanned[i]][r], 0, results[r], (o * n + i) * inner + j);
          }
        }
      }
    }
    return absl::OkStatus();
  }

  // A window over several axes of a commutative, associative op, one axis at a time: every
  // element (and, with idempotent init values, padding) of the window is still folded once.
  absl::Status Separable(const ir::Literal& input, const fs::WindowParams& p,
                         const std::vector<size_t>& axes, const SimpleBinaryRegion& simple,
                         ir::Literal& result) {
    ir::Literal current;
    const ir::Literal* in = &input;
    for (size_t k = 0; k < axes.size(); ++k) {
      const size_t a = axes[k];
      fs::WindowParams one;
      const size_t rank = input.shape().rank();
      one.window_dimensions.assign(rank, 1);
      one.window_strides.assign(rank, 1);
      one.base_dilations.assign(rank, 1);
      one.window_dilations.assign(rank, 1);
      one.padding.assign(2 * rank, 0);
      // The first pass takes the other axes' strides, dilations and padding too (a window of 1
      // along them); later passes only the axis they reduce.
      for (size_t d = 0; d < rank; ++d) {
        const bool here = d == a;
        const bool first_pass_only = k == 0 && p.window_dimensions[d] == 1;
        if (!here && !first_pass_only) continue;
        one.window_dimensions[d] = p.window_dimensions[d];
        one.window_strides[d] = p.window_strides[d];
        one.base_dilations[d] = p.base_dilations[d];
        one.window_dilations[d] = p.window_dilations[d];
        one.padding[2 * d] = p.padding[2 * d];
        one.padding[2 * d + 1] = p.padding[2 * d + 1];
      }
      const std::vector<int64_t> dims = WindowResultDims(in->shape().dims(), one);
      EMBER_ASSIGN_OR_RETURN(ir::Shape shape, ir::Shape::Make(result.element_type(), dims));
      EMBER_ASSIGN_OR_RETURN(ir::Literal next, ir::Literal::Create(shape));
      for (int64_t j = 0; j < shape.element_count(); ++j) fs::CopyElement(*inits_[0], 0, next, j);
      EMBER_RETURN_IF_ERROR(FoldFast(*in, one, simple, next));
      current = std::move(next);
      in = &current;
    }
    if (!(current.shape().dims() == result.shape().dims())) {
      return absl::InternalError(absl::StrCat(inst_.Describe(), ": separable passes gave ",
                                              current.shape().ToString()));
    }
    result = std::move(current);
    return absl::OkStatus();
  }

  // Every window folded in row-major order with the typed element functions, gathering at most
  // kFoldChunk sources at a time.
  absl::Status FoldFast(const ir::Literal& input, const fs::WindowParams& p,
                        const SimpleBinaryRegion& simple, ir::Literal& result) {
    const std::vector<int64_t>& dims = input.shape().dims();
    const std::vector<int64_t> strides = fs::RowMajorStrides(dims);
    const std::vector<int64_t>& result_dims = result.shape().dims();
    std::vector<int64_t> sources, targets;
    sources.reserve(kFoldChunk);
    targets.reserve(kFoldChunk);
    auto flush = [&]() -> absl::Status {
      if (!FoldElementsAt(simple, input, sources, *inits_[0], targets, result)) {
        return fs::OpError(inst_, "cannot fold this element type");
      }
      sources.clear();
      targets.clear();
      return absl::OkStatus();
    };
    std::vector<int64_t> ri(dims.size(), 0), wi(dims.size(), 0);
    int64_t linear = 0;
    do {
      std::fill(wi.begin(), wi.end(), 0);
      do {
        sources.push_back(WindowSource(ri, wi, dims, strides, p));
        targets.push_back(linear);
        if (static_cast<int64_t>(sources.size()) == kFoldChunk) EMBER_RETURN_IF_ERROR(flush());
      } while (fs::NextIndex(wi, p.window_dimensions));
      ++linear;
    } while (fs::NextIndex(ri, result_dims));
    return flush();
  }

  // Any body, any number of inputs: each window folded in row-major order through the region.
  absl::Status FoldGeneral(const std::vector<const ir::Literal*>& inputs, const fs::WindowParams& p,
                           std::vector<ir::Literal>& results) {
    const std::vector<int64_t>& dims = inputs[0]->shape().dims();
    const std::vector<int64_t> strides = fs::RowMajorStrides(dims);
    const std::vector<int64_t>& result_dims = results[0].shape().dims();
    std::vector<int64_t> ri(dims.size(), 0), wi(dims.size(), 0);
    int64_t linear = 0;
    do {
      std::vector<ir::Literal> acc;
      for (const ir::Literal* init : inits_) {
        EMBER_ASSIGN_OR_RETURN(ir::Literal a, init->Clone());
        acc.push_back(std::move(a));
      }
      std::fill(wi.begin(), wi.end(), 0);
      do {
        const int64_t src = WindowSource(ri, wi, dims, strides, p);
        std::vector<ir::Literal> xs;
        for (size_t i = 0; i < inputs.size(); ++i) {
          EMBER_ASSIGN_OR_RETURN(ir::Literal x,
                                 src >= 0 ? fs::ScalarAt(*inputs[i], src) : inits_[i]->Clone());
          xs.push_back(std::move(x));
        }
        EMBER_RETURN_IF_ERROR(Step(inst_, body_, evaluator_, acc, std::move(xs)));
      } while (fs::NextIndex(wi, p.window_dimensions));
      for (size_t i = 0; i < results.size(); ++i) {
        if (acc[i].element_type() != results[i].element_type()) {
          return fs::OpError(inst_, "body result type differs from the result element type");
        }
        fs::CopyElement(acc[i], 0, results[i], linear);
      }
      ++linear;
    } while (fs::NextIndex(ri, result_dims));
    return absl::OkStatus();
  }

  const ir::Instruction& inst_;
  const ir::Computation& body_;
  Evaluator& evaluator_;
  const std::vector<const ir::Literal*>& inits_;
  std::optional<bool> idempotent_;
};

}  // namespace

namespace family_support {

std::vector<int64_t> WindowResultDims(absl::Span<const int64_t> dims, const WindowParams& p) {
  std::vector<int64_t> result_dims(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t dilated = dims[i] == 0 ? 0 : (dims[i] - 1) * p.base_dilations[i] + 1;
    const int64_t padded = p.padding[2 * i] + dilated + p.padding[2 * i + 1];
    const int64_t window = (p.window_dimensions[i] - 1) * p.window_dilations[i] + 1;
    result_dims[i] =
        (padded <= 0 || window > padded) ? 0 : (padded - window) / p.window_strides[i] + 1;
  }
  return result_dims;
}

std::optional<CumulativeAxis> FindCumulativeAxis(absl::Span<const int64_t> dims,
                                                 const WindowParams& p) {
  std::optional<CumulativeAxis> found;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (p.window_strides[d] != 1 || p.base_dilations[d] != 1 || p.window_dilations[d] != 1) {
      return std::nullopt;
    }
    const int64_t w = p.window_dimensions[d];
    const int64_t lo = p.padding[2 * d], hi = p.padding[2 * d + 1];
    if (w == 1 && lo == 0 && hi == 0) continue;
    if (found.has_value() || w < dims[d] || w < 2) return std::nullopt;
    if (lo == w - 1 && hi == 0) {
      found = CumulativeAxis{d, false};
    } else if (lo == 0 && hi == w - 1) {
      found = CumulativeAxis{d, true};
    } else {
      return std::nullopt;
    }
  }
  return found;
}

absl::StatusOr<WindowParams> ReadWindowParams(const ir::Instruction& inst, int64_t rank) {
  WindowParams p;
  const std::vector<int64_t> ones(static_cast<size_t>(rank), 1);
  EMBER_ASSIGN_OR_RETURN(p.window_dimensions, IntsAttr(inst, "window_dimensions"));
  EMBER_ASSIGN_OR_RETURN(p.window_strides, IntsAttr(inst, "window_strides", ones));
  EMBER_ASSIGN_OR_RETURN(p.base_dilations, IntsAttr(inst, "base_dilations", ones));
  EMBER_ASSIGN_OR_RETURN(p.window_dilations, IntsAttr(inst, "window_dilations", ones));
  EMBER_ASSIGN_OR_RETURN(
      p.padding,
      IntsAttr(inst, "padding", std::vector<int64_t>(static_cast<size_t>(2 * rank), 0)));
  return p;
}

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
  for (int64_t i = 0; i < rank; ++i) {
    if (p.window_dimensions[i] <= 0 || p.window_strides[i] <= 0 || p.base_dilations[i] <= 0 ||
        p.window_dilations[i] <= 0) {
      return OpError(inst, "window dimensions, strides and dilations must be positive");
    }
  }
  const std::vector<int64_t> result_dims = WindowResultDims(dims, p);
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
  WindowReducer reducer(inst, body, evaluator, inits);
  EMBER_RETURN_IF_ERROR(reducer.Run(inputs, p, results));
  std::vector<EvalValue> out;
  for (ir::Literal& r : results) out.push_back(EvalValue::Array(std::move(r)));
  return out;
}

}  // namespace family_support

namespace {

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
  EMBER_ASSIGN_OR_RETURN(fs::WindowParams params,
                         fs::ReadWindowParams(inst, inputs[0]->shape().rank()));
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
