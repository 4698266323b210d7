// Integer arithmetic (PTX ISA "Integer Arithmetic Instructions" and "Extended-Precision Integer
// Arithmetic Instructions"): add, sub, mul, mad, mul24, mad24, sad, div, rem, abs, neg, min, max,
// popc, clz, bfind, brev, bfe, bfi, dp4a, dp2a and the carry chain (.cc, addc, subc, madc).
// Opcodes shared with floating point dispatch to CompileFloatArithmetic for float types.
#include <algorithm>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tests/virtual_gpu/ptx/instr_builder.h"
#include "tests/virtual_gpu/ptx/isa_util.h"

namespace ember::vgpu::ptx {
namespace {

template <class T>
using U = std::make_unsigned_t<T>;

template <class T>
T WrapAdd(T a, T b) { return static_cast<T>(static_cast<uint64_t>(static_cast<U<T>>(a)) + static_cast<U<T>>(b)); }
template <class T>
T WrapSub(T a, T b) { return static_cast<T>(static_cast<uint64_t>(static_cast<U<T>>(a)) - static_cast<U<T>>(b)); }
template <class T>
T WrapMul(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(static_cast<U<T>>(a)) * static_cast<uint64_t>(static_cast<U<T>>(b)));
}
template <class T>
T MulHigh(T a, T b) {
  if constexpr (sizeof(T) == 8) {
    using W = std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>;
    return static_cast<T>((static_cast<W>(a) * static_cast<W>(b)) >> 64);
  } else {
    using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    return static_cast<T>((static_cast<W>(a) * static_cast<W>(b)) >> (8 * sizeof(T)));
  }
}
int32_t Saturate32(int64_t v) {
  return static_cast<int32_t>(std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max()));
}

template <class T> struct AddOp { static T Do(T a, T b) { return WrapAdd(a, b); } };
template <class T> struct SubOp { static T Do(T a, T b) { return WrapSub(a, b); } };
struct AddSatOp { static int32_t Do(int32_t a, int32_t b) { return Saturate32(int64_t{a} + b); } };
struct SubSatOp { static int32_t Do(int32_t a, int32_t b) { return Saturate32(int64_t{a} - b); } };
template <class T> struct MulLoOp { static T Do(T a, T b) { return WrapMul(a, b); } };
template <class T> struct MulHiOp { static T Do(T a, T b) { return MulHigh(a, b); } };
template <class T> struct MadLoOp { static T Do(T a, T b, T c) { return WrapAdd(WrapMul(a, b), c); } };
template <class T> struct MadHiOp { static T Do(T a, T b, T c) { return WrapAdd(MulHigh(a, b), c); } };
struct MadHiSatOp {
  static int32_t Do(int32_t a, int32_t b, int32_t c) {
    return Saturate32(static_cast<int64_t>(MulHigh(a, b)) + c);
  }
};
template <class T> struct DivOp {
  static T Do(T a, T b) {
    if (b == 0) return static_cast<T>(~U<T>{0});  // unspecified in PTX; all ones like hardware
    if constexpr (std::is_signed_v<T>) {
      if (a == std::numeric_limits<T>::min() && b == -1) return a;
    }
    return static_cast<T>(a / b);
  }
};
template <class T> struct RemOp {
  static T Do(T a, T b) {
    if (b == 0) return a;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;
    }
    return static_cast<T>(a % b);
  }
};
template <class T> struct AbsOp {
  static T Do(T a) { return a < 0 ? static_cast<T>(0 - static_cast<U<T>>(a)) : a; }
};
template <class T> struct NegOp { static T Do(T a) { return static_cast<T>(0 - static_cast<U<T>>(a)); } };
template <class T> struct MinOp { static T Do(T a, T b) { return std::min(a, b); } };
template <class T> struct MaxOp { static T Do(T a, T b) { return std::max(a, b); } };
template <class T> struct MinReluOp { static T Do(T a, T b) { return std::max<T>(std::min(a, b), 0); } };
template <class T> struct MaxReluOp { static T Do(T a, T b) { return std::max<T>(std::max(a, b), 0); } };
template <class T> struct SadOp {
  static T Do(T a, T b, T c) {
    const U<T> diff = a < b ? static_cast<U<T>>(b) - static_cast<U<T>>(a)
                            : static_cast<U<T>>(a) - static_cast<U<T>>(b);
    return static_cast<T>(static_cast<U<T>>(c) + diff);
  }
};
template <class T> struct PopcOp { static uint32_t Do(T a) { return static_cast<uint32_t>(std::popcount(a)); } };
template <class T> struct ClzOp { static uint32_t Do(T a) { return static_cast<uint32_t>(std::countl_zero(a)); } };
template <class T> struct BrevOp {
  static T Do(T a) {
    T r = 0;
    for (size_t i = 0; i < 8 * sizeof(T); ++i) r |= static_cast<T>(((a >> i) & 1) << (8 * sizeof(T) - 1 - i));
    return r;
  }
};

