// The elemental emitter's transcendental functions. exp, log, tanh and logistic of f32 (and of
// bf16/f16, computed in f32) are branch-free polynomial cores in IR: exp and log (and logistic,
// through exp) with Cody-Waite range reductions and minimax polynomials, tanh with rational
// approximations of its own (TanhF32), so loops over them
// vectorize; their special ranges (NaN, infinities, overflow, subnormal results and arguments)
// are handled by selects, so every lane is right without a second pass: a few ulp from the
// evaluator's correctly rounded double computation. Everything else (f64, and expm1, log1p, sin,
// cos, tan, cbrt, rsqrt, power, atan2 in every type) is computed as the evaluator computes it: in
// double, through the C library, rounded once to the result type, bit for bit the evaluator's.
#include <cstdint>

#include "compiler/codegen/elemental_emitter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace ember::codegen {
namespace {

using ir::ElementType;
using ir::Opcode;

llvm::Constant* F32(llvm::Type* t, float v) { return llvm::ConstantFP::get(t, v); }

}  // namespace

llvm::Value* ElementalEmitter::LibmDouble(const char* name, llvm::Value* x, llvm::Value* y) {
  llvm::Module* module = b_.GetInsertBlock()->getModule();
  llvm::Type* d = b_.getDoubleTy();
  std::vector<llvm::Type*> params(y == nullptr ? 1 : 2, d);
  llvm::FunctionCallee fn =
      module->getOrInsertFunction(name, llvm::FunctionType::get(d, params, false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(fn.getCallee())) {
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->addFnAttr(llvm::Attribute::WillReturn);
  }
  if (y == nullptr) return b_.CreateCall(fn, {x});
  return b_.CreateCall(fn, {x, y});
}

llvm::Value* ElementalEmitter::ExpF32(llvm::Value* x) {
  llvm::Type* f = x->getType();
  llvm::Type* i = b_.getInt32Ty();
  // Results overflow above ln(FLT_MAX) and round to 0 below ln(2^-150).
  constexpr float kHi = 88.72283172607421875f;  // the largest float whose exp is finite
  constexpr float kLo = -103.972076416015625f;
  llvm::Value* nan = b_.CreateFCmpUNO(x, x);
  llvm::Value* over = b_.CreateFCmpOGT(x, F32(f, kHi));
  llvm::Value* under = b_.CreateFCmpOLT(x, F32(f, kLo));
  llvm::Value* xc = b_.CreateSelect(over, F32(f, kHi), b_.CreateSelect(under, F32(f, kLo), x));
  xc = b_.CreateSelect(nan, F32(f, 0.0f), xc);
  // x = n ln2 + r, |r| <= ln2 / 2; ln2 split in two so n * kLn2Hi is exact.
  llvm::Value* t = b_.CreateFAdd(b_.CreateFMul(xc, F32(f, 1.44269504088896341f)),
                                 F32(f, 12582912.0f));  // 1.5 * 2^23 rounds to an integer
  llvm::Value* fn = b_.CreateFSub(t, F32(f, 12582912.0f));
  llvm::Value* r = b_.CreateFSub(b_.CreateFSub(xc, b_.CreateFMul(fn, F32(f, 0.693359375f))),
                                 b_.CreateFMul(fn, F32(f, -2.12194440e-4f)));
  llvm::Value* p = F32(f, 1.9875691500e-4f);
  for (float c :
       {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f}) {
    p = FusedMulAdd(p, r, F32(f, c));
  }
  llvm::Value* y = b_.CreateFAdd(FusedMulAdd(p, b_.CreateFMul(r, r), r), F32(f, 1.0f));
  // 2^n for n in [-150, 128] as two normal powers of two, so subnormal results round once.
  llvm::Value* n = b_.CreateFPToSI(fn, i);
  llvm::Value* n1 = b_.CreateAShr(n, 1);
  llvm::Value* n2 = b_.CreateSub(n, n1);
  auto pow2 = [&](llvm::Value* e) {
    return b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(e, b_.getInt32(127)), 23), f);
  };
  llvm::Value* result = b_.CreateFMul(b_.CreateFMul(y, pow2(n1)), pow2(n2));
  result = b_.CreateSelect(over, llvm::ConstantFP::getInfinity(f), result);
  result = b_.CreateSelect(under, F32(f, 0.0f), result);
  return b_.CreateSelect(nan, x, result);
}

