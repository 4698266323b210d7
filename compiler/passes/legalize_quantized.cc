// legalize-quantized: rewrites programs on quantized tensors (`!quant.uniform`) into programs on
// their storage integers plus float math, after the spec (XLA lowers quantized ops to integer
// math the same way before compiling). A required lowering: every host backend runs it, so the
// evaluator and the compiled path never see a quantized type.
//
//  * uniform_quantize(float x): round_nearest_even(clamp(min, x / scale + zero_point, max)),
//    converted to the storage type; all in the expressed type (the spec's `quantize`).
//  * uniform_dequantize(q): (q - zero_point) * scale, the subtraction in a wide integer so that
//    it cannot wrap (i8 127 - (-128)), then converted to the expressed type (`dequantize`).
//  * uniform_quantize of a quantized tensor: dequantize, then quantize.
//  * ops the spec defines by dequantize_op_quantize (add, abs, compare, select, ...): their
//    quantized operands are dequantized, the op runs on the expressed type, and the quantized
//    results are quantized again.
//  * dot_general / convolution with quantized lhs, rhs and result: the products are summed
//    exactly in i32 on (q - zero_point), then scaled once by lhs_scale * rhs_scale /
//    result_scale (in f64) and quantized to the result. This is the spec's
//    dequantize -> float op -> quantize without the float rounding of the accumulation; zero
//    padding of the convolution is padding with the zero point, as the spec's float op pads 0.
//    Hybrid forms (float lhs, quantized rhs) dequantize rhs and run the float op.
//  * data movement (reshape, transpose, broadcast_in_dim, slice, gather, concatenate, pad, ...)
//    and control flow carry the storage integers unchanged.
// Quantized ops with regions (reduce, sort, scatter, ...) are not lowered yet: an error names
// the op.
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/ir/literal.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/rewrite.h"

namespace ember::passes {
namespace {

using ir::ElementType;
using ir::Opcode;
using ir::QuantizedType;
using ir::Value;
using ir::ValueType;

bool ContainsQuantized(const ValueType& t) {
  if (t.is_tuple() || t.is_future()) {
    for (const ValueType& e : t.elements()) {
      if (ContainsQuantized(e)) return true;
    }
    return false;
  }
  return t.is_quantized();
}

bool UsesQuantized(const ir::Instruction& inst) {
  for (const Value* v : inst.operands()) {
    if (ContainsQuantized(v->type())) return true;
  }
  for (size_t i = 0; i < inst.num_results(); ++i) {
    if (ContainsQuantized(inst.result(i)->type())) return true;
  }
  return false;
}

ValueType TensorOf(ElementType type, const std::vector<int64_t>& dims) {
  absl::StatusOr<ir::Shape> shape = ir::Shape::Make(type, dims);
  return ValueType::Tensor(shape.ok() ? *std::move(shape) : ir::Shape::Scalar(type));
}

// Emits instructions for one rewritten op at the end of the computation being rebuilt.
// Operand types of every instruction before the pass changed anything: rebuilding one
// computation redirects the captures of regions not rebuilt yet to storage-typed values.
using OriginalTypes = std::unordered_map<const ir::Instruction*, std::vector<ValueType>>;

class Emitter {
 public:
  Emitter(Rebuilder& rb, const ir::Instruction& inst, const OriginalTypes& types)
      : rb_(rb), inst_(inst), operand_types_(types.at(&inst)) {}

  Value* Op(Opcode opcode, std::vector<Value*> operands, ValueType type,
            ir::AttributeMap attrs = {}) {
    return rb_.computation()
        .AddInstruction(opcode, std::move(operands), {std::move(type)}, std::move(attrs), {},
                        inst_.location())
        ->result(0);
  }
  Value* Convert(Value* v, ElementType to) {
    if (v->type().element_type() == to) return v;
    return Op(Opcode::kConvert, {v}, TensorOf(to, v->type().dims()));
  }
  Value* Binary(Opcode opcode, Value* a, Value* b) { return Op(opcode, {a, b}, a->type()); }

