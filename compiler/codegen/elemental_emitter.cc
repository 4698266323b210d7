#include "compiler/codegen/elemental_emitter.h"

#include <cstring>
#include <string>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/codegen/elemental_support.h"
#include "compiler/ir/float_conversions.h"
#include "compiler/passes/rewrite.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"

namespace ember::codegen {
namespace {

using ir::ElementType;
using ir::Opcode;

// Floats stored narrower than f32 and computed in f32: bf16, f16 and the f8/f6/f4 formats.
bool IsNarrowFloat(ElementType t) { return ir::NarrowFloatFormat(t) != nullptr; }
// Integers of fewer than 8 bits, stored one a byte (the value's low bits, the high bits zero).
bool IsSubByteInteger(ElementType t) { return ir::IsInteger(t) && ir::IsSubByte(t); }

std::string Direction(const ir::Instruction& inst) {
  const ir::Attribute* d = inst.attribute("comparison_direction");
  return d != nullptr ? d->s : "";
}

}  // namespace

llvm::Type* ElementalEmitter::ComputeType(ElementType type) const {
  if (IsNarrowFloat(type)) return b_.getFloatTy();
  switch (type) {
    case ElementType::kPred: return b_.getInt1Ty();
    case ElementType::kF64: return b_.getDoubleTy();
    case ElementType::kF32: return b_.getFloatTy();
    case ElementType::kC64: return llvm::StructType::get(b_.getFloatTy(), b_.getFloatTy());
    case ElementType::kC128: return llvm::StructType::get(b_.getDoubleTy(), b_.getDoubleTy());
    default: return b_.getIntNTy(ir::BitWidth(type));
  }
}

llvm::Type* ElementalEmitter::StorageType(ElementType type) const {
  // pred, the narrow floats and sub-byte integers are moved as the integer of their stored bytes.
  if (type == ElementType::kPred || IsNarrowFloat(type) || IsSubByteInteger(type)) {
    return b_.getIntNTy(8 * ir::StorageBytes(type));
  }
  return ComputeType(type);
}

llvm::Value* ElementalEmitter::FromStorage(ElementType type, llvm::Value* stored) {
  switch (type) {
    case ElementType::kPred:
      return b_.CreateICmpNE(stored, b_.getInt8(0));
    case ElementType::kBF16:
      return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(stored, b_.getInt32Ty()), 16),
                              b_.getFloatTy());
    case ElementType::kF16: {
      llvm::Value* f = b_.CreateFPExt(b_.CreateBitCast(stored, b_.getHalfTy()), b_.getFloatTy());
      if (!exact_f16_) return f;
      // The conversion quiets a signalling NaN; its quiet bit is cleared again, so that the f32
      // value keeps the stored NaN's place in the total order (TOTALORDER compares, jnp.sort's
      // comparator). Not done in loop kernels: it made f16 elementwise kernels 1.4-3x slower.
      llvm::Value* h = b_.CreateZExt(stored, b_.getInt32Ty());
      llvm::Value* signalling = b_.CreateAnd(
          b_.CreateICmpEQ(b_.CreateAnd(h, b_.getInt32(0x7E00)), b_.getInt32(0x7C00)),
          b_.CreateICmpNE(b_.CreateAnd(h, b_.getInt32(0x01FF)), b_.getInt32(0)));
      llvm::Value* bits = b_.CreateBitCast(f, b_.getInt32Ty());
      return b_.CreateBitCast(
          b_.CreateSelect(signalling, b_.CreateAnd(bits, b_.getInt32(~0x00400000)), bits),
          b_.getFloatTy());
    }
    default:
      if (IsNarrowFloat(type)) return DecodeNarrow(*ir::NarrowFloatFormat(type), stored);
      if (IsSubByteInteger(type)) return b_.CreateTrunc(stored, ComputeType(type));
      return stored;
  }
}

