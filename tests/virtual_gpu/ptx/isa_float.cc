// Floating-point arithmetic and math (PTX ISA "Floating-Point Instructions", "Half Precision
// Floating-Point Instructions"): add, sub, mul, fma, mad, div, abs, neg, min, max, rcp, sqrt,
// rsqrt, sin, cos, lg2, ex2, tanh, copysign, testp on f32/f64, and the f16/bf16 scalar and packed
// (x2) forms. Rounding modifiers, .ftz and .sat follow the ISA; NaN results are the canonical NaN.
// The .approx instructions are computed from the C library, which is within the error bounds the
// ISA documents (e.g. ex2.approx.f32: 2 ulp; sin/cos.approx.f32: 2^-20.5 absolute in [-pi, pi]).
// Outside [-pi, pi] the hardware's sin/cos.approx error grows with |x| (an H200 differed from the
// exact sine by 2.4e-7 at most inside, 1.1e-6 at x = 9.7), while the virtual GPU stays exact
// there: a kernel that passes here with tight tolerances on wider arguments can fail on a GPU.
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tests/virtual_gpu/ptx/float_format.h"
#include "tests/virtual_gpu/ptx/instr_builder.h"
#include "tests/virtual_gpu/ptx/isa_util.h"

namespace ember::vgpu::ptx {
namespace {

float Flush(float v) { return FlushF32(v); }
double Flush(double v) { return v; }  // .ftz applies to f32 only
float Canonical(float v) { return CanonicalF32(v); }
double Canonical(double v) { return CanonicalF64(v); }
template <class T>
T Saturate(T v) {
  if (std::isnan(v)) return 0;
  return v < 0 ? T(0) : v > 1 ? T(1) : v;
}

// ---- f32 / f64 operations. Rn: round to nearest; Rnd: any PTX rounding mode.
struct FAdd {
  template <class T> static T Rn(T a, T b) { return a + b; }
  static float Rnd(float a, float b, Rounding r) { return AddF32(a, b, r); }
  static double Rnd(double a, double b, Rounding r) { return AddF64(a, b, r); }
};
struct FSub {
  template <class T> static T Rn(T a, T b) { return a - b; }
  static float Rnd(float a, float b, Rounding r) { return AddF32(a, -b, r); }
  static double Rnd(double a, double b, Rounding r) { return AddF64(a, -b, r); }
};
struct FMul {
  template <class T> static T Rn(T a, T b) { return a * b; }
  static float Rnd(float a, float b, Rounding r) { return MulF32(a, b, r); }
  static double Rnd(double a, double b, Rounding r) { return MulF64(a, b, r); }
};
struct FDiv {
  template <class T> static T Rn(T a, T b) { return a / b; }
  static float Rnd(float a, float b, Rounding r) { return DivF32(a, b, r); }
  static double Rnd(double a, double b, Rounding r) { return DivF64(a, b, r); }
};
struct FFma {
  template <class T> static T Rn(T a, T b, T c) { return std::fma(a, b, c); }
  static float Rnd(float a, float b, float c, Rounding r) { return FmaF32(a, b, c, r); }
  static double Rnd(double a, double b, double c, Rounding r) { return FmaF64(a, b, c, r); }
};
template <bool kMax, bool kNan>
struct FMinMax {
  template <class T> static T Rn(T a, T b) {
    const bool an = std::isnan(a), bn = std::isnan(b);
    if (an || bn) {
      if (kNan || (an && bn)) return std::numeric_limits<T>::quiet_NaN();
      return an ? b : a;
    }
    if (a == b) {  // -0.0 orders below +0.0
      return kMax ? (std::signbit(a) ? b : a) : (std::signbit(a) ? a : b);
    }
    return kMax ? (a > b ? a : b) : (a < b ? a : b);
  }
  template <class T> static T Rnd(T a, T b, Rounding) { return Rn(a, b); }
};

template <class T, class Op>
bool FloatBinary(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  const bool simple = instr.rounding == Rounding::kNearest && !instr.ftz && !instr.sat;
  if (simple) {
    ForEachLane(mask, [&](int l) { d[l] = Bits<T>(Canonical(Op::Rn(As<T>(a[l]), As<T>(b[l])))); });
    return true;
  }
  ForEachLane(mask, [&](int l) {
    T x = As<T>(a[l]), y = As<T>(b[l]);
    if (instr.ftz) {
      x = Flush(x);
      y = Flush(y);
    }
    T r = instr.rounding == Rounding::kNearest ? Op::Rn(x, y) : Op::Rnd(x, y, instr.rounding);
    if (instr.ftz) r = Flush(r);
    if (instr.sat) r = Saturate(r);
    d[l] = Bits<T>(Canonical(r));
  });
  return true;
}

template <class T>
bool FloatFma(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  const uint64_t* c = w.Slot(instr.ops[3]);
  ForEachLane(mask, [&](int l) {
    T x = As<T>(a[l]), y = As<T>(b[l]), z = As<T>(c[l]);
    if (instr.ftz) {
      x = Flush(x);
      y = Flush(y);
      z = Flush(z);
    }
    T r = instr.rounding == Rounding::kNearest ? FFma::Rn(x, y, z)
                                               : FFma::Rnd(x, y, z, instr.rounding);
    if (instr.ftz) r = Flush(r);
    if (instr.sat) r = Saturate(r);
    d[l] = Bits<T>(Canonical(r));
  });
  return true;
}

// Unary math: aux selects the function.
enum MathFn : uint32_t {
  kAbs, kNeg, kRcp, kSqrt, kRsqrt, kSin, kCos, kLg2, kEx2, kTanh,
};

template <class T>
T MathValue(uint32_t fn, T x, Rounding rounding, bool approx) {
  switch (fn) {
    case kRcp:
      if (approx) return T(1) / x;
      if constexpr (std::is_same_v<T, float>) return DivF32(1.0f, x, rounding);
      else return DivF64(1.0, x, rounding);
    case kSqrt:
      if (approx) return std::sqrt(x);
      if constexpr (std::is_same_v<T, float>) return SqrtF32(x, rounding);
      else return SqrtF64(x, rounding);
    case kRsqrt:
      return static_cast<T>(1.0 / std::sqrt(static_cast<double>(x)));
    case kSin:
      return static_cast<T>(std::sin(static_cast<double>(x)));
    case kCos:
      return static_cast<T>(std::cos(static_cast<double>(x)));
    case kLg2:
      return static_cast<T>(std::log2(static_cast<double>(x)));
    case kEx2:
      return static_cast<T>(std::exp2(static_cast<double>(x)));
    case kTanh:
      return static_cast<T>(std::tanh(static_cast<double>(x)));
    default:
      return x;
  }
}

template <class T>
bool FloatMath(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint32_t fn = instr.aux;
  ForEachLane(mask, [&](int l) {
    if (fn == kAbs || fn == kNeg) {
      T x = As<T>(a[l]);
      if (instr.ftz) x = Flush(x);
      const uint64_t sign = uint64_t{1} << (8 * sizeof(T) - 1);
      uint64_t bits = Bits<T>(x);
      bits = fn == kAbs ? bits & ~sign : bits ^ sign;
      d[l] = bits;
      return;
    }
    T x = As<T>(a[l]);
    if (instr.ftz) x = Flush(x);
    T r = MathValue<T>(fn, x, instr.rounding, instr.flag);
    if (instr.ftz) r = Flush(r);
    d[l] = Bits<T>(Canonical(r));
  });
  return true;
}

template <class T>
bool CopySign(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  ForEachLane(mask, [&](int l) { d[l] = Bits<T>(std::copysign(As<T>(b[l]), As<T>(a[l]))); });
  return true;
}

template <class T>
bool TestP(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  ForEachLane(mask, [&](int l) {
    const int c = std::fpclassify(As<T>(a[l]));
    bool r = false;
    switch (instr.aux) {
      case 0: r = c != FP_INFINITE && c != FP_NAN; break;  // finite
      case 1: r = c == FP_INFINITE; break;
      case 2: r = c != FP_NAN; break;                      // number
      case 3: r = c == FP_NAN; break;                      // notanumber
      case 4: r = c == FP_NORMAL; break;
      default: r = c == FP_SUBNORMAL; break;
    }
    d[l] = r ? 1 : 0;
  });
  return true;
}

// ---- f16 / bf16 (scalar and packed). Values are decoded exactly, computed in long double and
// rounded once to the format.
struct F16Kind {
  static constexpr Format kFormat = kF16Format;
  static float Decode(uint16_t bits) { return F16ToF32(bits); }
  static bool IsNan(uint16_t bits) { return IsNanF16(bits); }
  static uint16_t Flush(uint16_t bits) { return FlushF16(bits); }
  static constexpr uint16_t kNan = kCanonicalNanF16;
  static constexpr uint16_t kOne = 0x3c00;
};
struct BF16Kind {
  static constexpr Format kFormat = kBF16Format;
  static float Decode(uint16_t bits) { return BF16ToF32(bits); }
  static bool IsNan(uint16_t bits) { return IsNanBF16(bits); }
  static uint16_t Flush(uint16_t bits) { return (bits & 0x7f80) == 0 ? static_cast<uint16_t>(bits & 0x8000) : bits; }
  static constexpr uint16_t kNan = kCanonicalNanBF16;
  static constexpr uint16_t kOne = 0x3f80;
};

enum HalfOp : uint32_t { kHAdd, kHSub, kHMul, kHFma, kHMin, kHMax, kHAbs, kHNeg, kHEx2, kHTanh };

template <class K>
uint16_t HalfCompute(const Instr& instr, uint16_t a, uint16_t b, uint16_t c) {
  const uint32_t op = instr.aux;
  if (instr.ftz) {
    a = K::Flush(a);
    b = K::Flush(b);
    c = K::Flush(c);
  }
  if (op == kHAbs) return static_cast<uint16_t>(a & 0x7fff);
  if (op == kHNeg) return static_cast<uint16_t>(a ^ 0x8000);
  if (op == kHMin || op == kHMax) {
    const bool nan_mode = instr.flag;
    const bool an = K::IsNan(a), bn = K::IsNan(b);
    if (an || bn) {
      if (nan_mode || (an && bn)) return K::kNan;
      return an ? b : a;
    }
    const float x = K::Decode(a), y = K::Decode(b);
    const bool is_max = op == kHMax;
    uint16_t r;
    if (x == y) {
      const bool a_neg = (a & 0x8000) != 0;
      r = is_max ? (a_neg ? b : a) : (a_neg ? a : b);
    } else {
      r = (is_max ? x > y : x < y) ? a : b;
    }
    if (instr.sat) r = static_cast<uint16_t>(r & 0x8000 ? 0 : r);  // .relu
    return r;
  }
  const long double x = K::Decode(a), y = K::Decode(b), z = K::Decode(c);
  long double r = 0;
  switch (op) {
    case kHAdd: r = x + y; break;
    case kHSub: r = x - y; break;
    case kHMul: r = x * y; break;
    case kHFma: r = x * y + z; break;
    case kHEx2: r = std::exp2(static_cast<double>(x)); break;
    case kHTanh: r = std::tanh(static_cast<double>(x)); break;
    default: break;
  }
  if (std::isnan(r)) return K::kNan;
  uint16_t bits = static_cast<uint16_t>(RoundToFormat(r, K::kFormat, Rounding::kNearest));
  if (instr.ftz) bits = K::Flush(bits);
  if (instr.sat) {  // .sat clamps to [0, 1]; .relu (flag2 in width) clamps below at 0
    const float v = K::Decode(bits);
    if (instr.width == 1) {
      if (v < 0 || (bits & 0x8000)) bits = 0;
    } else {
      if (v < 0 || (bits & 0x8000)) bits = 0;
      if (v > 1) bits = K::kOne;
    }
  }
  return bits;
}

template <class K, bool kPacked>
bool HalfArith(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = instr.num_ops > 2 ? w.Slot(instr.ops[2]) : a;
  const uint64_t* c = instr.num_ops > 3 ? w.Slot(instr.ops[3]) : a;
  ForEachLane(mask, [&](int l) {
    if constexpr (kPacked) {
      uint32_t r = 0;
      for (int h = 0; h < 2; ++h) {
        const uint16_t x = static_cast<uint16_t>(a[l] >> (16 * h));
        const uint16_t y = static_cast<uint16_t>(b[l] >> (16 * h));
        const uint16_t z = static_cast<uint16_t>(c[l] >> (16 * h));
        r |= uint32_t{HalfCompute<K>(instr, x, y, z)} << (16 * h);
      }
      d[l] = r;
    } else {
      d[l] = HalfCompute<K>(instr, static_cast<uint16_t>(a[l]), static_cast<uint16_t>(b[l]),
                            static_cast<uint16_t>(c[l]));
    }
  });
  return true;
}

ExecFn HalfHandler(Type t) {
  switch (t) {
    case Type::kF16: return &HalfArith<F16Kind, false>;
    case Type::kF16x2: return &HalfArith<F16Kind, true>;
    case Type::kBF16: return &HalfArith<BF16Kind, false>;
    case Type::kBF16x2: return &HalfArith<BF16Kind, true>;
    default: return nullptr;
  }
}
bool IsHalf(Type t) {
  return t == Type::kF16 || t == Type::kF16x2 || t == Type::kBF16 || t == Type::kBF16x2;
}

absl::Status FloatOperands(InstrBuilder& b, Type t, int sources) {
  Instr& out = b.out();
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(sources + 1));
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, t));
  for (int i = 1; i <= sources; ++i) {
    EMBER_ASSIGN_OR_RETURN(out.ops[i], b.Source(i, t));
  }
  out.num_ops = static_cast<uint8_t>(sources + 1);
  out.type = t;
  return absl::OkStatus();
}

