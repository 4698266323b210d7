// The linear-algebra op family of the reference evaluator: registers dot/dot_general
// (eval_dot.cc), convolution (eval_convolution.cc), fft (eval_fft.cc), cholesky and
// triangular_solve (eval_linalg_decomp.cc), and evaluates batch_norm_inference/training/grad here.
//
// batch_norm_* follow the spec's decompositions but compute in double and round once into the
// element type (the spec's formulas in bf16/f16 would lose most bits; in f32 the result is the
// correctly rounded value of the same formula). Variance is the biased (population) one.
#include <cmath>
#include <cstdint>
#include <vector>

#include "compiler/evaluator/eval_family_support.h"
#include "compiler/evaluator/evaluator.h"

namespace ember::eval {
namespace {

namespace fs = family_support;

struct FeatureLayout {
  int64_t features = 0;  // dim(operand, feature_index)
  int64_t inner = 1;     // elements between consecutive features
  int64_t count = 0;     // elements of the operand
  int64_t Feature(int64_t linear) const { return (linear / inner) % features; }
  double PerFeature() const { return features == 0 ? 0.0 : static_cast<double>(count / features); }
};

absl::StatusOr<FeatureLayout> ReadLayout(const ir::Instruction& inst, const ir::Literal& operand,
                                         const std::vector<const ir::Literal*>& per_feature) {
  EMBER_ASSIGN_OR_RETURN(int64_t fi, fs::IntAttr(inst, "feature_index"));
  const ir::Shape& s = operand.shape();
  if (fi < 0 || fi >= s.rank()) {
    return fs::OpError(inst,
                       absl::StrCat("feature_index ", fi, " out of range for ", s.ToString()));
  }
  if (!ir::IsFloat(s.element_type())) {
    return fs::OpError(inst, absl::StrCat("operand must be floating-point, got ", s.ToString()));
  }
  FeatureLayout l;
  l.features = s.dim(fi);
  for (int64_t i = fi + 1; i < s.rank(); ++i) l.inner *= s.dim(i);
  l.count = s.element_count();
  for (const ir::Literal* p : per_feature) {
    if (p->shape().rank() != 1 || p->shape().dim(0) != l.features) {
      return fs::OpError(inst, absl::StrCat("per-feature operand ", p->shape().ToString(),
                                            " does not have ", l.features, " elements"));
    }
  }
  return l;
}

absl::StatusOr<EvalValue> Result(const ir::Instruction& inst, size_t i,
                                 const std::vector<double>& values) {
  EMBER_ASSIGN_OR_RETURN(ir::Shape shape, fs::ResultShape(inst, i));
  EMBER_ASSIGN_OR_RETURN(ir::Literal lit,
                         fs::LiteralFrom<double>(shape, absl::MakeConstSpan(values)));
  return EvalValue::Array(std::move(lit));
}

absl::StatusOr<std::vector<double>> Doubles(const ir::Literal& l) {
  return fs::LiteralTo<double>(l);
}

// scale * (x - mean) / sqrt(var + eps) + offset, elementwise.
std::vector<double> Normalize(const FeatureLayout& l, const std::vector<double>& x,
                              const std::vector<double>& scale, const std::vector<double>& offset,
                              const std::vector<double>& mean, const std::vector<double>& var,
                              double eps) {
  std::vector<double> out(x.size());
  for (int64_t i = 0; i < l.count; ++i) {
    const int64_t f = l.Feature(i);
    out[i] = scale[f] * ((x[i] - mean[f]) / std::sqrt(var[f] + eps)) + offset[f];
  }
  return out;
}

absl::StatusOr<std::vector<EvalValue>> EvalBatchNormInference(const ir::Instruction& inst,
                                                              std::vector<EvalValue>& operands,
                                                              Evaluator&) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 5));
  std::vector<const ir::Literal*> in;
  for (size_t i = 0; i < 5; ++i) {
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* p, fs::ArrayOperand(inst, operands, i));
    in.push_back(p);
  }
  EMBER_ASSIGN_OR_RETURN(double eps, fs::FloatAttr(inst, "epsilon"));
  EMBER_ASSIGN_OR_RETURN(FeatureLayout l, ReadLayout(inst, *in[0], {in[1], in[2], in[3], in[4]}));
  std::vector<std::vector<double>> v;
  for (const ir::Literal* p : in) {
    EMBER_ASSIGN_OR_RETURN(std::vector<double> d, Doubles(*p));
    v.push_back(std::move(d));
  }
  std::vector<EvalValue> results;
  EMBER_ASSIGN_OR_RETURN(EvalValue r,
                         Result(inst, 0, Normalize(l, v[0], v[1], v[2], v[3], v[4], eps)));
  results.push_back(std::move(r));
  return results;
}

void MeanAndVariance(const FeatureLayout& l, const std::vector<double>& x,
                     std::vector<double>& mean, std::vector<double>& var) {
  mean.assign(static_cast<size_t>(l.features), 0.0);
  var.assign(static_cast<size_t>(l.features), 0.0);
  const double n = l.PerFeature();
  for (int64_t i = 0; i < l.count; ++i) mean[l.Feature(i)] += x[i];
  for (double& m : mean) m /= n;
  for (int64_t i = 0; i < l.count; ++i) {
    const double c = x[i] - mean[l.Feature(i)];
    var[l.Feature(i)] += c * c;
  }
  for (double& s : var) s /= n;
}