  // `values` (one, or one per slice of `axis`) of `type`, broadcast to `dims`.
  absl::StatusOr<Value*> Constant(const std::vector<double>& values, ElementType type,
                                  const std::vector<int64_t>& dims, std::optional<int64_t> axis) {
    const bool per_axis = values.size() > 1 || axis.has_value();
    std::vector<int64_t> const_dims;
    if (per_axis) const_dims.push_back(static_cast<int64_t>(values.size()));
    Value* c;
    if (ir::IsFloat(type)) {
      EMBER_ASSIGN_OR_RETURN(ir::Literal lit, ir::Literal::FromValues<double>(
                                                  const_dims, absl::MakeConstSpan(values)));
      ir::AttributeMap attrs;
      attrs.Set("value", ir::Attribute::OfLiteral(std::move(lit)));
      c = Convert(Op(Opcode::kConstant, {}, TensorOf(ElementType::kF64, const_dims), std::move(attrs)),
                  type);
    } else {
      std::vector<int64_t> ints(values.begin(), values.end());
      EMBER_ASSIGN_OR_RETURN(ir::Literal lit, ir::Literal::FromValues<int64_t>(
                                                  const_dims, absl::MakeConstSpan(ints)));
      ir::AttributeMap attrs;
      attrs.Set("value", ir::Attribute::OfLiteral(std::move(lit)));
      c = Convert(Op(Opcode::kConstant, {}, TensorOf(ElementType::kS64, const_dims), std::move(attrs)),
                  type);
    }
    ir::AttributeMap bcast;
    bcast.Set("broadcast_dimensions",
              ir::Attribute::Ints(per_axis ? std::vector<int64_t>{axis.value_or(0)}
                                           : std::vector<int64_t>{}));
    return Op(Opcode::kBroadcastInDim, {c}, TensorOf(type, dims), std::move(bcast));
  }

  static std::vector<double> ZeroPoints(const QuantizedType& q) {
    return std::vector<double>(q.zero_points.begin(), q.zero_points.end());
  }
  static bool AnyNonZero(const std::vector<int64_t>& v) {
    for (int64_t x : v) {
      if (x != 0) return true;
    }
    return false;
  }

  // (q - zero_point) in a wide integer type.
  absl::StatusOr<Value*> Centered(Value* storage, const QuantizedType& q, ElementType wide) {
    Value* v = Convert(storage, wide);
    if (!AnyNonZero(q.zero_points)) return v;
    EMBER_ASSIGN_OR_RETURN(Value * zp, Constant(ZeroPoints(q), wide, v->type().dims(),
                                                q.quantized_dimension));
    return Binary(Opcode::kSubtract, v, zp);
  }

  absl::StatusOr<Value*> Dequantize(Value* storage, const QuantizedType& q) {
    const ElementType wide = ir::BitWidth(q.storage_type) < 32 ? ElementType::kS32 : ElementType::kS64;
    EMBER_ASSIGN_OR_RETURN(Value * centered, Centered(storage, q, wide));
    Value* f = Convert(centered, q.expressed_type);
    EMBER_ASSIGN_OR_RETURN(Value * scale, Constant(q.scales, q.expressed_type, f->type().dims(),
                                                   q.quantized_dimension));
    return Binary(Opcode::kMultiply, f, scale);
  }

  // Float x (of `type`) already divided by the scale: + zero point, clamp, round, to storage.
  absl::StatusOr<Value*> Store(Value* scaled, const QuantizedType& q, ElementType type) {
    const std::vector<int64_t>& dims = scaled->type().dims();
    Value* f = scaled;
    if (AnyNonZero(q.zero_points)) {
      EMBER_ASSIGN_OR_RETURN(Value * zp, Constant(ZeroPoints(q), type, dims, q.quantized_dimension));
      f = Binary(Opcode::kAdd, f, zp);
    }
    EMBER_ASSIGN_OR_RETURN(Value * lo, Constant({static_cast<double>(q.storage_min)}, type, dims, {}));
    EMBER_ASSIGN_OR_RETURN(Value * hi, Constant({static_cast<double>(q.storage_max)}, type, dims, {}));
    f = Op(Opcode::kClamp, {lo, f, hi}, f->type());
    f = Op(Opcode::kRoundNearestEven, {f}, f->type());
    return Convert(f, q.storage_type);
  }

  absl::StatusOr<Value*> Quantize(Value* x, const QuantizedType& q) {
    EMBER_ASSIGN_OR_RETURN(Value * scale, Constant(q.scales, q.expressed_type, x->type().dims(),
                                                   q.quantized_dimension));
    return Store(Binary(Opcode::kDivide, x, scale), q, q.expressed_type);
  }

  Value* Map(size_t operand) { return rb_.Map(inst_.operand(operand)); }
  const ValueType& OldOperandType(size_t i) const { return operand_types_[i]; }

