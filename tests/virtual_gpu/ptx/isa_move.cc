// Data movement without memory (PTX ISA "Data Movement and Conversion Instructions"): mov (values,
// special registers, symbol addresses, vector pack and unpack), cvta (state-space <-> generic
// addresses) and isspacep.
#include <chrono>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tests/virtual_gpu/ptx/instr_builder.h"
#include "tests/virtual_gpu/ptx/isa_util.h"

namespace ember::vgpu::ptx {
namespace {

bool Move(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const uint64_t keep = instr.imm;  // mask of the bits the destination type holds
  ForEachLane(mask, [&](int l) { d[l] = a[l] & keep; });
  return true;
}

// mov.bN d, {a, b, ...}: elements of `width` bytes, lowest first.
bool Pack(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const int n = instr.vec;
  const int bits = instr.width * 8;
  const uint64_t element_mask = bits >= 64 ? ~0ull : (uint64_t{1} << bits) - 1;
  ForEachLane(mask, [&](int l) {
    uint64_t r = 0;
    for (int i = 0; i < n; ++i) r |= (w.Slot(instr.ops[1 + i])[l] & element_mask) << (bits * i);
    d[l] = r;
  });
  return true;
}

bool Unpack(const Instr& instr, Warp& w, uint32_t mask) {
  const uint64_t* a = w.Slot(instr.ops[instr.vec]);
  const int n = instr.vec;
  const int bits = instr.width * 8;
  const uint64_t element_mask = bits >= 64 ? ~0ull : (uint64_t{1} << bits) - 1;
  ForEachLane(mask, [&](int l) {
    const uint64_t v = a[l];
    for (int i = 0; i < n; ++i) w.Slot(instr.ops[i])[l] = (v >> (bits * i)) & element_mask;
  });
  return true;
}

// %clock / %clock64 advance with the instructions the launch executed; %globaltimer is
// nanoseconds of the host clock.
bool ReadClock(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  uint64_t value;
  if (instr.aux == 2) {
    value = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      std::chrono::steady_clock::now().time_since_epoch())
                                      .count());
  } else {
    value = w.launch->warp_instructions;
  }
  if (instr.aux == 0) value &= 0xffffffffu;
  if (instr.aux == 3) value >>= 32;
  ForEachLane(mask, [&](int l) { d[l] = value; });
  return true;
}

uint64_t TypeMask(Type t) {
  const int bytes = TypeSize(t);
  return bytes >= 8 ? ~0ull : (uint64_t{1} << (8 * bytes)) - 1;
}

absl::Status CompileMov(InstrBuilder& b) {
  Instr& out = b.out();
  std::vector<Type> types = b.TakeTypes();
  if (types.size() != 1) return b.Error("mov needs one type");
  const Type t = types[0];
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(2));
  const Operand& dst = b.operand(0);
  const Operand& src = b.operand(1);
  if (src.kind == Operand::Kind::kVector || dst.kind == Operand::Kind::kVector) {
    const bool pack = src.kind == Operand::Kind::kVector;
    const Operand& vec = pack ? src : dst;
    const int n = static_cast<int>(vec.elements.size());
    if (n != 2 && n != 4) return b.Error("vector mov needs 2 or 4 elements");
    if (KindOf(t) != TypeKind::kBits || TypeSize(t) % n != 0) {
      return b.Error("vector mov needs a bit-size type divisible by the element count");
    }
    const int element_bytes = TypeSize(t) / n;
    const Type et = element_bytes == 1 ? Type::kB8 : element_bytes == 2 ? Type::kB16
                    : element_bytes == 4 ? Type::kB32 : Type::kB64;
    out.vec = static_cast<uint8_t>(n);
    out.width = static_cast<uint8_t>(element_bytes);
    if (pack) {
      EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, t));
      for (int i = 0; i < n; ++i) {
        EMBER_ASSIGN_OR_RETURN(out.ops[1 + i], b.SourceOperand(vec.elements[i], et));
      }
      out.num_ops = static_cast<uint8_t>(n + 1);
      out.exec = &Pack;
    } else {
      for (int i = 0; i < n; ++i) {
        EMBER_ASSIGN_OR_RETURN(out.ops[i], b.DestOperand(vec.elements[i], et));
      }
      EMBER_ASSIGN_OR_RETURN(out.ops[n], b.Source(1, t));
      out.num_ops = static_cast<uint8_t>(n + 1);
      out.exec = &Unpack;
    }
    return absl::OkStatus();
  }
  if (src.kind == Operand::Kind::kSpecial &&
      (src.name == "%clock" || src.name == "%clock64" || src.name == "%globaltimer" ||
       src.name == "%clock_hi" || src.name == "%globaltimer_lo" || src.name == "%globaltimer_hi")) {
    EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, t));
    out.num_ops = 1;
    out.aux = src.name == "%clock" ? 0 : src.name == "%clock_hi" ? 3
              : src.name.rfind("%globaltimer", 0) == 0 ? 2 : 1;
    out.exec = &ReadClock;
    return absl::OkStatus();
  }
  if (t == Type::kPred) {
    EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, Type::kPred));
    EMBER_ASSIGN_OR_RETURN(out.ops[1], b.PredSource(1, nullptr));
  } else {
    EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, t));
    EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, t));
  }
  out.num_ops = 2;
  out.imm = static_cast<int64_t>(TypeMask(t));
  out.exec = &Move;
  return absl::OkStatus();
}

