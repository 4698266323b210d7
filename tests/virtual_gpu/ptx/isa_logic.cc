// Logic and shift instructions (PTX ISA "Logic and Shift Instructions" and "Data Movement"
// prmt): and, or, xor, not, cnot (bit types and predicates), lop3, shl, shr, shf, prmt.
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tests/virtual_gpu/ptx/instr_builder.h"
#include "tests/virtual_gpu/ptx/isa_util.h"

namespace ember::vgpu::ptx {
namespace {

template <class T> struct AndOp { static T Do(T a, T b) { return static_cast<T>(a & b); } };
template <class T> struct OrOp { static T Do(T a, T b) { return static_cast<T>(a | b); } };
template <class T> struct XorOp { static T Do(T a, T b) { return static_cast<T>(a ^ b); } };
template <class T> struct NotOp { static T Do(T a) { return static_cast<T>(~a); } };
template <class T> struct CnotOp { static T Do(T a) { return a == 0 ? T{1} : T{0}; } };
struct PredAnd { static uint8_t Do(uint8_t a, uint8_t b) { return (a && b) ? 1 : 0; } };
struct PredOr { static uint8_t Do(uint8_t a, uint8_t b) { return (a || b) ? 1 : 0; } };
struct PredXor { static uint8_t Do(uint8_t a, uint8_t b) { return ((a != 0) != (b != 0)) ? 1 : 0; } };
struct PredNot { static uint8_t Do(uint8_t a) { return a ? 0 : 1; } };

// Predicate logic with optionally negated sources: flag bits in aux (1: a negated, 2: b negated).
template <class Op>
bool PredBinary(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  ForEachLane(mask, [&](int l) {
    const uint8_t x = ((a[l] != 0) != ((instr.aux & 1) != 0)) ? 1 : 0;
    const uint8_t y = ((b[l] != 0) != ((instr.aux & 2) != 0)) ? 1 : 0;
    d[l] = Op::Do(x, y);
  });
  return true;
}
bool PredNotHandler(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  ForEachLane(mask, [&](int l) { d[l] = ((a[l] != 0) != ((instr.aux & 1) != 0)) ? 0 : 1; });
  return true;
}

template <class T>
bool Shl(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  ForEachLane(mask, [&](int l) {
    const uint32_t n = static_cast<uint32_t>(b[l]);
    d[l] = n >= 8 * sizeof(T) ? 0 : Bits<T>(static_cast<T>(As<T>(a[l]) << n));
  });
  return true;
}
template <class T>
bool Shr(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  ForEachLane(mask, [&](int l) {
    const uint32_t n = static_cast<uint32_t>(b[l]);
    const T x = As<T>(a[l]);
    if (n >= 8 * sizeof(T)) {
      d[l] = std::is_signed_v<T> && x < 0 ? Bits<T>(static_cast<T>(-1)) : 0;
    } else {
      d[l] = Bits<T>(static_cast<T>(x >> n));  // arithmetic shift for signed types
    }
  });
  return true;
}

// shf.{l,r}.{wrap,clamp}.b32 d, a, b, c: funnel shift of b:a. flag: left; aux: clamp.
bool Shf(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  const uint64_t* c = w.Slot(instr.ops[3]);
  ForEachLane(mask, [&](int l) {
    uint32_t n = static_cast<uint32_t>(c[l]);
    n = instr.aux ? (n > 32 ? 32 : n) : (n & 31);
    const uint64_t both = (uint64_t{static_cast<uint32_t>(b[l])} << 32) | static_cast<uint32_t>(a[l]);
    d[l] = instr.flag ? static_cast<uint32_t>((both << n) >> 32) : static_cast<uint32_t>(both >> n);
  });
  return true;
}

bool Lop3(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  const uint64_t* c = w.Slot(instr.ops[3]);
  const uint32_t lut = instr.aux;
  ForEachLane(mask, [&](int l) {
    const uint32_t x = static_cast<uint32_t>(a[l]), y = static_cast<uint32_t>(b[l]),
                   z = static_cast<uint32_t>(c[l]);
    uint32_t r = 0;
    if (lut & 0x01) r |= ~x & ~y & ~z;
    if (lut & 0x02) r |= ~x & ~y & z;
    if (lut & 0x04) r |= ~x & y & ~z;
    if (lut & 0x08) r |= ~x & y & z;
    if (lut & 0x10) r |= x & ~y & ~z;
    if (lut & 0x20) r |= x & ~y & z;
    if (lut & 0x40) r |= x & y & ~z;
    if (lut & 0x80) r |= x & y & z;
    d[l] = r;
  });
  return true;
}

// prmt.b32{.mode} d, a, b, c. aux: 0 default, 1 f4e, 2 b4e, 3 rc8, 4 ecl, 5 ecr, 6 rc16.
bool Prmt(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t* b = w.Slot(instr.ops[2]);
  const uint64_t* c = w.Slot(instr.ops[3]);
  ForEachLane(mask, [&](int l) {
    const uint64_t bytes = (uint64_t{static_cast<uint32_t>(b[l])} << 32) | static_cast<uint32_t>(a[l]);
    const uint32_t sel = static_cast<uint32_t>(c[l]);
    auto byte = [&](uint32_t i) { return static_cast<uint32_t>((bytes >> (8 * (i & 7))) & 0xff); };
    uint32_t r = 0;
    switch (instr.aux) {
      case 0:
        for (int i = 0; i < 4; ++i) {
          const uint32_t s = (sel >> (4 * i)) & 0xf;
          uint32_t v = byte(s & 7);
          if (s & 8) v = (v & 0x80) ? 0xff : 0;  // replicate the sign bit
          r |= v << (8 * i);
        }
        break;
      case 1:  // forward 4 extract
        for (uint32_t i = 0; i < 4; ++i) r |= byte((sel & 3) + i) << (8 * i);
        break;
      case 2:  // backward 4 extract
        for (uint32_t i = 0; i < 4; ++i) r |= byte((sel & 3) + 8 - i) << (8 * i);
        break;
      case 3:  // replicate 8
        for (int i = 0; i < 4; ++i) r |= byte(sel & 3) << (8 * i);
        break;
      case 4: {  // edge clamp left
        const uint32_t s = sel & 3;
        for (uint32_t i = 0; i < 4; ++i) r |= byte(i >= s ? s : i) << (8 * i);
        break;
      }
      case 5: {  // edge clamp right
        const uint32_t s = sel & 3;
        for (uint32_t i = 0; i < 4; ++i) r |= byte(i <= s ? s : i) << (8 * i);
        break;
      }
      default: {  // replicate 16
        const uint32_t half = (sel & 1) ? (byte(2) | byte(3) << 8) : (byte(0) | byte(1) << 8);
        r = half | half << 16;
        break;
      }
    }
    d[l] = r;
  });
  return true;
}

template <template <class> class Op>
ExecFn BitBinary(Type t) {
  switch (TypeSize(t)) {
    case 2: return &Binary<uint16_t, uint16_t, Op<uint16_t>>;
    case 4: return &Binary<uint32_t, uint32_t, Op<uint32_t>>;
    case 8: return &Binary<uint64_t, uint64_t, Op<uint64_t>>;
    default: return nullptr;
  }
}
template <template <class> class Op>
ExecFn BitUnary(Type t) {
  switch (TypeSize(t)) {
    case 2: return &Unary<uint16_t, uint16_t, Op<uint16_t>>;
    case 4: return &Unary<uint32_t, uint32_t, Op<uint32_t>>;
    case 8: return &Unary<uint64_t, uint64_t, Op<uint64_t>>;
    default: return nullptr;
  }
}

absl::Status CompileBitwise(InstrBuilder& b) {
  Instr& out = b.out();
  const std::string& op = b.opcode();
  std::vector<Type> types = b.TakeTypes();
  if (types.size() != 1) return b.Error("expected one type");
  const Type t = types[0];
  const bool unary = op == "not" || op == "cnot";
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(unary ? 2 : 3));
  if (t == Type::kPred) {
    if (op == "cnot") return b.Error("cnot has no .pred form");
    EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, Type::kPred));
    bool negated = false;
    EMBER_ASSIGN_OR_RETURN(out.ops[1], b.PredSource(1, &negated));
    out.aux = negated ? 1 : 0;
    if (!unary) {
      EMBER_ASSIGN_OR_RETURN(out.ops[2], b.PredSource(2, &negated));
      out.aux |= negated ? 2 : 0;
    }
    out.num_ops = unary ? 2 : 3;
    if (op == "and") out.exec = &PredBinary<PredAnd>;
    if (op == "or") out.exec = &PredBinary<PredOr>;
    if (op == "xor") out.exec = &PredBinary<PredXor>;
    if (op == "not") out.exec = &PredNotHandler;
    return absl::OkStatus();
  }
  if (KindOf(t) != TypeKind::kBits && op != "cnot") {
    return b.Error(absl::StrCat(op, " needs a bit-size type (.b16, .b32, .b64) or .pred"));
  }
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, t));
  EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, t));
  if (!unary) {
    EMBER_ASSIGN_OR_RETURN(out.ops[2], b.Source(2, t));
  }
  out.num_ops = unary ? 2 : 3;
  if (op == "and") out.exec = BitBinary<AndOp>(t);
  if (op == "or") out.exec = BitBinary<OrOp>(t);
  if (op == "xor") out.exec = BitBinary<XorOp>(t);
  if (op == "not") out.exec = BitUnary<NotOp>(t);
  if (op == "cnot") out.exec = BitUnary<CnotOp>(t);
  if (out.exec == nullptr) return b.Error(absl::StrCat(".", TypeName(t), " is not supported"));
  return absl::OkStatus();
}

