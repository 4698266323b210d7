// The factor rules of sharding propagation, one function per op family (see sharding_rules.h).
// Where a family is only partly covered (strided or dilated convolution windows, scatter's
// scattered dimensions), the uncovered dimensions get no factor: conservative, never wrong.
#include "compiler/passes/sharding_rules.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {

int ShardingRule::AddFactor(int64_t size, bool is_reduction) {
  factor_sizes.push_back(size);
  reduction.push_back(is_reduction);
  halo.emplace_back(0, 0);
  index_component.push_back(-1);
  return static_cast<int>(factor_sizes.size()) - 1;
}

int ShardingRule::AddHaloFactor(int64_t size, int64_t lo, int64_t hi) {
  const int f = AddFactor(size);
  halo[f] = {lo, hi};
  return f;
}

namespace {

using Dims = std::vector<std::vector<int>>;  // per dimension: factors, major first

std::vector<int64_t> Shape(const ir::Value* v) {
  return v->type().is_tensor() ? v->type().dims() : std::vector<int64_t>{};
}

// A rule with an empty factor list for every operand and result dimension (filled in by the
// op's case below).
ShardingRule EmptyRule(const ir::Instruction& inst) {
  ShardingRule rule;
  for (const ir::Value* v : inst.operands()) rule.operands.push_back(Dims(Shape(v).size()));
  for (size_t r = 0; r < inst.num_results(); ++r) {
    rule.results.push_back(Dims(Shape(inst.result(r)).size()));
  }
  return rule;
}

absl::StatusOr<std::vector<int64_t>> Ints(const ir::Instruction& inst, const char* name,
                                          std::optional<std::vector<int64_t>> fallback = {}) {
  const ir::Attribute* a = inst.attribute(name);
  if (a == nullptr && fallback.has_value()) return *fallback;
  if (a == nullptr || a->kind != ir::Attribute::Kind::kInts) {
    return absl::InvalidArgumentError(absl::StrCat(
        inst.Describe(), ": sharding propagation needs the integer list '", name, "'"));
  }
  return a->ints;
}

absl::StatusOr<int64_t> Int(const ir::Instruction& inst, const char* name,
                            std::optional<int64_t> fallback = {}) {
  const ir::Attribute* a = inst.attribute(name);
  if (a == nullptr && fallback.has_value()) return *fallback;
  if (a == nullptr || a->kind != ir::Attribute::Kind::kInt) {
    return absl::InvalidArgumentError(
        absl::StrCat(inst.Describe(), ": sharding propagation needs the integer '", name, "'"));
  }
  return a->i;
}

absl::Status DimInRange(const ir::Instruction& inst, int64_t d, size_t rank, const char* what) {
  if (d < 0 || d >= static_cast<int64_t>(rank)) {
    return absl::InvalidArgumentError(
        absl::StrCat(inst.Describe(), ": ", what, " ", d, " is out of range for rank ", rank));
  }
  return absl::OkStatus();
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// One factor per result dimension (of size > 1), shared by every operand and result of the
// result's shape: elementwise ops, and whatever only moves values without changing indices.
// Operands of another shape (select's or clamp's scalars) get nothing.
ShardingRule SameShapeRule(const ir::Instruction& inst) {
  ShardingRule rule = EmptyRule(inst);
  if (inst.num_results() == 0) return rule;
  const std::vector<int64_t> shape = Shape(inst.result(0));
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] <= 1) continue;
    const int f = rule.AddFactor(shape[d]);
    for (size_t k = 0; k < inst.operands().size(); ++k) {
      if (Shape(inst.operand(k)) == shape) rule.operands[k][d].push_back(f);
    }
    for (size_t r = 0; r < inst.num_results(); ++r) {
      if (Shape(inst.result(r)) == shape) rule.results[r][d].push_back(f);
    }
  }
  return rule;
}

// Operand k and result k share every dimension (optimization_barrier).
ShardingRule PairwiseRule(const ir::Instruction& inst) {
  ShardingRule rule = EmptyRule(inst);
  for (size_t k = 0; k < inst.operands().size() && k < inst.num_results(); ++k) {
    const std::vector<int64_t> shape = Shape(inst.operand(k));
    if (shape != Shape(inst.result(k))) continue;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] <= 1) continue;
      const int f = rule.AddFactor(shape[d]);
      rule.operands[k][d].push_back(f);
      rule.results[k][d].push_back(f);
    }
  }
  return rule;
}

// Operand 0 and the result share the dimensions `keep` accepts (slice, pad, dynamic_slice,
// reverse: the dimensions they leave whole).
template <typename Keep>
ShardingRule KeptDimsRule(const ir::Instruction& inst, Keep keep) {
  ShardingRule rule = EmptyRule(inst);
  const std::vector<int64_t> in = Shape(inst.operand(0));
  const std::vector<int64_t> out = Shape(inst.result(0));
  for (size_t d = 0; d < in.size() && d < out.size(); ++d) {
    if (in[d] <= 1 || in[d] != out[d] || !keep(d)) continue;
    const int f = rule.AddFactor(in[d]);
    rule.operands[0][d].push_back(f);
    rule.results[0][d].push_back(f);
  }
  return rule;
}