// cvta: aux = space; flag = .to (generic -> space).
bool Cvta(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  uint64_t window = 0;
  switch (static_cast<Space>(instr.aux)) {
    case Space::kShared: window = kSharedWindow; break;
    case Space::kLocal: window = kLocalWindow; break;
    case Space::kParam: window = kParamWindow; break;
    default: window = 0; break;  // global and const addresses are generic addresses
  }
  const uint64_t keep = instr.width == 4 ? 0xffffffffull : ~0ull;
  ForEachLane(mask, [&](int l) {
    const uint64_t v = a[l];
    uint64_t r;
    if (instr.flag) {
      r = window != 0 && v - window < kWindowSize ? v - window : (window != 0 ? v - window : v);
    } else {
      r = v + window;
    }
    d[l] = r & keep;
  });
  return true;
}

absl::Status CompileCvta(InstrBuilder& b) {
  Instr& out = b.out();
  out.flag = b.Take("to");
  const std::optional<std::string> space = b.TakeOneOf({"global", "shared", "local", "const", "param"});
  if (!space) return b.Error("cvta needs a state space");
  out.aux = static_cast<uint32_t>(*space == "global" ? Space::kGlobal : *space == "shared" ? Space::kShared
                                  : *space == "local" ? Space::kLocal : *space == "const" ? Space::kConst
                                  : Space::kParam);
  std::vector<Type> types = b.TakeTypes();
  if (types.size() != 1 || (types[0] != Type::kU64 && types[0] != Type::kU32)) {
    return b.Error("cvta needs .u32 or .u64");
  }
  out.width = static_cast<uint8_t>(TypeSize(types[0]));
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(2));
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, types[0]));
  EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, types[0]));
  out.num_ops = 2;
  out.exec = &Cvta;
  return absl::OkStatus();
}

bool Isspacep(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  ForEachLane(mask, [&](int l) {
    const uint64_t v = a[l];
    const bool shared = v - kSharedWindow < kWindowSize;
    const bool local = v - kLocalWindow < kWindowSize;
    const bool param = v - kParamWindow < kWindowSize;
    bool r = false;
    switch (static_cast<Space>(instr.aux)) {
      case Space::kShared: r = shared; break;
      case Space::kLocal: r = local; break;
      case Space::kParam: r = param; break;
      default: r = !shared && !local && !param; break;
    }
    d[l] = r ? 1 : 0;
  });
  return true;
}

absl::Status CompileIsspacep(InstrBuilder& b) {
  Instr& out = b.out();
  const std::optional<std::string> space = b.TakeOneOf({"global", "shared", "local", "const", "param"});
  if (!space) return b.Error("isspacep needs a state space");
  out.aux = static_cast<uint32_t>(*space == "global" ? Space::kGlobal : *space == "shared" ? Space::kShared
                                  : *space == "local" ? Space::kLocal : *space == "const" ? Space::kConst
                                  : Space::kParam);
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(2));
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, Type::kPred));
  EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, Type::kU64));
  out.num_ops = 2;
  out.exec = &Isspacep;
  return absl::OkStatus();
}

}  // namespace

void RegisterMoveInstructions(InstructionTable& table) {
  table.Add("mov", &CompileMov);
  table.Add("cvta", &CompileCvta);
  table.Add("isspacep", &CompileIsspacep);
}

}  // namespace ember::vgpu::ptx