llvm::Value* ElementalEmitter::F32ToBF16Bits(llvm::Value* f) {
  // Round to nearest even by adding 0x7FFF plus the kept LSB (overflow carries into inf); NaN
  // becomes the quiet NaN with its sign, as base/float_formats.cc's FloatToBF16 does.
  llvm::Value* bits = b_.CreateBitCast(f, b_.getInt32Ty());
  llvm::Value* is_nan = b_.CreateICmpUGT(b_.CreateAnd(bits, b_.getInt32(0x7FFFFFFF)),
                                         b_.getInt32(0x7F800000));
  llvm::Value* lsb = b_.CreateAnd(b_.CreateLShr(bits, 16), b_.getInt32(1));
  llvm::Value* rounded =
      b_.CreateLShr(b_.CreateAdd(bits, b_.CreateAdd(lsb, b_.getInt32(0x7FFF))), 16);
  llvm::Value* nan = b_.CreateOr(b_.CreateAnd(b_.CreateLShr(bits, 16), b_.getInt32(0x8000)),
                                 b_.getInt32(0x7FC0));
  return b_.CreateTrunc(b_.CreateSelect(is_nan, nan, rounded), b_.getInt16Ty());
}

llvm::Value* ElementalEmitter::ToStorage(ElementType type, llvm::Value* value) {
  switch (type) {
    case ElementType::kPred:
      return b_.CreateZExt(value, b_.getInt8Ty());
    case ElementType::kBF16:
      return F32ToBF16Bits(value);
    case ElementType::kF16:
      return b_.CreateBitCast(b_.CreateFPTrunc(value, b_.getHalfTy()), b_.getInt16Ty());
    default:
      if (IsNarrowFloat(type)) return EncodeNarrow(*ir::NarrowFloatFormat(type), value);
      if (IsSubByteInteger(type)) return b_.CreateZExt(value, b_.getInt8Ty());
      return value;
  }
}

llvm::Value* ElementalEmitter::Round(ElementType type, llvm::Value* value) {
  if (!IsNarrowFloat(type)) return value;
  // A rounded f16 is never a signalling NaN (the narrowing quiets it): no fix-up as in FromStorage.
  if (type == ElementType::kF16) {
    return b_.CreateFPExt(b_.CreateFPTrunc(value, b_.getHalfTy()), b_.getFloatTy());
  }
  return FromStorage(type, ToStorage(type, value));
}

llvm::Value* ElementalEmitter::Constant(ElementType type, const uint8_t* bytes) {
  llvm::Type* storage = StorageType(type);
  llvm::Value* c = nullptr;
  if (type == ElementType::kF32) {
    uint32_t bits;
    std::memcpy(&bits, bytes, 4);
    c = llvm::ConstantFP::get(b_.getContext(), llvm::APFloat(llvm::APFloat::IEEEsingle(),
                                                             llvm::APInt(32, bits)));
  } else if (type == ElementType::kF64) {
    uint64_t bits;
    std::memcpy(&bits, bytes, 8);
    c = llvm::ConstantFP::get(b_.getContext(), llvm::APFloat(llvm::APFloat::IEEEdouble(),
                                                             llvm::APInt(64, bits)));
  } else if (ir::IsComplex(type)) {
    const ElementType part = ComplexPart(type);
    const int half = ir::StorageBytes(part);
    return llvm::ConstantStruct::get(llvm::cast<llvm::StructType>(storage),
                                     {llvm::cast<llvm::Constant>(Constant(part, bytes)),
                                      llvm::cast<llvm::Constant>(Constant(part, bytes + half))});
  } else {
    const int size = ir::StorageBytes(type);
    uint64_t bits = 0;
    std::memcpy(&bits, bytes, size);  // little-endian host
    c = llvm::ConstantInt::get(storage, bits);
  }
  return FromStorage(type, c);
}