absl::StatusOr<ShardingRule> BroadcastInDimRule(const ir::Instruction& inst) {
  ShardingRule rule = EmptyRule(inst);
  const std::vector<int64_t> in = Shape(inst.operand(0));
  const std::vector<int64_t> out = Shape(inst.result(0));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> bd, Ints(inst, "broadcast_dimensions"));
  if (bd.size() != in.size()) {
    return absl::InvalidArgumentError(absl::StrCat(inst.Describe(), ": broadcast_dimensions has ",
                                                   bd.size(), " entries for rank ", in.size()));
  }
  for (size_t r = 0; r < out.size(); ++r) {
    if (out[r] <= 1) continue;
    const int f = rule.AddFactor(out[r]);
    rule.results[0][r].push_back(f);
    for (size_t d = 0; d < in.size(); ++d) {
      EMBER_RETURN_IF_ERROR(DimInRange(inst, bd[d], out.size(), "broadcast dimension"));
      if (bd[d] == static_cast<int64_t>(r) && in[d] == out[r]) rule.operands[0][d].push_back(f);
    }
  }
  return rule;
}

// A reshape as factors: walking both shapes major first, a dimension that equals the other
// side's is one factor, one that the other side's divides is split into it and the rest. Where
// neither divides the other (6x4 -> 4x6), the remaining dimensions get no factors.
ShardingRule ReshapeRule(const ir::Instruction& inst) {
  ShardingRule rule = EmptyRule(inst);
  const std::vector<int64_t> in = Shape(inst.operand(0));
  const std::vector<int64_t> out = Shape(inst.result(0));
  // `a` and `b` hold what is left of in[i] / out[o]; a dimension is left when it reaches 1.
  size_t i = 0, o = 0;
  int64_t a = in.empty() ? 1 : in[0];
  int64_t b = out.empty() ? 1 : out[0];
  while (true) {
    while (i < in.size() && a == 1) a = ++i < in.size() ? in[i] : 1;
    while (o < out.size() && b == 1) b = ++o < out.size() ? out[o] : 1;
    if (i >= in.size() || o >= out.size()) break;
    const int64_t size = std::min(a, b);
    if (size <= 1 || std::max(a, b) % size != 0) break;  // (size 0: an empty array)
    const int f = rule.AddFactor(size);
    rule.operands[0][i].push_back(f);
    rule.results[0][o].push_back(f);
    a /= size;
    b /= size;
  }
  return rule;
}

absl::StatusOr<ShardingRule> TransposeRule(const ir::Instruction& inst) {
  ShardingRule rule = EmptyRule(inst);
  const std::vector<int64_t> in = Shape(inst.operand(0));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> perm, Ints(inst, "permutation"));
  if (perm.size() != rule.results[0].size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        inst.Describe(), ": a permutation of ", perm.size(), " for rank ", rule.results[0].size()));
  }
  for (size_t r = 0; r < perm.size(); ++r) {
    EMBER_RETURN_IF_ERROR(DimInRange(inst, perm[r], in.size(), "permutation entry"));
    if (in[perm[r]] <= 1) continue;
    const int f = rule.AddFactor(in[perm[r]]);
    rule.operands[0][perm[r]].push_back(f);
    rule.results[0][r].push_back(f);
  }
  return rule;
}

