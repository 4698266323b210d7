// Warp-synchronous instructions (PTX ISA "shfl.sync", "vote.sync", "match.sync", "redux.sync",
// "activemask", "elect.sync"). The warp scheduler runs them once every non-exited lane of the
// membermask has arrived (or reports the deadlock); the handlers here then see exactly the lanes
// that take part. Reading a value from a lane that does not take part is undefined on a GPU and
// a fault here.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "tests/virtual_gpu/ptx/instr_builder.h"
#include "tests/virtual_gpu/ptx/isa_util.h"

namespace ember::vgpu::ptx {
namespace {

enum ShflMode : uint32_t { kUp, kDown, kBfly, kIdx };

// ops: d, p (or -1), a, b, c.
bool Shfl(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  uint64_t* p = instr.ops[1] >= 0 ? w.Slot(instr.ops[1]) : nullptr;
  const uint64_t* a = w.Slot(instr.ops[2]);
  const uint64_t* b = w.Slot(instr.ops[3]);
  const uint64_t* c = w.Slot(instr.ops[4]);
  uint64_t result[32];
  bool valid[32];
  bool ok = true;
  ForEachLane(mask, [&](int lane) {
    if (!ok) return;
    const int bval = static_cast<int>(b[lane] & 0x1f);
    const uint32_t cval = static_cast<uint32_t>(c[lane]);
    const int clamp = static_cast<int>(cval & 0x1f);
    const int segmask = static_cast<int>((cval >> 8) & 0x1f);
    const int max_lane = (lane & segmask) | (clamp & ~segmask);
    const int min_lane = lane & segmask;
    int j = lane;
    bool pval = false;
    switch (instr.aux) {
      case kUp: j = lane - bval; pval = j >= max_lane; break;
      case kDown: j = lane + bval; pval = j <= max_lane; break;
      case kBfly: j = lane ^ bval; pval = j <= max_lane; break;
      default: j = min_lane | (bval & ~segmask); pval = j <= max_lane; break;
    }
    if (!pval) j = lane;
    if (j < 0 || j > 31 || !(mask & (1u << j))) {
      ok = w.Fail(instr, lane, FaultKind::kLaunchFailed,
                  absl::StrFormat("shuffle reads lane %d, which does not take part (lanes "
                                  "0x%08x execute it): the value is undefined on a GPU",
                                  j, mask));
      return;
    }
    result[lane] = a[j] & 0xffffffffu;
    valid[lane] = pval;
  });
  if (!ok) return false;
  ForEachLane(mask, [&](int lane) {
    d[lane] = result[lane];
    if (p) p[lane] = valid[lane] ? 1 : 0;
  });
  return true;
}

enum VoteMode : uint32_t { kAll, kAny, kUni, kBallot };

// ops: d, a; flag: a negated.
bool Vote(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  uint32_t ballot = 0;
  ForEachLane(mask, [&](int lane) {
    if ((a[lane] != 0) != instr.flag) ballot |= 1u << lane;
  });
  uint64_t value = 0;
  switch (instr.aux) {
    case kAll: value = ballot == mask; break;
    case kAny: value = ballot != 0; break;
    case kUni: value = ballot == 0 || ballot == mask; break;
    default: value = ballot; break;
  }
  ForEachLane(mask, [&](int lane) { d[lane] = value; });
  return true;
}

// match.any / match.all: ops d, p (or -1), a. flag: all.
bool Match(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  uint64_t* p = instr.ops[1] >= 0 ? w.Slot(instr.ops[1]) : nullptr;
  const uint64_t* a = w.Slot(instr.ops[2]);
  const uint64_t keep = instr.width == 4 ? 0xffffffffull : ~0ull;
  uint32_t same[32] = {};
  ForEachLane(mask, [&](int lane) {
    ForEachLane(mask, [&](int other) {
      if ((a[lane] & keep) == (a[other] & keep)) same[lane] |= 1u << other;
    });
  });
  const bool all = same[__builtin_ctz(mask)] == mask;
  ForEachLane(mask, [&](int lane) {
    if (instr.flag) {
      d[lane] = all ? mask : 0;
      if (p) p[lane] = all ? 1 : 0;
    } else {
      d[lane] = same[lane];
    }
  });
  return true;
}

enum ReduxOp : uint32_t { kRAdd, kRMin, kRMax, kRAnd, kROr, kRXor };

bool Redux(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  const uint64_t* a = w.Slot(instr.ops[1]);
  const bool is_signed = instr.flag;
  uint32_t acc = 0;
  bool first = true;
  ForEachLane(mask, [&](int lane) {
    const uint32_t v = static_cast<uint32_t>(a[lane]);
    if (first) {
      acc = v;
      first = false;
      return;
    }
    switch (instr.aux) {
      case kRAdd: acc += v; break;
      case kRMin: acc = is_signed ? static_cast<uint32_t>(std::min(static_cast<int32_t>(acc), static_cast<int32_t>(v))) : std::min(acc, v); break;
      case kRMax: acc = is_signed ? static_cast<uint32_t>(std::max(static_cast<int32_t>(acc), static_cast<int32_t>(v))) : std::max(acc, v); break;
      case kRAnd: acc &= v; break;
      case kROr: acc |= v; break;
      default: acc ^= v; break;
    }
  });
  ForEachLane(mask, [&](int lane) { d[lane] = acc; });
  return true;
}

bool ActiveMask(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  ForEachLane(mask, [&](int lane) { d[lane] = mask; });
  return true;
}

// elect.sync d|p, membermask: the lowest participating lane is the leader.
bool Elect(const Instr& instr, Warp& w, uint32_t mask) {
  uint64_t* d = w.Slot(instr.ops[0]);
  uint64_t* p = instr.ops[1] >= 0 ? w.Slot(instr.ops[1]) : nullptr;
  const int leader = __builtin_ctz(mask);
  ForEachLane(mask, [&](int lane) {
    d[lane] = static_cast<uint64_t>(leader);
    if (p) p[lane] = lane == leader ? 1 : 0;
  });
  return true;
}

absl::Status NeedSync(InstrBuilder& b) {
  if (!b.Take("sync")) {
    return b.Error(absl::StrCat("the non-.sync form of ", b.opcode(),
                                " is not valid for sm_70 and later targets"));
  }
  b.Take("aligned");
  return absl::OkStatus();
}

absl::Status CompileShfl(InstrBuilder& b) {
  Instr& out = b.out();
  EMBER_RETURN_IF_ERROR(NeedSync(b));
  if (b.Take("up")) out.aux = kUp;
  else if (b.Take("down")) out.aux = kDown;
  else if (b.Take("bfly")) out.aux = kBfly;
  else if (b.Take("idx")) out.aux = kIdx;
  else return b.Error("shfl.sync needs .up, .down, .bfly or .idx");
  if (!b.Take("b32")) return b.Error("shfl.sync needs .b32");
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(5));
  out.flow = Flow::kWarpSync;
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, Type::kB32));
  out.ops[1] = -1;
  if (b.operand(0).second) {
    EMBER_ASSIGN_OR_RETURN(out.ops[1], b.DestOperand(*b.operand(0).second, Type::kPred));
  }
  EMBER_ASSIGN_OR_RETURN(out.ops[2], b.Source(1, Type::kB32));
  EMBER_ASSIGN_OR_RETURN(out.ops[3], b.Source(2, Type::kB32));
  EMBER_ASSIGN_OR_RETURN(out.ops[4], b.Source(3, Type::kB32));
  EMBER_ASSIGN_OR_RETURN(out.sync_mask, b.Source(4, Type::kB32));
  out.num_ops = 5;
  out.exec = &Shfl;
  return absl::OkStatus();
}

