// The elemental emitter's complex numbers (c64, c128), computed as the evaluator computes them:
// in std::complex<double>, each part rounded once to the result's part type. A value is the
// struct {re, im} of its part type (the layout of std::complex, in registers and in memory).
// Addition, subtraction and negation are exact per part (a sum of two f32 rounded through
// double is the f32 sum); products and quotients are inline, libgcc's __muldc3 and __divdc3
// step by step (products call __muldc3 where both parts come out NaN; quotients recover those
// with selects, and vectorize); absolute values call hypot, and exp, log, sqrt, sin, cos, tan,
// tanh and pow the C library's cexp, clog, csqrt, csin, ccos, ctan, ctanh and cpow: the calls GCC
// makes for the evaluator's std::complex<double> arithmetic, so the results are the evaluator's
// bit for bit. These calls (and the product's rare branch) keep complex loops scalar; the NVPTX
// target will need device versions of them.
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/elemental_emitter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"

namespace ember::codegen {
namespace {

using ir::ElementType;
using ir::Opcode;

std::string Direction(const ir::Instruction& inst) {
  const ir::Attribute* d = inst.attribute("comparison_direction");
  return d != nullptr ? d->s : "";
}

}  // namespace

ElementType ElementalEmitter::ComplexPart(ElementType type) {
  return type == ElementType::kC64 ? ElementType::kF32 : ElementType::kF64;
}

llvm::Value* ElementalEmitter::MakeComplex(ElementType type, llvm::Value* re, llvm::Value* im) {
  llvm::Value* v = llvm::UndefValue::get(ComputeType(type));
  v = b_.CreateInsertValue(v, re, 0);
  return b_.CreateInsertValue(v, im, 1);
}

llvm::Value* ElementalEmitter::Re(llvm::Value* z) { return b_.CreateExtractValue(z, 0); }
llvm::Value* ElementalEmitter::Im(llvm::Value* z) { return b_.CreateExtractValue(z, 1); }

std::pair<llvm::Value*, llvm::Value*> ElementalEmitter::ToDoubleParts(llvm::Value* z) {
  llvm::Value* re = Re(z);
  llvm::Value* im = Im(z);
  if (!re->getType()->isDoubleTy()) {
    re = b_.CreateFPExt(re, b_.getDoubleTy());
    im = b_.CreateFPExt(im, b_.getDoubleTy());
  }
  return {re, im};
}

llvm::Value* ElementalEmitter::FromDoubleParts(ElementType type, llvm::Value* re,
                                               llvm::Value* im) {
  if (type == ElementType::kC64) {
    re = b_.CreateFPTrunc(re, b_.getFloatTy());
    im = b_.CreateFPTrunc(im, b_.getFloatTy());
  }
  return MakeComplex(type, re, im);
}

llvm::Value* ElementalEmitter::ComplexCall(const char* name, llvm::ArrayRef<llvm::Value*> args) {
  // A C function taking and returning double _Complex values: on x86-64 each complex argument
  // is two doubles (xmm registers), the result the struct {double, double} (xmm0, xmm1).
  llvm::Module* module = b_.GetInsertBlock()->getModule();
  llvm::Type* d = b_.getDoubleTy();
  llvm::Type* result = llvm::StructType::get(b_.getContext(), {d, d});
  std::vector<llvm::Type*> params(args.size(), d);
  llvm::FunctionCallee fn =
      module->getOrInsertFunction(name, llvm::FunctionType::get(result, params, false));
  if (auto* f = llvm::dyn_cast<llvm::Function>(fn.getCallee())) {
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->addFnAttr(llvm::Attribute::WillReturn);
  }
  return b_.CreateCall(fn, args);
}

std::pair<llvm::Value*, llvm::Value*> ElementalEmitter::MultiplyDoubleParts(llvm::Value* a,
                                                                           llvm::Value* b,
                                                                           llvm::Value* c,
                                                                           llvm::Value* d) {
  // What GCC emits for the evaluator's std::complex<double> product: the textbook products and
  // sums (no fused multiply-adds: each product rounds), and libgcc's __muldc3 (C's Annex G
  // recovery of infinities) only when both parts come out NaN, on a branch taken for NaN,
  // infinite or overflowing operands alone. The same bits as __muldc3 always, at a fraction of a
  // call per element.
  // (A branchless Annex G, selects on every recovery condition, vectorizes but costs twice this.)
  llvm::Value* x = b_.CreateFSub(b_.CreateFMul(a, c), b_.CreateFMul(b, d));
  llvm::Value* y = b_.CreateFAdd(b_.CreateFMul(a, d), b_.CreateFMul(b, c));
  return CallWhereBothNan("__muldc3", {a, b, c, d}, x, y);
}

std::pair<llvm::Value*, llvm::Value*> ElementalEmitter::CallWhereBothNan(
    const char* name, llvm::ArrayRef<llvm::Value*> args, llvm::Value* x, llvm::Value* y) {
  llvm::Value* both_nan = b_.CreateAnd(b_.CreateFCmpUNO(x, x), b_.CreateFCmpUNO(y, y));
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* from = b_.GetInsertBlock();
  llvm::BasicBlock* slow = llvm::BasicBlock::Create(b_.getContext(), name, fn);
  llvm::BasicBlock* join =
      llvm::BasicBlock::Create(b_.getContext(), absl::StrCat(name, "_done"), fn);
  llvm::MDBuilder md(b_.getContext());
  b_.CreateCondBr(both_nan, slow, join, md.createBranchWeights(1, 1000));
  b_.SetInsertPoint(slow);
  llvm::Value* r = ComplexCall(name, args);
  llvm::Value* rx = Re(r);
  llvm::Value* ry = Im(r);
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
  llvm::PHINode* px = b_.CreatePHI(b_.getDoubleTy(), 2);
  px->addIncoming(x, from);
  px->addIncoming(rx, slow);
  llvm::PHINode* py = b_.CreatePHI(b_.getDoubleTy(), 2);
  py->addIncoming(y, from);
  py->addIncoming(ry, slow);
  return {px, py};
}

std::pair<llvm::Value*, llvm::Value*> ElementalEmitter::DivideDoubleParts(llvm::Value* a,
                                                                         llvm::Value* b,
                                                                         llvm::Value* c,
                                                                         llvm::Value* d) {
  // libgcc's __divdc3 (GCC 12, the evaluator's std::complex<double> quotient) step by step,
  // its branches as selects: Smith's division by the larger of |c| and |d| (q below; p is the
  // other), the operands first scaled by an exact power of two where q is huge (by 1/2), tiny
  // (under DBL_EPSILON, by 2^52), or a numerator part is subnormal (by 2^52), and the ratio's
  // alternative order where p / q is subnormal. Each operation is the one libgcc rounds, in
  // its order (no fused multiply-adds). No branch and no call: the loops vectorize.
  llvm::Type* t = b_.getDoubleTy();
  auto k = [&](double v) { return llvm::ConstantFP::get(t, v); };
  auto abs = [&](llvm::Value* v) { return Intrinsic(llvm::Intrinsic::fabs, v); };
  const double rbig = std::numeric_limits<double>::max() / 2;
  const double rmin = std::numeric_limits<double>::min();
  const double rmin2 = std::numeric_limits<double>::epsilon();
  const double rminscal = 1.0 / rmin2;
  const double rmax2 = rbig * rmin2;
  // |c| < |d|: divide through by d (libgcc's first branch), else by c.
  llvm::Value* by_d = b_.CreateFCmpOLT(abs(c), abs(d));
  auto q_of = [&](llvm::Value* cc, llvm::Value* dd) { return b_.CreateSelect(by_d, dd, cc); };
  llvm::Value* sa = a;
  llvm::Value* sb = b;
  llvm::Value* sc = c;
  llvm::Value* sd = d;
  auto scale = [&](llvm::Value* when, double factor) {
    llvm::Value* f = b_.CreateSelect(when, k(factor), k(1.0));
    sa = b_.CreateFMul(sa, f);
    sb = b_.CreateFMul(sb, f);
    sc = b_.CreateFMul(sc, f);
    sd = b_.CreateFMul(sd, f);
  };
  scale(b_.CreateFCmpOGE(abs(q_of(c, d)), k(rbig)), 0.5);
  llvm::Value* aq = abs(q_of(sc, sd));
  llvm::Value* aa = abs(sa);
  llvm::Value* ab = abs(sb);
  llvm::Value* q_small = b_.CreateFCmpOLT(aq, k(rmax2));
  llvm::Value* a_tiny = b_.CreateAnd(b_.CreateFCmpOLT(aa, k(rmin)), b_.CreateFCmpOLT(ab, k(rmax2)));
  llvm::Value* b_tiny = b_.CreateAnd(b_.CreateFCmpOLT(ab, k(rmin)), b_.CreateFCmpOLT(aa, k(rmax2)));
  scale(b_.CreateOr(b_.CreateFCmpOLT(aq, k(rmin2)),
                    b_.CreateAnd(q_small, b_.CreateOr(a_tiny, b_tiny))),
        rminscal);
  // Dividing by d: x = (a r + b) / den, y = (b r - a) / den, r = c / d, den = c r + d.
  // Dividing by c: x = (b r + a) / den, y = (b - a r) / den, r = d / c, den = d r + c.
  // So with u, v = a, b (by d) or b, a (by c): x = (u r + v) / den, and y = v r - u (by d) or
  // u - v r (by c), over den. Where r is subnormal, u r and v r are p (u / q) and p (v / q).
  llvm::Value* p = b_.CreateSelect(by_d, sc, sd);
  llvm::Value* q = q_of(sc, sd);
  llvm::Value* u = b_.CreateSelect(by_d, sa, sb);
  llvm::Value* v = b_.CreateSelect(by_d, sb, sa);
  llvm::Value* r = b_.CreateFDiv(p, q);
  llvm::Value* den = b_.CreateFAdd(b_.CreateFMul(p, r), q);
  llvm::Value* normal = b_.CreateFCmpOGT(abs(r), k(rmin));
  llvm::Value* ur =
      b_.CreateSelect(normal, b_.CreateFMul(u, r), b_.CreateFMul(p, b_.CreateFDiv(u, q)));
  llvm::Value* vr =
      b_.CreateSelect(normal, b_.CreateFMul(v, r), b_.CreateFMul(p, b_.CreateFDiv(v, q)));
  llvm::Value* x = b_.CreateFDiv(b_.CreateFAdd(ur, v), den);
  llvm::Value* y =
      b_.CreateFDiv(b_.CreateSelect(by_d, b_.CreateFSub(vr, u), b_.CreateFSub(u, vr)), den);
  // Where both parts are NaN, C's Annex G recovery on the scaled operands, in libgcc's order:
  // a zero divisor and a numerator not all NaN give infinities (signed by c and the numerator);
  // an infinite numerator over a finite divisor gives infinities, its parts boxed to +-1 or +-0;
  // a finite numerator over an infinite divisor gives zeros, the divisor's parts boxed.
  llvm::Value* inf = llvm::ConstantFP::getInfinity(t);
  auto is_inf = [&](llvm::Value* v) { return b_.CreateFCmpOEQ(abs(v), inf); };
  auto is_finite = [&](llvm::Value* v) { return b_.CreateFCmpOLT(abs(v), inf); };
  auto boxed = [&](llvm::Value* v) {
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign,
                                    b_.CreateSelect(is_inf(v), k(1.0), k(0.0)), v);
  };
  // The recovered parts: factor (a' c' + b' d') and factor (b' c' - a' d').
  auto recovered = [&](llvm::Value* a1, llvm::Value* b1, llvm::Value* c1, llvm::Value* d1,
                       llvm::Value* factor) -> std::pair<llvm::Value*, llvm::Value*> {
    return {b_.CreateFMul(b_.CreateFAdd(b_.CreateFMul(a1, c1), b_.CreateFMul(b1, d1)), factor),
            b_.CreateFMul(b_.CreateFSub(b_.CreateFMul(b1, c1), b_.CreateFMul(a1, d1)), factor)};
  };
  llvm::Value* zero_divisor = b_.CreateAnd(
      b_.CreateAnd(b_.CreateFCmpOEQ(sc, k(0.0)), b_.CreateFCmpOEQ(sd, k(0.0))),
      b_.CreateOr(b_.CreateFCmpORD(sa, sa), b_.CreateFCmpORD(sb, sb)));
  llvm::Value* signed_inf = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, inf, sc);
  llvm::Value* infinite_numerator = b_.CreateAnd(b_.CreateOr(is_inf(sa), is_inf(sb)),
                                                 b_.CreateAnd(is_finite(sc), is_finite(sd)));
  auto [xi, yi] = recovered(boxed(sa), boxed(sb), sc, sd, inf);
  llvm::Value* infinite_divisor = b_.CreateAnd(b_.CreateOr(is_inf(sc), is_inf(sd)),
                                               b_.CreateAnd(is_finite(sa), is_finite(sb)));
  auto [xz, yz] = recovered(sa, sb, boxed(sc), boxed(sd), k(0.0));
  llvm::Value* both_nan = b_.CreateAnd(b_.CreateFCmpUNO(x, x), b_.CreateFCmpUNO(y, y));
  auto recover = [&](llvm::Value* part, llvm::Value* zero_case, llvm::Value* inf_case,
                     llvm::Value* zero_result_case) {
    llvm::Value* r = b_.CreateSelect(infinite_divisor, zero_result_case, part);
    r = b_.CreateSelect(infinite_numerator, inf_case, r);
    r = b_.CreateSelect(zero_divisor, zero_case, r);
    return b_.CreateSelect(both_nan, r, part);
  };
  return {recover(x, b_.CreateFMul(signed_inf, sa), xi, xz),
          recover(y, b_.CreateFMul(signed_inf, sb), yi, yz)};
}

