// cvt (PTX ISA "cvt"): integer <-> integer (truncation, sign/zero extension, .sat), float ->
// integer (.rni/.rzi/.rmi/.rpi, clamped to the destination range, NaN -> 0), integer -> float and
// float -> float (.rn/.rz/.rm/.rp; .rni... to an integral value), .ftz, .sat, .relu, the packed
// f16x2/bf16x2 forms from two f32 values, and .rna.tf32.
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tests/virtual_gpu/ptx/float_format.h"
#include "tests/virtual_gpu/ptx/instr_builder.h"
#include "tests/virtual_gpu/ptx/isa_util.h"

namespace ember::vgpu::ptx {
namespace {

// Integer -> integer: sign- or zero-extend the source, truncate (or with .sat clamp) to the
// destination.
template <class S, class D, bool kSat>
bool IntToInt(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  ForEachLane(mask, [&](int l) {
    const S v = As<S>(a[l]);
    if constexpr (kSat) {
      using L = std::numeric_limits<D>;
      if constexpr (std::is_signed_v<S>) {
        const int64_t x = v;
        const int64_t lo = std::is_signed_v<D> ? static_cast<int64_t>(L::min()) : 0;
        if (x < lo) { d[l] = Bits<D>(static_cast<D>(lo)); return; }
        if (x > 0 && static_cast<uint64_t>(x) > static_cast<uint64_t>(L::max())) { d[l] = Bits<D>(L::max()); return; }
      } else {
        const uint64_t x = v;
        if (x > static_cast<uint64_t>(L::max())) { d[l] = Bits<D>(L::max()); return; }
      }
    }
    d[l] = Bits<D>(static_cast<D>(v));
    if constexpr (std::is_signed_v<D>) {
      // A destination register wider than the type receives the sign-extended value.
      if (instr.aux2 > sizeof(D)) {
        const uint64_t wide = static_cast<uint64_t>(static_cast<int64_t>(static_cast<D>(v)));
        d[l] = instr.aux2 >= 8 ? wide : wide & ((uint64_t{1} << (8 * instr.aux2)) - 1);
      }
    }
  });
  return true;
}

// Decodes any numeric source exactly.
long double Decode(Type t, uint64_t bits, bool ftz) {
  switch (t) {
    case Type::kF16: {
      uint16_t h = static_cast<uint16_t>(bits);
      if (ftz) h = FlushF16(h);
      return F16ToF32(h);
    }
    case Type::kBF16: return BF16ToF32(static_cast<uint16_t>(bits));
    case Type::kF32: case Type::kTF32: {
      float f = As<float>(bits);
      return ftz ? FlushF32(f) : f;
    }
    case Type::kF64: return As<double>(bits);
    case Type::kS8: return static_cast<int8_t>(bits);
    case Type::kS16: return static_cast<int16_t>(bits);
    case Type::kS32: return static_cast<int32_t>(bits);
    case Type::kS64: return static_cast<int64_t>(bits);
    case Type::kU8: case Type::kB8: return static_cast<uint8_t>(bits);
    case Type::kU16: case Type::kB16: return static_cast<uint16_t>(bits);
    case Type::kU32: case Type::kB32: return static_cast<uint32_t>(bits);
    default: return static_cast<long double>(bits);
  }
}

Format FormatOf(Type t) {
  switch (t) {
    case Type::kF16: return kF16Format;
    case Type::kBF16: return kBF16Format;
    case Type::kTF32: return kTF32Format;
    case Type::kF64: return kF64Format;
    default: return kF32Format;
  }
}

// Encodes an exact value into a float type. sat: clamp to [0, 1]; relu: clamp below at 0.
uint64_t EncodeFloat(Type t, long double v, Rounding r, bool ftz, bool sat, bool relu) {
  if (std::isnan(v)) {
    if (sat) v = 0;
    else return RoundToFormat(v, FormatOf(t), r);
  }
  if (sat) v = v < 0 ? 0 : v > 1 ? 1 : v;
  if (relu && (v < 0 || std::signbit(v))) v = 0;
  uint64_t bits = RoundToFormat(v, FormatOf(t), r);
  if (ftz && t == Type::kF32) bits = Bits<float>(FlushF32(As<float>(bits)));
  return bits;
}

uint64_t EncodeInt(Type t, long double v, Rounding r) {
  if (std::isnan(v)) return 0;
  long double i;
  switch (r) {
    case Rounding::kZero: i = std::trunc(v); break;
    case Rounding::kDown: i = std::floor(v); break;
    case Rounding::kUp: i = std::ceil(v); break;
    default: i = std::nearbyint(v); break;
  }
  auto clamp = [&](long double lo, long double hi) { return i < lo ? lo : i > hi ? hi : i; };
  switch (t) {
    case Type::kS8: return Bits<int8_t>(static_cast<int8_t>(clamp(-128, 127)));
    case Type::kS16: return Bits<int16_t>(static_cast<int16_t>(clamp(-32768, 32767)));
    case Type::kS32: return Bits<int32_t>(static_cast<int32_t>(clamp(-2147483648.0L, 2147483647.0L)));
    case Type::kS64: {
      if (i >= 9223372036854775808.0L) return Bits<int64_t>(std::numeric_limits<int64_t>::max());
      if (i < -9223372036854775808.0L) return Bits<int64_t>(std::numeric_limits<int64_t>::min());
      return Bits<int64_t>(static_cast<int64_t>(i));
    }
    case Type::kU8: return static_cast<uint8_t>(clamp(0, 255));
    case Type::kU16: return static_cast<uint16_t>(clamp(0, 65535));
    case Type::kU32: return static_cast<uint32_t>(clamp(0, 4294967295.0L));
    default: {
      if (i >= 18446744073709551616.0L) return ~0ull;
      if (i < 0) return 0;
      return static_cast<uint64_t>(i);
    }
  }
}

// Any conversion involving a float type. type = destination, type2 = source, rounding: the
// float (or integral, flag) rounding mode.
bool Convert(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const Type dt = instr.type, st = instr.type2;
  const bool dst_float = IsFloat(dt);
  ForEachLane(mask, [&](int l) {
    long double v = Decode(st, a[l], instr.ftz);
    if (instr.flag && IsFloat(st) && !std::isnan(v)) {  // round to an integral value first
      switch (instr.rounding) {
        case Rounding::kZero: v = std::trunc(v); break;
        case Rounding::kDown: v = std::floor(v); break;
        case Rounding::kUp: v = std::ceil(v); break;
        default: v = std::nearbyint(v); break;
      }
    }
    if (dst_float) {
      const Rounding r = instr.flag ? Rounding::kNearest : instr.rounding;
      d[l] = EncodeFloat(dt, v, r, instr.ftz, instr.sat, instr.width == 1);
    } else {
      d[l] = EncodeInt(dt, v, instr.rounding);
    }
  });
  return true;
}

// cvt.rn{.relu}.{f16x2,bf16x2}.f32 d, a, b: a -> upper half, b -> lower half.
bool PackConvert(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  const Type half = instr.type == Type::kF16x2 ? Type::kF16 : Type::kBF16;
  ForEachLane(mask, [&](int l) {
    const uint64_t hi = EncodeFloat(half, As<float>(a[l]), instr.rounding, false, false, instr.width == 1);
    const uint64_t lo = EncodeFloat(half, As<float>(b[l]), instr.rounding, false, false, instr.width == 1);
    d[l] = (hi << 16) | (lo & 0xffff);
  });
  return true;
}

template <class S>
ExecFn IntTo(Type dt, bool sat) {
  switch (dt) {
#define EMBER_CASE(T, C) case Type::T: return sat ? &IntToInt<S, C, true> : &IntToInt<S, C, false>;
    EMBER_PTX_INT_TYPES(EMBER_CASE)
#undef EMBER_CASE
    default: return nullptr;
  }
}

ExecFn IntToIntFor(Type st, Type dt, bool sat) {
  switch (st) {
#define EMBER_CASE(T, C) case Type::T: return IntTo<C>(dt, sat);
    EMBER_PTX_INT_TYPES(EMBER_CASE)
#undef EMBER_CASE
    default: return nullptr;
  }
}

// Register type a cvt operand of type t lives in (halves in .b16/.b32 registers).
Type OperandType(Type t) {
  if (t == Type::kF16 || t == Type::kBF16) return Type::kB16;
  if (t == Type::kF16x2 || t == Type::kBF16x2 || t == Type::kTF32) return Type::kB32;
  return t;
}

absl::Status CompileCvt(InstrBuilder& b) {
  Instr& out = b.out();
  std::optional<Rounding> integral = b.TakeRounding(/*integral=*/true);
  std::optional<Rounding> rounding = b.TakeRounding();
  out.ftz = b.Take("ftz");
  out.sat = b.Take("sat");
  if (b.Take("relu")) out.width = 1;
  if (b.Take("satfinite")) return b.Error(".satfinite conversions are not implemented");
  std::vector<Type> types = b.TakeTypes();
  if (types.size() != 2) return b.Error("cvt needs .dtype.atype");
  const Type dt = types[0], st = types[1];
  out.type = dt;
  out.type2 = st;
  if (integral && rounding) return b.Error("two rounding modifiers");
  if (dt == Type::kF16x2 || dt == Type::kBF16x2) {
    if (st != Type::kF32) return b.Error("packed conversions take two .f32 sources");
    if (!rounding || *rounding != Rounding::kNearest) return b.Error("packed conversions need .rn");
    out.rounding = *rounding;
    EMBER_RETURN_IF_ERROR(b.ExpectOperands(3));
    EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, Type::kB32));
    EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, Type::kF32));
    EMBER_ASSIGN_OR_RETURN(out.ops[2], b.Source(2, Type::kF32));
    out.num_ops = 3;
    out.exec = &PackConvert;
    return absl::OkStatus();
  }
  if (dt == Type::kPred || st == Type::kPred || KindOf(dt) == TypeKind::kNone) {
    return b.Error("cvt does not convert predicates");
  }
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(2));
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, OperandType(dt), /*allow_wider=*/true));
  EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, OperandType(st), /*allow_wider=*/true));
  out.num_ops = 2;
  out.aux2 = static_cast<uint32_t>(b.RegisterBytes(b.operand(0)));
  const bool df = IsFloat(dt), sf = IsFloat(st);
  if (!df && !sf) {
    if (integral || rounding) return b.Error("integer conversions take no rounding modifier");
    out.exec = IntToIntFor(st, dt, out.sat);
    if (out.exec == nullptr) return b.Error("unsupported integer conversion");
    return absl::OkStatus();
  }
  if (dt == Type::kTF32 && (!rounding || (*rounding != Rounding::kNearestAway &&
                                          *rounding != Rounding::kZero && *rounding != Rounding::kNearest))) {
    return b.Error("cvt to tf32 needs .rna (or .rn/.rz)");
  }
  if (rounding && *rounding == Rounding::kNearestAway && dt != Type::kTF32) {
    return b.Error(".rna exists for tf32 only");
  }
  if (!df) {  // float -> int
    if (!integral) return b.Error("float-to-integer cvt needs .rni, .rzi, .rmi or .rpi");
    out.rounding = *integral;
  } else if (!sf) {  // int -> float
    if (!rounding) return b.Error("integer-to-float cvt needs .rn, .rz, .rm or .rp");
    out.rounding = *rounding;
  } else {  // float -> float
    const bool narrowing = TypeSize(dt) < TypeSize(st) || (dt == Type::kBF16 && st == Type::kF16) ||
                           (dt == Type::kF16 && st == Type::kBF16) || dt == Type::kTF32;
    if (integral) {
      if (dt != st) return b.Error(".rni/.rzi/.rmi/.rpi need the same source and destination type");
      out.flag = true;
      out.rounding = *integral;
    } else if (rounding) {
      out.rounding = *rounding;
    } else if (narrowing) {
      return b.Error("a narrowing float conversion needs .rn, .rz, .rm or .rp");
    }
  }
  out.exec = &Convert;
  return absl::OkStatus();
}

}  // namespace

void RegisterConvertInstructions(InstructionTable& table) { table.Add("cvt", &CompileCvt); }

}  // namespace ember::vgpu::ptx