llvm::Value* ElementalEmitter::Intrinsic(llvm::Intrinsic::ID id, llvm::Value* x) {
  return b_.CreateUnaryIntrinsic(id, x);
}

llvm::Value* ElementalEmitter::FusedMulAdd(llvm::Value* a, llvm::Value* b, llvm::Value* c) {
  return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {a->getType()}, {a, b, c});
}

llvm::Value* ElementalEmitter::Maximum(ElementType type, llvm::Value* x, llvm::Value* y,
                                       bool max) {
  if (type == ElementType::kPred) return max ? b_.CreateOr(x, y) : b_.CreateAnd(x, y);
  if (ir::IsInteger(type)) {
    const bool is_signed = ir::IsSignedInteger(type);
    llvm::Value* keep_x = max ? (is_signed ? b_.CreateICmpSGE(x, y) : b_.CreateICmpUGE(x, y))
                              : (is_signed ? b_.CreateICmpSLE(x, y) : b_.CreateICmpULE(x, y));
    return b_.CreateSelect(keep_x, x, y);
  }
  // IEEE-754 maximum/minimum as the evaluator's MaxElement/MinElement: the first NaN operand
  // wins, and -0 < +0.
  llvm::Value* x_nan = b_.CreateFCmpUNO(x, x);
  llvm::Value* y_nan = b_.CreateFCmpUNO(y, y);
  llvm::Value* equal = b_.CreateFCmpOEQ(x, y);
  llvm::Type* int_type = b_.getIntNTy(x->getType()->getPrimitiveSizeInBits());
  llvm::Value* x_negative =
      b_.CreateICmpSLT(b_.CreateBitCast(x, int_type), llvm::ConstantInt::get(int_type, 0));
  llvm::Value* r = b_.CreateSelect(max ? b_.CreateFCmpOGT(x, y) : b_.CreateFCmpOLT(x, y), x, y);
  r = b_.CreateSelect(equal, max ? b_.CreateSelect(x_negative, y, x)
                                 : b_.CreateSelect(x_negative, x, y),
                      r);
  r = b_.CreateSelect(y_nan, y, r);
  return b_.CreateSelect(x_nan, x, r);
}

llvm::Value* ElementalEmitter::IntDivide(ElementType type, llvm::Value* x, llvm::Value* y,
                                         bool remainder) {
  // XLA's integer edge cases: x / 0 = -1 (all ones unsigned), x % 0 = x, INT_MIN / -1 = INT_MIN
  // (wraps), INT_MIN % -1 = 0. The divisor is made safe first: LLVM's division of those is UB.
  llvm::Type* t = x->getType();
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  llvm::Value* one = llvm::ConstantInt::get(t, 1);
  llvm::Value* all_ones = llvm::ConstantInt::getAllOnesValue(t);
  llvm::Value* by_zero = b_.CreateICmpEQ(y, zero);
  if (!ir::IsSignedInteger(type)) {
    llvm::Value* safe = b_.CreateSelect(by_zero, one, y);
    return remainder ? b_.CreateSelect(by_zero, x, b_.CreateURem(x, safe))
                     : b_.CreateSelect(by_zero, all_ones, b_.CreateUDiv(x, safe));
  }
  llvm::Value* by_minus_one = b_.CreateICmpEQ(y, all_ones);
  llvm::Value* safe = b_.CreateSelect(b_.CreateOr(by_zero, by_minus_one), one, y);
  if (remainder) {
    return b_.CreateSelect(by_zero, x, b_.CreateSelect(by_minus_one, zero, b_.CreateSRem(x, safe)));
  }
  return b_.CreateSelect(by_zero, all_ones,
                         b_.CreateSelect(by_minus_one, b_.CreateSub(zero, x), b_.CreateSDiv(x, safe)));
}

