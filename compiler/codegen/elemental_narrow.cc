// The elemental emitter's f8, f6 and f4 storage formats (base/float_formats.h): a stored byte
// decoded to the f32 that holds its value exactly, and an f32 encoded with one rounding to
// nearest even, with each encoding's NaN, infinity, overflow and zero rules. The same algorithm
// as base/float_formats.cc's EncodeFloat / DecodeFloat (an f32 is exactly a double), in IR.
#include "compiler/codegen/elemental_emitter.h"
#include "compiler/ir/float_conversions.h"
#include "llvm/IR/Intrinsics.h"

namespace ember::codegen {

llvm::Value* ElementalEmitter::DecodeNarrow(const FloatFormat& f, llvm::Value* stored) {
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Type* float_type = b_.getFloatTy();
  auto c = [&](int64_t v) { return llvm::ConstantInt::get(i32, v); };
  auto pow2 = [&](llvm::Value* k) {  // 2^k for -126 <= k <= 127
    return b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(k, c(127)), c(23)), float_type);
  };
  const int m = f.mantissa_bits;
  llvm::Value* bits = b_.CreateAnd(b_.CreateZExt(stored, i32), c((1 << f.total_bits()) - 1));
  llvm::Value* nan = llvm::ConstantFP::getNaN(float_type);
  if (f.encoding == FloatEncoding::kExponentOnly) {
    // 2^(bits - bias); bits 0 is 2^-127, an f32 subnormal.
    llvm::Value* value = b_.CreateSelect(
        b_.CreateICmpEQ(bits, c(0)), llvm::ConstantFP::get(float_type, std::ldexp(1.0, -127)),
        pow2(b_.CreateSub(bits, c(f.exponent_bias))));
    return b_.CreateSelect(b_.CreateICmpEQ(bits, c(0xFF)), nan, value);
  }
  const int sign_bit = 1 << (f.exponent_bits + m);
  const int exp_max = (1 << f.exponent_bits) - 1;
  const int mant_max = (1 << m) - 1;
  llvm::Value* negative = b_.CreateICmpNE(b_.CreateAnd(bits, c(sign_bit)), c(0));
  llvm::Value* exp_field = b_.CreateAnd(b_.CreateLShr(bits, c(m)), c(exp_max));
  llvm::Value* mant_field = b_.CreateAnd(bits, c(mant_max));
  // Subnormal: mant * 2^(1 - bias - m); normal: (2^m + mant) * 2^(exp - bias - m). Both exact.
  llvm::Value* is_subnormal = b_.CreateICmpEQ(exp_field, c(0));
  llvm::Value* significand =
      b_.CreateSelect(is_subnormal, mant_field, b_.CreateOr(mant_field, c(1 << m)));
  llvm::Value* scale = b_.CreateSub(b_.CreateSelect(is_subnormal, c(1), exp_field),
                                    c(f.exponent_bias + m));
  llvm::Value* magnitude = b_.CreateFMul(b_.CreateUIToFP(significand, float_type), pow2(scale));
  llvm::Value* value = b_.CreateSelect(negative, b_.CreateFNeg(magnitude), magnitude);
  llvm::Value* inf = llvm::ConstantFP::getInfinity(float_type);
  switch (f.encoding) {
    case FloatEncoding::kIeee: {
      llvm::Value* special = b_.CreateSelect(b_.CreateICmpEQ(mant_field, c(0)), inf, nan);
      special = b_.CreateSelect(negative, b_.CreateFNeg(special), special);
      return b_.CreateSelect(b_.CreateICmpEQ(exp_field, c(exp_max)), special, value);
    }
    case FloatEncoding::kFiniteAndNan:
      return b_.CreateSelect(
          b_.CreateAnd(b_.CreateICmpEQ(exp_field, c(exp_max)),
                       b_.CreateICmpEQ(mant_field, c(mant_max))),
          b_.CreateSelect(negative, b_.CreateFNeg(nan), nan), value);
    case FloatEncoding::kFnuz:
      return b_.CreateSelect(b_.CreateICmpEQ(bits, c(sign_bit)), b_.CreateFNeg(nan), value);
    default:
      return value;
  }
}