// mul.wide / mad.wide: the result is twice as wide as the sources.
template <class T> using Wide = std::conditional_t<
    std::is_signed_v<T>, std::conditional_t<sizeof(T) == 2, int32_t, int64_t>,
    std::conditional_t<sizeof(T) == 2, uint32_t, uint64_t>>;
template <class T> struct MulWideOp { static Wide<T> Do(T a, T b) { return static_cast<Wide<T>>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b)); } };
template <class T>
bool MadWide(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  const uint64_t* c = w.Slot(instr.ops[3]);
  using W = Wide<T>;
  ForEachLane(mask, [&](int l) {
    const W product = static_cast<W>(static_cast<W>(As<T>(a[l])) * static_cast<W>(As<T>(b[l])));
    d[l] = Bits<W>(WrapAdd<W>(product, As<W>(c[l])));
  });
  return true;
}

// mul24 / mad24: 24-bit operands (sign-extended for .s32), 48-bit product.
template <class T, bool kHigh>
int64_t Product24(uint64_t a, uint64_t b) {
  int64_t x = static_cast<int64_t>(a & 0xffffff), y = static_cast<int64_t>(b & 0xffffff);
  if constexpr (std::is_signed_v<T>) {
    if (x & 0x800000) x -= 0x1000000;
    if (y & 0x800000) y -= 0x1000000;
  }
  const int64_t p = x * y;
  return kHigh ? (p >> 16) : p;
}
template <class T, bool kHigh>
bool Mul24(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  const uint64_t* c = instr.num_ops > 3 ? w.Slot(instr.ops[3]) : nullptr;
  ForEachLane(mask, [&](int l) {
    uint32_t r = static_cast<uint32_t>(Product24<T, kHigh>(a[l], b[l]));
    if (c) r += static_cast<uint32_t>(c[l]);
    d[l] = r;
  });
  return true;
}

template <class T>
bool Bfind(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  constexpr int kBits = 8 * sizeof(T);
  ForEachLane(mask, [&](int l) {
    U<T> x = static_cast<U<T>>(As<T>(a[l]));
    if (std::is_signed_v<T> && (x >> (kBits - 1))) x = static_cast<U<T>>(~x);
    if (x == 0) {
      d[l] = 0xffffffffu;
      return;
    }
    const uint32_t pos = static_cast<uint32_t>(kBits - 1 - std::countl_zero(x));
    d[l] = instr.flag ? static_cast<uint32_t>(kBits - 1) - pos : pos;
  });
  return true;
}

template <class T>
bool Bfe(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  const uint64_t* c = w.Slot(instr.ops[3]);
  constexpr uint32_t kMsb = 8 * sizeof(T) - 1;
  ForEachLane(mask, [&](int l) {
    const U<T> x = static_cast<U<T>>(As<T>(a[l]));
    const uint32_t pos = static_cast<uint32_t>(b[l]) & 0xff;
    const uint32_t len = static_cast<uint32_t>(c[l]) & 0xff;
    U<T> sbit = 0;
    if (std::is_signed_v<T> && len != 0) sbit = (x >> std::min(pos + len - 1, kMsb)) & 1;
    U<T> r = 0;
    for (uint32_t i = 0; i <= kMsb; ++i) {
      const U<T> bit = (i < len && pos + i <= kMsb) ? (x >> (pos + i)) & 1 : sbit;
      r |= static_cast<U<T>>(bit << i);
    }
    d[l] = r;
  });
  return true;
}