llvm::Value* ElementalEmitter::Shift(Opcode op, ElementType, llvm::Value* x, llvm::Value* y) {
  // The amount is read as unsigned; amounts >= the width give 0 (left, logical) or the sign
  // fill (arithmetic). LLVM's shifts by >= the width are poison, so the amount is clamped.
  llvm::Type* t = x->getType();
  const unsigned width = t->getIntegerBitWidth();
  llvm::Value* too_far = b_.CreateICmpUGE(y, llvm::ConstantInt::get(t, width));
  llvm::Value* zero = llvm::ConstantInt::get(t, 0);
  if (op == Opcode::kShiftRightArithmetic) {
    return b_.CreateAShr(x, b_.CreateSelect(too_far, llvm::ConstantInt::get(t, width - 1), y));
  }
  llvm::Value* amount = b_.CreateSelect(too_far, zero, y);
  llvm::Value* shifted =
      op == Opcode::kShiftLeft ? b_.CreateShl(x, amount) : b_.CreateLShr(x, amount);
  return b_.CreateSelect(too_far, zero, shifted);
}

llvm::Value* ElementalEmitter::Binary(Opcode op, ElementType type, llvm::Value* x,
                                      llvm::Value* y) {
  if (ir::IsComplex(type)) return ComplexBinary(op, type, x, y);
  const bool fl = ir::IsFloat(type);
  const bool pred = type == ElementType::kPred;
  switch (op) {
    case Opcode::kAdd:
      return fl ? Round(type, b_.CreateFAdd(x, y)) : pred ? b_.CreateOr(x, y) : b_.CreateAdd(x, y);
    case Opcode::kSubtract:
      return fl ? Round(type, b_.CreateFSub(x, y)) : b_.CreateSub(x, y);
    case Opcode::kMultiply:
      return fl ? Round(type, b_.CreateFMul(x, y)) : pred ? b_.CreateAnd(x, y) : b_.CreateMul(x, y);
    case Opcode::kDivide:
      return fl ? Round(type, b_.CreateFDiv(x, y)) : IntDivide(type, x, y, false);
    case Opcode::kRemainder:
      // frem is C's fmod (exact, the dividend's sign), as the evaluator's std::fmod.
      return fl ? Round(type, b_.CreateFRem(x, y)) : IntDivide(type, x, y, true);
    case Opcode::kMaximum:
      return Maximum(type, x, y, true);
    case Opcode::kMinimum:
      return Maximum(type, x, y, false);
    case Opcode::kAnd:
      return b_.CreateAnd(x, y);
    case Opcode::kOr:
      return b_.CreateOr(x, y);
    case Opcode::kXor:
      return b_.CreateXor(x, y);
    default:
      return Shift(op, type, x, y);
  }
}

llvm::Value* ElementalEmitter::Unary(Opcode op, ElementType type, llvm::Value* x) {
  const bool fl = ir::IsFloat(type);
  llvm::Type* t = x->getType();
  switch (op) {
    case Opcode::kNegate:
      return fl ? b_.CreateFNeg(x) : b_.CreateSub(llvm::ConstantInt::get(t, 0), x);
    case Opcode::kAbs:
      if (fl) return Intrinsic(llvm::Intrinsic::fabs, x);
      return b_.CreateSelect(b_.CreateICmpSLT(x, llvm::ConstantInt::get(t, 0)),
                             b_.CreateSub(llvm::ConstantInt::get(t, 0), x), x);
    case Opcode::kSign: {
      if (!fl) {
        llvm::Value* zero = llvm::ConstantInt::get(t, 0);
        return b_.CreateSelect(b_.CreateICmpSLT(x, zero), llvm::ConstantInt::getSigned(t, -1),
                               b_.CreateSelect(b_.CreateICmpSGT(x, zero),
                                               llvm::ConstantInt::get(t, 1), zero));
      }
      // NaN and +-0 stay as they are; everything else is +-1.
      llvm::Value* zero = llvm::ConstantFP::get(t, 0.0);
      llvm::Value* keep = b_.CreateFCmpUEQ(x, zero);  // unordered (NaN) or == 0
      llvm::Value* unit = b_.CreateSelect(b_.CreateFCmpOLT(x, zero), llvm::ConstantFP::get(t, -1.0),
                                          llvm::ConstantFP::get(t, 1.0));
      return b_.CreateSelect(keep, x, unit);
    }
    case Opcode::kNot:
      return b_.CreateNot(x);
    case Opcode::kReal:  // of a real float: the value itself
      return x;
    case Opcode::kImag:  // of a real float: +0
      return llvm::ConstantFP::get(t, 0.0);
    case Opcode::kPopcnt:
      return Intrinsic(llvm::Intrinsic::ctpop, x);
    case Opcode::kCountLeadingZeros:  // of zero: the width
      return b_.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, x, b_.getFalse());
    case Opcode::kSqrt:
      return Round(type, Intrinsic(llvm::Intrinsic::sqrt, x));
    case Opcode::kFloor:
      return Intrinsic(llvm::Intrinsic::floor, x);
    case Opcode::kCeil:
      return Intrinsic(llvm::Intrinsic::ceil, x);
    case Opcode::kRoundNearestEven:
      return Intrinsic(llvm::Intrinsic::roundeven, x);
    case Opcode::kRoundNearestAfz:
      return Intrinsic(llvm::Intrinsic::round, x);
    default:
      return nullptr;
  }
}