// Batch factors (lhs, rhs, result), contracting ones (lhs, rhs: summed), then the lhs's and the
// rhs's free dimensions, which the result lists in that order after its batch dimensions.
absl::StatusOr<ShardingRule> DotGeneralRule(const ir::Instruction& inst) {
  ShardingRule rule = EmptyRule(inst);
  if (inst.operands().size() != 2) return rule;
  const std::vector<int64_t> lhs = Shape(inst.operand(0));
  const std::vector<int64_t> rhs = Shape(inst.operand(1));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> lb, Ints(inst, "lhs_batching_dimensions", {{}}));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> rb, Ints(inst, "rhs_batching_dimensions", {{}}));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> lc, Ints(inst, "lhs_contracting_dimensions", {{}}));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> rc, Ints(inst, "rhs_contracting_dimensions", {{}}));
  if (lb.size() != rb.size() || lc.size() != rc.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(inst.Describe(), ": unpaired batching or contracting dimensions"));
  }
  for (int64_t d : lb) EMBER_RETURN_IF_ERROR(DimInRange(inst, d, lhs.size(), "lhs dimension"));
  for (int64_t d : lc) EMBER_RETURN_IF_ERROR(DimInRange(inst, d, lhs.size(), "lhs dimension"));
  for (int64_t d : rb) EMBER_RETURN_IF_ERROR(DimInRange(inst, d, rhs.size(), "rhs dimension"));
  for (int64_t d : rc) EMBER_RETURN_IF_ERROR(DimInRange(inst, d, rhs.size(), "rhs dimension"));
  const size_t out_rank = rule.results[0].size();
  size_t r = 0;
  auto result_dim = [&](int f) {
    if (r < out_rank && f >= 0) rule.results[0][r].push_back(f);
    ++r;
  };
  for (size_t k = 0; k < lb.size(); ++k) {
    int f = -1;
    if (lhs[lb[k]] > 1 && lhs[lb[k]] == rhs[rb[k]]) {
      f = rule.AddFactor(lhs[lb[k]]);
      rule.operands[0][lb[k]].push_back(f);
      rule.operands[1][rb[k]].push_back(f);
    }
    result_dim(f);
  }
  for (size_t k = 0; k < lc.size(); ++k) {
    if (lhs[lc[k]] <= 1 || lhs[lc[k]] != rhs[rc[k]]) continue;
    const int f = rule.AddFactor(lhs[lc[k]], /*is_reduction=*/true);
    rule.operands[0][lc[k]].push_back(f);
    rule.operands[1][rc[k]].push_back(f);
  }
  for (int side = 0; side < 2; ++side) {
    const std::vector<int64_t>& shape = side == 0 ? lhs : rhs;
    const std::vector<int64_t>& batch = side == 0 ? lb : rb;
    const std::vector<int64_t>& contracting = side == 0 ? lc : rc;
    for (size_t d = 0; d < shape.size(); ++d) {
      const int64_t di = static_cast<int64_t>(d);
      if (Contains(batch, di) || Contains(contracting, di)) continue;
      int f = -1;
      if (shape[d] > 1) {
        f = rule.AddFactor(shape[d]);
        rule.operands[side][d].push_back(f);
      }
      result_dim(f);
    }
  }
  if (r != out_rank) {
    return absl::InvalidArgumentError(absl::StrCat(inst.Describe(), ": the result has rank ",
                                                   out_rank, ", the dimension numbers give ", r));
  }
  return rule;
}

// reduce(inputs..., inits...): the kept dimensions are shared by every input and result; the
// reduced ones are summed factors of the inputs.
absl::StatusOr<ShardingRule> ReduceRule(const ir::Instruction& inst) {
  ShardingRule rule = EmptyRule(inst);
  const size_t n = inst.num_results();
  if (inst.operands().size() != 2 * n || n == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(inst.Describe(), ": a reduce needs one init value per input"));
  }
  const std::vector<int64_t> in = Shape(inst.operand(0));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> reduced, Ints(inst, "dimensions"));
  for (int64_t d : reduced) EMBER_RETURN_IF_ERROR(DimInRange(inst, d, in.size(), "dimension"));
  size_t r = 0;
  for (size_t d = 0; d < in.size(); ++d) {
    const bool is_reduced = Contains(reduced, static_cast<int64_t>(d));
    int f = -1;
    if (in[d] > 1) f = rule.AddFactor(in[d], is_reduced);
    for (size_t k = 0; k < n && f >= 0; ++k) {
      if (Shape(inst.operand(k)) == in) rule.operands[k][d].push_back(f);
    }
    if (is_reduced) continue;
    for (size_t k = 0; k < n && f >= 0; ++k) {
      if (r < rule.results[k].size()) rule.results[k][r].push_back(f);
    }
    ++r;
  }
  return rule;
}