absl::Status CompileShift(InstrBuilder& b) {
  Instr& out = b.out();
  const bool left = b.opcode() == "shl";
  std::vector<Type> types = b.TakeTypes();
  if (types.size() != 1) return b.Error("expected one type");
  const Type t = types[0];
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(3));
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, t));
  EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, t));
  EMBER_ASSIGN_OR_RETURN(out.ops[2], b.Source(2, Type::kU32));
  out.num_ops = 3;
  if (left) {
    if (KindOf(t) != TypeKind::kBits) return b.Error("shl needs .b16, .b32 or .b64");
    switch (TypeSize(t)) {
      case 2: out.exec = &Shl<uint16_t>; break;
      case 4: out.exec = &Shl<uint32_t>; break;
      case 8: out.exec = &Shl<uint64_t>; break;
      default: return b.Error("unsupported shl type");
    }
    return absl::OkStatus();
  }
  switch (t) {
    case Type::kB16: case Type::kU16: out.exec = &Shr<uint16_t>; break;
    case Type::kB32: case Type::kU32: out.exec = &Shr<uint32_t>; break;
    case Type::kB64: case Type::kU64: out.exec = &Shr<uint64_t>; break;
    case Type::kS16: out.exec = &Shr<int16_t>; break;
    case Type::kS32: out.exec = &Shr<int32_t>; break;
    case Type::kS64: out.exec = &Shr<int64_t>; break;
    default: return b.Error("unsupported shr type");
  }
  return absl::OkStatus();
}