llvm::Value* ElementalEmitter::IntegerToNarrow(ElementType from, ElementType to,
                                               llvm::Value* x) {
  // The magnitude (as u64) and the sign; past 2^53 the bits below double's precision fold into
  // a sticky last bit (round to odd), so the one rounding to the narrow type is the only one.
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Value* wide = ir::IsSignedInteger(from) ? b_.CreateSExtOrTrunc(x, i64)
                                                : b_.CreateZExtOrTrunc(x, i64);
  llvm::Value* negative = ir::IsSignedInteger(from)
                              ? b_.CreateICmpSLT(wide, b_.getInt64(0))
                              : static_cast<llvm::Value*>(b_.getFalse());
  llvm::Value* magnitude = b_.CreateSelect(negative, b_.CreateSub(b_.getInt64(0), wide), wide);
  // Bits past 53 (0 when the magnitude fits).
  llvm::Value* width = b_.CreateSub(
      b_.getInt64(64), b_.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, magnitude, b_.getFalse()));
  llvm::Value* excess = b_.CreateSelect(b_.CreateICmpUGT(width, b_.getInt64(53)),
                                        b_.CreateSub(width, b_.getInt64(53)), b_.getInt64(0));
  llvm::Value* dropped = b_.CreateAnd(
      magnitude, b_.CreateSub(b_.CreateShl(b_.getInt64(1), excess), b_.getInt64(1)));
  llvm::Value* kept = b_.CreateOr(b_.CreateLShr(magnitude, excess),
                                  b_.CreateZExt(b_.CreateICmpNE(dropped, b_.getInt64(0)), i64));
  // kept < 2^53 converts exactly; times 2^excess (exact) through the exponent.
  llvm::Value* d = b_.CreateUIToFP(kept, b_.getDoubleTy());
  llvm::Value* scale = b_.CreateBitCast(
      b_.CreateShl(b_.CreateAdd(excess, b_.getInt64(1023)), b_.getInt64(52)), b_.getDoubleTy());
  d = b_.CreateFMul(d, scale);
  d = b_.CreateSelect(negative, b_.CreateFNeg(d), d);
  return NarrowFromDouble(to, d);
}