// Batch (input, output), output feature (kernel, output), input feature (input, kernel: summed).
// A spatial dimension the window slides over at stride 1, without input dilation and with
// padding that keeps the output as long as the input (SAME convolutions and their input
// gradients) is a halo factor of the input and the output: a block of outputs reads `lo`
// inputs before its block and `hi` after it (the padding on each side). Other spatial
// dimensions (strided, dilated, or a kernel gradient's, whose window is the whole image) get no
// factor. Grouped convolutions get only the batch factor.
absl::StatusOr<ShardingRule> ConvolutionRule(const ir::Instruction& inst) {
  ShardingRule rule = EmptyRule(inst);
  if (inst.operands().size() != 2) return rule;
  const std::vector<int64_t> input = Shape(inst.operand(0));
  const std::vector<int64_t> kernel = Shape(inst.operand(1));
  const std::vector<int64_t> output = Shape(inst.result(0));
  EMBER_ASSIGN_OR_RETURN(int64_t ib, Int(inst, "input_batch_dimension"));
  EMBER_ASSIGN_OR_RETURN(int64_t ifd, Int(inst, "input_feature_dimension"));
  EMBER_ASSIGN_OR_RETURN(int64_t kif, Int(inst, "kernel_input_feature_dimension"));
  EMBER_ASSIGN_OR_RETURN(int64_t kof, Int(inst, "kernel_output_feature_dimension"));
  EMBER_ASSIGN_OR_RETURN(int64_t ob, Int(inst, "output_batch_dimension"));
  EMBER_ASSIGN_OR_RETURN(int64_t of, Int(inst, "output_feature_dimension"));
  EMBER_ASSIGN_OR_RETURN(int64_t fgc, Int(inst, "feature_group_count", 1));
  EMBER_ASSIGN_OR_RETURN(int64_t bgc, Int(inst, "batch_group_count", 1));
  EMBER_RETURN_IF_ERROR(DimInRange(inst, ib, input.size(), "input_batch_dimension"));
  EMBER_RETURN_IF_ERROR(DimInRange(inst, ifd, input.size(), "input_feature_dimension"));
  EMBER_RETURN_IF_ERROR(DimInRange(inst, kif, kernel.size(), "kernel_input_feature_dimension"));
  EMBER_RETURN_IF_ERROR(DimInRange(inst, kof, kernel.size(), "kernel_output_feature_dimension"));
  EMBER_RETURN_IF_ERROR(DimInRange(inst, ob, output.size(), "output_batch_dimension"));
  EMBER_RETURN_IF_ERROR(DimInRange(inst, of, output.size(), "output_feature_dimension"));
  if (bgc == 1 && input[ib] > 1 && input[ib] == output[ob]) {
    const int f = rule.AddFactor(input[ib]);
    rule.operands[0][ib].push_back(f);
    rule.results[0][ob].push_back(f);
  }
  if (fgc != 1 || bgc != 1) return rule;
  if (kernel[kof] > 1 && kernel[kof] == output[of]) {
    const int f = rule.AddFactor(kernel[kof]);
    rule.operands[1][kof].push_back(f);
    rule.results[0][of].push_back(f);
  }
  if (input[ifd] > 1 && input[ifd] == kernel[kif]) {
    const int f = rule.AddFactor(input[ifd], /*is_reduction=*/true);
    rule.operands[0][ifd].push_back(f);
    rule.operands[1][kif].push_back(f);
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> in_spatial, Ints(inst, "input_spatial_dimensions"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> k_spatial, Ints(inst, "kernel_spatial_dimensions"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> out_spatial,
                         Ints(inst, "output_spatial_dimensions"));
  const size_t s = in_spatial.size();
  if (k_spatial.size() != s || out_spatial.size() != s) return rule;
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                         Ints(inst, "window_strides", std::vector<int64_t>(s, 1)));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> padding,
                         Ints(inst, "padding", std::vector<int64_t>(2 * s, 0)));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> lhs_dilation,
                         Ints(inst, "lhs_dilation", std::vector<int64_t>(s, 1)));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> rhs_dilation,
                         Ints(inst, "rhs_dilation", std::vector<int64_t>(s, 1)));
  if (strides.size() != s || padding.size() != 2 * s || lhs_dilation.size() != s ||
      rhs_dilation.size() != s) {
    return rule;
  }
  for (size_t i = 0; i < s; ++i) {
    EMBER_RETURN_IF_ERROR(DimInRange(inst, in_spatial[i], input.size(), "input_spatial_dimensions"));
    EMBER_RETURN_IF_ERROR(DimInRange(inst, k_spatial[i], kernel.size(), "kernel_spatial_dimensions"));
    EMBER_RETURN_IF_ERROR(
        DimInRange(inst, out_spatial[i], output.size(), "output_spatial_dimensions"));
    const int64_t size = input[in_spatial[i]];
    const int64_t lo = padding[2 * i], hi = padding[2 * i + 1];
    const int64_t reach = (kernel[k_spatial[i]] - 1) * rhs_dilation[i];
    if (size <= 1 || output[out_spatial[i]] != size || strides[i] != 1 || lhs_dilation[i] != 1 ||
        lo < 0 || hi < 0 || lo + hi != reach) {
      continue;
    }
    const int f = rule.AddHaloFactor(size, lo, hi);
    rule.operands[0][in_spatial[i]].push_back(f);
    rule.results[0][out_spatial[i]].push_back(f);
  }
  return rule;
}

// Every dimension but `skip` is shared by all operands and results (concatenate, sort).
ShardingRule AllButDimRule(const ir::Instruction& inst, int64_t skip) {
  ShardingRule rule = EmptyRule(inst);
  const std::vector<int64_t> shape = Shape(inst.result(0));
  for (size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<int64_t>(d) == skip || shape[d] <= 1) continue;
    const int f = rule.AddFactor(shape[d]);
    for (size_t k = 0; k < inst.operands().size(); ++k) {
      const std::vector<int64_t> s = Shape(inst.operand(k));
      if (d < s.size() && s[d] == shape[d]) rule.operands[k][d].push_back(f);
    }
    for (size_t r = 0; r < inst.num_results(); ++r) {
      const std::vector<int64_t> s = Shape(inst.result(r));
      if (d < s.size() && s[d] == shape[d]) rule.results[r][d].push_back(f);
    }
  }
  return rule;
}