llvm::Value* ElementalEmitter::ComplexAbs(llvm::Value* re, llvm::Value* im) {
  // std::abs of a complex<double>: glibc's cabs, which is hypot.
  return LibmDouble("hypot", re, im);
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitComplex(
    const ir::Instruction& inst, absl::Span<llvm::Value* const> operands) {
  const ElementType type = inst.result()->type().element_type();
  const ElementType in = inst.operand(0)->type().element_type();
  const Opcode op = inst.opcode();
  switch (op) {
    case Opcode::kComplex:
      return MakeComplex(type, operands[0], operands[1]);
    case Opcode::kReal:
      return Re(operands[0]);
    case Opcode::kImag:
      return Im(operands[0]);
    case Opcode::kSelect:
      return b_.CreateSelect(operands[0], operands[1], operands[2]);
    case Opcode::kNegate:
      return MakeComplex(type, b_.CreateFNeg(Re(operands[0])), b_.CreateFNeg(Im(operands[0])));
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      return ComplexBinary(op, type, operands[0], operands[1]);
    case Opcode::kCompare: {
      // Lexicographically on (real, imag) with IEEE quiet predicates, the evaluator's
      // CompareElements.
      llvm::Value* x = operands[0];
      llvm::Value* y = operands[1];
      auto less = [&](llvm::Value* p, llvm::Value* q) {
        return b_.CreateOr(b_.CreateFCmpOLT(Re(p), Re(q)),
                           b_.CreateAnd(b_.CreateFCmpOEQ(Re(p), Re(q)),
                                        b_.CreateFCmpOLT(Im(p), Im(q))));
      };
      llvm::Value* eq =
          b_.CreateAnd(b_.CreateFCmpOEQ(Re(x), Re(y)), b_.CreateFCmpOEQ(Im(x), Im(y)));
      const std::string d = Direction(inst);
      if (d == "EQ") return eq;
      if (d == "NE") return b_.CreateNot(eq);
      if (d == "LT") return less(x, y);
      if (d == "LE") return b_.CreateOr(less(x, y), eq);
      if (d == "GT") return less(y, x);
      return b_.CreateOr(less(y, x), eq);
    }
    case Opcode::kConvert:
      return Convert(in, type, operands[0]);
    case Opcode::kAbs: {
      auto [a, b] = ToDoubleParts(operands[0]);
      llvm::Value* r = ComplexAbs(a, b);
      return type == ElementType::kF32 ? b_.CreateFPTrunc(r, b_.getFloatTy()) : r;
    }
    case Opcode::kSign: {
      // NaN parts: NaN; zero: zero; else z / |z| (per part: a complex<double> over a double).
      auto [a, b] = ToDoubleParts(operands[0]);
      llvm::Value* abs = ComplexAbs(a, b);
      llvm::Value* zero = llvm::ConstantFP::get(b_.getDoubleTy(), 0.0);
      llvm::Value* nan = b_.CreateOr(b_.CreateFCmpUNO(a, a), b_.CreateFCmpUNO(b, b));
      llvm::Value* is_zero = b_.CreateAnd(b_.CreateFCmpOEQ(a, zero), b_.CreateFCmpOEQ(b, zero));
      llvm::Value* quiet = llvm::ConstantFP::getNaN(b_.getDoubleTy());
      llvm::Value* re = b_.CreateSelect(
          nan, quiet, b_.CreateSelect(is_zero, zero, b_.CreateFDiv(a, abs)));
      llvm::Value* im = b_.CreateSelect(
          nan, quiet, b_.CreateSelect(is_zero, zero, b_.CreateFDiv(b, abs)));
      return FromDoubleParts(type, re, im);
    }
    case Opcode::kSqrt: {
      auto [a, b] = ToDoubleParts(operands[0]);
      llvm::Value* r = ComplexCall("csqrt", {a, b});
      return FromDoubleParts(type, Re(r), Im(r));
    }
    default:
      break;
  }
  return ComplexMath(op, type, operands[0], operands.size() > 1 ? operands[1] : nullptr);
}

llvm::Value* ElementalEmitter::ComplexConvert(ElementType from, ElementType to, llvm::Value* x) {
  // The evaluator's ConvertElement: part by part between complex types; a real value becomes the
  // real part (imaginary +0); a complex number converts its real part.
  if (ir::IsComplex(from) && ir::IsComplex(to)) {
    const ElementType part = ComplexPart(to);
    return MakeComplex(to, Convert(ComplexPart(from), part, Re(x)),
                       Convert(ComplexPart(from), part, Im(x)));
  }
  if (ir::IsComplex(from)) return Convert(ComplexPart(from), to, Re(x));
  const ElementType part = ComplexPart(to);
  return MakeComplex(to, Convert(from, part, x), llvm::ConstantFP::get(ComputeType(part), 0.0));
}

llvm::Value* ElementalEmitter::ComplexBinary(Opcode op, ElementType type, llvm::Value* x,
                                             llvm::Value* y) {
  switch (op) {
    case Opcode::kAdd:
    case Opcode::kSubtract: {
      // Per part in the part type: a sum of two f32 rounded through double is their f32 sum
      // (double has more than twice f32's precision), as the evaluator's complex<double> sum.
      const bool add = op == Opcode::kAdd;
      return MakeComplex(type, add ? b_.CreateFAdd(Re(x), Re(y)) : b_.CreateFSub(Re(x), Re(y)),
                         add ? b_.CreateFAdd(Im(x), Im(y)) : b_.CreateFSub(Im(x), Im(y)));
    }
    case Opcode::kMultiply: {
      auto [a, b] = ToDoubleParts(x);
      auto [c, d] = ToDoubleParts(y);
      auto [re, im] = MultiplyDoubleParts(a, b, c, d);
      return FromDoubleParts(type, re, im);
    }
    case Opcode::kDivide: {
      auto [a, b] = ToDoubleParts(x);
      auto [c, d] = ToDoubleParts(y);
      auto [re, im] = DivideDoubleParts(a, b, c, d);
      return FromDoubleParts(type, re, im);
    }
    default: {
      // Maximum, minimum: lexicographically on (real, imag), the evaluator's MaxElement /
      // MinElement.
      const bool max = op == Opcode::kMaximum;
      llvm::Value* same_re = b_.CreateFCmpOEQ(Re(x), Re(y));
      llvm::Value* by_im = max ? b_.CreateFCmpOGT(Im(x), Im(y)) : b_.CreateFCmpOLT(Im(x), Im(y));
      llvm::Value* by_re = max ? b_.CreateFCmpOGT(Re(x), Re(y)) : b_.CreateFCmpOLT(Re(x), Re(y));
      return b_.CreateSelect(b_.CreateSelect(same_re, by_im, by_re), x, y);
    }
  }
}

absl::StatusOr<llvm::Value*> ElementalEmitter::ComplexMath(Opcode op, ElementType type,
                                                           llvm::Value* x, llvm::Value* y) {
  auto [a, b] = ToDoubleParts(x);
  llvm::Value* one = llvm::ConstantFP::get(b_.getDoubleTy(), 1.0);
  llvm::Value* zero = llvm::ConstantFP::get(b_.getDoubleTy(), 0.0);
  // 1.0 / w: libstdc++ makes the double a complex and divides (__divdc3).
  auto reciprocal = [&](llvm::Value* w) {
    auto [re, im] = DivideDoubleParts(one, zero, Re(w), Im(w));
    return MakeComplex(ElementType::kC128, re, im);
  };
  llvm::Value* r = nullptr;
  switch (op) {
    case Opcode::kExponential: r = ComplexCall("cexp", {a, b}); break;
    case Opcode::kLog: r = ComplexCall("clog", {a, b}); break;
    case Opcode::kSine: r = ComplexCall("csin", {a, b}); break;
    case Opcode::kCosine: r = ComplexCall("ccos", {a, b}); break;
    case Opcode::kTan: r = ComplexCall("ctan", {a, b}); break;
    case Opcode::kTanh: r = ComplexCall("ctanh", {a, b}); break;
    case Opcode::kRsqrt: r = reciprocal(ComplexCall("csqrt", {a, b})); break;
    case Opcode::kLogistic: {
      // 1 / (1 + exp(-z)).
      llvm::Value* e = ComplexCall("cexp", {b_.CreateFNeg(a), b_.CreateFNeg(b)});
      r = reciprocal(MakeComplex(ElementType::kC128, b_.CreateFAdd(one, Re(e)), Im(e)));
      break;
    }
    case Opcode::kPower: {
      auto [c, d] = ToDoubleParts(y);
      r = ComplexCall("cpow", {a, b, c, d});
      break;
    }
    default:
      return absl::UnimplementedError(
          absl::StrCat(std::string(ir::OpcodeName(op)), " of complex numbers is not emitted"));
  }
  return FromDoubleParts(type, Re(r), Im(r));
}

}  // namespace ember::codegen