llvm::Value* ElementalEmitter::ReducePrecision(ElementType type, llvm::Value* x,
                                               int64_t exponent_bits, int64_t mantissa_bits) {
  const int bits = ir::BitWidth(type);
  const int src_mantissa = type == ElementType::kF64   ? 52
                           : type == ElementType::kF32 ? 23
                           : type == ElementType::kF16 ? 10
                                                       : 7;  // bf16
  llvm::Type* int_type = b_.getIntNTy(bits);
  auto c = [&](uint64_t v) { return llvm::ConstantInt::get(int_type, v); };
  llvm::Value* is_nan = b_.CreateFCmpUNO(x, x);
  llvm::Value* original =
      IsNarrowFloat(type) ? ToStorage(type, x) : b_.CreateBitCast(x, int_type);
  llvm::Value* value = original;
  if (mantissa_bits < src_mantissa) {
    const int shift = src_mantissa - static_cast<int>(mantissa_bits);
    const uint64_t last = uint64_t{1} << shift;
    llvm::Value* last_bit = b_.CreateLShr(b_.CreateAnd(value, c(last)), c(shift));
    value = b_.CreateAnd(b_.CreateAdd(b_.CreateAdd(value, last_bit), c((last >> 1) - 1)),
                         c(~(last - 1)));
  }
  const int src_exponent = bits - src_mantissa - 1;
  const uint64_t exp_mask = ((uint64_t{1} << src_exponent) - 1) << src_mantissa;
  if (exponent_bits < src_exponent) {
    const uint64_t sign_mask = uint64_t{1} << (bits - 1);
    const uint64_t bias = (uint64_t{1} << (src_exponent - 1)) - 1;
    const uint64_t reduced_bias = (uint64_t{1} << (exponent_bits - 1)) - 1;
    llvm::Value* exponent = b_.CreateAnd(value, c(exp_mask));
    llvm::Value* signed_zero = b_.CreateAnd(value, c(sign_mask));
    value = b_.CreateSelect(b_.CreateICmpUGT(exponent, c((bias + reduced_bias) << src_mantissa)),
                            b_.CreateOr(signed_zero, c(exp_mask)), value);
    value = b_.CreateSelect(b_.CreateICmpULE(exponent, c((bias - reduced_bias) << src_mantissa)),
                            signed_zero, value);
  }
  value = b_.CreateSelect(is_nan, mantissa_bits > 0 ? original : c(exp_mask), value);
  return IsNarrowFloat(type) ? FromStorage(type, value) : b_.CreateBitCast(value, x->getType());
}

llvm::Value* ElementalEmitter::Compare(const ir::Instruction& inst, llvm::Value* x,
                                       llvm::Value* y) {
  const ElementType type = inst.operand(0)->type().element_type();
  const std::string d = Direction(inst);
  const ir::Attribute* ct = inst.attribute("compare_type");
  if (ir::IsFloat(type) && ct != nullptr && ct->kind == ir::Attribute::Kind::kString &&
      ct->s == "TOTALORDER") {
    // The bit patterns as signed keys, negative ones with their magnitude bits flipped (-0 just
    // below +0, NaNs at the ends by sign and payload), the evaluator's TotalOrderKey. bf16 is
    // exact in f32's upper bits, which keeps its order.
    auto key = [&](llvm::Value* v) {
      const unsigned bits = v->getType()->getPrimitiveSizeInBits();
      llvm::Value* i = b_.CreateBitCast(v, b_.getIntNTy(bits));
      return b_.CreateXor(i, b_.CreateLShr(b_.CreateAShr(i, bits - 1), 1));
    };
    x = key(x);
    y = key(y);
    if (d == "EQ") return b_.CreateICmpEQ(x, y);
    if (d == "NE") return b_.CreateICmpNE(x, y);
    if (d == "LT") return b_.CreateICmpSLT(x, y);
    if (d == "LE") return b_.CreateICmpSLE(x, y);
    if (d == "GT") return b_.CreateICmpSGT(x, y);
    return b_.CreateICmpSGE(x, y);
  }
  if (ir::IsFloat(type)) {
    // IEEE quiet predicates: a NaN operand satisfies only NE.
    if (d == "EQ") return b_.CreateFCmpOEQ(x, y);
    if (d == "NE") return b_.CreateFCmpUNE(x, y);
    if (d == "LT") return b_.CreateFCmpOLT(x, y);
    if (d == "LE") return b_.CreateFCmpOLE(x, y);
    if (d == "GT") return b_.CreateFCmpOGT(x, y);
    return b_.CreateFCmpOGE(x, y);
  }
  const bool s = ir::IsSignedInteger(type);
  if (d == "EQ") return b_.CreateICmpEQ(x, y);
  if (d == "NE") return b_.CreateICmpNE(x, y);
  if (d == "LT") return s ? b_.CreateICmpSLT(x, y) : b_.CreateICmpULT(x, y);
  if (d == "LE") return s ? b_.CreateICmpSLE(x, y) : b_.CreateICmpULE(x, y);
  if (d == "GT") return s ? b_.CreateICmpSGT(x, y) : b_.CreateICmpUGT(x, y);
  return s ? b_.CreateICmpSGE(x, y) : b_.CreateICmpUGE(x, y);
}

