// Comparison and selection (PTX ISA "Comparison and Selection Instructions"): setp (with the
// boolean combine and the p|q pair, packed half forms included), set, selp, slct. Floating-point
// comparisons follow the ordered/unordered table of PTX ISA "Floating Point Comparisons".
#include <cmath>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tests/virtual_gpu/ptx/float_format.h"
#include "tests/virtual_gpu/ptx/instr_builder.h"
#include "tests/virtual_gpu/ptx/isa_util.h"

namespace ember::vgpu::ptx {
namespace {

enum Cmp : uint32_t {
  kEq, kNe, kLt, kLe, kGt, kGe, kLo, kLs, kHi, kHs,
  kEqu, kNeu, kLtu, kLeu, kGtu, kGeu, kNum, kNan,
};
constexpr const char* kCmpNames[] = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi",
                                          "hs", "equ", "neu", "ltu", "leu", "gtu", "geu", "num",
                                          "nan"};
enum BoolOp : uint32_t { kNone, kAnd, kOr, kXor };

template <class T>
bool Compare(uint32_t cmp, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool unordered = std::isnan(a) || std::isnan(b);
    switch (cmp) {
      case kEq: return !unordered && a == b;
      case kNe: return !unordered && a != b;
      case kLt: return !unordered && a < b;
      case kLe: return !unordered && a <= b;
      case kGt: return !unordered && a > b;
      case kGe: return !unordered && a >= b;
      case kEqu: return unordered || a == b;
      case kNeu: return unordered || a != b;
      case kLtu: return unordered || a < b;
      case kLeu: return unordered || a <= b;
      case kGtu: return unordered || a > b;
      case kGeu: return unordered || a >= b;
      case kNum: return !unordered;
      default: return unordered;  // nan
    }
  } else {
    switch (cmp) {
      case kEq: return a == b;
      case kNe: return a != b;
      case kLt: case kLo: return a < b;
      case kLe: case kLs: return a <= b;
      case kGt: case kHi: return a > b;
      default: return a >= b;  // ge, hs
    }
  }
}

bool Combine(uint32_t op, bool x, bool c) {
  switch (op) {
    case kAnd: return x && c;
    case kOr: return x || c;
    case kXor: return x != c;
    default: return x;
  }
}

// Decodes one lane's operand for comparison: integers as themselves, floats as float/double,
// halves (K = 1 f16, 2 bf16) as float. `half` picks the upper half of a packed pair.
template <class T, int K>
auto Operand(uint64_t bits, int half, bool ftz) {
  if constexpr (K == 1) {
    uint16_t h = static_cast<uint16_t>(bits >> (16 * half));
    if (ftz) h = FlushF16(h);
    return F16ToF32(h);
  } else if constexpr (K == 2) {
    return BF16ToF32(static_cast<uint16_t>(bits >> (16 * half)));
  } else if constexpr (std::is_same_v<T, float>) {
    const float v = As<float>(bits);
    return ftz ? FlushF32(v) : v;
  } else {
    return As<T>(bits);
  }
}

// setp: ops = p, q (or -1), a, b, c (or -1). aux = cmp | boolop << 8 | (c negated) << 16.
template <class T, int K, bool kPacked>
bool Setp(const Instr& instr, Warp& w, uint32_t mask) {
  const uint32_t cmp = instr.aux & 0xff, bop = (instr.aux >> 8) & 0xff;
  const bool c_neg = (instr.aux >> 16) & 1;
  uint64_t* p = w.Slot(instr.ops[0]);
  uint64_t* q = instr.ops[1] >= 0 ? w.Slot(instr.ops[1]) : nullptr;
  const uint64_t* a = w.Slot(instr.ops[2]);
  const uint64_t* b = w.Slot(instr.ops[3]);
  const uint64_t* c = instr.ops[4] >= 0 ? w.Slot(instr.ops[4]) : nullptr;
  ForEachLane(mask, [&](int l) {
    const bool cv = c ? ((c[l] != 0) != c_neg) : false;
    if constexpr (kPacked) {
      const bool lo = Compare(cmp, Operand<T, K>(a[l], 0, instr.ftz), Operand<T, K>(b[l], 0, instr.ftz));
      const bool hi = Compare(cmp, Operand<T, K>(a[l], 1, instr.ftz), Operand<T, K>(b[l], 1, instr.ftz));
      p[l] = Combine(bop, lo, cv);
      if (q) q[l] = Combine(bop, hi, cv);
    } else {
      const bool r = Compare(cmp, Operand<T, K>(a[l], 0, instr.ftz), Operand<T, K>(b[l], 0, instr.ftz));
      p[l] = Combine(bop, r, cv);
      if (q) q[l] = Combine(bop, !r, cv);
    }
  });
  return true;
}

