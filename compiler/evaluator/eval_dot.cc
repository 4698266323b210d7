// Reference evaluation of dot and dot_general.
//
// Choices where the spec leaves room:
// - Arithmetic runs in the accumulation type of the *result* element type
//   (family_support::VisitAccumulationType): f32 and every narrower float (f16, bf16, f8, ...)
//   accumulate in f32 and are rounded once at the end; f64 in f64; complex in its own type;
//   integers wrap modulo 2^64 and are truncated to the result width (equal to wrapping in the
//   result type); i1 uses and/or. Operands of another type (bf16 x bf16 -> f32) are converted
//   to the accumulation type first, exactly.
// - `precision_config` and `algorithm` are accepted and do not lower precision: the evaluator
//   always computes at the precision above (at least f32), which is what every algorithm's
//   accumulation_type asks for or exceeds.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "compiler/evaluator/eval_family_support.h"
#include "compiler/evaluator/evaluator.h"

namespace ember::eval {
namespace {

namespace fs = family_support;

struct DotDimensions {
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contract, rhs_contract;
};

absl::Status CheckPairs(const ir::Instruction& inst, std::string_view what, const ir::Shape& lhs,
                        const std::vector<int64_t>& lhs_dims, const ir::Shape& rhs,
                        const std::vector<int64_t>& rhs_dims) {
  if (lhs_dims.size() != rhs_dims.size()) {
    return fs::OpError(inst, absl::StrCat(std::string(what), " dimensions differ in count: [",
                                          absl::StrJoin(lhs_dims, ", "), "] vs [",
                                          absl::StrJoin(rhs_dims, ", "), "]"));
  }
  for (size_t i = 0; i < lhs_dims.size(); ++i) {
    if (lhs.dim(lhs_dims[i]) != rhs.dim(rhs_dims[i])) {
      return fs::OpError(inst, absl::StrCat(std::string(what), " dimension sizes differ: lhs dim ",
                                            lhs_dims[i], " is ", lhs.dim(lhs_dims[i]), ", rhs dim ",
                                            rhs_dims[i], " is ", rhs.dim(rhs_dims[i])));
    }
  }
  return absl::OkStatus();
}

std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& a,
                              const std::vector<int64_t>& b) {
  std::vector<bool> used(static_cast<size_t>(rank), false);
  for (int64_t d : a) used[d] = true;
  for (int64_t d : b) used[d] = true;
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (!used[d]) free.push_back(d);
  }
  return free;
}

