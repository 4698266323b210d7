// Reference evaluation of the structured CHLO ops the importer keeps as custom calls:
// chlo.ragged_dot (a dot_general whose lhs rows, contracting entries or batch entries are split
// into consecutive groups of `group_sizes`) and chlo.scan (a loop over one dimension of its
// inputs threading carries through its body). Semantics from CHLO's op definitions
// (openxla/stablehlo, stablehlo/dialect/ChloOps.td); the StableHLO suites test them in
// interpret/chlo/.
#include <algorithm>

#include "compiler/evaluator/eval_chlo.h"
#include "compiler/evaluator/eval_family_support.h"
#include "compiler/evaluator/evaluator.h"

namespace ember::eval {
namespace {

namespace fs = family_support;

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

absl::Status CheckDimList(const ir::Instruction& inst, const char* what,
                          const std::vector<int64_t>& dims, int64_t rank,
                          std::vector<bool>& used) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return fs::OpError(inst, what, " has dimension ", d, ", out of range for rank ", rank);
    }
    if (used[d]) return fs::OpError(inst, what, " repeats dimension ", d);
    used[d] = true;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<EvalValue>> EvalRaggedDot(const ir::Instruction& inst,
                                                     std::vector<EvalValue>& operands) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 3));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* lhs, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* rhs, fs::ArrayOperand(inst, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* groups, fs::ArrayOperand(inst, operands, 2));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> lb, fs::IntsAttr(inst, "lhs_batching_dimensions", {{}}));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> rb, fs::IntsAttr(inst, "rhs_batching_dimensions", {{}}));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> lc, fs::IntsAttr(inst, "lhs_contracting_dimensions"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> rc, fs::IntsAttr(inst, "rhs_contracting_dimensions"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> lr, fs::IntsAttr(inst, "lhs_ragged_dimensions"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> rg, fs::IntsAttr(inst, "rhs_group_dimensions", {{}}));
  const std::vector<int64_t>& ld = lhs->shape().dims();
  const std::vector<int64_t>& rd = rhs->shape().dims();
  const int64_t lrank = static_cast<int64_t>(ld.size()), rrank = static_cast<int64_t>(rd.size());
  std::vector<bool> lused(ld.size(), false), rused(rd.size(), false);
  EMBER_RETURN_IF_ERROR(CheckDimList(inst, "lhs_batching_dimensions", lb, lrank, lused));
  EMBER_RETURN_IF_ERROR(CheckDimList(inst, "lhs_contracting_dimensions", lc, lrank, lused));
  EMBER_RETURN_IF_ERROR(CheckDimList(inst, "rhs_batching_dimensions", rb, rrank, rused));
  EMBER_RETURN_IF_ERROR(CheckDimList(inst, "rhs_contracting_dimensions", rc, rrank, rused));
  EMBER_RETURN_IF_ERROR(CheckDimList(inst, "rhs_group_dimensions", rg, rrank, rused));
  if (lb.size() != rb.size() || lc.size() != rc.size()) {
    return fs::OpError(inst, "lhs and rhs have different numbers of batching or contracting dims");
  }
  for (size_t i = 0; i < lb.size(); ++i) {
    if (ld[lb[i]] != rd[rb[i]]) return fs::OpError(inst, "batch dimension ", i, " sizes differ");
  }
  for (size_t i = 0; i < lc.size(); ++i) {
    if (ld[lc[i]] != rd[rc[i]]) {
      return fs::OpError(inst, "contracting dimension ", i, " sizes differ");
    }
  }
  if (lr.size() != 1 || lr[0] < 0 || lr[0] >= lrank) {
    return fs::OpError(inst, "needs exactly one lhs ragged dimension in range");
  }
  if (rg.size() > 1) return fs::OpError(inst, "has more than one rhs group dimension");
  const int64_t ragged = lr[0];
  enum class Mode { kNonContracting, kContracting, kBatch } mode;
  if (!rg.empty()) {
    if (Contains(lb, ragged) || Contains(lc, ragged)) {
      return fs::OpError(inst, "with an rhs group dimension, the lhs ragged dimension must be a "
                               "non-contracting, non-batch dimension");
    }
    mode = Mode::kNonContracting;
  } else if (Contains(lc, ragged)) {
    mode = Mode::kContracting;
  } else if (Contains(lb, ragged)) {
    mode = Mode::kBatch;
  } else {
    return fs::OpError(inst, "a ragged non-contracting lhs dimension needs an rhs group dimension");
  }
  if (groups->shape().rank() != 1) {
    return fs::OpUnimplemented(inst, "group_sizes of rank ", groups->shape().rank(),
                               " (only rank 1 is supported)");
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, fs::IntegerValues(*groups));
  const int64_t g = static_cast<int64_t>(sizes.size());
  if (mode == Mode::kNonContracting && rd[rg[0]] != g) {
    return fs::OpError(inst, "rhs group dimension has size ", rd[rg[0]], " but group_sizes has ",
                       g, " groups");
  }
  std::vector<int64_t> starts(g + 1, 0);
  for (int64_t i = 0; i < g; ++i) {
    if (sizes[i] < 0) return fs::OpError(inst, "group_sizes has a negative size ", sizes[i]);
    starts[i + 1] = starts[i] + sizes[i];
  }
  // Free dims in order; the output is [group (contracting mode)] + batch + lhs free + rhs free.
  std::vector<int64_t> lfree, rfree;
  for (int64_t d = 0; d < lrank; ++d) {
    if (!lused[d]) lfree.push_back(d);
  }
  for (int64_t d = 0; d < rrank; ++d) {
    if (!rused[d]) rfree.push_back(d);
  }
  std::vector<int64_t> out_dims;
  if (mode == Mode::kContracting) out_dims.push_back(g);
  for (int64_t d : lb) out_dims.push_back(ld[d]);
  for (int64_t d : lfree) out_dims.push_back(ld[d]);
  for (int64_t d : rfree) out_dims.push_back(rd[d]);
  EMBER_ASSIGN_OR_RETURN(ir::Shape result_shape, fs::ResultShape(inst, 0));
  if (result_shape.dims() != out_dims) {
    return fs::OpError(inst, "result type ", result_shape.ToString(),
                       " does not match the dims the ragged dot computes");
  }
  const std::vector<int64_t> lstrides = RowMajorStrides(ld), rstrides = RowMajorStrides(rd);
  std::vector<int64_t> cdims;
  for (int64_t d : lc) cdims.push_back(ld[d]);
  return fs::VisitAccumulationType(
      result_shape.element_type(), [&](auto tag) -> absl::StatusOr<std::vector<EvalValue>> {
        using Acc = typename decltype(tag)::type;
        if constexpr (std::is_void_v<Acc>) {
          return fs::OpError(inst, "unsupported element type");
        } else {
          EMBER_ASSIGN_OR_RETURN(std::vector<fs::AccStore<Acc>> l, fs::LiteralTo<Acc>(*lhs));
          EMBER_ASSIGN_OR_RETURN(std::vector<fs::AccStore<Acc>> r, fs::LiteralTo<Acc>(*rhs));
          const int64_t count = fs::Product(out_dims);
          std::vector<fs::AccStore<Acc>> out(static_cast<size_t>(count), Acc(0));
          std::vector<int64_t> oi(out_dims.size(), 0), li(ld.size(), 0), ri(rd.size(), 0);
          std::vector<int64_t> ci(cdims.size(), 0);
          for (int64_t o = 0; o < count; ++o, NextIndex(out_dims, absl::MakeSpan(oi))) {
            size_t p = 0;
            int64_t group = -1;
            if (mode == Mode::kContracting) group = oi[p++];
            for (size_t i = 0; i < lb.size(); ++i, ++p) li[lb[i]] = ri[rb[i]] = oi[p];
            for (int64_t d : lfree) li[d] = oi[p++];
            for (int64_t d : rfree) ri[d] = oi[p++];
            // The group this output element belongs to; none (past the last group): zero.
            if (mode != Mode::kContracting) {
              const int64_t row = li[ragged];
              for (int64_t k = 0; k < g; ++k) {
                if (row >= starts[k] && row < starts[k + 1]) group = k;
              }
              if (group < 0) continue;
              if (mode == Mode::kNonContracting) ri[rg[0]] = group;
            }
            Acc acc(0);
            std::fill(ci.begin(), ci.end(), 0);
            const bool any = fs::Product(cdims) > 0;
            do {
              if (!any) break;
              for (size_t i = 0; i < lc.size(); ++i) li[lc[i]] = ri[rc[i]] = ci[i];
              if (mode == Mode::kContracting &&
                  (li[ragged] < starts[group] || li[ragged] >= starts[group + 1])) {
                continue;
              }
              acc = fs::AccAdd<Acc>(acc, fs::AccMul<Acc>(l[Linearize(lstrides, li)],
                                                        r[Linearize(rstrides, ri)]));
            } while (NextIndex(cdims, absl::MakeSpan(ci)));
            out[o] = acc;
          }
          EMBER_ASSIGN_OR_RETURN(ir::Literal lit,
                                 fs::LiteralFrom<Acc>(result_shape, absl::MakeConstSpan(out)));
          return ArrayResult(std::move(lit));
        }
      });
}

absl::StatusOr<std::vector<EvalValue>> EvalScan(const ir::Instruction& inst,
                                                std::vector<EvalValue>& operands,
                                                Evaluator& evaluator) {
  if (inst.regions().size() != 1) return fs::OpError(inst, "needs one body region");
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> operand_segments,
                         fs::IntsAttr(inst, "operandSegmentSizes"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> result_segments,
                         fs::IntsAttr(inst, "resultSegmentSizes"));
  if (operand_segments.size() != 2 || result_segments.size() != 2 ||
      operand_segments[0] + operand_segments[1] != static_cast<int64_t>(operands.size()) ||
      result_segments[0] + result_segments[1] != static_cast<int64_t>(inst.num_results()) ||
      operand_segments[1] != result_segments[1]) {
    return fs::OpError(inst, "operand/result segments do not match (inputs, inits) -> "
                             "(outputs, carries)");
  }
  const int64_t num_inputs = operand_segments[0], num_carries = operand_segments[1];
  const int64_t num_outputs = result_segments[0];
  EMBER_ASSIGN_OR_RETURN(int64_t dim, fs::IntAttr(inst, "dimension"));
  EMBER_ASSIGN_OR_RETURN(bool reverse, fs::BoolAttr(inst, "is_reverse", false));
  std::vector<const ir::Literal*> inputs;
  for (int64_t i = 0; i < num_inputs; ++i) {
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* in, fs::ArrayOperand(inst, operands, i));
    inputs.push_back(in);
  }
  // The scanned length: from the inputs, else from the outputs.
  int64_t length = -1;
  auto take_length = [&](const std::vector<int64_t>& dims, const char* what) -> absl::Status {
    if (dim < 0 || dim >= static_cast<int64_t>(dims.size())) {
      return fs::OpError(inst, "dimension ", dim, " is out of range for an ", what, " of rank ",
                         dims.size());
    }
    if (length >= 0 && dims[dim] != length) {
      return fs::OpError(inst, what, "s differ in size along dimension ", dim);
    }
    length = dims[dim];
    return absl::OkStatus();
  };
  for (const ir::Literal* in : inputs) EMBER_RETURN_IF_ERROR(take_length(in->shape().dims(), "input"));
  std::vector<ir::Literal> outputs;
  for (int64_t i = 0; i < num_outputs; ++i) {
    EMBER_ASSIGN_OR_RETURN(ir::Literal out, NewResultArray(inst, i));
    EMBER_RETURN_IF_ERROR(take_length(out.shape().dims(), "output"));
    outputs.push_back(std::move(out));
  }
  if (length < 0) return fs::OpError(inst, "has neither inputs nor outputs to scan over");
  std::vector<ir::Literal> carries;
  for (int64_t i = 0; i < num_carries; ++i) {
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* init, fs::ArrayOperand(inst, operands, num_inputs + i));
    EMBER_ASSIGN_OR_RETURN(ir::Literal copy, init->Clone());
    carries.push_back(std::move(copy));
  }
  // Element `pos` of the slice at `t` along `dim`, in the full array's row-major order.
  auto full_index = [&](const std::vector<int64_t>& dims, int64_t t, int64_t pos) {
    int64_t inner = 1;
    for (size_t d = dim + 1; d < dims.size(); ++d) inner *= dims[d];
    const int64_t outer = pos / inner, rest = pos % inner;
    return (outer * dims[dim] + t) * inner + rest;
  };
  const ir::Computation& body = *inst.regions()[0];
  for (int64_t step = 0; step < length; ++step) {
    const int64_t t = reverse ? length - 1 - step : step;
    std::vector<ir::Literal> args;
    for (const ir::Literal* in : inputs) {
      std::vector<int64_t> slice_dims = in->shape().dims();
      slice_dims.erase(slice_dims.begin() + dim);
      EMBER_ASSIGN_OR_RETURN(ir::Literal slice, NewArray(in->element_type(), slice_dims));
      const int64_t n = fs::Product(slice_dims);
      for (int64_t pos = 0; pos < n; ++pos) {
        fs::CopyElement(*in, full_index(in->shape().dims(), t, pos), slice, pos);
      }
      args.push_back(std::move(slice));
    }
    for (ir::Literal& c : carries) {
      EMBER_ASSIGN_OR_RETURN(ir::Literal copy, c.Clone());
      args.push_back(std::move(copy));
    }
    EMBER_ASSIGN_OR_RETURN(std::vector<EvalValue> results,
                           fs::RunRegion(evaluator, body, std::move(args)));
    if (static_cast<int64_t>(results.size()) != num_outputs + num_carries) {
      return fs::OpError(inst, "body returns ", results.size(), " values, expected ",
                         num_outputs + num_carries);
    }
    for (int64_t i = 0; i < num_outputs; ++i) {
      const std::vector<int64_t>& od = outputs[i].shape().dims();
      const int64_t n = fs::Product(od) / std::max<int64_t>(1, od[dim]);
      const EvalValue& v = results[i];
      if (v.kind != EvalValue::Kind::kArray || v.array.element_type() != outputs[i].element_type() ||
          v.array.shape().element_count() != n) {
        return fs::OpError(inst, "body output ", i, " does not match a slice of result ", i);
      }
      for (int64_t pos = 0; pos < n; ++pos) {
        fs::CopyElement(v.array, pos, outputs[i], full_index(od, t, pos));
      }
    }
    for (int64_t i = 0; i < num_carries; ++i) {
      EvalValue& v = results[num_outputs + i];
      if (v.kind != EvalValue::Kind::kArray || !(v.array.shape() == carries[i].shape())) {
        return fs::OpError(inst, "body carry ", i, " changes type");
      }
      carries[i] = std::move(v.array);
    }
  }
  std::vector<EvalValue> out;
  for (ir::Literal& o : outputs) out.push_back(EvalValue::Array(std::move(o)));
  for (ir::Literal& c : carries) out.push_back(EvalValue::Array(std::move(c)));
  return out;
}

}  // namespace ember::eval