llvm::Value* ElementalEmitter::EncodeNarrow(const FloatFormat& f, llvm::Value* x) {
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Type* i64 = b_.getInt64Ty();
  auto c = [&](int64_t v) { return llvm::ConstantInt::get(i32, v); };
  auto c64 = [&](int64_t v) { return llvm::ConstantInt::get(i64, v); };
  const int m = f.mantissa_bits;
  const bool exponent_only = f.encoding == FloatEncoding::kExponentOnly;
  const int sign_bit = exponent_only ? 0 : 1 << (f.exponent_bits + m);
  const int exp_max = (1 << f.exponent_bits) - 1;
  const int mant_max = (1 << m) - 1;
  const int all_ones = (exp_max << m) | mant_max;
  llvm::Value* bits = b_.CreateBitCast(x, i32);
  llvm::Value* negative = b_.CreateICmpSLT(bits, c(0));
  llvm::Value* sign = b_.CreateSelect(negative, c(sign_bit), c(0));
  llvm::Value* fexp = b_.CreateAnd(b_.CreateLShr(bits, c(23)), c(0xFF));
  llvm::Value* fmant = b_.CreateAnd(bits, c(0x7FFFFF));
  // The encodings of NaN, of overflow (infinities included) and of zero, by sign.
  llvm::Value *nan_bits, *overflow_bits, *zero_bits;
  switch (f.encoding) {
    case FloatEncoding::kIeee:
      nan_bits = b_.CreateOr(sign, c((exp_max << m) | (1 << (m - 1))));
      overflow_bits = b_.CreateOr(sign, c(exp_max << m));
      zero_bits = sign;
      break;
    case FloatEncoding::kFiniteAndNan:
      nan_bits = overflow_bits = b_.CreateOr(sign, c(all_ones));
      zero_bits = sign;
      break;
    case FloatEncoding::kFnuz:
      nan_bits = overflow_bits = c(sign_bit);
      zero_bits = c(0);
      break;
    case FloatEncoding::kFiniteOnly:
      // ml_dtypes' stand-in NaN is -0, negated for a negative NaN; overflow saturates.
      nan_bits = b_.CreateSelect(negative, c(0), c(sign_bit));
      overflow_bits = b_.CreateOr(sign, c(all_ones));
      zero_bits = sign;
      break;
    case FloatEncoding::kExponentOnly:
    default:
      nan_bits = overflow_bits = zero_bits = c(0xFF);
      break;
  }
  // |x| = significand * 2^q exactly, 2^e <= |x| < 2^(e + 1).
  llvm::Value* f32_subnormal = b_.CreateICmpEQ(fexp, c(0));
  llvm::Value* significand =
      b_.CreateSelect(f32_subnormal, fmant, b_.CreateOr(fmant, c(1 << 23)));
  llvm::Value* q = b_.CreateSelect(f32_subnormal, c(-149), b_.CreateSub(fexp, c(150)));
  llvm::Value* width = b_.CreateSub(
      c(32), b_.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, significand, b_.getFalse()));
  llvm::Value* e = b_.CreateSub(b_.CreateAdd(q, width), c(1));
  const int e_min = exponent_only ? -f.exponent_bias : 1 - f.exponent_bias;
  llvm::Value* scale_e = b_.CreateSelect(b_.CreateICmpSGT(e, c(e_min)), e, c(e_min));
  // n = significand / 2^shift rounded to nearest even (shift >= 0 for every f32 and format;
  // past 40 the quotient is 0 and so is the rounding).
  llvm::Value* shift = b_.CreateSub(b_.CreateSub(scale_e, c(m)), q);
  shift = b_.CreateZExt(b_.CreateSelect(b_.CreateICmpSGT(shift, c(40)), c(40), shift), i64);
  llvm::Value* s64 = b_.CreateZExt(significand, i64);
  llvm::Value* quotient = b_.CreateLShr(s64, shift);
  llvm::Value* remainder = b_.CreateAnd(s64, b_.CreateSub(b_.CreateShl(c64(1), shift), c64(1)));
  llvm::Value* half = b_.CreateLShr(b_.CreateShl(c64(1), shift), c64(1));
  llvm::Value* round_up = b_.CreateOr(
      b_.CreateICmpUGT(remainder, half),
      b_.CreateAnd(b_.CreateICmpEQ(remainder, half),
                   b_.CreateICmpNE(b_.CreateAnd(quotient, c64(1)), c64(0))));
  // (A shift of 0 has no remainder: half is 0 and so is remainder, with quotient odd only if
  // the value is: no rounding then, as 0 > 0 fails and the tie needs remainder == half == 0.)
  round_up = b_.CreateAnd(round_up, b_.CreateICmpNE(shift, c64(0)));
  llvm::Value* n = b_.CreateTrunc(b_.CreateAdd(quotient, b_.CreateZExt(round_up, i64)), i32);
  // Rounding carried into the next binade.
  llvm::Value* carried = b_.CreateICmpNE(b_.CreateLShr(n, c(m + 1)), c(0));
  n = b_.CreateSelect(carried, b_.CreateLShr(n, c(1)), n);
  scale_e = b_.CreateSelect(carried, b_.CreateAdd(scale_e, c(1)), scale_e);
  llvm::Value* subnormal = b_.CreateICmpULT(n, c(1 << m));
  llvm::Value* exp_field =
      b_.CreateSelect(subnormal, c(0), b_.CreateAdd(scale_e, c(f.exponent_bias)));
  llvm::Value* mant_field = b_.CreateSelect(subnormal, n, b_.CreateSub(n, c(1 << m)));
  llvm::Value* overflow;
  switch (f.encoding) {
    case FloatEncoding::kIeee:
    case FloatEncoding::kExponentOnly:
      overflow = b_.CreateICmpSGE(exp_field, c(exp_max));
      break;
    case FloatEncoding::kFiniteAndNan:
      overflow = b_.CreateOr(b_.CreateICmpSGT(exp_field, c(exp_max)),
                             b_.CreateAnd(b_.CreateICmpEQ(exp_field, c(exp_max)),
                                          b_.CreateICmpEQ(mant_field, c(mant_max))));
      break;
    default:
      overflow = b_.CreateICmpSGT(exp_field, c(exp_max));
      break;
  }
  llvm::Value* result = b_.CreateOr(b_.CreateOr(sign, b_.CreateShl(exp_field, c(m))), mant_field);
  result = b_.CreateSelect(overflow, overflow_bits, result);
  result = b_.CreateSelect(b_.CreateICmpEQ(n, c(0)), zero_bits, result);
  // Zeros, and (exponent-only) negative numbers and values below its smallest.
  llvm::Value* is_zero = b_.CreateICmpEQ(b_.CreateAnd(bits, c(0x7FFFFFFF)), c(0));
  result = b_.CreateSelect(is_zero, zero_bits, result);
  if (exponent_only) {
    result = b_.CreateSelect(b_.CreateICmpSLT(e, c(e_min)), c(0), result);
    result = b_.CreateSelect(b_.CreateOr(negative, is_zero), c(0xFF), result);
  }
  // Infinities and NaNs.
  llvm::Value* special = b_.CreateICmpEQ(fexp, c(0xFF));
  result = b_.CreateSelect(
      special, b_.CreateSelect(b_.CreateICmpNE(fmant, c(0)), nan_bits, overflow_bits), result);
  return b_.CreateTrunc(result, b_.getInt8Ty());
}

}  // namespace ember::codegen