// set: d = true ? (all ones | 1.0) : 0. width: result encoding (0 int32 mask, 1 f32 1.0,
// 2 f16 1.0, 3 bf16 1.0, 4 packed f16x2, 5 packed bf16x2, 6 packed u32 0xffff halves).
template <class T, int K, bool kPacked>
bool Set(const Instr& instr, Warp& w, uint32_t mask) {
  const uint32_t cmp = instr.aux & 0xff, bop = (instr.aux >> 8) & 0xff;
  const bool c_neg = (instr.aux >> 16) & 1;
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[2]);
  const uint64_t* b = w.Slot(instr.ops[3]);
  const uint64_t* c = instr.ops[4] >= 0 ? w.Slot(instr.ops[4]) : nullptr;
  auto encode = [&](bool v) -> uint64_t {
    switch (instr.width) {
      case 0: return v ? 0xffffffffu : 0;
      case 1: return v ? 0x3f800000u : 0;
      case 2: return v ? 0x3c00u : 0;
      case 3: return v ? 0x3f80u : 0;
      default: return 0;
    }
  };
  ForEachLane(mask, [&](int l) {
    const bool cv = c ? ((c[l] != 0) != c_neg) : false;
    if constexpr (kPacked) {
      uint32_t r = 0;
      for (int h = 0; h < 2; ++h) {
        const bool v = Combine(bop, Compare(cmp, Operand<T, K>(a[l], h, instr.ftz),
                                            Operand<T, K>(b[l], h, instr.ftz)), cv);
        const uint32_t one = instr.width == 4 ? 0x3c00u : instr.width == 5 ? 0x3f80u : 0xffffu;
        if (v) r |= one << (16 * h);
      }
      d[l] = r;
    } else {
      d[l] = encode(Combine(bop, Compare(cmp, Operand<T, K>(a[l], 0, instr.ftz),
                                         Operand<T, K>(b[l], 0, instr.ftz)), cv));
    }
  });
  return true;
}

#define EMBER_COMPARE_TYPES(H)                                      \
  switch (t) {                                                      \
    case Type::kB16: case Type::kU16: return &H<uint16_t, 0, false>; \
    case Type::kB32: case Type::kU32: return &H<uint32_t, 0, false>; \
    case Type::kB64: case Type::kU64: return &H<uint64_t, 0, false>; \
    case Type::kS16: return &H<int16_t, 0, false>;                  \
    case Type::kS32: return &H<int32_t, 0, false>;                  \
    case Type::kS64: return &H<int64_t, 0, false>;                  \
    case Type::kF32: return &H<float, 0, false>;                    \
    case Type::kF64: return &H<double, 0, false>;                   \
    case Type::kF16: return &H<float, 1, false>;                    \
    case Type::kBF16: return &H<float, 2, false>;                   \
    case Type::kF16x2: return &H<float, 1, true>;                   \
    case Type::kBF16x2: return &H<float, 2, true>;                  \
    default: return nullptr;                                        \
  }
ExecFn SetpFor(Type t) { EMBER_COMPARE_TYPES(Setp) }
ExecFn SetFor(Type t) { EMBER_COMPARE_TYPES(Set) }
#undef EMBER_COMPARE_TYPES

absl::StatusOr<uint32_t> TakeCmp(InstrBuilder& b, Type t) {
  for (uint32_t i = 0; i < 18; ++i) {
    if (b.Take(kCmpNames[i])) {
      const bool unsigned_only = i >= kLo && i <= kHs;
      const bool float_only = i >= kEqu;
      if (unsigned_only && (IsFloat(t) || IsSigned(t))) {
        return b.Error(absl::StrCat(".", kCmpNames[i], " compares unsigned integers only"));
      }
      if (float_only && !IsFloat(t)) {
        return b.Error(absl::StrCat(".", kCmpNames[i], " compares floating-point values only"));
      }
      if (KindOf(t) == TypeKind::kBits && i != kEq && i != kNe) {
        return b.Error("bit-size types compare with .eq and .ne only");
      }
      return i;
    }
  }
  return b.Error("missing comparison operator");
}