llvm::Value* ElementalEmitter::Convert(ElementType from, ElementType to, llvm::Value* x) {
  if (from == to) return x;
  if (ir::IsComplex(from) || ir::IsComplex(to)) return ComplexConvert(from, to, x);
  llvm::Type* dst = ComputeType(to);
  const bool from_float = ir::IsFloat(from), to_float = ir::IsFloat(to);
  if (to == ElementType::kPred) {
    return from_float ? b_.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0))
                      : b_.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
  }
  if (from == ElementType::kPred) {
    return to_float ? b_.CreateUIToFP(x, dst) : b_.CreateZExt(x, dst);
  }
  if (!from_float && !to_float) {
    return ir::IsSignedInteger(from) ? b_.CreateSExtOrTrunc(x, dst) : b_.CreateZExtOrTrunc(x, dst);
  }
  if (!from_float) {
    // Integers round once to f32/f64; to bf16/f16, integers of up to 16 bits are exact in f32
    // (one rounding after it), wider ones round once through double (IntegerToNarrow).
    if (IsNarrowFloat(to) && ir::BitWidth(from) > 16) return IntegerToNarrow(from, to, x);
    llvm::Value* f = ir::IsSignedInteger(from) ? b_.CreateSIToFP(x, dst) : b_.CreateUIToFP(x, dst);
    return Round(to, f);
  }
  if (!to_float) {
    // Truncation toward zero, NaN -> 0, saturating at the type's range: the .sat intrinsics.
    const llvm::Intrinsic::ID id = ir::IsSignedInteger(to) ? llvm::Intrinsic::fptosi_sat
                                                           : llvm::Intrinsic::fptoui_sat;
    return b_.CreateIntrinsic(id, {dst, x->getType()}, {x});
  }
  // Float to float: f32 <-> f64 in one step (bf16/f16 values are exact in f32); f64 to bf16/f16
  // rounds once.
  if (from == ElementType::kF64 && IsNarrowFloat(to)) return NarrowFromDouble(to, x);
  llvm::Value* v = x;
  if (x->getType() != dst) {
    v = dst->isDoubleTy() ? b_.CreateFPExt(x, dst) : b_.CreateFPTrunc(x, dst);
  }
  return Round(to, v);
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitElementwise(
    const ir::Instruction& inst, absl::Span<llvm::Value* const> operands) {
  if (!ElementalOpSupported(inst, exact_f16_) || operands.size() != inst.operands().size()) {
    return absl::UnimplementedError(
        absl::StrCat(inst.Describe(), ": the elemental emitter does not emit this op and type"));
  }
  const ElementType type = inst.result()->type().element_type();
  const Opcode op = inst.opcode();
  if (ir::IsComplex(type) ||
      (!inst.operands().empty() && ir::IsComplex(inst.operand(0)->type().element_type()))) {
    return EmitComplex(inst, operands);
  }
  if (ElementalMathOp(op)) {
    return Math(op, type, operands[0], operands.size() == 2 ? operands[1] : nullptr);
  }
  switch (op) {
    case Opcode::kCompare:
      return Compare(inst, operands[0], operands[1]);
    case Opcode::kSelect:
      return b_.CreateSelect(operands[0], operands[1], operands[2]);
    case Opcode::kClamp:
      // minimum(maximum(operand, min), max), as the evaluator.
      return Maximum(type, Maximum(type, operands[1], operands[0], true), operands[2], false);
    case Opcode::kConvert:
      return Convert(inst.operand(0)->type().element_type(), type, operands[0]);
    case Opcode::kBitcastConvert: {
      const ElementType from = inst.operand(0)->type().element_type();
      if (ir::NarrowFloatFormat(from) != nullptr) {
        // The narrow float's bits (a computed value's: NaNs canonical, as the evaluator's).
        return b_.CreateBitCast(ToStorage(from, operands[0]), ComputeType(type));
      }
      return b_.CreateBitCast(operands[0], ComputeType(type));
    }
    case Opcode::kReducePrecision:
      return ReducePrecision(type, operands[0], inst.attribute("exponent_bits")->i,
                             inst.attribute("mantissa_bits")->i);
    case Opcode::kIsFinite: {
      llvm::Value* x = operands[0];
      return b_.CreateFCmpONE(Intrinsic(llvm::Intrinsic::fabs, x),
                              llvm::ConstantFP::getInfinity(x->getType()));
    }
    default:
      break;
  }
  if (operands.size() == 2) return Binary(op, type, operands[0], operands[1]);
  llvm::Value* v = Unary(op, type, operands[0]);
  if (v == nullptr) {
    return absl::InternalError(absl::StrCat(inst.Describe(), ": no elemental code for this op"));
  }
  return v;
}

