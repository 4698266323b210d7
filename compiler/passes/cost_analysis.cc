#include "compiler/passes/cost_analysis.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "absl/strings/str_format.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

using ir::Opcode;

double Elements(const ir::Value* v) {
  const ir::ValueType& type = v->type();
  return type.is_tensor() ? static_cast<double>(type.shape().element_count()) : 0.0;
}

double Bytes(const ir::Value* v) {
  const ir::ValueType& type = v->type();
  return type.is_tensor() ? static_cast<double>(type.shape().ByteSize()) : 0.0;
}

double ResultElements(const ir::Instruction& inst) {
  double n = 0;
  for (size_t r = 0; r < inst.num_results(); ++r) n += Elements(inst.result(r));
  return n;
}

bool IsTranscendental(Opcode op) {
  switch (op) {
    case Opcode::kExponential:
    case Opcode::kExponentialMinusOne:
    case Opcode::kLog:
    case Opcode::kLogPlusOne:
    case Opcode::kLogistic:
    case Opcode::kPower:
    case Opcode::kSqrt:
    case Opcode::kRsqrt:
    case Opcode::kCbrt:
    case Opcode::kTanh:
    case Opcode::kTan:
    case Opcode::kSine:
    case Opcode::kCosine:
    case Opcode::kAtan2:
      return true;
    default:
      return false;
  }
}

// One arithmetic operation per result element.
bool IsElementwiseArithmetic(Opcode op) {
  switch (op) {
    case Opcode::kAbs:
    case Opcode::kAdd:
    case Opcode::kAnd:
    case Opcode::kCeil:
    case Opcode::kClamp:
    case Opcode::kCompare:
    case Opcode::kComplex:
    case Opcode::kConvert:
    case Opcode::kCountLeadingZeros:
    case Opcode::kDivide:
    case Opcode::kFloor:
    case Opcode::kImag:
    case Opcode::kIsFinite:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMultiply:
    case Opcode::kNegate:
    case Opcode::kNot:
    case Opcode::kOr:
    case Opcode::kPopcnt:
    case Opcode::kReal:
    case Opcode::kReducePrecision:
    case Opcode::kRemainder:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kSelect:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kSign:
    case Opcode::kSubtract:
    case Opcode::kXor:
      return true;
    default:
      return false;
  }
}

// CHLO ops the importer keeps as custom calls: the special functions XLA lowers to one
// transcendental per element.
bool IsChloSpecialFunction(const std::string& target) {
  static const std::unordered_set<std::string>* names = new std::unordered_set<std::string>{
      "chlo.erf",  "chlo.erfc",      "chlo.erf_inv", "chlo.lgamma", "chlo.digamma",
      "chlo.sinh", "chlo.cosh",      "chlo.tan",     "chlo.asin",   "chlo.acos",
      "chlo.atan", "chlo.asinh",     "chlo.acosh",   "chlo.atanh",  "chlo.bessel_i1e",
      "chlo.zeta", "chlo.polygamma", "chlo.igamma",  "chlo.igammac"};
  return names->contains(target);
}

std::vector<int64_t> Ints(const ir::Instruction& inst, std::string_view name,
                          std::vector<int64_t> fallback = {}) {
  const ir::Attribute* a = inst.attribute(name);
  if (a == nullptr) return fallback;
  if (a->kind == ir::Attribute::Kind::kInts) return a->ints;
  if (a->kind == ir::Attribute::Kind::kInt) return {a->i};
  return fallback;
}

int64_t Int(const ir::Instruction& inst, std::string_view name, int64_t fallback) {
  std::vector<int64_t> v = Ints(inst, name);
  return v.size() == 1 ? v[0] : fallback;
}

int64_t Dim(const ir::Value* v, int64_t d) {
  const ir::ValueType& type = v->type();
  if (!type.is_tensor() || d < 0 || d >= static_cast<int64_t>(type.dims().size())) return 1;
  return type.dims()[d];
}