template <class T>
bool Bfi(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* f = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  const uint64_t* c = w.Slot(instr.ops[3]);
  const uint64_t* e = w.Slot(instr.ops[4]);
  constexpr uint32_t kMsb = 8 * sizeof(T) - 1;
  ForEachLane(mask, [&](int l) {
    const uint32_t pos = static_cast<uint32_t>(c[l]) & 0xff;
    const uint32_t len = static_cast<uint32_t>(e[l]) & 0xff;
    T r = As<T>(b[l]);
    const T insert = As<T>(f[l]);
    for (uint32_t i = 0; i < len && pos + i <= kMsb; ++i) {
      const T bit = static_cast<T>(T{1} << (pos + i));
      r = static_cast<T>(((insert >> i) & 1) ? (r | bit) : (r & ~bit));
    }
    d[l] = Bits<T>(r);
  });
  return true;
}

// dp4a.atype.btype / dp2a.{lo,hi}.atype.btype: aux bit 0: a signed, bit 1: b signed.
bool Dp4a(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  const uint64_t* c = w.Slot(instr.ops[3]);
  const bool sa = instr.aux & 1, sb = instr.aux & 2;
  ForEachLane(mask, [&](int l) {
    int64_t sum = sa || sb ? static_cast<int64_t>(static_cast<int32_t>(c[l]))
                           : static_cast<int64_t>(static_cast<uint32_t>(c[l]));
    for (int i = 0; i < 4; ++i) {
      const uint32_t x = (static_cast<uint32_t>(a[l]) >> (8 * i)) & 0xff;
      const uint32_t y = (static_cast<uint32_t>(b[l]) >> (8 * i)) & 0xff;
      sum += (sa ? static_cast<int64_t>(static_cast<int8_t>(x)) : int64_t{x}) *
             (sb ? static_cast<int64_t>(static_cast<int8_t>(y)) : int64_t{y});
    }
    d[l] = static_cast<uint32_t>(sum);
  });
  return true;
}
bool Dp2a(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  const uint64_t* c = w.Slot(instr.ops[3]);
  const bool sa = instr.aux & 1, sb = instr.aux & 2;
  const int half = instr.flag ? 2 : 0;  // .hi uses bytes 2 and 3 of b
  ForEachLane(mask, [&](int l) {
    int64_t sum = sa || sb ? static_cast<int64_t>(static_cast<int32_t>(c[l]))
                           : static_cast<int64_t>(static_cast<uint32_t>(c[l]));
    for (int i = 0; i < 2; ++i) {
      const uint32_t x = (static_cast<uint32_t>(a[l]) >> (16 * i)) & 0xffff;
      const uint32_t y = (static_cast<uint32_t>(b[l]) >> (8 * (i + half))) & 0xff;
      sum += (sa ? static_cast<int64_t>(static_cast<int16_t>(x)) : int64_t{x}) *
             (sb ? static_cast<int64_t>(static_cast<int8_t>(y)) : int64_t{y});
    }
    d[l] = static_cast<uint32_t>(sum);
  });
  return true;
}

// The carry chain: ops[4] is the carry slot. aux: 0 add, 1 sub, 2 mad.lo, 3 mad.hi;
// flag: consume the carry-in (addc/subc/madc); width bit 0: write the carry-out (.cc).
template <class T>
bool Carry(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  const uint64_t* c = instr.aux >= 2 ? w.Slot(instr.ops[3]) : nullptr;
  uint64_t* cc = w.Slot(instr.ops[4]);
  using UT = U<T>;
  using W = unsigned __int128;
  constexpr int kBits = 8 * sizeof(T);
  ForEachLane(mask, [&](int l) {
    const W x = static_cast<UT>(a[l]), y = static_cast<UT>(b[l]);
    const W carry_in = instr.flag ? (cc[l] & 1) : 0;
    W r;
    uint64_t carry_out;
    if (instr.aux == 1) {
      r = x - y - carry_in;
      carry_out = (x < y + carry_in) ? 1 : 0;  // borrow
    } else {
      W term = y;
      if (instr.aux >= 2) {
        W product;
        if constexpr (std::is_signed_v<T>) {
          product = static_cast<W>(static_cast<__int128>(static_cast<T>(a[l])) *
                                   static_cast<__int128>(static_cast<T>(b[l])));
        } else {
          product = x * y;
        }
        if (instr.aux == 3) product >>= kBits;
        product &= (W{1} << kBits) - 1;
        r = product + static_cast<UT>(c[l]) + carry_in;
        (void)term;
      } else {
        r = x + term + carry_in;
      }
      carry_out = static_cast<uint64_t>((r >> kBits) & 1);
    }
    d[l] = static_cast<UT>(r);
    if (instr.width & 1) cc[l] = carry_out;
  });
  return true;
}