// gather: the index batch dimensions (every start_indices dimension but index_vector_dim) are
// the result's non-offset dimensions, in order; an operand batching dimension shares its
// indices batching dimension's factor; an operand dimension taken whole is its offset
// dimension. An operand dimension gathered one element per index (a collapsed dimension of
// start_index_map: an embedding table's rows) is an indexed reduction factor of the operand
// alone (split, each device gathers the rows it holds and zeros for the others: a partial
// sum). Other gathered dimensions get no factor.
absl::StatusOr<ShardingRule> GatherRule(const ir::Instruction& inst) {
  ShardingRule rule = EmptyRule(inst);
  if (inst.operands().size() != 2) return rule;
  const std::vector<int64_t> operand = Shape(inst.operand(0));
  const std::vector<int64_t> indices = Shape(inst.operand(1));
  const std::vector<int64_t> out = Shape(inst.result(0));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> offset, Ints(inst, "offset_dims"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, Ints(inst, "slice_sizes"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> collapsed, Ints(inst, "collapsed_slice_dims", {{}}));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> obatch, Ints(inst, "operand_batching_dims", {{}}));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> ibatch,
                         Ints(inst, "start_indices_batching_dims", {{}}));
  EMBER_ASSIGN_OR_RETURN(int64_t ivd, Int(inst, "index_vector_dim"));
  if (sizes.size() != operand.size() || obatch.size() != ibatch.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(inst.Describe(), ": malformed gather dimensions"));
  }
  for (int64_t d : offset) EMBER_RETURN_IF_ERROR(DimInRange(inst, d, out.size(), "offset dim"));
  for (int64_t d : obatch) {
    EMBER_RETURN_IF_ERROR(DimInRange(inst, d, operand.size(), "batching dim"));
  }
  for (int64_t d : ibatch) {
    EMBER_RETURN_IF_ERROR(DimInRange(inst, d, indices.size(), "batching dim"));
  }
  size_t r = 0;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (static_cast<int64_t>(d) == ivd) continue;
    while (r < out.size() && Contains(offset, static_cast<int64_t>(r))) ++r;
    if (r >= out.size()) break;
    if (indices[d] > 1 && indices[d] == out[r]) {
      const int f = rule.AddFactor(indices[d]);
      rule.operands[1][d].push_back(f);
      rule.results[0][r].push_back(f);
      for (size_t k = 0; k < ibatch.size(); ++k) {
        if (ibatch[k] == static_cast<int64_t>(d) && operand[obatch[k]] == indices[d]) {
          rule.operands[0][obatch[k]].push_back(f);
        }
      }
    }
    ++r;
  }
  size_t o = 0;
  for (size_t d = 0; d < operand.size(); ++d) {
    const int64_t di = static_cast<int64_t>(d);
    if (Contains(collapsed, di) || Contains(obatch, di)) continue;
    if (o >= offset.size()) break;
    const int64_t out_dim = offset[o++];
    if (operand[d] > 1 && sizes[d] == operand[d] && out[out_dim] == operand[d]) {
      const int f = rule.AddFactor(operand[d]);
      rule.operands[0][d].push_back(f);
      rule.results[0][out_dim].push_back(f);
    }
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> map, Ints(inst, "start_index_map", {{}}));
  for (size_t j = 0; j < map.size(); ++j) {
    const int64_t d = map[j];
    if (d < 0 || d >= static_cast<int64_t>(operand.size()) || operand[d] <= 1 || sizes[d] != 1 ||
        !Contains(collapsed, d) || Contains(obatch, d)) {
      continue;
    }
    const int f = rule.AddFactor(operand[d], /*is_reduction=*/true);
    rule.index_component[f] = static_cast<int>(j);
    rule.operands[0][d].push_back(f);
  }
  return rule;
}

