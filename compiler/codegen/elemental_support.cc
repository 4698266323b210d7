#include "compiler/codegen/elemental_support.h"

#include <algorithm>
#include <string>

#include "compiler/ir/float_conversions.h"
#include "compiler/passes/rewrite.h"

namespace ember::codegen {
namespace {

using ir::ElementType;
using ir::Opcode;

bool IsF(ElementType t) { return ir::IsFloat(t); }
bool IsI(ElementType t) { return ir::IsInteger(t); }

const std::string* StringAttr(const ir::Instruction& inst, const char* name) {
  const ir::Attribute* a = inst.attribute(name);
  if (a == nullptr || a->kind != ir::Attribute::Kind::kString) return nullptr;
  return &a->s;
}

bool KnownDirection(const ir::Instruction& inst) {
  const std::string* d = StringAttr(inst, "comparison_direction");
  return d != nullptr &&
         (*d == "EQ" || *d == "NE" || *d == "LT" || *d == "LE" || *d == "GT" || *d == "GE");
}

bool CompareSupported(const ir::Instruction& inst, bool exact_f16) {
  if (!KnownDirection(inst)) return false;
  const ElementType t = inst.operand(0)->type().element_type();
  if (inst.attribute("compare_type") == nullptr) return true;
  const std::string* ct = StringAttr(inst, "compare_type");
  if (ct == nullptr) return false;
  // TOTALORDER orders the floats' bit patterns; bf16 keeps its order in f32, f16 only where its
  // loads keep signalling NaNs (exact_f16).
  if (IsF(t)) {
    // (The f8/f6/f4 formats' encodings do not order as their f32 values: -0 and NaN apart.)
    const bool ordered = t == ElementType::kF32 || t == ElementType::kF64 ||
                         t == ElementType::kBF16 || (t == ElementType::kF16 && exact_f16);
    return *ct == "FLOAT" || (*ct == "TOTALORDER" && ordered);
  }
  if (ir::IsSignedInteger(t)) return *ct == "SIGNED";
  return *ct == "UNSIGNED";
}


}  // namespace

bool ElementalTypeSupported(ElementType type) {
  // The f8/f6/f4 formats compute in f32 like bf16/f16; sub-byte integers in their own width.
  if (ir::NarrowFloatFormat(type) != nullptr) return true;
  if (ir::IsInteger(type)) return true;
  switch (type) {
    case ElementType::kPred:
    case ElementType::kS8:
    case ElementType::kS16:
    case ElementType::kS32:
    case ElementType::kS64:
    case ElementType::kU8:
    case ElementType::kU16:
    case ElementType::kU32:
    case ElementType::kU64:
    case ElementType::kBF16:
    case ElementType::kF16:
    case ElementType::kF32:
    case ElementType::kF64:
    case ElementType::kC64:
    case ElementType::kC128:
      return true;
    default:
      return false;
  }
}

bool ElementalMathOp(Opcode opcode) {
  switch (opcode) {
    case Opcode::kExponential:
    case Opcode::kExponentialMinusOne:
    case Opcode::kLog:
    case Opcode::kLogPlusOne:
    case Opcode::kTanh:
    case Opcode::kLogistic:
    case Opcode::kSine:
    case Opcode::kCosine:
    case Opcode::kTan:
    case Opcode::kCbrt:
    case Opcode::kRsqrt:
    case Opcode::kPower:
    case Opcode::kAtan2:
      return true;
    default:
      return false;
  }
}

bool ElementalArraySupported(const ir::Value* v) {
  if (!v->type().is_tensor() || !ElementalTypeSupported(v->type().element_type())) return false;
  absl::StatusOr<ir::Shape> plain = ir::Shape::Make(v->type().element_type(), v->type().dims());
  return plain.ok() && *plain == v->type().shape();
}

bool ElementalOpSupported(const ir::Instruction& inst, bool exact_f16) {
  if (inst.num_results() != 1 || !inst.result()->type().is_tensor() || !inst.regions().empty()) {
    return false;
  }
  const ElementType t = inst.result()->type().element_type();
  if (!ElementalTypeSupported(t)) return false;
  for (size_t i = 0; i < inst.operands().size(); ++i) {
    const ir::Value* v = inst.operand(i);
    if (!v->type().is_tensor() || !ElementalTypeSupported(v->type().element_type())) return false;
    // select's predicate and clamp's bounds may be scalars; other operands have the result's dims.
    const bool scalar_ok = (inst.opcode() == Opcode::kSelect && i == 0) ||
                           (inst.opcode() == Opcode::kClamp && i != 1);
    if (v->type().dims() != inst.result()->type().dims() &&
        !(scalar_ok && v->type().dims().empty())) {
      return false;
    }
  }
  const size_t n = inst.operands().size();
  const bool pred = t == ElementType::kPred;
  const ElementType in = n > 0 ? inst.operand(0)->type().element_type() : t;
  auto same_types = [&] {
    for (const ir::Value* v : inst.operands()) {
      if (v->type().element_type() != t) return false;
    }
    return true;
  };
  const bool complex = ir::IsComplex(t) || ir::IsComplex(in);
  if (ElementalMathOp(inst.opcode())) {
    const bool binary = inst.opcode() == Opcode::kPower || inst.opcode() == Opcode::kAtan2;
    if (!(n == (binary ? 2u : 1u) && same_types())) return false;
    if (!complex) return IsF(t);
    // Complex: what the C library computes (ElementalEmitter::ComplexMath).
    switch (inst.opcode()) {
      case Opcode::kExponential:
      case Opcode::kLog:
      case Opcode::kSine:
      case Opcode::kCosine:
      case Opcode::kTan:
      case Opcode::kTanh:
      case Opcode::kLogistic:
      case Opcode::kRsqrt:
      case Opcode::kPower:
        return true;
      default:
        return false;
    }
  }
  // Complex results and operands: the ops below (ElementalEmitter's complex arithmetic).
  if (complex) {
    const ElementType part = t == ElementType::kC64 || in == ElementType::kC64
                                 ? ElementType::kF32
                                 : ElementType::kF64;
    switch (inst.opcode()) {
      case Opcode::kAdd:
      case Opcode::kSubtract:
      case Opcode::kMultiply:
      case Opcode::kDivide:
      case Opcode::kMaximum:
      case Opcode::kMinimum:
        return n == 2 && same_types();
      case Opcode::kNegate:
      case Opcode::kSqrt:
      case Opcode::kSign:
        return n == 1 && same_types();
      case Opcode::kAbs:
      case Opcode::kReal:
      case Opcode::kImag:
        return n == 1 && ir::IsComplex(in) && t == part;
      case Opcode::kComplex:
        return n == 2 && ir::IsComplex(t) && in == part &&
               inst.operand(1)->type().element_type() == part;
      case Opcode::kCompare: {
        const ir::Attribute* ct = inst.attribute("compare_type");
        return n == 2 && pred && inst.operand(1)->type().element_type() == in &&
               KnownDirection(inst) &&
               (ct == nullptr || (ct->kind == ir::Attribute::Kind::kString && ct->s == "FLOAT"));
      }
      case Opcode::kSelect:
        return n == 3 && in == ElementType::kPred && inst.operand(1)->type().element_type() == t &&
               inst.operand(2)->type().element_type() == t;
      case Opcode::kConvert:
        return n == 1;
      default:
        return false;
    }
  }
  switch (inst.opcode()) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      return n == 2 && same_types();
    case Opcode::kSubtract:
    case Opcode::kDivide:
    case Opcode::kRemainder:
      return n == 2 && same_types() && !pred;
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      return n == 2 && same_types() && !IsF(t);
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightLogical:
    case Opcode::kShiftRightArithmetic:
      return n == 2 && same_types() && IsI(t);
    case Opcode::kNegate:
      return n == 1 && same_types() && !pred;
    case Opcode::kAbs:
    case Opcode::kSign:
      return n == 1 && same_types() && (IsF(t) || ir::IsSignedInteger(t));
    case Opcode::kNot:
      return n == 1 && same_types() && !IsF(t);
    case Opcode::kSqrt:
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestEven:
    case Opcode::kRoundNearestAfz:
    case Opcode::kReal:
    case Opcode::kImag:
      return n == 1 && same_types() && IsF(t);
    case Opcode::kIsFinite:
      return n == 1 && pred && IsF(in);
    case Opcode::kCompare:
      return n == 2 && pred && inst.operand(1)->type().element_type() == in &&
             CompareSupported(inst, exact_f16);
    case Opcode::kSelect:
      return n == 3 && in == ElementType::kPred && inst.operand(1)->type().element_type() == t &&
             inst.operand(2)->type().element_type() == t;
    case Opcode::kClamp:
      return n == 3 && same_types() && !pred;
    case Opcode::kConvert:
      return n == 1;
    case Opcode::kPopcnt:
    case Opcode::kCountLeadingZeros:
      return n == 1 && same_types() && IsI(t);
    case Opcode::kReducePrecision: {
      // (Other widths are the evaluator's error to report.)
      const ir::Attribute* e = inst.attribute("exponent_bits");
      const ir::Attribute* m = inst.attribute("mantissa_bits");
      const bool known = t == ElementType::kF32 || t == ElementType::kF64 ||
                         t == ElementType::kBF16 || t == ElementType::kF16;
      return n == 1 && same_types() && known && e != nullptr && m != nullptr &&
             e->kind == ir::Attribute::Kind::kInt && m->kind == ir::Attribute::Kind::kInt &&
             e->i >= 1 && e->i <= 62 && m->i >= 0 && m->i <= 62;
    }
    case Opcode::kBitcastConvert:
      // Same width (the shape is kept); pred is not a number of bits. A narrow float (bf16,
      // f16, f8...) computes in f32, so its bits are its stored bits, read as they are where the
      // operand is a kernel input (the element generator) and rounded back to the type (NaNs
      // canonical, as the evaluator stores computed ones) where it is computed. To a narrow
      // float it is refused: that f32 would canonicalize the NaNs a bitcast must keep.
      return n == 1 && ir::BitWidth(in) == ir::BitWidth(t) && !pred && in != ElementType::kPred &&
             ir::NarrowFloatFormat(t) == nullptr &&
             (ir::NarrowFloatFormat(in) == nullptr || ir::IsInteger(t));
    default:
      return false;
  }
}