template <template <class> class Op>
ExecFn BinaryFor(Type t) {
  switch (t) {
    case Type::kU16: return &Binary<uint16_t, uint16_t, Op<uint16_t>>;
    case Type::kU32: return &Binary<uint32_t, uint32_t, Op<uint32_t>>;
    case Type::kU64: return &Binary<uint64_t, uint64_t, Op<uint64_t>>;
    case Type::kS16: return &Binary<int16_t, int16_t, Op<int16_t>>;
    case Type::kS32: return &Binary<int32_t, int32_t, Op<int32_t>>;
    case Type::kS64: return &Binary<int64_t, int64_t, Op<int64_t>>;
    default: return nullptr;
  }
}
template <template <class> class Op>
ExecFn TernaryFor(Type t) {
  switch (t) {
    case Type::kU16: return &Ternary<uint16_t, uint16_t, Op<uint16_t>>;
    case Type::kU32: return &Ternary<uint32_t, uint32_t, Op<uint32_t>>;
    case Type::kU64: return &Ternary<uint64_t, uint64_t, Op<uint64_t>>;
    case Type::kS16: return &Ternary<int16_t, int16_t, Op<int16_t>>;
    case Type::kS32: return &Ternary<int32_t, int32_t, Op<int32_t>>;
    case Type::kS64: return &Ternary<int64_t, int64_t, Op<int64_t>>;
    default: return nullptr;
  }
}
template <template <class> class Op>
ExecFn UnaryFor(Type t) {
  switch (t) {
    case Type::kS16: return &Unary<int16_t, int16_t, Op<int16_t>>;
    case Type::kS32: return &Unary<int32_t, int32_t, Op<int32_t>>;
    case Type::kS64: return &Unary<int64_t, int64_t, Op<int64_t>>;
    default: return nullptr;
  }
}

bool IsArithmeticInt(Type t) {
  return t == Type::kU16 || t == Type::kU32 || t == Type::kU64 || t == Type::kS16 ||
         t == Type::kS32 || t == Type::kS64;
}

absl::Status Operands(InstrBuilder& b, Type src, Type dst, int sources) {
  Instr& out = b.out();
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(sources + 1));
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, dst));
  for (int i = 1; i <= sources; ++i) {
    EMBER_ASSIGN_OR_RETURN(out.ops[i], b.Source(i, src));
  }
  out.num_ops = static_cast<uint8_t>(sources + 1);
  out.type = src;
  return absl::OkStatus();
}

absl::Status CompileCarry(InstrBuilder& b, Type t, uint32_t kind, bool carry_in, bool carry_out) {
  if (t != Type::kU32 && t != Type::kS32 && t != Type::kU64 && t != Type::kS64) {
    return b.Error("carry arithmetic needs .u32, .s32, .u64 or .s64");
  }
  Instr& out = b.out();
  const int sources = kind >= 2 ? 3 : 2;
  EMBER_RETURN_IF_ERROR(Operands(b, t, t, sources));
  out.ops[4] = b.compiler_carry_slot();
  out.num_ops = 5;
  out.aux = kind;
  out.flag = carry_in;
  out.width = carry_out ? 1 : 0;
  switch (t) {
    case Type::kU32: out.exec = &Carry<uint32_t>; break;
    case Type::kS32: out.exec = &Carry<int32_t>; break;
    case Type::kU64: out.exec = &Carry<uint64_t>; break;
    default: out.exec = &Carry<int64_t>; break;
  }
  return absl::OkStatus();
}

Type OneType(InstrBuilder& b, absl::Status* status) {
  std::vector<Type> types = b.TakeTypes();
  if (types.size() != 1) {
    *status = b.Error("expected exactly one type modifier");
    return Type::kNone;
  }
  return types[0];
}

absl::Status CompileArith(InstrBuilder& b) {
  absl::Status status;
  const Type t = OneType(b, &status);
  EMBER_RETURN_IF_ERROR(status);
  if (IsFloat(t)) return CompileFloatArithmetic(b, t);
  return CompileIntegerArithmetic(b, t);
}

}  // namespace