absl::Status CompileHalf(InstrBuilder& b, Type t) {
  Instr& out = b.out();
  const std::string& op = b.opcode();
  std::optional<Rounding> rounding = b.TakeRounding();
  if (rounding && *rounding != Rounding::kNearest) {
    return b.Error("half-precision arithmetic supports .rn only");
  }
  out.ftz = b.Take("ftz");
  const bool bf = t == Type::kBF16 || t == Type::kBF16x2;
  if (bf && out.ftz) return b.Error(".ftz is not available for bf16");
  if (bf && (op == "add" || op == "sub" || op == "mul") && b.target_sm() != 0 && b.target_sm() < 90) {
    return b.Error(absl::StrCat(op, ".bf16 requires sm_90 or later; the module targets sm_",
                                b.target_sm()));
  }
  int sources = 2;
  if (op == "add") out.aux = kHAdd;
  else if (op == "sub") out.aux = kHSub;
  else if (op == "mul") out.aux = kHMul;
  else if (op == "fma") { out.aux = kHFma; sources = 3; }
  else if (op == "min" || op == "max") {
    out.aux = op == "min" ? kHMin : kHMax;
    out.flag = b.Take("NaN");
    if (b.Take("xorsign")) return b.Error(".xorsign.abs is not implemented");
  } else if (op == "abs") { out.aux = kHAbs; sources = 1; }
  else if (op == "neg") { out.aux = kHNeg; sources = 1; }
  else return b.Error(absl::StrCat(op, " has no .", TypeName(t), " form"));
  if (op == "add" || op == "sub" || op == "mul" || op == "fma") {
    if (b.Take("sat")) out.sat = true;
    if (b.Take("relu")) {
      if (op != "fma") return b.Error(".relu exists for fma only");
      out.sat = true;
      out.width = 1;
    }
  }
  EMBER_RETURN_IF_ERROR(FloatOperands(b, t, sources));
  out.exec = HalfHandler(t);
  return absl::OkStatus();
}