absl::Status CompileVote(InstrBuilder& b) {
  Instr& out = b.out();
  EMBER_RETURN_IF_ERROR(NeedSync(b));
  Type result = Type::kPred;
  if (b.Take("all")) out.aux = kAll;
  else if (b.Take("any")) out.aux = kAny;
  else if (b.Take("uni")) out.aux = kUni;
  else if (b.Take("ballot")) { out.aux = kBallot; result = Type::kB32; }
  else return b.Error("vote.sync needs .all, .any, .uni or .ballot");
  if (!b.Take(result == Type::kPred ? "pred" : "b32")) {
    return b.Error(result == Type::kPred ? "expected .pred" : "expected .b32");
  }
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(3));
  out.flow = Flow::kWarpSync;
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, result));
  bool negated = false;
  EMBER_ASSIGN_OR_RETURN(out.ops[1], b.PredSource(1, &negated));
  out.flag = negated;
  EMBER_ASSIGN_OR_RETURN(out.sync_mask, b.Source(2, Type::kB32));
  out.num_ops = 2;
  out.exec = &Vote;
  return absl::OkStatus();
}

absl::Status CompileMatch(InstrBuilder& b) {
  Instr& out = b.out();
  if (b.Take("any")) out.flag = false;
  else if (b.Take("all")) out.flag = true;
  else return b.Error("match.sync needs .any or .all");
  EMBER_RETURN_IF_ERROR(NeedSync(b));
  Type t = Type::kB32;
  if (b.Take("b64")) t = Type::kB64;
  else if (!b.Take("b32")) return b.Error("match.sync needs .b32 or .b64");
  out.width = static_cast<uint8_t>(TypeSize(t));
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(3));
  out.flow = Flow::kWarpSync;
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, Type::kB32));
  out.ops[1] = -1;
  if (b.operand(0).second) {
    if (!out.flag) return b.Error("match.any has no predicate result");
    EMBER_ASSIGN_OR_RETURN(out.ops[1], b.DestOperand(*b.operand(0).second, Type::kPred));
  }
  EMBER_ASSIGN_OR_RETURN(out.ops[2], b.Source(1, t));
  EMBER_ASSIGN_OR_RETURN(out.sync_mask, b.Source(2, Type::kB32));
  out.num_ops = 3;
  out.exec = &Match;
  return absl::OkStatus();
}