absl::Status CompileShf(InstrBuilder& b) {
  Instr& out = b.out();
  const std::optional<std::string> dir = b.TakeOneOf({"l", "r"});
  const std::optional<std::string> mode = b.TakeOneOf({"wrap", "clamp"});
  if (!dir || !mode) return b.Error("shf needs .l/.r and .wrap/.clamp");
  if (!b.Take("b32")) return b.Error("shf needs .b32");
  out.flag = *dir == "l";
  out.aux = *mode == "clamp" ? 1 : 0;
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(4));
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, Type::kB32));
  EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, Type::kB32));
  EMBER_ASSIGN_OR_RETURN(out.ops[2], b.Source(2, Type::kB32));
  EMBER_ASSIGN_OR_RETURN(out.ops[3], b.Source(3, Type::kU32));
  out.num_ops = 4;
  out.exec = &Shf;
  return absl::OkStatus();
}

absl::Status CompileLop3(InstrBuilder& b) {
  Instr& out = b.out();
  if (!b.Take("b32")) return b.Error("lop3 needs .b32");
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(5));
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, Type::kB32));
  for (int i = 1; i <= 3; ++i) {
    EMBER_ASSIGN_OR_RETURN(out.ops[i], b.Source(i, Type::kB32));
  }
  if (b.operand(4).kind != Operand::Kind::kInt) return b.Error("lop3's lookup table must be an immediate");
  out.aux = static_cast<uint32_t>(b.operand(4).int_value) & 0xff;
  out.num_ops = 4;
  out.exec = &Lop3;
  return absl::OkStatus();
}

absl::Status CompilePrmt(InstrBuilder& b) {
  Instr& out = b.out();
  if (!b.Take("b32")) return b.Error("prmt needs .b32");
  static constexpr const char* kModes[] = {"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"};
  for (uint32_t i = 0; i < 6; ++i) {
    if (b.Take(kModes[i])) out.aux = i + 1;
  }
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(4));
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, Type::kB32));
  for (int i = 1; i <= 3; ++i) {
    EMBER_ASSIGN_OR_RETURN(out.ops[i], b.Source(i, Type::kB32));
  }
  out.num_ops = 4;
  out.exec = &Prmt;
  return absl::OkStatus();
}

}  // namespace

void RegisterLogicInstructions(InstructionTable& table) {
  for (const char* op : {"and", "or", "xor", "not", "cnot"}) table.Add(op, &CompileBitwise);
  table.Add("shl", &CompileShift);
  table.Add("shr", &CompileShift);
  table.Add("shf", &CompileShf);
  table.Add("lop3", &CompileLop3);
  table.Add("prmt", &CompilePrmt);
}

}  // namespace ember::vgpu::ptx
