// Loads and stores (PTX ISA "ld", "ldu", "st", "prefetch"): every state space and generic
// addressing, scalar and vector (.v2/.v4/.v8) forms, sign or zero extension into wider
// registers; cache and memory-order qualifiers are accepted and have no further effect (one
// thread runs a block at a time, so every access is already sequentially consistent).
#include <cstring>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tests/virtual_gpu/ptx/instr_builder.h"
#include "tests/virtual_gpu/ptx/isa_util.h"
#include "tests/virtual_gpu/ptx/memory_access.h"

namespace ember::vgpu::ptx {
namespace {

// ops: destinations [0, vec), address slot at [vec]. aux2: destination register bytes.
template <int N, bool kSigned>
bool Load(const Instr& instr, Warp& w, uint32_t mask) {
  const int vec = instr.vec;
  const uint64_t* a = w.Slot(instr.ops[vec]);
  const Space space = instr.space;
  const uint32_t register_bytes = instr.aux2;
  bool ok = true;
  ForEachLane(mask, [&](int l) {
    if (!ok) return;
    const uint64_t address = a[l] + static_cast<uint64_t>(instr.imm);
    const uint8_t* p = ResolveAccess(space, w, instr, l, address, N * vec, AccessKind::kRead);
    if (p == nullptr) {
      ok = false;
      return;
    }
    for (int i = 0; i < vec; ++i) {
      uint64_t v = 0;
      std::memcpy(&v, p + N * i, N);
      if constexpr (kSigned && N < 8) {
        if (register_bytes > N && (v >> (8 * N - 1)) & 1) {
          v |= ~((uint64_t{1} << (8 * N)) - 1);
          if (register_bytes < 8) v &= (uint64_t{1} << (8 * register_bytes)) - 1;
        }
      }
      w.Slot(instr.ops[i])[l] = v;
    }
  });
  return ok;
}

// ops: address slot at [0], sources [1, vec].
template <int N>
bool Store(const Instr& instr, Warp& w, uint32_t mask) {
  const int vec = instr.vec;
  const uint64_t* a = w.Slot(instr.ops[0]);
  const Space space = instr.space;
  bool ok = true;
  ForEachLane(mask, [&](int l) {
    if (!ok) return;
    const uint64_t address = a[l] + static_cast<uint64_t>(instr.imm);
    uint8_t* p = ResolveAccess(space, w, instr, l, address, N * vec, AccessKind::kWrite);
    if (p == nullptr) {
      ok = false;
      return;
    }
    for (int i = 0; i < vec; ++i) {
      const uint64_t v = w.Slot(instr.ops[1 + i])[l];
      std::memcpy(p + N * i, &v, N);
    }
  });
  return ok;
}

bool Nothing(const Instr&, Warp&, uint32_t) { return true; }

absl::StatusOr<Space> TakeSpace(InstrBuilder& b) {
  if (b.Take("global")) return Space::kGlobal;
  if (b.Take("shared") || b.Take("shared::cta")) return Space::kShared;
  if (b.Take("local")) return Space::kLocal;
  if (b.Take("const")) return Space::kConst;
  if (b.Take("param") || b.Take("param::entry") || b.Take("param::func")) return Space::kParam;
  if (b.Take("shared::cluster")) return b.Error(".shared::cluster is not supported");
  return Space::kGeneric;
}

// An address operand: the instruction's space, or the symbol's own space when it names one.
absl::Status BindAddress(InstrBuilder& b, int operand, Space space, int32_t* slot) {
  EMBER_ASSIGN_OR_RETURN(Address address, b.AddressOperand(operand));
  Instr& out = b.out();
  out.imm = address.offset;
  *slot = address.slot;
  auto mismatch = [&](const char* what) {
    return b.Error(absl::StrCat("the address names ", what, " but the instruction accesses .",
                                SpaceName(space), " space"));
  };
  switch (address.kind) {
    case AddressKind::kKernelParam:
    case AddressKind::kFuncParam:
      if (space == Space::kGeneric) return b.Error("parameters need ld.param/st.param");
      if (space != Space::kParam) return mismatch("a parameter");
      break;
    case AddressKind::kLocal:
      if (space == Space::kGeneric) return b.Error("a .local variable needs ld.local/st.local (or cvta)");
      if (space != Space::kLocal) return mismatch("a .local variable");
      break;
    case AddressKind::kShared:
      if (space == Space::kGeneric) return b.Error("a .shared variable needs ld.shared/st.shared (or cvta)");
      if (space != Space::kShared) return mismatch("a .shared variable");
      break;
    case AddressKind::kGlobal:
      if (space != Space::kGlobal && space != Space::kConst && space != Space::kGeneric) {
        return mismatch("a module variable");
      }
      break;
    default:
      break;
  }
  return absl::OkStatus();
}

template <bool kSigned>
ExecFn LoadFor(int bytes) {
  switch (bytes) {
    case 1: return &Load<1, kSigned>;
    case 2: return &Load<2, kSigned>;
    case 4: return &Load<4, kSigned>;
    case 8: return &Load<8, kSigned>;
    default: return nullptr;
  }
}
ExecFn StoreFor(int bytes) {
  switch (bytes) {
    case 1: return &Store<1>;
    case 2: return &Store<2>;
    case 4: return &Store<4>;
    case 8: return &Store<8>;
    default: return nullptr;
  }
}

absl::Status CompileLoadStore(InstrBuilder& b) {
  Instr& out = b.out();
  const bool store = b.opcode() == "st";
  EMBER_ASSIGN_OR_RETURN(Space space, TakeSpace(b));
  b.TakePerformanceHints();
  int vec = 1;
  if (b.Take("v2")) vec = 2;
  else if (b.Take("v4")) vec = 4;
  else if (b.Take("v8")) vec = 8;
  std::vector<Type> types = b.TakeTypes();
  if (types.size() != 1) return b.Error(absl::StrCat(b.opcode(), " needs one type"));
  const Type t = types[0];
  if (t == Type::kPred || t == Type::kB128) return b.Error(absl::StrCat(".", TypeName(t), " is not supported"));
  const int bytes = TypeSize(t);
  out.space = space;
  out.type = t;
  out.vec = static_cast<uint8_t>(vec);
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(2, 3));  // an optional cache-policy operand
  const int value_operand = store ? 1 : 0;
  const int address_operand = store ? 0 : 1;
  const Operand& value = b.operand(value_operand);
  std::vector<const Operand*> values;
  if (vec > 1) {
    if (value.kind != Operand::Kind::kVector || static_cast<int>(value.elements.size()) != vec) {
      return b.Error(absl::StrCat("expected a vector of ", vec, " registers"));
    }
    for (const Operand& e : value.elements) values.push_back(&e);
  } else {
    values.push_back(&value);
  }
  // Halves are moved through .b16 registers.
  const Type reg_type = t == Type::kF16 || t == Type::kBF16 ? Type::kB16
                        : t == Type::kF16x2 || t == Type::kBF16x2 ? Type::kB32 : t;
  int32_t address_slot = 0;
  EMBER_RETURN_IF_ERROR(BindAddress(b, address_operand, space, &address_slot));
  if (store) {
    out.ops[0] = address_slot;
    for (int i = 0; i < vec; ++i) {
      EMBER_ASSIGN_OR_RETURN(out.ops[1 + i], b.SourceOperand(*values[i], reg_type, /*allow_wider=*/true));
    }
    out.exec = StoreFor(bytes);
  } else {
    for (int i = 0; i < vec; ++i) {
      EMBER_ASSIGN_OR_RETURN(out.ops[i], b.DestOperand(*values[i], reg_type, /*allow_wider=*/true));
    }
    out.ops[vec] = address_slot;
    out.aux2 = static_cast<uint32_t>(std::max(b.RegisterBytes(*values[0]), bytes));
    out.exec = IsSigned(t) ? LoadFor<true>(bytes) : LoadFor<false>(bytes);
  }
  out.num_ops = static_cast<uint8_t>(vec + 1);
  if (out.exec == nullptr) return b.Error("unsupported access size");
  return absl::OkStatus();
}

absl::Status CompilePrefetch(InstrBuilder& b) {
  EMBER_RETURN_IF_ERROR(TakeSpace(b).status());
  b.TakeOneOf({"L1", "L2", "L2::evict_last", "L2::evict_normal", "tensormap"});
  b.TakePerformanceHints();
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(1));
  EMBER_RETURN_IF_ERROR(b.AddressOperand(0).status());
  b.out().exec = &Nothing;
  return absl::OkStatus();
}

}  // namespace

void RegisterMemoryInstructions(InstructionTable& table) {
  table.Add("ld", &CompileLoadStore);
  table.Add("ldu", &CompileLoadStore);
  table.Add("st", &CompileLoadStore);
  table.Add("prefetch", &CompilePrefetch);
  table.Add("prefetchu", &CompilePrefetch);
}

}  // namespace ember::vgpu::ptx