absl::StatusOr<std::vector<EvalValue>> DotGeneralCore(const ir::Instruction& inst,
                                                      const ir::Literal& lhs,
                                                      const ir::Literal& rhs,
                                                      const DotDimensions& d) {
  const ir::Shape& ls = lhs.shape();
  const ir::Shape& rs = rhs.shape();
  {
    std::vector<int64_t> all = d.lhs_batch;
    all.insert(all.end(), d.lhs_contract.begin(), d.lhs_contract.end());
    EMBER_RETURN_IF_ERROR(fs::CheckDims(inst, "lhs batching/contracting", all, ls.rank()));
    all = d.rhs_batch;
    all.insert(all.end(), d.rhs_contract.begin(), d.rhs_contract.end());
    EMBER_RETURN_IF_ERROR(fs::CheckDims(inst, "rhs batching/contracting", all, rs.rank()));
  }
  EMBER_RETURN_IF_ERROR(CheckPairs(inst, "batching", ls, d.lhs_batch, rs, d.rhs_batch));
  EMBER_RETURN_IF_ERROR(CheckPairs(inst, "contracting", ls, d.lhs_contract, rs, d.rhs_contract));
  const std::vector<int64_t> lhs_free = FreeDims(ls.rank(), d.lhs_batch, d.lhs_contract);
  const std::vector<int64_t> rhs_free = FreeDims(rs.rank(), d.rhs_batch, d.rhs_contract);

  const std::vector<int64_t> lhs_strides = fs::RowMajorStrides(ls.dims());
  const std::vector<int64_t> rhs_strides = fs::RowMajorStrides(rs.dims());
  // Per result dimension: its size and the strides it advances lhs and rhs by.
  std::vector<int64_t> result_dims, lhs_step, rhs_step;
  for (size_t i = 0; i < d.lhs_batch.size(); ++i) {
    result_dims.push_back(ls.dim(d.lhs_batch[i]));
    lhs_step.push_back(lhs_strides[d.lhs_batch[i]]);
    rhs_step.push_back(rhs_strides[d.rhs_batch[i]]);
  }
  for (int64_t dim : lhs_free) {
    result_dims.push_back(ls.dim(dim));
    lhs_step.push_back(lhs_strides[dim]);
    rhs_step.push_back(0);
  }
  for (int64_t dim : rhs_free) {
    result_dims.push_back(rs.dim(dim));
    lhs_step.push_back(0);
    rhs_step.push_back(rhs_strides[dim]);
  }
  EMBER_ASSIGN_OR_RETURN(ir::Shape result_shape, fs::ResultShape(inst, 0));
  if (result_shape.dims() != result_dims) {
    return fs::OpError(inst, absl::StrCat("result shape ", result_shape.ToString(),
                                          " does not match the computed dims [",
                                          absl::StrJoin(result_dims, ", "), "]"));
  }
  // Offsets of every contracting position, in row-major order of the contracting dims.
  std::vector<int64_t> contract_sizes;
  for (int64_t dim : d.lhs_contract) contract_sizes.push_back(ls.dim(dim));
  std::vector<int64_t> lhs_offsets, rhs_offsets;
  if (fs::Product(contract_sizes) > 0) {
    std::vector<int64_t> k(contract_sizes.size(), 0);
    do {
      int64_t lo = 0, ro = 0;
      for (size_t i = 0; i < k.size(); ++i) {
        lo += k[i] * lhs_strides[d.lhs_contract[i]];
        ro += k[i] * rhs_strides[d.rhs_contract[i]];
      }
      lhs_offsets.push_back(lo);
      rhs_offsets.push_back(ro);
    } while (fs::NextIndex(k, contract_sizes));
  }

  return fs::VisitAccumulationType(
      result_shape.element_type(), [&](auto tag) -> absl::StatusOr<std::vector<EvalValue>> {
        using Acc = typename decltype(tag)::type;
        if constexpr (std::is_void_v<Acc>) {
          return fs::OpError(inst, "unsupported result element type");
        } else {
          EMBER_ASSIGN_OR_RETURN(std::vector<fs::AccStore<Acc>> l, fs::LiteralTo<Acc>(lhs));
          EMBER_ASSIGN_OR_RETURN(std::vector<fs::AccStore<Acc>> r, fs::LiteralTo<Acc>(rhs));
          std::vector<fs::AccStore<Acc>> out(static_cast<size_t>(result_shape.element_count()),
                                             Acc(0));
          if (!out.empty()) {
            std::vector<int64_t> index(result_dims.size(), 0);
            size_t linear = 0;
            do {
              int64_t lb = 0, rb = 0;
              for (size_t i = 0; i < index.size(); ++i) {
                lb += index[i] * lhs_step[i];
                rb += index[i] * rhs_step[i];
              }
              Acc acc = Acc(0);
              for (size_t k = 0; k < lhs_offsets.size(); ++k) {
                acc = fs::AccAdd<Acc>(
                    acc, fs::AccMul<Acc>(l[lb + lhs_offsets[k]], r[rb + rhs_offsets[k]]));
              }
              out[linear++] = acc;
            } while (fs::NextIndex(index, result_dims));
          }
          EMBER_ASSIGN_OR_RETURN(ir::Literal result,
                                 fs::LiteralFrom<Acc>(result_shape, absl::MakeConstSpan(out)));
          std::vector<EvalValue> results;
          results.push_back(EvalValue::Array(std::move(result)));
          return results;
        }
      });
}

absl::StatusOr<std::vector<EvalValue>> EvalDotGeneral(const ir::Instruction& inst,
                                                      std::vector<EvalValue>& operands,
                                                      Evaluator&) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 2));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* lhs, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* rhs, fs::ArrayOperand(inst, operands, 1));
  DotDimensions d;
  const std::vector<int64_t> none;
  EMBER_ASSIGN_OR_RETURN(d.lhs_batch, fs::IntsAttr(inst, "lhs_batching_dimensions", none));
  EMBER_ASSIGN_OR_RETURN(d.rhs_batch, fs::IntsAttr(inst, "rhs_batching_dimensions", none));
  EMBER_ASSIGN_OR_RETURN(d.lhs_contract, fs::IntsAttr(inst, "lhs_contracting_dimensions", none));
  EMBER_ASSIGN_OR_RETURN(d.rhs_contract, fs::IntsAttr(inst, "rhs_contracting_dimensions", none));
  return DotGeneralCore(inst, *lhs, *rhs, d);
}

// Legacy dot: vector.vector, matrix.vector, vector.matrix, matrix.matrix.
absl::StatusOr<std::vector<EvalValue>> EvalDot(const ir::Instruction& inst,
                                               std::vector<EvalValue>& operands, Evaluator&) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 2));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* lhs, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* rhs, fs::ArrayOperand(inst, operands, 1));
  const int64_t lr = lhs->shape().rank(), rr = rhs->shape().rank();
  if (lr < 1 || lr > 2 || rr < 1 || rr > 2) {
    return fs::OpError(inst, absl::StrCat("operands must have rank 1 or 2, got ", lr, " and ", rr));
  }
  DotDimensions d;
  d.lhs_contract = {lr - 1};
  d.rhs_contract = {0};
  return DotGeneralCore(inst, *lhs, *rhs, d);
}

}  // namespace

namespace family_support {
void RegisterDotOps(OpTable& table) {
  table.Register(ir::Opcode::kDot, EvalDot);
  table.Register(ir::Opcode::kDotGeneral, EvalDotGeneral);
}
}  // namespace family_support

}  // namespace ember::eval