absl::Status CompileIntegerArithmetic(InstrBuilder& b, Type t) {
  Instr& out = b.out();
  const std::string& op = b.opcode();
  if (!IsArithmeticInt(t)) {
    return b.Error(absl::StrCat(".", TypeName(t), " is not a valid type for ", op));
  }
  if (op == "add" || op == "sub") {
    const bool cc = b.Take("cc");
    if (cc) return CompileCarry(b, t, op == "sub" ? 1 : 0, false, true);
    EMBER_RETURN_IF_ERROR(Operands(b, t, t, 2));
    if (b.Take("sat")) {
      if (t != Type::kS32) return b.Error(".sat requires .s32");
      out.exec = op == "add" ? &Binary<int32_t, int32_t, AddSatOp> : &Binary<int32_t, int32_t, SubSatOp>;
    } else {
      out.exec = op == "add" ? BinaryFor<AddOp>(t) : BinaryFor<SubOp>(t);
    }
    return absl::OkStatus();
  }
  if (op == "mul" || op == "mad") {
    const std::optional<std::string> mode = b.TakeOneOf({"lo", "hi", "wide"});
    if (!mode) return b.Error(absl::StrCat(op, " on integers needs .lo, .hi or .wide"));
    const bool is_mad = op == "mad";
    if (is_mad && b.Take("cc")) {
      if (*mode == "wide") return b.Error("mad.wide.cc does not exist");
      return CompileCarry(b, t, *mode == "hi" ? 3 : 2, false, true);
    }
    const int sources = is_mad ? 3 : 2;
    if (*mode == "wide") {
      if (TypeSize(t) == 8) return b.Error(".wide needs a 16- or 32-bit type");
      const Type wide = t == Type::kU16 ? Type::kU32 : t == Type::kS16 ? Type::kS32
                        : t == Type::kU32 ? Type::kU64 : Type::kS64;
      EMBER_RETURN_IF_ERROR(b.ExpectOperands(sources + 1));
      EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, wide));
      EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, t));
      EMBER_ASSIGN_OR_RETURN(out.ops[2], b.Source(2, t));
      if (is_mad) {
        EMBER_ASSIGN_OR_RETURN(out.ops[3], b.Source(3, wide));
      }
      out.num_ops = static_cast<uint8_t>(sources + 1);
      switch (t) {
        case Type::kU16: out.exec = is_mad ? &MadWide<uint16_t> : &Binary<uint16_t, uint32_t, MulWideOp<uint16_t>>; break;
        case Type::kS16: out.exec = is_mad ? &MadWide<int16_t> : &Binary<int16_t, int32_t, MulWideOp<int16_t>>; break;
        case Type::kU32: out.exec = is_mad ? &MadWide<uint32_t> : &Binary<uint32_t, uint64_t, MulWideOp<uint32_t>>; break;
        default: out.exec = is_mad ? &MadWide<int32_t> : &Binary<int32_t, int64_t, MulWideOp<int32_t>>; break;
      }
      return absl::OkStatus();
    }
    EMBER_RETURN_IF_ERROR(Operands(b, t, t, sources));
    if (is_mad && b.Take("sat")) {
      if (t != Type::kS32 || *mode != "hi") return b.Error(".sat requires mad.hi.s32");
      out.exec = &Ternary<int32_t, int32_t, MadHiSatOp>;
      return absl::OkStatus();
    }
    if (*mode == "lo") {
      out.exec = is_mad ? TernaryFor<MadLoOp>(t) : BinaryFor<MulLoOp>(t);
    } else {
      out.exec = is_mad ? TernaryFor<MadHiOp>(t) : BinaryFor<MulHiOp>(t);
    }
    return absl::OkStatus();
  }
  if (op == "div" || op == "rem" || op == "min" || op == "max") {
    EMBER_RETURN_IF_ERROR(Operands(b, t, t, 2));
    const bool relu = b.Take("relu");
    if (relu && t != Type::kS32) return b.Error(".relu requires .s32");
    if (op == "div") out.exec = BinaryFor<DivOp>(t);
    if (op == "rem") out.exec = BinaryFor<RemOp>(t);
    if (op == "min") out.exec = relu ? BinaryFor<MinReluOp>(t) : BinaryFor<MinOp>(t);
    if (op == "max") out.exec = relu ? BinaryFor<MaxReluOp>(t) : BinaryFor<MaxOp>(t);
    return absl::OkStatus();
  }
  if (op == "abs" || op == "neg") {
    if (!IsSigned(t)) return b.Error(absl::StrCat(op, " needs a signed type"));
    EMBER_RETURN_IF_ERROR(Operands(b, t, t, 1));
    out.exec = op == "abs" ? UnaryFor<AbsOp>(t) : UnaryFor<NegOp>(t);
    return absl::OkStatus();
  }
  if (op == "sad") {
    EMBER_RETURN_IF_ERROR(Operands(b, t, t, 3));
    out.exec = TernaryFor<SadOp>(t);
    return absl::OkStatus();
  }
  return b.Error(absl::StrCat("internal: ", op, " reached integer arithmetic"));
}