absl::Status CompileHalfMath(InstrBuilder& b, Type t, uint32_t fn) {
  Instr& out = b.out();
  if (!b.Take("approx")) return b.Error("needs .approx");
  out.ftz = b.Take("ftz");
  const bool bf = t == Type::kBF16 || t == Type::kBF16x2;
  if (bf) out.ftz = false;  // ex2.approx.ftz.bf16: flushing is implied
  out.aux = fn == kEx2 ? kHEx2 : kHTanh;
  EMBER_RETURN_IF_ERROR(FloatOperands(b, t, 1));
  out.exec = HalfHandler(t);
  return absl::OkStatus();
}

absl::Status CompileFloatMath(InstrBuilder& b) {
  Instr& out = b.out();
  const std::string& op = b.opcode();
  std::vector<Type> types = b.TakeTypes();
  if (types.size() != 1) return b.Error("expected one type");
  const Type t = types[0];
  uint32_t fn = 0;
  if (op == "rcp") fn = kRcp;
  else if (op == "sqrt") fn = kSqrt;
  else if (op == "rsqrt") fn = kRsqrt;
  else if (op == "sin") fn = kSin;
  else if (op == "cos") fn = kCos;
  else if (op == "lg2") fn = kLg2;
  else if (op == "ex2") fn = kEx2;
  else if (op == "tanh") fn = kTanh;
  if (IsHalf(t)) {
    if (fn != kEx2 && fn != kTanh) return b.Error(absl::StrCat(op, " has no half-precision form"));
    return CompileHalfMath(b, t, fn);
  }
  if (t != Type::kF32 && t != Type::kF64) return b.Error(absl::StrCat(op, " needs .f32 or .f64"));
  out.aux = fn;
  out.flag = b.Take("approx");
  if (b.Take("full")) out.flag = true;
  if (std::optional<Rounding> r = b.TakeRounding()) {
    if (out.flag) return b.Error("a rounding modifier with .approx");
    out.rounding = *r;
  } else if (!out.flag) {
    if (fn == kRcp || fn == kSqrt) return b.Error(absl::StrCat(op, " needs .approx or a rounding modifier"));
  }
  if ((fn == kSin || fn == kCos || fn == kLg2 || fn == kEx2 || fn == kTanh || fn == kRsqrt) && !out.flag) {
    return b.Error(absl::StrCat(op, " exists only as .approx"));
  }
  out.ftz = b.Take("ftz");
  if (t == Type::kF64 && out.ftz && !(fn == kRcp || fn == kRsqrt)) {
    return b.Error(".ftz is not available for f64");
  }
  EMBER_RETURN_IF_ERROR(FloatOperands(b, t, 1));
  out.exec = t == Type::kF32 ? &FloatMath<float> : &FloatMath<double>;
  return absl::OkStatus();
}