absl::Status CompileRedux(InstrBuilder& b) {
  Instr& out = b.out();
  EMBER_RETURN_IF_ERROR(NeedSync(b));
  if (b.target_sm() != 0 && b.target_sm() < 80) return b.Error("redux.sync needs sm_80 or later");
  static constexpr const char* kOps[] = {"add", "min", "max", "and", "or", "xor"};
  bool found = false;
  for (uint32_t i = 0; i < 6; ++i) {
    if (b.Take(kOps[i])) {
      out.aux = i;
      found = true;
    }
  }
  if (!found) return b.Error("redux.sync needs an operation");
  std::vector<Type> types = b.TakeTypes();
  if (types.size() != 1) return b.Error("redux.sync needs a type");
  const Type t = types[0];
  if (out.aux >= kRAnd ? t != Type::kB32 : (t != Type::kU32 && t != Type::kS32)) {
    return b.Error(absl::StrCat("redux.sync.", kOps[out.aux], " does not take .", TypeName(t)));
  }
  out.flag = t == Type::kS32;
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(3));
  out.flow = Flow::kWarpSync;
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, t));
  EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, t));
  EMBER_ASSIGN_OR_RETURN(out.sync_mask, b.Source(2, Type::kB32));
  out.num_ops = 2;
  out.exec = &Redux;
  return absl::OkStatus();
}

absl::Status CompileActiveMask(InstrBuilder& b) {
  Instr& out = b.out();
  if (!b.Take("b32")) return b.Error("activemask needs .b32");
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(1));
  out.flow = Flow::kWarpSync;  // sync_mask -1: the lanes executing together
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, Type::kB32));
  out.num_ops = 1;
  out.exec = &ActiveMask;
  return absl::OkStatus();
}

absl::Status CompileElect(InstrBuilder& b) {
  Instr& out = b.out();
  EMBER_RETURN_IF_ERROR(NeedSync(b));
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(2));
  out.flow = Flow::kWarpSync;
  EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Dest(0, Type::kB32));
  out.ops[1] = -1;
  if (b.operand(0).second) {
    EMBER_ASSIGN_OR_RETURN(out.ops[1], b.DestOperand(*b.operand(0).second, Type::kPred));
  }
  EMBER_ASSIGN_OR_RETURN(out.sync_mask, b.Source(1, Type::kB32));
  out.num_ops = 2;
  out.exec = &Elect;
  return absl::OkStatus();
}

}  // namespace

void RegisterWarpInstructions(InstructionTable& table) {
  table.Add("shfl", &CompileShfl);
  table.Add("vote", &CompileVote);
  table.Add("match", &CompileMatch);
  table.Add("redux", &CompileRedux);
  table.Add("activemask", &CompileActiveMask);
  table.Add("elect", &CompileElect);
}

}  // namespace ember::vgpu::ptx