namespace {

absl::Status CompileMul24(InstrBuilder& b) {
  absl::Status status;
  const Type t = OneType(b, &status);
  EMBER_RETURN_IF_ERROR(status);
  if (t != Type::kU32 && t != Type::kS32) return b.Error("mul24/mad24 need .u32 or .s32");
  const std::optional<std::string> mode = b.TakeOneOf({"lo", "hi"});
  if (!mode) return b.Error("mul24/mad24 need .lo or .hi");
  const bool mad = b.opcode() == "mad24";
  EMBER_RETURN_IF_ERROR(Operands(b, t, t, mad ? 3 : 2));
  const bool hi = *mode == "hi";
  Instr& out = b.out();
  if (t == Type::kU32) out.exec = hi ? &Mul24<uint32_t, true> : &Mul24<uint32_t, false>;
  else out.exec = hi ? &Mul24<int32_t, true> : &Mul24<int32_t, false>;
  return absl::OkStatus();
}

absl::Status CompileCarryOp(InstrBuilder& b) {
  absl::Status status;
  const std::string& op = b.opcode();
  const bool cc = b.Take("cc");
  if (op == "madc") {
    const std::optional<std::string> mode = b.TakeOneOf({"lo", "hi"});
    if (!mode) return b.Error("madc needs .lo or .hi");
    const Type t = OneType(b, &status);
    EMBER_RETURN_IF_ERROR(status);
    return CompileCarry(b, t, *mode == "hi" ? 3 : 2, true, cc);
  }
  const Type t = OneType(b, &status);
  EMBER_RETURN_IF_ERROR(status);
  return CompileCarry(b, t, op == "subc" ? 1 : 0, true, cc);
}

absl::Status CompileBitCount(InstrBuilder& b) {
  absl::Status status;
  const Type t = OneType(b, &status);
  EMBER_RETURN_IF_ERROR(status);
  const std::string& op = b.opcode();
  Instr& out = b.out();
  if (op == "popc" || op == "clz") {
    if (t != Type::kB32 && t != Type::kB64) return b.Error(absl::StrCat(op, " needs .b32 or .b64"));
    EMBER_RETURN_IF_ERROR(b.ExpectOperands(2));
    EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, Type::kU32));
    EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, t));
    out.num_ops = 2;
    if (op == "popc") {
      out.exec = t == Type::kB32 ? &Unary<uint32_t, uint32_t, PopcOp<uint32_t>> : &Unary<uint64_t, uint32_t, PopcOp<uint64_t>>;
    } else {
      out.exec = t == Type::kB32 ? &Unary<uint32_t, uint32_t, ClzOp<uint32_t>> : &Unary<uint64_t, uint32_t, ClzOp<uint64_t>>;
    }
    return absl::OkStatus();
  }
  if (op == "brev") {
    if (t != Type::kB32 && t != Type::kB64) return b.Error("brev needs .b32 or .b64");
    EMBER_RETURN_IF_ERROR(Operands(b, t, t, 1));
    out.exec = t == Type::kB32 ? &Unary<uint32_t, uint32_t, BrevOp<uint32_t>> : &Unary<uint64_t, uint64_t, BrevOp<uint64_t>>;
    return absl::OkStatus();
  }
  // bfind
  out.flag = b.Take("shiftamt");
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(2));
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, Type::kU32));
  EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, t));
  out.num_ops = 2;
  switch (t) {
    case Type::kU32: out.exec = &Bfind<uint32_t>; break;
    case Type::kS32: out.exec = &Bfind<int32_t>; break;
    case Type::kU64: out.exec = &Bfind<uint64_t>; break;
    case Type::kS64: out.exec = &Bfind<int64_t>; break;
    default: return b.Error("bfind needs .u32, .s32, .u64 or .s64");
  }
  return absl::OkStatus();
}