// reduce_window(inputs..., inits...): the dimensions whose window is one element (no stride,
// dilation or padding) are shared by every input and result; the others get no factor
// (splitting them needs halos).
absl::StatusOr<ShardingRule> ReduceWindowRule(const ir::Instruction& inst) {
  ShardingRule rule = EmptyRule(inst);
  const size_t n = inst.num_results();
  if (inst.operands().size() != 2 * n || n == 0) return rule;
  const std::vector<int64_t> in = Shape(inst.operand(0));
  const size_t r = in.size();
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> window, Ints(inst, "window_dimensions"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                         Ints(inst, "window_strides", std::vector<int64_t>(r, 1)));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> base,
                         Ints(inst, "base_dilations", std::vector<int64_t>(r, 1)));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> wdil,
                         Ints(inst, "window_dilations", std::vector<int64_t>(r, 1)));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> pad,
                         Ints(inst, "padding", std::vector<int64_t>(2 * r, 0)));
  if (window.size() != r || strides.size() != r || base.size() != r || wdil.size() != r ||
      pad.size() != 2 * r) {
    return absl::InvalidArgumentError(absl::StrCat(inst.Describe(), ": malformed window"));
  }
  for (size_t d = 0; d < r; ++d) {
    if (in[d] <= 1 || window[d] != 1 || strides[d] != 1 || base[d] != 1 || wdil[d] != 1 ||
        pad[2 * d] != 0 || pad[2 * d + 1] != 0) {
      continue;
    }
    const int f = rule.AddFactor(in[d]);
    for (size_t k = 0; k < n; ++k) {
      if (Shape(inst.operand(k)) == in) rule.operands[k][d].push_back(f);
      const std::vector<int64_t> out = Shape(inst.result(k));
      if (d < out.size() && out[d] == in[d]) rule.results[k][d].push_back(f);
    }
  }
  return rule;
}

// scatter(inputs..., indices, updates...): an input dimension that an update window covers
// whole is shared by the inputs, the results and that window dimension of the updates. The
// scattered dimensions, and the updates' scatter dimensions (which would make each device
// scatter only some updates), get no factor.
absl::StatusOr<ShardingRule> ScatterRule(const ir::Instruction& inst) {
  ShardingRule rule = EmptyRule(inst);
  const size_t n = inst.num_results();
  if (n == 0 || inst.operands().size() != 2 * n + 1) return rule;
  const std::vector<int64_t> operand = Shape(inst.operand(0));
  const std::vector<int64_t> updates = Shape(inst.operand(n + 1));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> window, Ints(inst, "update_window_dims"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> inserted, Ints(inst, "inserted_window_dims", {{}}));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> ibatch, Ints(inst, "input_batching_dims", {{}}));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> map, Ints(inst, "scatter_dims_to_operand_dims"));
  for (int64_t u : window) {
    EMBER_RETURN_IF_ERROR(DimInRange(inst, u, updates.size(), "update window dim"));
  }
  size_t w = 0;
  for (size_t d = 0; d < operand.size(); ++d) {
    const int64_t di = static_cast<int64_t>(d);
    if (Contains(inserted, di) || Contains(ibatch, di)) continue;
    if (w >= window.size()) break;
    const int64_t u = window[w++];
    if (operand[d] <= 1 || updates[u] != operand[d] || Contains(map, di)) continue;
    const int f = rule.AddFactor(operand[d]);
    for (size_t k = 0; k < n; ++k) {
      if (Shape(inst.operand(k)) == operand) rule.operands[k][d].push_back(f);
      if (Shape(inst.operand(n + 1 + k)) == updates) rule.operands[n + 1 + k][u].push_back(f);
      if (Shape(inst.result(k)) == operand) rule.results[k][d].push_back(f);
    }
  }
  // An operand dimension scattered into one element per index (an inserted window dimension of
  // scatter_dims_to_operand_dims: an embedding gradient's rows) is an indexed factor of the
  // operands and results: split, each device scatters into the rows it holds.
  for (size_t j = 0; j < map.size(); ++j) {
    const int64_t d = map[j];
    if (d < 0 || d >= static_cast<int64_t>(operand.size()) || operand[d] <= 1 ||
        !Contains(inserted, d) || Contains(ibatch, d)) {
      continue;
    }
    bool same = true;
    for (size_t k = 0; k < n; ++k) {
      same = same && Shape(inst.operand(k)) == operand && Shape(inst.result(k)) == operand;
    }
    if (!same) continue;
    const int f = rule.AddFactor(operand[d]);
    rule.index_component[f] = static_cast<int>(j);
    for (size_t k = 0; k < n; ++k) {
      rule.operands[k][d].push_back(f);
      rule.results[k][d].push_back(f);
    }
  }
  // The updates' scatter dimensions, with the indices' batch dimensions they follow: the result
  // combines the updates along them (a sum for scatter-add), so they are reduction factors.
  // Scatters with batching dimensions keep them whole.
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> ibatch_indices,
                         Ints(inst, "scatter_indices_batching_dims", {{}}));
  if (n != 1 || !ibatch.empty() || !ibatch_indices.empty()) return rule;
  const std::vector<int64_t> indices = Shape(inst.operand(1));
  EMBER_ASSIGN_OR_RETURN(int64_t index_vector_dim,
                         Int(inst, "index_vector_dim", static_cast<int64_t>(indices.size())));
  std::vector<int64_t> index_batch;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (static_cast<int64_t>(d) != index_vector_dim) index_batch.push_back(static_cast<int64_t>(d));
  }
  std::vector<int64_t> update_scatter;
  for (size_t u = 0; u < updates.size(); ++u) {
    if (!Contains(window, static_cast<int64_t>(u))) update_scatter.push_back(static_cast<int64_t>(u));
  }
  if (index_batch.size() != update_scatter.size()) return rule;
  for (size_t k = 0; k < index_batch.size(); ++k) {
    const int64_t size = updates[update_scatter[k]];
    if (size <= 1 || indices[index_batch[k]] != size) continue;
    const int f = rule.AddFactor(size, /*is_reduction=*/true);
    rule.operands[1][index_batch[k]].push_back(f);
    rule.operands[2][update_scatter[k]].push_back(f);
  }
  return rule;
}