absl::Status CompileSetp(InstrBuilder& b) {
  Instr& out = b.out();
  const bool is_set = b.opcode() == "set";
  std::vector<Type> types = b.TakeTypes();
  Type dtype = Type::kPred, stype;
  if (is_set) {
    if (types.size() != 2) return b.Error("set needs .dtype.stype");
    dtype = types[0];
    stype = types[1];
  } else {
    if (types.size() != 1) return b.Error("setp needs one type");
    stype = types[0];
  }
  EMBER_ASSIGN_OR_RETURN(uint32_t cmp, TakeCmp(b, stype));
  uint32_t bop = kNone;
  if (b.Take("and")) bop = kAnd;
  else if (b.Take("or")) bop = kOr;
  else if (b.Take("xor")) bop = kXor;
  out.ftz = b.Take("ftz");
  const bool packed = stype == Type::kF16x2 || stype == Type::kBF16x2;
  const int sources = bop == kNone ? 3 : 4;
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(sources));
  if (is_set) {
    if (b.operand(0).second) return b.Error("set has one destination");
    if (dtype == Type::kU32 || dtype == Type::kS32) out.width = packed ? 6 : 0;
    else if (dtype == Type::kF32 && !packed) out.width = 1;
    else if (dtype == Type::kF16 && !packed) out.width = 2;
    else if (dtype == Type::kBF16 && !packed) out.width = 3;
    else if (dtype == Type::kF16x2 && packed) out.width = 4;
    else if (dtype == Type::kBF16x2 && packed) out.width = 5;
    else return b.Error(absl::StrCat("unsupported set result type .", TypeName(dtype)));
    const Type reg_type = out.width == 2 || out.width == 3 ? Type::kB16
                          : out.width == 1 ? Type::kF32 : Type::kB32;
    EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, reg_type));
    out.ops[1] = -1;
  } else {
    EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, Type::kPred));
    out.ops[1] = -1;
    if (b.operand(0).second) {
      EMBER_ASSIGN_OR_RETURN(out.ops[1], b.DestOperand(*b.operand(0).second, Type::kPred));
    }
  }
  const Type operand_type = packed ? Type::kB32 : (stype == Type::kF16 || stype == Type::kBF16) ? Type::kB16 : stype;
  EMBER_ASSIGN_OR_RETURN(out.ops[2], b.Source(1, operand_type));
  EMBER_ASSIGN_OR_RETURN(out.ops[3], b.Source(2, operand_type));
  out.ops[4] = -1;
  bool negated = false;
  if (bop != kNone) {
    EMBER_ASSIGN_OR_RETURN(out.ops[4], b.PredSource(3, &negated));
  }
  out.num_ops = 5;
  out.aux = cmp | (bop << 8) | (negated ? 1u << 16 : 0u);
  out.exec = is_set ? SetFor(stype) : SetpFor(stype);
  if (out.exec == nullptr) return b.Error(absl::StrCat("unsupported type .", TypeName(stype)));
  return absl::OkStatus();
}

bool Selp(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  const uint64_t* c = w.Slot(instr.ops[3]);
  ForEachLane(mask, [&](int l) { d[l] = c[l] != 0 ? a[l] : b[l]; });
  return true;
}

template <class C>
bool Slct(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  const uint64_t* c = w.Slot(instr.ops[3]);
  ForEachLane(mask, [&](int l) {
    C v = As<C>(c[l]);
    if constexpr (std::is_same_v<C, float>) {
      if (instr.ftz) v = FlushF32(v);
    }
    d[l] = v >= 0 ? a[l] : b[l];
  });
  return true;
}

absl::Status CompileSelp(InstrBuilder& b) {
  Instr& out = b.out();
  std::vector<Type> types = b.TakeTypes();
  if (types.size() != 1) return b.Error("selp needs one type");
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(4));
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, types[0]));
  EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, types[0]));
  EMBER_ASSIGN_OR_RETURN(out.ops[2], b.Source(2, types[0]));
  EMBER_ASSIGN_OR_RETURN(out.ops[3], b.PredSource(3, nullptr));
  out.num_ops = 4;
  out.exec = &Selp;
  return absl::OkStatus();
}

absl::Status CompileSlct(InstrBuilder& b) {
  Instr& out = b.out();
  out.ftz = b.Take("ftz");
  std::vector<Type> types = b.TakeTypes();
  if (types.size() != 2 || (types[1] != Type::kS32 && types[1] != Type::kF32)) {
    return b.Error("slct needs .dtype.s32 or .dtype.f32");
  }
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(4));
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, types[0]));
  EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, types[0]));
  EMBER_ASSIGN_OR_RETURN(out.ops[2], b.Source(2, types[0]));
  EMBER_ASSIGN_OR_RETURN(out.ops[3], b.Source(3, types[1]));
  out.num_ops = 4;
  out.exec = types[1] == Type::kS32 ? &Slct<int32_t> : &Slct<float>;
  return absl::OkStatus();
}

}  // namespace

void RegisterCompareInstructions(InstructionTable& table) {
  table.Add("setp", &CompileSetp);
  table.Add("set", &CompileSetp);
  table.Add("selp", &CompileSelp);
  table.Add("slct", &CompileSlct);
}

}  // namespace ember::vgpu::ptx