bool ScalarRegionSupported(const ir::Computation& region, bool exact_f16) {
  auto scalar = [](const ir::Value* v) {
    return v->type().is_tensor() && v->type().dims().empty() &&
           ElementalTypeSupported(v->type().element_type());
  };
  for (const auto& p : region.parameters()) {
    if (!scalar(p.get())) return false;
  }
  for (const auto& inst : region.instructions()) {
    if (inst->opcode() == Opcode::kReturn) {
      for (const ir::Value* v : inst->operands()) {
        if (!scalar(v)) return false;
      }
      continue;
    }
    if (inst->num_results() != 1 || !scalar(inst->result())) return false;
    if (inst->opcode() == Opcode::kConstant) {
      const ir::Literal* literal = passes::ConstantLiteral(inst->result());
      if (literal == nullptr || !(literal->shape() == inst->result()->type().shape())) return false;
      continue;
    }
    for (const ir::Value* v : inst->operands()) {
      if (!scalar(v)) return false;
    }
    if (!ElementalOpSupported(*inst, exact_f16)) return false;
    // A region's narrow floats come loaded and widened: their NaNs' bits would not survive to
    // a bitcast.
    if (inst->opcode() == Opcode::kBitcastConvert &&
        ir::NarrowFloatFormat(inst->operand(0)->type().element_type()) != nullptr) {
      return false;
    }
  }
  return region.return_instruction() != nullptr;
}

bool DimsContain(const std::vector<int64_t>& dims, int64_t d) {
  return std::find(dims.begin(), dims.end(), d) != dims.end();
}

bool DistinctDims(const std::vector<int64_t>& dims, int64_t rank) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

}  // namespace ember::codegen