bool IsElementwise(ir::Opcode op) {
  switch (op) {
    case ir::Opcode::kAbs:
    case ir::Opcode::kAdd:
    case ir::Opcode::kAnd:
    case ir::Opcode::kAtan2:
    case ir::Opcode::kCbrt:
    case ir::Opcode::kCeil:
    case ir::Opcode::kClamp:
    case ir::Opcode::kCompare:
    case ir::Opcode::kComplex:
    case ir::Opcode::kConvert:
    case ir::Opcode::kCosine:
    case ir::Opcode::kCountLeadingZeros:
    case ir::Opcode::kDivide:
    case ir::Opcode::kExponential:
    case ir::Opcode::kExponentialMinusOne:
    case ir::Opcode::kFloor:
    case ir::Opcode::kImag:
    case ir::Opcode::kIsFinite:
    case ir::Opcode::kLog:
    case ir::Opcode::kLogPlusOne:
    case ir::Opcode::kLogistic:
    case ir::Opcode::kMap:
    case ir::Opcode::kMaximum:
    case ir::Opcode::kMinimum:
    case ir::Opcode::kMultiply:
    case ir::Opcode::kNegate:
    case ir::Opcode::kNot:
    case ir::Opcode::kOr:
    case ir::Opcode::kPopcnt:
    case ir::Opcode::kPower:
    case ir::Opcode::kReal:
    case ir::Opcode::kReducePrecision:
    case ir::Opcode::kRemainder:
    case ir::Opcode::kRoundNearestAfz:
    case ir::Opcode::kRoundNearestEven:
    case ir::Opcode::kRsqrt:
    case ir::Opcode::kSelect:
    case ir::Opcode::kShiftLeft:
    case ir::Opcode::kShiftRightArithmetic:
    case ir::Opcode::kShiftRightLogical:
    case ir::Opcode::kSign:
    case ir::Opcode::kSine:
    case ir::Opcode::kSqrt:
    case ir::Opcode::kSubtract:
    case ir::Opcode::kTan:
    case ir::Opcode::kTanh:
    case ir::Opcode::kXor:
    case ir::Opcode::kUniformQuantize:
    case ir::Opcode::kUniformDequantize:
    case ir::Opcode::kBitcastConvert:  // only where the shapes agree (SameShapeRule checks)
    case ir::Opcode::kIota:
    case ir::Opcode::kConstant:  // results only: they take any split
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::StatusOr<std::optional<ShardingRule>> RuleOf(const ir::Instruction& inst) {
  const ir::Opcode op = inst.opcode();
  if (IsElementwise(op)) return SameShapeRule(inst);
  if (IsShardingConstraint(inst)) return SameShapeRule(inst);
  if (inst.num_results() == 0 || inst.operands().empty() || !inst.result(0)->type().is_tensor() ||
      !inst.operand(0)->type().is_tensor()) {
    return op == ir::Opcode::kOptimizationBarrier ? std::optional(PairwiseRule(inst))
                                                  : std::nullopt;
  }
  switch (op) {
    case ir::Opcode::kOptimizationBarrier:
      return PairwiseRule(inst);
    case ir::Opcode::kBroadcastInDim:
      return BroadcastInDimRule(inst);
    case ir::Opcode::kReshape:
      return ReshapeRule(inst);
    case ir::Opcode::kTranspose:
      return TransposeRule(inst);
    case ir::Opcode::kDotGeneral:
      return DotGeneralRule(inst);
    case ir::Opcode::kReduce:
      return ReduceRule(inst);
    case ir::Opcode::kConvolution:
      return ConvolutionRule(inst);
    case ir::Opcode::kGather:
      return GatherRule(inst);
    case ir::Opcode::kScatter:
      return ScatterRule(inst);
    case ir::Opcode::kReduceWindow:
      return ReduceWindowRule(inst);
    case ir::Opcode::kConcatenate: {
      EMBER_ASSIGN_OR_RETURN(int64_t dim, Int(inst, "dimension"));
      return AllButDimRule(inst, dim);
    }
    case ir::Opcode::kSort: {
      EMBER_ASSIGN_OR_RETURN(int64_t dim, Int(inst, "dimension", -1));
      if (dim < 0) dim += static_cast<int64_t>(Shape(inst.operand(0)).size());
      return AllButDimRule(inst, dim);
    }
    case ir::Opcode::kSlice: {
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> strides, Ints(inst, "strides", {{}}));
      return KeptDimsRule(inst, [&](size_t d) { return d >= strides.size() || strides[d] == 1; });
    }
    case ir::Opcode::kPad: {
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> interior, Ints(inst, "interior_padding", {{}}));
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> low, Ints(inst, "edge_padding_low", {{}}));
      return KeptDimsRule(inst, [&](size_t d) {
        return (d >= interior.size() || interior[d] == 0) && (d >= low.size() || low[d] == 0);
      });
    }
    case ir::Opcode::kDynamicSlice:
      return KeptDimsRule(inst, [](size_t) { return true; });
    case ir::Opcode::kDynamicUpdateSlice: {
      // The operand and the result share every dimension; the update those it covers whole.
      ShardingRule rule = SameShapeRule(inst);
      const std::vector<int64_t> out = Shape(inst.result(0));
      const std::vector<int64_t> update =
          inst.operands().size() > 1 ? Shape(inst.operand(1)) : std::vector<int64_t>{};
      if (update.size() == out.size() && update != out) {
        for (size_t d = 0; d < out.size(); ++d) {
          if (update[d] == out[d] && !rule.results[0][d].empty()) {
            rule.operands[1][d] = rule.results[0][d];
          }
        }
      }
      return rule;
    }
    case ir::Opcode::kReverse: {
      EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> dims, Ints(inst, "dimensions"));
      return KeptDimsRule(inst, [&](size_t d) { return !Contains(dims, static_cast<int64_t>(d)); });
    }
    default:
      return std::nullopt;
  }
}