  // The op itself with other operands and result types (attributes, regions and callee kept).
  ir::Instruction* Clone(std::vector<Value*> operands, std::vector<ValueType> types) {
    ir::Instruction* copy = rb_.computation().AddInstruction(
        inst_.opcode(), std::move(operands), std::move(types), inst_.attributes(), inst_.regions(),
        inst_.location());
    if (inst_.callee() != nullptr) copy->set_callee(inst_.callee());
    return copy;
  }

 private:
  Rebuilder& rb_;
  const ir::Instruction& inst_;
  const std::vector<ValueType>& operand_types_;
};

// dequantize -> op on the expressed type -> quantize.
absl::Status LowerDequantizeOpQuantize(const ir::Instruction& inst, Rebuilder& rb,
                                       const OriginalTypes& original) {
  Emitter e(rb, inst, original);
  std::vector<Value*> operands;
  for (size_t i = 0; i < inst.operands().size(); ++i) {
    Value* v = e.Map(i);
    if (e.OldOperandType(i).is_quantized()) {
      EMBER_ASSIGN_OR_RETURN(v, e.Dequantize(v, *e.OldOperandType(i).shape().quantized()));
    }
    operands.push_back(v);
  }
  std::vector<ValueType> types;
  for (size_t i = 0; i < inst.num_results(); ++i) {
    const ValueType& t = inst.result(i)->type();
    types.push_back(t.is_quantized() ? TensorOf(t.shape().quantized()->expressed_type, t.dims()) : t);
  }
  ir::Instruction* op = e.Clone(std::move(operands), std::move(types));
  for (size_t i = 0; i < inst.num_results(); ++i) {
    const ValueType& t = inst.result(i)->type();
    Value* r = op->result(i);
    if (t.is_quantized()) {
      EMBER_ASSIGN_OR_RETURN(r, e.Quantize(r, *t.shape().quantized()));
    }
    rb.SetMapping(inst.result(i), r);
  }
  return absl::OkStatus();
}

// Quantized lhs (per tensor), rhs and result: exact i32 products of (q - zero_point), one
// rescale to the result.
absl::Status LowerIntegerDotLike(const ir::Instruction& inst, Rebuilder& rb,
                                 const OriginalTypes& original) {
  Emitter e(rb, inst, original);
  const QuantizedType& lq = *e.OldOperandType(0).shape().quantized();
  const QuantizedType& rq = *e.OldOperandType(1).shape().quantized();
  const ValueType& result_type = inst.result(0)->type();
  const QuantizedType& oq = *result_type.shape().quantized();
  EMBER_ASSIGN_OR_RETURN(Value * lhs, e.Centered(e.Map(0), lq, ElementType::kS32));
  EMBER_ASSIGN_OR_RETURN(Value * rhs, e.Centered(e.Map(1), rq, ElementType::kS32));
  Value* acc = e.Clone({lhs, rhs}, {TensorOf(ElementType::kS32, result_type.dims())})->result(0);
  // Result channel i scales by lhs_scale * rhs_scale[i] / result_scale[i] (the spec ties a
  // per-axis rhs's dimension to the result's quantized dimension).
  const size_t n = std::max(rq.scales.size(), oq.scales.size());
  std::vector<double> multipliers(n);
  bool all_one = true;
  for (size_t i = 0; i < n; ++i) {
    const double r = rq.scales[rq.scales.size() == 1 ? 0 : i];
    const double o = oq.scales[oq.scales.size() == 1 ? 0 : i];
    multipliers[i] = lq.scale() * r / o;
    all_one = all_one && multipliers[i] == 1.0;
  }
  Value* f = e.Convert(acc, ElementType::kF64);
  if (!all_one) {
    std::optional<int64_t> axis = oq.quantized_dimension;
    if (n > 1 && !axis.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          inst.Describe(), ": per-axis rhs needs a per-axis quantized result"));
    }
    EMBER_ASSIGN_OR_RETURN(Value * m, e.Constant(multipliers, ElementType::kF64, f->type().dims(),
                                                 n > 1 ? axis : std::nullopt));
    f = e.Binary(Opcode::kMultiply, f, m);
  }
  EMBER_ASSIGN_OR_RETURN(Value * q, e.Store(f, oq, ElementType::kF64));
  rb.SetMapping(inst.result(0), q);
  return absl::OkStatus();
}