// Window taps of a convolution that land on the input: per spatial dimension the (output
// position, window position) pairs whose input coordinate is a real element (inside the
// padded bounds and not in a hole of the base dilation); the dimensions multiply.
double ValidConvolutionTaps(const ir::Instruction& conv) {
  const ir::Value* lhs = conv.operand(0);
  const ir::Value* rhs = conv.operand(1);
  const ir::Value* out = conv.result();
  const std::vector<int64_t> in_spatial = Ints(conv, "input_spatial_dimensions");
  const std::vector<int64_t> k_spatial = Ints(conv, "kernel_spatial_dimensions");
  const std::vector<int64_t> out_spatial = Ints(conv, "output_spatial_dimensions");
  const size_t s = in_spatial.size();
  if (k_spatial.size() != s || out_spatial.size() != s) return 0;
  const std::vector<int64_t> strides = Ints(conv, "window_strides", std::vector<int64_t>(s, 1));
  const std::vector<int64_t> padding = Ints(conv, "padding", std::vector<int64_t>(2 * s, 0));
  const std::vector<int64_t> lhs_dil = Ints(conv, "lhs_dilation", std::vector<int64_t>(s, 1));
  const std::vector<int64_t> rhs_dil = Ints(conv, "rhs_dilation", std::vector<int64_t>(s, 1));
  if (strides.size() != s || padding.size() != 2 * s || lhs_dil.size() != s ||
      rhs_dil.size() != s) {
    return 0;
  }
  double taps = 1;
  for (size_t i = 0; i < s; ++i) {
    const int64_t in = Dim(lhs, in_spatial[i]);
    const int64_t window = Dim(rhs, k_spatial[i]);
    const int64_t outs = Dim(out, out_spatial[i]);
    if (lhs_dil[i] <= 0 || in <= 0) return 0;
    const int64_t dilated = (in - 1) * lhs_dil[i] + 1;
    int64_t valid = 0;
    for (int64_t o = 0; o < outs; ++o) {
      for (int64_t k = 0; k < window; ++k) {
        const int64_t pos = o * strides[i] + k * rhs_dil[i] - padding[2 * i];
        if (pos >= 0 && pos < dilated && pos % lhs_dil[i] == 0) ++valid;
      }
    }
    taps *= static_cast<double>(valid);
  }
  return taps;
}

struct Counts {
  double flops = 0;
  double transcendentals = 0;
  Counts& operator+=(const Counts& o) {
    flops += o.flops;
    transcendentals += o.transcendentals;
    return *this;
  }
  Counts Scaled(double k) const { return {flops * k, transcendentals * k}; }
};

Counts CountComputation(const ir::Computation& c);

Counts CountInstruction(const ir::Instruction& inst) {
  const Opcode op = inst.opcode();
  if (IsTranscendental(op)) return {0, ResultElements(inst)};
  if (IsElementwiseArithmetic(op)) return {ResultElements(inst), 0};
  switch (op) {
    case Opcode::kDot:
    case Opcode::kDotGeneral: {
      if (inst.operands().empty()) return {};
      const ir::Value* lhs = inst.operand(0);
      std::vector<int64_t> contracting = Ints(inst, "lhs_contracting_dimensions");
      if (op == Opcode::kDot && lhs->type().is_tensor() && !lhs->type().dims().empty()) {
        contracting = {static_cast<int64_t>(lhs->type().dims().size()) - 1};
      }
      double k = 1;
      for (int64_t d : contracting) k *= static_cast<double>(Dim(lhs, d));
      return {2 * ResultElements(inst) * k, 0};
    }
    case Opcode::kConvolution: {
      if (inst.operands().size() < 2) return {};
      const double batch =
          static_cast<double>(Dim(inst.result(), Int(inst, "output_batch_dimension", 0)));
      const double features =
          static_cast<double>(Dim(inst.result(), Int(inst, "output_feature_dimension", 1)));
      const double in_features =
          static_cast<double>(Dim(inst.operand(1), Int(inst, "kernel_input_feature_dimension", 0)));
      return {2 * ValidConvolutionTaps(inst) * batch * features * in_features, 0};
    }
    case Opcode::kReduce: {
      // Inputs then inits; the body combines once per input element beyond the first of a row.
      const size_t n = inst.num_results();
      if (n == 0 || inst.regions().empty() || inst.operands().empty()) return {};
      const double combines = std::max(0.0, Elements(inst.operand(0)) - Elements(inst.result(0)));
      return CountComputation(*inst.regions()[0]).Scaled(combines);
    }
    case Opcode::kReduceWindow: {
      if (inst.regions().empty() || inst.num_results() == 0) return {};
      double window = 1;
      for (int64_t d : Ints(inst, "window_dimensions")) window *= static_cast<double>(d);
      const double combines = Elements(inst.result(0)) * std::max(0.0, window - 1);
      return CountComputation(*inst.regions()[0]).Scaled(combines);
    }
    case Opcode::kMap:
      if (inst.regions().empty()) return {};
      return CountComputation(*inst.regions()[0])
          .Scaled(ResultElements(inst) / std::max<size_t>(1, inst.num_results()));
    case Opcode::kScatter: {
      if (inst.regions().empty() || inst.operands().empty()) return {};
      const double updates = Elements(inst.operands().back());
      return CountComputation(*inst.regions()[0]).Scaled(updates);
    }
    case Opcode::kSort: {
      if (inst.operands().empty()) return {};
      const double n = Elements(inst.operand(0));
      return {n > 1 ? n * std::ceil(std::log2(n)) : 0, 0};
    }
    case Opcode::kCholesky: {
      if (inst.operands().empty()) return {};
      const ir::ValueType& t = inst.operand(0)->type();
      if (!t.is_tensor() || t.dims().size() < 2) return {};
      const double n = static_cast<double>(t.dims().back());
      const double batch = Elements(inst.operand(0)) / std::max(1.0, n * n);
      return {batch * n * n * n / 3, 0};
    }
    case Opcode::kTriangularSolve: {
      if (inst.operands().size() < 2) return {};
      const ir::ValueType& a = inst.operand(0)->type();
      if (!a.is_tensor() || a.dims().empty()) return {};
      const double n = static_cast<double>(a.dims().back());
      return {Elements(inst.operand(1)) * n, 0};
    }
    case Opcode::kWhile: {
      Counts c;
      for (const ir::Computation* r : inst.regions()) c += CountComputation(*r);
      return c;
    }
    case Opcode::kIf:
    case Opcode::kCase: {
      Counts best;
      for (const ir::Computation* r : inst.regions()) {
        Counts c = CountComputation(*r);
        if (c.flops + c.transcendentals > best.flops + best.transcendentals) best = c;
      }
      return best;
    }
    case Opcode::kCall:
    case Opcode::kComposite:
      return inst.callee() != nullptr ? CountComputation(*inst.callee()) : Counts{};
    case Opcode::kCustomCall: {
      const ir::Attribute* target = inst.attribute("call_target_name");
      if (target != nullptr && target->kind == ir::Attribute::Kind::kString &&
          IsChloSpecialFunction(target->s)) {
        return {0, ResultElements(inst)};
      }
      return {};
    }
    default:
      return {};  // data movement, constants, collectives, control: no arithmetic
  }
}