absl::Status CompileCopySign(InstrBuilder& b) {
  std::vector<Type> types = b.TakeTypes();
  if (types.size() != 1 || (types[0] != Type::kF32 && types[0] != Type::kF64)) {
    return b.Error("copysign needs .f32 or .f64");
  }
  EMBER_RETURN_IF_ERROR(FloatOperands(b, types[0], 2));
  b.out().exec = types[0] == Type::kF32 ? &CopySign<float> : &CopySign<double>;
  return absl::OkStatus();
}

absl::Status CompileTestP(InstrBuilder& b) {
  Instr& out = b.out();
  const std::optional<std::string> test = b.TakeOneOf(
      {"finite", "infinite", "number", "notanumber", "normal", "subnormal"});
  if (!test) return b.Error("testp needs a test (.finite, .infinite, ...)");
  static constexpr const char* kTests[] = {"finite", "infinite", "number", "notanumber",
                                                "normal", "subnormal"};
  for (uint32_t i = 0; i < 6; ++i) {
    if (*test == kTests[i]) out.aux = i;
  }
  std::vector<Type> types = b.TakeTypes();
  if (types.size() != 1 || (types[0] != Type::kF32 && types[0] != Type::kF64)) {
    return b.Error("testp needs .f32 or .f64");
  }
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(2));
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, Type::kPred));
  EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, types[0]));
  out.num_ops = 2;
  out.exec = types[0] == Type::kF32 ? &TestP<float> : &TestP<double>;
  return absl::OkStatus();
}