absl::StatusOr<std::vector<llvm::Value*>> ElementalEmitter::EmitRegion(
    const ir::Computation& region, absl::Span<llvm::Value* const> args) {
  if (args.size() != region.parameters().size()) {
    return absl::InternalError(absl::StrCat("region @", region.name(), " takes ",
                                            region.parameters().size(), " arguments, given ",
                                            args.size()));
  }
  std::unordered_map<const ir::Value*, llvm::Value*> values;
  for (size_t i = 0; i < args.size(); ++i) values[region.parameter(i)] = args[i];
  auto value_of = [&](const ir::Value* v) -> absl::StatusOr<llvm::Value*> {
    auto it = values.find(v);
    if (it == values.end()) {
      return absl::UnimplementedError(
          absl::StrCat("region @", region.name(), " reads a value from outside it"));
    }
    return it->second;
  };
  for (const auto& inst : region.instructions()) {
    if (inst->opcode() == ir::Opcode::kReturn) {
      std::vector<llvm::Value*> results;
      for (const ir::Value* v : inst->operands()) {
        EMBER_ASSIGN_OR_RETURN(llvm::Value * r, value_of(v));
        results.push_back(r);
      }
      return results;
    }
    if (inst->opcode() == ir::Opcode::kConstant) {
      const ir::Literal* literal = passes::ConstantLiteral(inst->result());
      if (literal == nullptr) return absl::UnimplementedError(inst->Describe() + ": no literal");
      values[inst->result()] =
          Constant(inst->result()->type().element_type(), literal->bytes().data());
      continue;
    }
    std::vector<llvm::Value*> operands;
    for (const ir::Value* v : inst->operands()) {
      EMBER_ASSIGN_OR_RETURN(llvm::Value * o, value_of(v));
      operands.push_back(o);
    }
    EMBER_ASSIGN_OR_RETURN(values[inst->result()], EmitElementwise(*inst, operands));
  }
  return absl::UnimplementedError(absl::StrCat("region @", region.name(), " has no return"));
}

}  // namespace ember::codegen