Counts CountComputation(const ir::Computation& c) {
  Counts total;
  for (const auto& inst : c.instructions()) total += CountInstruction(*inst);
  return total;
}

// Instructions that move no data of their own.
bool MovesNoBytes(Opcode op) {
  return op == Opcode::kReturn || op == Opcode::kTuple || op == Opcode::kGetTupleElement ||
         op == Opcode::kConstant || op == Opcode::kAfterAll || op == Opcode::kOptimizationBarrier;
}

double InstructionBytes(const ir::Instruction& inst) {
  if (MovesNoBytes(inst.opcode())) return 0;
  double bytes = 0;
  for (const ir::Value* v : inst.operands()) bytes += Bytes(v);
  for (size_t r = 0; r < inst.num_results(); ++r) bytes += Bytes(inst.result(r));
  return bytes;
}

// Bytes of the regions an instruction runs (loop bodies, branches, callees), each once and as
// one fused kernel: its parameters read and its results written.
double RegionBytes(const ir::Instruction& inst) {
  double bytes = 0;
  std::vector<const ir::Computation*> nested(inst.regions().begin(), inst.regions().end());
  if (inst.callee() != nullptr) nested.push_back(inst.callee());
  for (const ir::Computation* c : nested) {
    for (const auto& p : c->parameters()) bytes += Bytes(p.get());
    if (const ir::Instruction* ret = c->return_instruction()) {
      for (const ir::Value* v : ret->operands()) bytes += Bytes(v);
    }
  }
  return bytes;
}

bool IsScalarBody(const ir::Instruction& inst) {
  // Reduction and scatter bodies combine scalars: their bytes are the op's own.
  const Opcode op = inst.opcode();
  return op == Opcode::kReduce || op == Opcode::kReduceWindow || op == Opcode::kScatter ||
         op == Opcode::kSort || op == Opcode::kMap || op == Opcode::kSelectAndScatter;
}

}  // namespace

ProgramCost AnalyzeCost(const ir::Computation& entry, const FusionPlan* plan) {
  ProgramCost cost;
  const Counts counts = CountComputation(entry);
  cost.flops = counts.flops;
  cost.transcendentals = counts.transcendentals;
  if (plan != nullptr) {
    for (const Kernel& kernel : plan->kernels) {
      for (const ir::Value* v : kernel.inputs) cost.bytes_accessed += Bytes(v);
      for (const ir::Value* v : kernel.outputs) cost.bytes_accessed += Bytes(v);
      for (const ir::Instruction* inst : kernel.instructions) {
        if (!IsScalarBody(*inst)) cost.bytes_accessed += RegionBytes(*inst);
      }
    }
  } else {
    for (const auto& inst : entry.instructions()) {
      cost.bytes_accessed += InstructionBytes(*inst);
      if (!IsScalarBody(*inst)) cost.bytes_accessed += RegionBytes(*inst);
    }
  }
  return cost;
}

std::string ProgramCost::ToString() const {
  return absl::StrFormat("flops %.0f, transcendentals %.0f, bytes accessed %.0f\n", flops,
                         transcendentals, bytes_accessed);
}

}  // namespace ember::passes