absl::StatusOr<bool> Lower(const ir::Instruction& inst, Rebuilder& rb,
                           const OriginalTypes& original) {
  const std::vector<ValueType>& operand_types = original.at(&inst);
  bool uses = false;
  for (const ValueType& t : operand_types) uses = uses || ContainsQuantized(t);
  for (size_t i = 0; i < inst.num_results(); ++i) {
    uses = uses || ContainsQuantized(inst.result(i)->type());
  }
  if (!uses) return false;
  Emitter e(rb, inst, original);
  switch (ir::ClassifyQuantizedOp(inst.opcode())) {
    case ir::QuantizedOpKind::kQuantize: {
      Value* x = e.Map(0);
      if (e.OldOperandType(0).is_quantized()) {
        EMBER_ASSIGN_OR_RETURN(x, e.Dequantize(x, *e.OldOperandType(0).shape().quantized()));
      }
      EMBER_ASSIGN_OR_RETURN(Value * q, e.Quantize(x, *inst.result(0)->type().shape().quantized()));
      rb.SetMapping(inst.result(0), q);
      return true;
    }
    case ir::QuantizedOpKind::kDequantize: {
      EMBER_ASSIGN_OR_RETURN(Value * f,
                             e.Dequantize(e.Map(0), *e.OldOperandType(0).shape().quantized()));
      rb.SetMapping(inst.result(0), f);
      return true;
    }
    case ir::QuantizedOpKind::kDotLike: {
      const bool integer = inst.operands().size() == 2 && e.OldOperandType(0).is_quantized() &&
                           !e.OldOperandType(0).shape().quantized()->is_per_axis() &&
                           e.OldOperandType(1).is_quantized() && inst.num_results() == 1 &&
                           inst.result(0)->type().is_quantized();
      EMBER_RETURN_IF_ERROR(integer ? LowerIntegerDotLike(inst, rb, original)
                                    : LowerDequantizeOpQuantize(inst, rb, original));
      return true;
    }
    case ir::QuantizedOpKind::kDequantizeOpQuantize:
      EMBER_RETURN_IF_ERROR(LowerDequantizeOpQuantize(inst, rb, original));
      return true;
    case ir::QuantizedOpKind::kDequantizeOpQuantizeWithRegions:
      return absl::UnimplementedError(absl::StrCat(
          inst.Describe(), ": quantized operands of ops with regions are not lowered yet"));
    case ir::QuantizedOpKind::kDataMovement:
    case ir::QuantizedOpKind::kPassThrough:
      break;
  }
  // The storage integers move as they are.
  std::vector<Value*> operands;
  for (size_t i = 0; i < inst.operands().size(); ++i) operands.push_back(e.Map(i));
  std::vector<ValueType> types;
  for (size_t i = 0; i < inst.num_results(); ++i) types.push_back(inst.result(i)->type().StorageType());
  ir::Instruction* copy = e.Clone(std::move(operands), std::move(types));
  for (size_t i = 0; i < inst.num_results(); ++i) rb.SetMapping(inst.result(i), copy->result(i));
  return true;
}

class LegalizeQuantizedPass : public Pass {
 public:
  std::string name() const override { return "legalize-quantized"; }

  absl::StatusOr<bool> Run(ir::Module& module) override {
    std::vector<ir::Computation*> computations;
    std::vector<ir::Computation*> to_rebuild;
    for (const auto& c : module.computations()) {
      computations.push_back(c.get());
      bool uses = false;
      for (const auto& p : c->parameters()) uses = uses || ContainsQuantized(p->type());
      for (const auto& inst : c->instructions()) uses = uses || UsesQuantized(*inst);
      if (uses) to_rebuild.push_back(c.get());
    }
    if (to_rebuild.empty()) return false;
    OriginalTypes original;
    for (ir::Computation* c : computations) {
      for (const auto& inst : c->instructions()) {
        std::vector<ValueType>& types = original[inst.get()];
        for (const Value* v : inst->operands()) types.push_back(v->type());
      }
    }
    const EmitFn lower = [&original](const ir::Instruction& inst, Rebuilder& rb) {
      return Lower(inst, rb, original);
    };
    for (ir::Computation* c : to_rebuild) EMBER_RETURN_IF_ERROR(RebuildComputation(*c, lower));
    // Parameters last: while rebuilding, their old (quantized) types said how to lower uses.
    for (ir::Computation* c : computations) {
      for (const auto& p : c->parameters()) {
        if (ContainsQuantized(p->type())) p->set_type(p->type().StorageType());
      }
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> CreateLegalizeQuantizedPass() {
  return std::make_unique<LegalizeQuantizedPass>();
}

}  // namespace ember::passes