llvm::Value* ElementalEmitter::LogF32(llvm::Value* x) {
  llvm::Type* f = x->getType();
  llvm::Type* i = b_.getInt32Ty();
  constexpr float kMinNormal = 1.17549435e-38f;
  // Subnormal arguments are scaled into the normal range first (x * 2^23 is exact).
  llvm::Value* sub = b_.CreateFCmpOLT(x, F32(f, kMinNormal));
  llvm::Value* xs = b_.CreateSelect(sub, b_.CreateFMul(x, F32(f, 8388608.0f)), x);
  llvm::Value* bits = b_.CreateBitCast(xs, i);
  // x = m * 2^e, m in [0.5, 1).
  llvm::Value* e =
      b_.CreateSub(b_.CreateAnd(b_.CreateLShr(bits, 23), b_.getInt32(0xff)), b_.getInt32(126));
  e = b_.CreateSub(e, b_.CreateSelect(sub, b_.getInt32(23), b_.getInt32(0)));
  llvm::Value* m = b_.CreateBitCast(
      b_.CreateOr(b_.CreateAnd(bits, b_.getInt32(0x007fffff)), b_.getInt32(0x3f000000)), f);
  llvm::Value* small = b_.CreateFCmpOLT(m, F32(f, 0.707106781186547524f));
  e = b_.CreateSub(e, b_.CreateZExt(small, i));
  m = b_.CreateFSub(b_.CreateSelect(small, b_.CreateFAdd(m, m), m), F32(f, 1.0f));
  llvm::Value* z = b_.CreateFMul(m, m);
  llvm::Value* p = F32(f, 7.0376836292e-2f);
  for (float c : {-1.1514610310e-1f, 1.1676998740e-1f, -1.2420140846e-1f, 1.4249322787e-1f,
                  -1.6668057665e-1f, 2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f}) {
    p = FusedMulAdd(p, m, F32(f, c));
  }
  llvm::Value* fe = b_.CreateSIToFP(e, f);
  llvm::Value* y = b_.CreateFMul(b_.CreateFMul(p, m), z);
  y = b_.CreateFAdd(y, b_.CreateFMul(fe, F32(f, -2.12194440e-4f)));
  y = b_.CreateFAdd(y, b_.CreateFMul(z, F32(f, -0.5f)));
  llvm::Value* result = b_.CreateFAdd(b_.CreateFAdd(m, y), b_.CreateFMul(fe, F32(f, 0.693359375f)));
  // log(+inf) = +inf, log(+-0) = -inf, log(x < 0) = NaN, NaN stays.
  result = b_.CreateSelect(b_.CreateFCmpOEQ(x, llvm::ConstantFP::getInfinity(f)), x, result);
  result = b_.CreateSelect(b_.CreateFCmpOEQ(x, F32(f, 0.0f)),
                           llvm::ConstantFP::getInfinity(f, /*Negative=*/true), result);
  result = b_.CreateSelect(b_.CreateFCmpOLT(x, F32(f, 0.0f)), llvm::ConstantFP::getNaN(f), result);
  return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, result);
}

llvm::Value* ElementalEmitter::TanhF32(llvm::Value* x) {
  // Two rational approximations in z = |x|^2 (minimax fits rounded to f32, tools/fit_tanh.py),
  // their coefficients selected per lane so one division serves both. |x| <= 1.25:
  // tanh = |x| + |x|^3 h(z) / q(z), the fraction only a correction. Above, n / q with
  // n = |x| (1/2 + z h(z)) is t = tanh(|x| / 2), and tanh = 2t / (1 + t^2) =
  // 1 - (q - n)^2 / (n^2 + q^2): the rounding errors of n and q are damped there (by
  // (1 - t^2) / (1 + t^2)) and the result cannot exceed 1. One rational over [0, 9] instead
  // reached 5 ulp (its polynomials' rounding errors where tanh is near 1); this is at most 2 ulp
  // from the correctly rounded tanh over every f32, with or without fused multiply-adds, and 2
  // only for 1.23 < |x| < 2 (1.04 < |x| < 2 without them).
  llvm::Type* f = x->getType();
  auto fma = [&](llvm::Value* a, llvm::Value* b, llvm::Value* c) {
    return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {f}, {a, b, c});
  };
  // tanh rounds to 1 from 9.01 on; clamped at 10, where the large formula gives exactly 1. The
  // ordered compare keeps a NaN, which the arithmetic then carries.
  llvm::Value* ax = Intrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* a = b_.CreateSelect(b_.CreateFCmpOGT(ax, F32(f, 10.0f)), F32(f, 10.0f), ax);
  llvm::Value* z = b_.CreateFMul(a, a);
  llvm::Value* large = b_.CreateFCmpOGT(a, F32(f, 1.25f));
  auto c = [&](float small, float big) {
    return b_.CreateSelect(large, F32(f, big), F32(f, small));
  };
  llvm::Value* h =
      fma(fma(c(-8.003405128e-06f, 4.062151504e-08f), z, c(-1.655373909e-02f, 7.850038673e-05f)), z,
          c(-3.333333433e-01f, 1.568924263e-02f));
  llvm::Value* q = fma(fma(fma(c(0.0f, 2.646674830e-06f), z, c(1.798331551e-02f, 1.383027644e-03f)),
                           z, c(4.496614337e-01f, 1.147117168e-01f)),
                       z, F32(f, 1.0f));
  llvm::Value* n = fma(a, b_.CreateFMul(z, h), b_.CreateFMul(a, F32(f, 0.5f)));
  llvm::Value* d = b_.CreateFSub(q, n);  // exact: n and q are within a factor 2 above 1.25
  llvm::Value* num = b_.CreateSelect(large, b_.CreateFMul(d, d), h);
  llvm::Value* den = b_.CreateSelect(large, fma(n, n, b_.CreateFMul(q, q)), q);
  llvm::Value* r = b_.CreateFDiv(num, den);
  // Small: tiny and subnormal |x| (a^3 rounds to 0) give |x| exactly.
  llvm::Value* magnitude =
      b_.CreateSelect(large, b_.CreateFSub(F32(f, 1.0f), r), fma(b_.CreateFMul(a, z), r, a));
  return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, magnitude, x);
}