absl::StatusOr<std::optional<ShardingRule>> ManualCollectiveRule(const ir::Instruction& inst) {
  if (inst.num_results() == 0 || inst.operands().empty()) return std::nullopt;
  for (const ir::Value* v : inst.operands()) {
    if (!v->type().is_tensor()) return std::nullopt;
  }
  const bool single = inst.operands().size() == 1 && inst.num_results() == 1;
  switch (inst.opcode()) {
    case ir::Opcode::kAllReduce:
    case ir::Opcode::kCollectivePermute:
      return PairwiseRule(inst);
    case ir::Opcode::kAllGather: {
      if (!single) return std::nullopt;
      EMBER_ASSIGN_OR_RETURN(int64_t dim, Int(inst, "all_gather_dim"));
      return AllButDimRule(inst, dim);
    }
    case ir::Opcode::kReduceScatter: {
      if (!single) return std::nullopt;
      EMBER_ASSIGN_OR_RETURN(int64_t dim, Int(inst, "scatter_dimension"));
      return AllButDimRule(inst, dim);
    }
    case ir::Opcode::kAllToAll: {
      if (!single) return std::nullopt;
      EMBER_ASSIGN_OR_RETURN(int64_t split, Int(inst, "split_dimension", -1));
      EMBER_ASSIGN_OR_RETURN(int64_t concat, Int(inst, "concat_dimension", -1));
      if (split < 0 || concat < 0) return std::nullopt;
      return KeptDimsRule(inst, [&](size_t d) {
        return static_cast<int64_t>(d) != split && static_cast<int64_t>(d) != concat;
      });
    }
    default:
      return std::nullopt;
  }
}

int64_t AxisSize(const ir::Mesh& mesh, const ir::MeshAxisRef& a) {
  if (!a.whole()) return a.size;
  for (size_t k = 0; k < mesh.axes.size(); ++k) {
    if (mesh.axes[k] == a.name) return mesh.sizes[k];
  }
  return 1;
}

std::vector<ir::MeshAxisRef> ProjectOntoFactor(const std::vector<ir::MeshAxisRef>& axes,
                                               const std::vector<int>& factors,
                                               const ShardingRule& rule, int f,
                                               const ir::Mesh& mesh) {
  std::vector<std::vector<ir::MeshAxisRef>> per(factors.size());
  size_t k = 0;
  int64_t left = factors.empty() ? 1 : rule.factor_sizes[factors[0]];
  for (const ir::MeshAxisRef& a : axes) {
    while (k < factors.size() && left == 1) {
      if (++k < factors.size()) left = rule.factor_sizes[factors[k]];
    }
    if (k >= factors.size()) break;
    const int64_t n = AxisSize(mesh, a);
    if (left % n != 0) break;
    per[k].push_back(a);
    left /= n;
  }
  for (size_t i = 0; i < factors.size(); ++i) {
    if (factors[i] == f) return per[i];
  }
  return {};
}

}  // namespace ember::passes