absl::StatusOr<std::vector<EvalValue>> EvalBatchNormTraining(const ir::Instruction& inst,
                                                             std::vector<EvalValue>& operands,
                                                             Evaluator&) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 3));
  std::vector<const ir::Literal*> in;
  for (size_t i = 0; i < 3; ++i) {
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* p, fs::ArrayOperand(inst, operands, i));
    in.push_back(p);
  }
  EMBER_ASSIGN_OR_RETURN(double eps, fs::FloatAttr(inst, "epsilon"));
  EMBER_ASSIGN_OR_RETURN(FeatureLayout l, ReadLayout(inst, *in[0], {in[1], in[2]}));
  EMBER_ASSIGN_OR_RETURN(std::vector<double> x, Doubles(*in[0]));
  EMBER_ASSIGN_OR_RETURN(std::vector<double> scale, Doubles(*in[1]));
  EMBER_ASSIGN_OR_RETURN(std::vector<double> offset, Doubles(*in[2]));
  std::vector<double> mean, var;
  MeanAndVariance(l, x, mean, var);
  std::vector<EvalValue> results;
  EMBER_ASSIGN_OR_RETURN(EvalValue out,
                         Result(inst, 0, Normalize(l, x, scale, offset, mean, var, eps)));
  EMBER_ASSIGN_OR_RETURN(EvalValue m, Result(inst, 1, mean));
  EMBER_ASSIGN_OR_RETURN(EvalValue v, Result(inst, 2, var));
  results.push_back(std::move(out));
  results.push_back(std::move(m));
  results.push_back(std::move(v));
  return results;
}

absl::StatusOr<std::vector<EvalValue>> EvalBatchNormGrad(const ir::Instruction& inst,
                                                         std::vector<EvalValue>& operands,
                                                         Evaluator&) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 5));
  std::vector<const ir::Literal*> in;
  for (size_t i = 0; i < 5; ++i) {
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* p, fs::ArrayOperand(inst, operands, i));
    in.push_back(p);
  }
  EMBER_ASSIGN_OR_RETURN(double eps, fs::FloatAttr(inst, "epsilon"));
  EMBER_ASSIGN_OR_RETURN(FeatureLayout l, ReadLayout(inst, *in[0], {in[1], in[2], in[3]}));
  if (in[4]->shape().dims() != in[0]->shape().dims()) {
    return fs::OpError(inst, "grad_output must have the operand's shape");
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<double> x, Doubles(*in[0]));
  EMBER_ASSIGN_OR_RETURN(std::vector<double> scale, Doubles(*in[1]));
  EMBER_ASSIGN_OR_RETURN(std::vector<double> mean, Doubles(*in[2]));
  EMBER_ASSIGN_OR_RETURN(std::vector<double> var, Doubles(*in[3]));
  EMBER_ASSIGN_OR_RETURN(std::vector<double> gy, Doubles(*in[4]));
  const size_t c = static_cast<size_t>(l.features);
  // The spec's i1..i6 (from XLA's batchnorm_expander), per feature sums first.
  std::vector<double> sum_gy(c, 0.0), sum_gy_centered(c, 0.0), grad_scale(c, 0.0);
  for (int64_t i = 0; i < l.count; ++i) {
    const int64_t f = l.Feature(i);
    const double centered = x[i] - mean[f];
    sum_gy[f] += gy[i];
    sum_gy_centered[f] += gy[i] * centered;
    grad_scale[f] += gy[i] * (centered / std::sqrt(var[f] + eps));
  }
  const double n = l.PerFeature();
  std::vector<double> grad_operand(x.size());
  for (int64_t i = 0; i < l.count; ++i) {
    const int64_t f = l.Feature(i);
    const double centered = x[i] - mean[f];
    const double stddev = std::sqrt(var[f] + eps);
    const double i6 = gy[i] * n - sum_gy[f] - sum_gy_centered[f] * centered / (var[f] + eps);
    grad_operand[i] = scale[f] / stddev / n * i6;
  }
  std::vector<EvalValue> results;
  EMBER_ASSIGN_OR_RETURN(EvalValue r0, Result(inst, 0, grad_operand));
  EMBER_ASSIGN_OR_RETURN(EvalValue r1, Result(inst, 1, grad_scale));
  EMBER_ASSIGN_OR_RETURN(EvalValue r2, Result(inst, 2, sum_gy));
  results.push_back(std::move(r0));
  results.push_back(std::move(r1));
  results.push_back(std::move(r2));
  return results;
}

}  // namespace

void RegisterLinalgOps(OpTable& table) {
  fs::RegisterDotOps(table);
  fs::RegisterConvolutionOps(table);
  fs::RegisterFftOps(table);
  fs::RegisterDecompositionOps(table);
  table.Register(ir::Opcode::kBatchNormInference, EvalBatchNormInference);
  table.Register(ir::Opcode::kBatchNormTraining, EvalBatchNormTraining);
  table.Register(ir::Opcode::kBatchNormGrad, EvalBatchNormGrad);
}

}  // namespace ember::eval