llvm::Value* ElementalEmitter::NarrowFromDouble(ElementType type, llvm::Value* d) {
  // Rounded to f32 toward zero with a sticky last bit ("round to odd"), then to the narrow type
  // to nearest even: with f32's 13+ spare bits this rounds once, as the evaluator's
  // FloatFromDouble does.
  llvm::Value* f = b_.CreateFPTrunc(d, b_.getFloatTy());
  llvm::Value* back = b_.CreateFPExt(f, b_.getDoubleTy());
  llvm::Value* bits = b_.CreateBitCast(f, b_.getInt32Ty());
  llvm::Value* away =
      b_.CreateFCmpOGT(Intrinsic(llvm::Intrinsic::fabs, back), Intrinsic(llvm::Intrinsic::fabs, d));
  bits = b_.CreateSub(bits, b_.CreateZExt(away, b_.getInt32Ty()));
  bits = b_.CreateOr(bits, b_.CreateZExt(b_.CreateFCmpUNE(back, d), b_.getInt32Ty()));
  return FromStorage(type, ToStorage(type, b_.CreateBitCast(bits, b_.getFloatTy())));
}

llvm::Value* ElementalEmitter::Math(Opcode op, ElementType type, llvm::Value* x, llvm::Value* y) {
  const bool f64 = type == ElementType::kF64;
  if (!f64) {
    switch (op) {
      case Opcode::kExponential:
        return Round(type, ExpF32(x));
      case Opcode::kLog:
        return Round(type, LogF32(x));
      case Opcode::kTanh:
        return Round(type, TanhF32(x));
      case Opcode::kLogistic:
        return Round(
            type, b_.CreateFDiv(F32(x->getType(), 1.0f),
                                b_.CreateFAdd(F32(x->getType(), 1.0f), ExpF32(b_.CreateFNeg(x)))));
      default:
        break;
    }
  }
  llvm::Type* d = b_.getDoubleTy();
  llvm::Value* xd = f64 ? x : b_.CreateFPExt(x, d);
  llvm::Value* yd = y == nullptr || f64 ? y : b_.CreateFPExt(y, d);
  llvm::Value* one = llvm::ConstantFP::get(d, 1.0);
  llvm::Value* r = nullptr;
  switch (op) {
    case Opcode::kExponential:
      r = LibmDouble("exp", xd);
      break;
    case Opcode::kExponentialMinusOne:
      r = LibmDouble("expm1", xd);
      break;
    case Opcode::kLog:
      r = LibmDouble("log", xd);
      break;
    case Opcode::kLogPlusOne:
      r = LibmDouble("log1p", xd);
      break;
    case Opcode::kTanh:
      r = LibmDouble("tanh", xd);
      break;
    case Opcode::kSine:
      r = LibmDouble("sin", xd);
      break;
    case Opcode::kCosine:
      r = LibmDouble("cos", xd);
      break;
    case Opcode::kTan:
      r = LibmDouble("tan", xd);
      break;
    case Opcode::kCbrt:
      r = LibmDouble("cbrt", xd);
      break;
    case Opcode::kLogistic:
      r = b_.CreateFDiv(one, b_.CreateFAdd(one, LibmDouble("exp", b_.CreateFNeg(xd))));
      break;
    case Opcode::kRsqrt:
      r = b_.CreateFDiv(one, Intrinsic(llvm::Intrinsic::sqrt, xd));
      break;
    case Opcode::kPower:
      r = LibmDouble("pow", xd, yd);
      break;
    case Opcode::kAtan2:
      r = LibmDouble("atan2", xd, yd);
      break;
    default:
      return nullptr;
  }
  if (f64) return r;
  if (type == ElementType::kF32) return b_.CreateFPTrunc(r, b_.getFloatTy());
  return NarrowFromDouble(type, r);
}

}  // namespace ember::codegen
