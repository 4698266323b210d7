// Atomics and reductions (PTX ISA "atom", "red"): and, or, xor, exch, cas, add (integers, f32,
// f64, f16, f16x2, bf16, bf16x2), inc, dec, min, max on global, shared and generic addresses.
// Each lane's operation is a host atomic on the backing memory, so kernels running concurrently
// on several streams see them as atomic too. atom.add.f32 flushes subnormals (ISA).
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tests/virtual_gpu/ptx/float_format.h"
#include "tests/virtual_gpu/ptx/instr_builder.h"
#include "tests/virtual_gpu/ptx/isa_util.h"
#include "tests/virtual_gpu/ptx/memory_access.h"

namespace ember::vgpu::ptx {
namespace {

enum AtomOp : uint32_t { kAnd, kOr, kXor, kExch, kCas, kAdd, kInc, kDec, kMin, kMax };
enum ValueKind : uint32_t { kUnsigned, kSigned, kF32, kF64, kF16, kF16x2, kBF16, kBF16x2 };

template <class U>
U Combine(uint32_t op, uint32_t kind, U old, U b) {
  switch (op) {
    case kAnd: return static_cast<U>(old & b);
    case kOr: return static_cast<U>(old | b);
    case kXor: return static_cast<U>(old ^ b);
    case kExch: return b;
    case kInc: return old >= b ? U{0} : static_cast<U>(old + 1);
    case kDec: return (old == 0 || old > b) ? b : static_cast<U>(old - 1);
    case kMin:
    case kMax: {
      bool less;
      if (kind == kSigned) {
        using S = std::make_signed_t<U>;
        less = static_cast<S>(b) < static_cast<S>(old);
      } else {
        less = b < old;
      }
      return (op == kMin) == less ? b : old;
    }
    default: break;
  }
  // add
  switch (kind) {
    case kF32: {
      const float r = FlushF32(FlushF32(As<float>(old)) + FlushF32(As<float>(b)));
      return static_cast<U>(Bits<float>(CanonicalF32(r)));
    }
    case kF64:
      return static_cast<U>(Bits<double>(CanonicalF64(As<double>(old) + As<double>(b))));
    case kF16:
    case kBF16:
    case kF16x2:
    case kBF16x2: {
      const bool bf = kind == kBF16 || kind == kBF16x2;
      const int halves = (kind == kF16x2 || kind == kBF16x2) ? 2 : 1;
      uint64_t r = 0;
      for (int h = 0; h < halves; ++h) {
        const uint16_t x = static_cast<uint16_t>(static_cast<uint64_t>(old) >> (16 * h));
        const uint16_t y = static_cast<uint16_t>(static_cast<uint64_t>(b) >> (16 * h));
        const double sum = bf ? double{BF16ToF32(x)} + BF16ToF32(y) : double{F16ToF32(x)} + F16ToF32(y);
        const uint64_t bits = RoundToFormat(sum, bf ? kBF16Format : kF16Format, Rounding::kNearest);
        r |= (bits & 0xffff) << (16 * h);
      }
      return static_cast<U>(r);
    }
    default:
      return static_cast<U>(old + b);
  }
}

// ops: d (or -1 for red), address, b, c (cas). width: access bytes.
template <class U>
bool Atomic(const Instr& instr, Warp& w, uint32_t mask) {
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  const uint64_t* c = instr.aux == kCas ? w.Slot(instr.ops[3]) : nullptr;
  uint64_t* d = instr.ops[0] >= 0 ? w.Slot(instr.ops[0]) : nullptr;
  bool ok = true;
  ForEachLane(mask, [&](int l) {
    if (!ok) return;
    const uint64_t address = a[l] + static_cast<uint64_t>(instr.imm);
    uint8_t* p = ResolveAccess(instr.space, w, instr, l, address, sizeof(U), AccessKind::kAtomic);
    if (p == nullptr) {
      ok = false;
      return;
    }
    U* target = reinterpret_cast<U*>(p);
    const U operand = static_cast<U>(b[l]);
    U old = __atomic_load_n(target, __ATOMIC_SEQ_CST);
    if (instr.aux == kCas) {
      const U desired = static_cast<U>(c[l]);
      U expected = operand;
      __atomic_compare_exchange_n(target, &expected, desired, false, __ATOMIC_SEQ_CST,
                                  __ATOMIC_SEQ_CST);
      old = expected;  // the value found: equal to `operand` iff the swap happened
    } else {
      while (true) {
        const U desired = Combine<U>(instr.aux, instr.aux2, old, operand);
        if (__atomic_compare_exchange_n(target, &old, desired, false, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST)) {
          break;
        }
      }
    }
    if (d) d[l] = static_cast<uint64_t>(old);
  });
  return ok;
}

absl::Status CompileAtomic(InstrBuilder& b) {
  Instr& out = b.out();
  const bool red = b.opcode() == "red";
  Space space = Space::kGeneric;
  if (b.Take("global")) space = Space::kGlobal;
  else if (b.Take("shared") || b.Take("shared::cta")) space = Space::kShared;
  else if (b.Take("shared::cluster")) return b.Error(".shared::cluster is not supported");
  out.space = space;
  b.TakePerformanceHints();
  const bool noftz = b.Take("noftz");
  static constexpr const char* kOps[] = {"and", "or", "xor", "exch", "cas",
                                              "add", "inc", "dec", "min", "max"};
  bool found = false;
  for (uint32_t i = 0; i < 10; ++i) {
    if (b.Take(kOps[i])) {
      out.aux = i;
      found = true;
      break;
    }
  }
  if (!found) return b.Error("missing atomic operation");
  if (b.Take("v2") || b.Take("v4") || b.Take("v8")) return b.Error("vector atomics are not supported");
  std::vector<Type> types = b.TakeTypes();
  if (types.size() != 1) return b.Error("expected one type");
  const Type t = types[0];
  const uint32_t op = out.aux;
  ValueKind kind = kUnsigned;
  switch (t) {
    case Type::kS32: case Type::kS64: kind = kSigned; break;
    case Type::kF32: kind = kF32; break;
    case Type::kF64: kind = kF64; break;
    case Type::kF16: kind = kF16; break;
    case Type::kF16x2: kind = kF16x2; break;
    case Type::kBF16: kind = kBF16; break;
    case Type::kBF16x2: kind = kBF16x2; break;
    default: break;
  }
  out.aux2 = kind;
  const bool is_float = IsFloat(t);
  if (is_float && op != kAdd && op != kExch && op != kCas && op != kMin && op != kMax) {
    return b.Error(absl::StrCat("atomic .", kOps[op], " has no floating-point form"));
  }
  if (is_float && (op == kMin || op == kMax)) return b.Error("floating-point atomic min/max is not implemented");
  const bool half = t == Type::kF16 || t == Type::kBF16 || t == Type::kF16x2 || t == Type::kBF16x2;
  if (half && op == kAdd && !noftz) return b.Error("half-precision atomic add needs .noftz");
  if ((op == kInc || op == kDec) && t != Type::kU32) return b.Error("inc/dec need .u32");
  if ((op == kAnd || op == kOr || op == kXor) && KindOf(t) != TypeKind::kBits) {
    return b.Error("bitwise atomics need .b32 or .b64");
  }
  const int bytes = TypeSize(t);
  const Type reg = t == Type::kF16 || t == Type::kBF16 ? Type::kB16
                   : t == Type::kF16x2 || t == Type::kBF16x2 ? Type::kB32 : t;
  const int sources = op == kCas ? 2 : 1;
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(red ? 1 + sources : 2 + sources,
                                         (red ? 1 + sources : 2 + sources) + 1));
  int next = 0;
  out.ops[0] = -1;
  if (!red) {
    EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(next++, reg));
  }
  EMBER_ASSIGN_OR_RETURN(Address address, b.AddressOperand(next++));
  if (address.kind == AddressKind::kShared) {
    if (space == Space::kGeneric) return b.Error("a .shared variable needs atom.shared");
  } else if (address.kind != AddressKind::kRegister && address.kind != AddressKind::kGlobal &&
             address.kind != AddressKind::kImmediate) {
    return b.Error("atomics work on global and shared memory only");
  }
  out.ops[1] = address.slot;
  out.imm = address.offset;
  EMBER_ASSIGN_OR_RETURN(out.ops[2], b.Source(next++, reg));
  if (op == kCas) {
    EMBER_ASSIGN_OR_RETURN(out.ops[3], b.Source(next++, reg));
  }
  out.num_ops = 4;
  switch (bytes) {
    case 2: out.exec = &Atomic<uint16_t>; break;
    case 4: out.exec = &Atomic<uint32_t>; break;
    case 8: out.exec = &Atomic<uint64_t>; break;
    default: return b.Error("unsupported atomic size");
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterAtomicInstructions(InstructionTable& table) {
  table.Add("atom", &CompileAtomic);
  table.Add("red", &CompileAtomic);
}

}  // namespace ember::vgpu::ptx