absl::Status CompileFma(InstrBuilder& b) {
  std::vector<Type> types = b.TakeTypes();
  if (types.size() != 1) return b.Error("expected one type");
  return CompileFloatArithmetic(b, types[0]);
}

}  // namespace

absl::Status CompileFloatArithmetic(InstrBuilder& b, Type t) {
  Instr& out = b.out();
  const std::string& op = b.opcode();
  if (IsHalf(t)) return CompileHalf(b, t);
  if (t != Type::kF32 && t != Type::kF64) {
    return b.Error(absl::StrCat(op, " does not support .", TypeName(t)));
  }
  const bool f32 = t == Type::kF32;
  std::optional<Rounding> rounding = b.TakeRounding();
  if (rounding) out.rounding = *rounding;
  out.ftz = b.Take("ftz");
  out.sat = b.Take("sat");
  if (!f32 && (out.ftz || out.sat)) return b.Error(".ftz/.sat are f32 only");
  if (op == "add" || op == "sub" || op == "mul") {
    EMBER_RETURN_IF_ERROR(FloatOperands(b, t, 2));
    if (op == "add") out.exec = f32 ? &FloatBinary<float, FAdd> : &FloatBinary<double, FAdd>;
    if (op == "sub") out.exec = f32 ? &FloatBinary<float, FSub> : &FloatBinary<double, FSub>;
    if (op == "mul") out.exec = f32 ? &FloatBinary<float, FMul> : &FloatBinary<double, FMul>;
    return absl::OkStatus();
  }
  if (op == "fma" || op == "mad") {
    if (op == "fma" && !rounding) return b.Error("fma needs a rounding modifier");
    EMBER_RETURN_IF_ERROR(FloatOperands(b, t, 3));
    out.exec = f32 ? &FloatFma<float> : &FloatFma<double>;
    return absl::OkStatus();
  }
  if (op == "div") {
    const bool approx = b.Take("approx");
    const bool full = b.Take("full");
    if (!approx && !full && !rounding) return b.Error("div needs .approx, .full or a rounding mode");
    if ((approx || full) && !f32) return b.Error(".approx/.full division is f32 only");
    EMBER_RETURN_IF_ERROR(FloatOperands(b, t, 2));
    out.exec = f32 ? &FloatBinary<float, FDiv> : &FloatBinary<double, FDiv>;
    return absl::OkStatus();
  }
  if (op == "min" || op == "max") {
    const bool nan = b.Take("NaN");
    if (b.Take("xorsign")) return b.Error(".xorsign.abs is not implemented");
    EMBER_RETURN_IF_ERROR(FloatOperands(b, t, 2));
    if (op == "min") {
      out.exec = f32 ? (nan ? &FloatBinary<float, FMinMax<false, true>> : &FloatBinary<float, FMinMax<false, false>>)
                     : (nan ? &FloatBinary<double, FMinMax<false, true>> : &FloatBinary<double, FMinMax<false, false>>);
    } else {
      out.exec = f32 ? (nan ? &FloatBinary<float, FMinMax<true, true>> : &FloatBinary<float, FMinMax<true, false>>)
                     : (nan ? &FloatBinary<double, FMinMax<true, true>> : &FloatBinary<double, FMinMax<true, false>>);
    }
    return absl::OkStatus();
  }
  if (op == "abs" || op == "neg") {
    EMBER_RETURN_IF_ERROR(FloatOperands(b, t, 1));
    out.aux = op == "abs" ? kAbs : kNeg;
    out.exec = f32 ? &FloatMath<float> : &FloatMath<double>;
    return absl::OkStatus();
  }
  return b.Error(absl::StrCat(op, " has no floating-point form"));
}

void RegisterFloatInstructions(InstructionTable& table) {
  table.Add("fma", &CompileFma);
  for (const char* op : {"rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh"}) {
    table.Add(op, &CompileFloatMath);
  }
  table.Add("copysign", &CompileCopySign);
  table.Add("testp", &CompileTestP);
}

}  // namespace ember::vgpu::ptx