absl::Status CompileBitField(InstrBuilder& b) {
  absl::Status status;
  const Type t = OneType(b, &status);
  EMBER_RETURN_IF_ERROR(status);
  Instr& out = b.out();
  if (b.opcode() == "bfe") {
    EMBER_RETURN_IF_ERROR(b.ExpectOperands(4));
    EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, t));
    EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, t));
    EMBER_ASSIGN_OR_RETURN(out.ops[2], b.Source(2, Type::kU32));
    EMBER_ASSIGN_OR_RETURN(out.ops[3], b.Source(3, Type::kU32));
    out.num_ops = 4;
    switch (t) {
      case Type::kU32: out.exec = &Bfe<uint32_t>; break;
      case Type::kS32: out.exec = &Bfe<int32_t>; break;
      case Type::kU64: out.exec = &Bfe<uint64_t>; break;
      case Type::kS64: out.exec = &Bfe<int64_t>; break;
      default: return b.Error("bfe needs .u32, .s32, .u64 or .s64");
    }
    return absl::OkStatus();
  }
  if (t != Type::kB32 && t != Type::kB64) return b.Error("bfi needs .b32 or .b64");
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(5));
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, t));
  EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, t));
  EMBER_ASSIGN_OR_RETURN(out.ops[2], b.Source(2, t));
  EMBER_ASSIGN_OR_RETURN(out.ops[3], b.Source(3, Type::kU32));
  EMBER_ASSIGN_OR_RETURN(out.ops[4], b.Source(4, Type::kU32));
  out.num_ops = 5;
  out.exec = t == Type::kB32 ? &Bfi<uint32_t> : &Bfi<uint64_t>;
  return absl::OkStatus();
}

absl::Status CompileDot(InstrBuilder& b) {
  Instr& out = b.out();
  const bool dp2a = b.opcode() == "dp2a";
  if (dp2a) {
    const std::optional<std::string> half = b.TakeOneOf({"lo", "hi"});
    if (!half) return b.Error("dp2a needs .lo or .hi");
    out.flag = *half == "hi";
  }
  std::vector<Type> types = b.TakeTypes();
  if (types.size() != 2) return b.Error("expected .atype.btype");
  for (Type t : types) {
    if (t != Type::kU32 && t != Type::kS32) return b.Error("dp4a/dp2a types are .u32 or .s32");
  }
  out.aux = (types[0] == Type::kS32 ? 1 : 0) | (types[1] == Type::kS32 ? 2 : 0);
  const Type result = out.aux ? Type::kS32 : Type::kU32;
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(4));
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, result));
  EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, Type::kB32));
  EMBER_ASSIGN_OR_RETURN(out.ops[2], b.Source(2, Type::kB32));
  EMBER_ASSIGN_OR_RETURN(out.ops[3], b.Source(3, result));
  out.num_ops = 4;
  out.exec = dp2a ? &Dp2a : &Dp4a;
  return absl::OkStatus();
}

}  // namespace

void RegisterIntegerInstructions(InstructionTable& table) {
  for (const char* op : {"add", "sub", "mul", "mad", "div", "rem", "abs", "neg", "min", "max", "sad"}) {
    table.Add(op, &CompileArith);
  }
  table.Add("mul24", &CompileMul24);
  table.Add("mad24", &CompileMul24);
  table.Add("addc", &CompileCarryOp);
  table.Add("subc", &CompileCarryOp);
  table.Add("madc", &CompileCarryOp);
  for (const char* op : {"popc", "clz", "brev", "bfind"}) table.Add(op, &CompileBitCount);
  table.Add("bfe", &CompileBitField);
  table.Add("bfi", &CompileBitField);
  table.Add("dp4a", &CompileDot);
  table.Add("dp2a", &CompileDot);
}

}  // namespace ember::vgpu::ptx
