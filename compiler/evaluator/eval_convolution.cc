// Reference evaluation of convolution (and dynamic_conv, whose padding is an operand) with every
// attribute of the spec: window strides, (negative) padding, lhs (base) and rhs (window)
// dilation, window reversal, feature groups and batch groups, and arbitrary dimension numbers.
//
// Each output element is the dot product of one lhs window with the kernel, computed straight
// from the spec's definition (no im2col, no transposes). Arithmetic follows dot_general (see
// eval_dot.cc): the result type's accumulation type, at least f32 for narrow floats.
// Attributes that are absent take the spec's defaults: strides, dilations 1, padding 0, no
// reversal, group counts 1. `padding` is flattened [lo0, hi0, lo1, hi1, ...] (a rank-2 literal
// is accepted too).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "compiler/evaluator/eval_family_support.h"
#include "compiler/evaluator/evaluator.h"

namespace ember::eval {
namespace {

namespace fs = family_support;

struct ConvConfig {
  std::vector<int64_t> strides, padding, lhs_dilation, rhs_dilation;
  std::vector<bool> reversal;
  int64_t in_batch = 0, in_feature = 0, k_in = 0, k_out = 0, out_batch = 0, out_feature = 0;
  std::vector<int64_t> in_spatial, k_spatial, out_spatial;
  int64_t feature_groups = 1, batch_groups = 1;
};

absl::StatusOr<ConvConfig> ReadConfig(const ir::Instruction& inst, int64_t rank,
                                      const std::vector<int64_t>* padding) {
  ConvConfig c;
  const int64_t s = rank - 2;
  if (s < 0) return fs::OpError(inst, "operands must have rank >= 2");
  EMBER_ASSIGN_OR_RETURN(c.strides,
                         fs::IntsAttr(inst, "window_strides", std::vector<int64_t>(s, 1)));
  if (padding != nullptr) {
    c.padding = *padding;
  } else {
    EMBER_ASSIGN_OR_RETURN(c.padding,
                           fs::IntsAttr(inst, "padding", std::vector<int64_t>(2 * s, 0)));
  }
  EMBER_ASSIGN_OR_RETURN(c.lhs_dilation,
                         fs::IntsAttr(inst, "lhs_dilation", std::vector<int64_t>(s, 1)));
  EMBER_ASSIGN_OR_RETURN(c.rhs_dilation,
                         fs::IntsAttr(inst, "rhs_dilation", std::vector<int64_t>(s, 1)));
  EMBER_ASSIGN_OR_RETURN(c.reversal,
                         fs::BoolsAttr(inst, "window_reversal", std::vector<bool>(s, false)));
  EMBER_ASSIGN_OR_RETURN(c.in_batch, fs::IntAttr(inst, "input_batch_dimension"));
  EMBER_ASSIGN_OR_RETURN(c.in_feature, fs::IntAttr(inst, "input_feature_dimension"));
  EMBER_ASSIGN_OR_RETURN(c.in_spatial, fs::IntsAttr(inst, "input_spatial_dimensions"));
  EMBER_ASSIGN_OR_RETURN(c.k_in, fs::IntAttr(inst, "kernel_input_feature_dimension"));
  EMBER_ASSIGN_OR_RETURN(c.k_out, fs::IntAttr(inst, "kernel_output_feature_dimension"));
  EMBER_ASSIGN_OR_RETURN(c.k_spatial, fs::IntsAttr(inst, "kernel_spatial_dimensions"));
  EMBER_ASSIGN_OR_RETURN(c.out_batch, fs::IntAttr(inst, "output_batch_dimension"));
  EMBER_ASSIGN_OR_RETURN(c.out_feature, fs::IntAttr(inst, "output_feature_dimension"));
  EMBER_ASSIGN_OR_RETURN(c.out_spatial, fs::IntsAttr(inst, "output_spatial_dimensions"));
  EMBER_ASSIGN_OR_RETURN(c.feature_groups, fs::IntAttr(inst, "feature_group_count", 1));
  EMBER_ASSIGN_OR_RETURN(c.batch_groups, fs::IntAttr(inst, "batch_group_count", 1));
  auto check_size = [&](std::string_view name, size_t got, int64_t want) -> absl::Status {
    if (static_cast<int64_t>(got) != want) {
      return fs::OpError(inst, absl::StrCat(std::string(name), " has ", got, " entries, expected ",
                                            want, " for rank ", rank));
    }
    return absl::OkStatus();
  };
  EMBER_RETURN_IF_ERROR(check_size("window_strides", c.strides.size(), s));
  EMBER_RETURN_IF_ERROR(check_size("padding", c.padding.size(), 2 * s));
  EMBER_RETURN_IF_ERROR(check_size("lhs_dilation", c.lhs_dilation.size(), s));
  EMBER_RETURN_IF_ERROR(check_size("rhs_dilation", c.rhs_dilation.size(), s));
  EMBER_RETURN_IF_ERROR(check_size("window_reversal", c.reversal.size(), s));
  EMBER_RETURN_IF_ERROR(check_size("input_spatial_dimensions", c.in_spatial.size(), s));
  EMBER_RETURN_IF_ERROR(check_size("kernel_spatial_dimensions", c.k_spatial.size(), s));
  EMBER_RETURN_IF_ERROR(check_size("output_spatial_dimensions", c.out_spatial.size(), s));
  for (int64_t i = 0; i < s; ++i) {
    if (c.strides[i] <= 0 || c.lhs_dilation[i] <= 0 || c.rhs_dilation[i] <= 0) {
      return fs::OpError(inst, "window strides and dilations must be positive");
    }
  }
  std::vector<int64_t> dims = {c.in_batch, c.in_feature};
  dims.insert(dims.end(), c.in_spatial.begin(), c.in_spatial.end());
  EMBER_RETURN_IF_ERROR(fs::CheckDims(inst, "input", dims, rank));
  dims = {c.k_in, c.k_out};
  dims.insert(dims.end(), c.k_spatial.begin(), c.k_spatial.end());
  EMBER_RETURN_IF_ERROR(fs::CheckDims(inst, "kernel", dims, rank));
  dims = {c.out_batch, c.out_feature};
  dims.insert(dims.end(), c.out_spatial.begin(), c.out_spatial.end());
  EMBER_RETURN_IF_ERROR(fs::CheckDims(inst, "output", dims, rank));
  if (c.feature_groups <= 0 || c.batch_groups <= 0 ||
      (c.feature_groups > 1 && c.batch_groups > 1)) {
    return fs::OpError(inst,
                       absl::StrCat("invalid group counts: feature_group_count ", c.feature_groups,
                                    ", batch_group_count ", c.batch_groups));
  }
  return c;
}

absl::StatusOr<std::vector<EvalValue>> ConvolutionCore(const ir::Instruction& inst,
                                                       const ir::Literal* lhs,
                                                       const ir::Literal* rhs,
                                                       const std::vector<int64_t>* padding) {
  const ir::Shape& ls = lhs->shape();
  const ir::Shape& ks = rhs->shape();
  const int64_t rank = ls.rank();
  if (ks.rank() != rank) {
    return fs::OpError(inst, absl::StrCat("lhs rank ", rank, " differs from rhs rank ", ks.rank()));
  }
  EMBER_ASSIGN_OR_RETURN(ConvConfig c, ReadConfig(inst, rank, padding));
  EMBER_ASSIGN_OR_RETURN(ir::Shape result_shape, fs::ResultShape(inst, 0));
  if (result_shape.rank() != rank) return fs::OpError(inst, "result rank differs from lhs rank");
  const int64_t s = rank - 2;

  const int64_t batch = ls.dim(c.in_batch);
  const int64_t in_features = ls.dim(c.in_feature);
  const int64_t k_in = ks.dim(c.k_in);
  const int64_t k_out = ks.dim(c.k_out);
  if (batch % c.batch_groups != 0 || in_features % c.feature_groups != 0 ||
      k_in * c.feature_groups != in_features || k_out % c.batch_groups != 0 ||
      k_out % c.feature_groups != 0) {
    return fs::OpError(
        inst, absl::StrCat("group counts do not divide the dimensions: batch ", batch,
                           ", input features ", in_features, ", kernel input features ", k_in,
                           ", kernel output features ", k_out));
  }
  // Expected result dims (C25).
  std::vector<int64_t> expect(static_cast<size_t>(rank), 0);
  expect[c.out_batch] = batch / c.batch_groups;
  expect[c.out_feature] = k_out;
  for (int64_t i = 0; i < s; ++i) {
    const int64_t in = ls.dim(c.in_spatial[i]);
    const int64_t dilated_in = in == 0 ? 0 : (in - 1) * c.lhs_dilation[i] + 1;
    const int64_t padded = c.padding[2 * i] + dilated_in + c.padding[2 * i + 1];
    const int64_t k = ks.dim(c.k_spatial[i]);
    const int64_t dilated_k = k == 0 ? 0 : (k - 1) * c.rhs_dilation[i] + 1;
    const bool empty = padded <= 0 || dilated_k > padded;
    expect[c.out_spatial[i]] = empty ? 0 : (padded - dilated_k) / c.strides[i] + 1;
  }
  if (expect != result_shape.dims()) {
    return fs::OpError(inst, absl::StrCat("result shape ", result_shape.ToString(),
                                          " does not match the computed dims [",
                                          absl::StrJoin(expect, ", "), "]"));
  }

  const std::vector<int64_t> lstr = fs::RowMajorStrides(ls.dims());
  const std::vector<int64_t> kstr = fs::RowMajorStrides(ks.dims());
  const std::vector<int64_t>& rdims = result_shape.dims();
  std::vector<int64_t> kernel_window(static_cast<size_t>(s));
  for (int64_t i = 0; i < s; ++i) kernel_window[i] = ks.dim(c.k_spatial[i]);
  const int64_t out_per_feature_group = k_out / c.feature_groups;
  const int64_t out_per_batch_group = k_out / c.batch_groups;
  const int64_t batch_per_group = batch / c.batch_groups;

  return fs::VisitAccumulationType(
      result_shape.element_type(), [&](auto tag) -> absl::StatusOr<std::vector<EvalValue>> {
        using Acc = typename decltype(tag)::type;
        if constexpr (std::is_void_v<Acc>) {
          return fs::OpError(inst, "unsupported result element type");
        } else {
          EMBER_ASSIGN_OR_RETURN(std::vector<fs::AccStore<Acc>> l, fs::LiteralTo<Acc>(*lhs));
          EMBER_ASSIGN_OR_RETURN(std::vector<fs::AccStore<Acc>> k, fs::LiteralTo<Acc>(*rhs));
          std::vector<fs::AccStore<Acc>> out(static_cast<size_t>(result_shape.element_count()),
                                             Acc(0));
          const bool has_window = fs::Product(kernel_window) > 0 && k_in > 0;
          if (!out.empty()) {
            std::vector<int64_t> ri(static_cast<size_t>(rank), 0);
            std::vector<int64_t> w(static_cast<size_t>(s), 0);
            size_t linear = 0;
            do {
              const int64_t o = ri[c.out_feature];
              const int64_t fg = o / out_per_feature_group;
              const int64_t bg = o / out_per_batch_group;
              const int64_t b = bg * batch_per_group + ri[c.out_batch];
              Acc acc = Acc(0);
              if (has_window) {
                std::fill(w.begin(), w.end(), 0);
                do {
                  // Position of this window element in lhs, or skip it when it falls on padding
                  // or between base-dilated elements.
                  int64_t lhs_base = b * lstr[c.in_batch];
                  int64_t k_base = o * kstr[c.k_out];
                  bool inside = true;
                  for (int64_t i = 0; i < s && inside; ++i) {
                    // The spec reverses the lhs window; equivalently, window position
                    // K-1-w pairs with kernel position w.
                    const int64_t wpos = c.reversal[i] ? kernel_window[i] - 1 - w[i] : w[i];
                    const int64_t padded =
                        ri[c.out_spatial[i]] * c.strides[i] + wpos * c.rhs_dilation[i];
                    const int64_t dilated = padded - c.padding[2 * i];
                    if (dilated < 0 || dilated % c.lhs_dilation[i] != 0) {
                      inside = false;
                      break;
                    }
                    const int64_t pos = dilated / c.lhs_dilation[i];
                    if (pos >= ls.dim(c.in_spatial[i])) {
                      inside = false;
                      break;
                    }
                    lhs_base += pos * lstr[c.in_spatial[i]];
                    k_base += w[i] * kstr[c.k_spatial[i]];
                  }
                  if (inside) {
                    for (int64_t f = 0; f < k_in; ++f) {
                      const int64_t lf = fg * k_in + f;
                      acc = fs::AccAdd<Acc>(acc,
                                            fs::AccMul<Acc>(l[lhs_base + lf * lstr[c.in_feature]],
                                                            k[k_base + f * kstr[c.k_in]]));
                    }
                  }
                } while (fs::NextIndex(w, kernel_window));
              }
              out[linear++] = acc;
            } while (fs::NextIndex(ri, rdims));
          }
          EMBER_ASSIGN_OR_RETURN(ir::Literal result,
                                 fs::LiteralFrom<Acc>(result_shape, absl::MakeConstSpan(out)));
          std::vector<EvalValue> results;
          results.push_back(EvalValue::Array(std::move(result)));
          return results;
        }
      });
}

absl::StatusOr<std::vector<EvalValue>> EvalConvolution(const ir::Instruction& inst,
                                                       std::vector<EvalValue>& operands,
                                                       Evaluator&) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 2));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* lhs, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* rhs, fs::ArrayOperand(inst, operands, 1));
  return ConvolutionCore(inst, lhs, rhs, nullptr);
}

// dynamic_conv: convolution whose padding is a [N-2, 2] integer operand.
absl::StatusOr<std::vector<EvalValue>> EvalDynamicConv(const ir::Instruction& inst,
                                                       std::vector<EvalValue>& operands,
                                                       Evaluator&) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 3));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* lhs, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* rhs, fs::ArrayOperand(inst, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* pad, fs::ArrayOperand(inst, operands, 2));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> padding, fs::IntegerValues(*pad));
  return ConvolutionCore(inst, lhs, rhs, &padding);
}

}  // namespace

namespace family_support {
void RegisterConvolutionOps(OpTable& table) {
  table.Register(ir::Opcode::kConvolution, EvalConvolution);
  table.Register(ir::Opcode::kDynamicConv, EvalDynamicConv);
}
}  // namespace family_support

}  // namespace ember::eval
