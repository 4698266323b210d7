// Control flow and block-level synchronization (PTX ISA "Control Flow Instructions", "Parallel
// Synchronization and Communication Instructions"): bra, call, ret, exit, trap, brkpt,
// bar/barrier (sync, arrive, red), membar, fence, nanosleep. The warp scheduler and block runner
// carry out what these only describe (Flow::kBranch, kCall, kBarrier, ...).
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "tests/virtual_gpu/ptx/instr_builder.h"
#include "tests/virtual_gpu/ptx/isa_util.h"

namespace ember::vgpu::ptx {
namespace {

bool Nothing(const Instr&, Warp&, uint32_t) { return true; }

absl::Status CompileBra(InstrBuilder& b) {
  b.Take("uni");
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(1));
  b.out().flow = Flow::kBranch;
  return b.BranchTarget(0);
}

absl::Status CompileCall(InstrBuilder& b) {
  b.Take("uni");
  if (b.num_operands() == 0) return b.Error("call needs a function");
  int ret = -1, callee = 0, args = -1;
  if (b.operand(0).kind == Operand::Kind::kVector) {
    ret = 0;
    callee = 1;
  }
  if (callee >= b.num_operands()) return b.Error("call needs a function");
  if (callee + 1 < b.num_operands()) {
    if (b.operand(callee + 1).kind != Operand::Kind::kVector) return b.Error("malformed call arguments");
    args = callee + 1;
  }
  if (callee + 2 < b.num_operands()) return b.Error("call prototypes (indirect calls) are not supported");
  return b.Call(ret, callee, args);
}

absl::Status CompileRet(InstrBuilder& b) {
  b.Take("uni");
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(0));
  b.out().flow = Flow::kReturn;
  return absl::OkStatus();
}

absl::Status CompileExit(InstrBuilder& b) {
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(0));
  b.out().flow = Flow::kExit;
  return absl::OkStatus();
}

absl::Status CompileTrap(InstrBuilder& b) {
  EMBER_RETURN_IF_ERROR(b.ExpectOperands(0));
  b.out().flow = Flow::kTrap;
  return absl::OkStatus();
}

bool WarpSyncEpoch(const Instr&, Warp& w, uint32_t) {
  ++w.sync_epoch;
  return true;
}

absl::Status CompileBarrier(InstrBuilder& b) {
  Instr& out = b.out();
  b.Take("cta");
  if (b.Take("warp")) {
    if (!b.Take("sync")) return b.Error("expected bar.warp.sync");
    EMBER_RETURN_IF_ERROR(b.ExpectOperands(1));
    out.flow = Flow::kWarpSync;
    EMBER_ASSIGN_OR_RETURN(out.sync_mask, b.Source(0, Type::kB32));
    out.exec = &WarpSyncEpoch;
    return absl::OkStatus();
  }
  b.Take("aligned");
  out.flow = Flow::kBarrier;
  out.ops[1] = -1;
  out.ops[2] = -1;
  out.ops[3] = -1;
  out.num_ops = 4;
  if (b.Take("sync")) {
    b.Take("aligned");
    EMBER_RETURN_IF_ERROR(b.ExpectOperands(1, 2));
    EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Source(0, Type::kU32));
    if (b.num_operands() == 2) {
      EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, Type::kU32));
    }
    return absl::OkStatus();
  }
  if (b.Take("arrive")) {
    b.Take("aligned");
    EMBER_RETURN_IF_ERROR(b.ExpectOperands(2));
    EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Source(0, Type::kU32));
    EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(1, Type::kU32));
    out.width = 1;
    return absl::OkStatus();
  }
  if (b.Take("red")) {
    b.Take("aligned");
    if (b.Take("popc")) {
      if (!b.Take("u32")) return b.Error("bar.red.popc needs .u32");
      out.aux = 1;
    } else if (b.Take("and")) {
      if (!b.Take("pred")) return b.Error("bar.red.and needs .pred");
      out.aux = 2;
    } else if (b.Take("or")) {
      if (!b.Take("pred")) return b.Error("bar.red.or needs .pred");
      out.aux = 3;
    } else {
      return b.Error("bar.red needs .popc, .and or .or");
    }
    EMBER_RETURN_IF_ERROR(b.ExpectOperands(3, 4));
    EMBER_ASSIGN_OR_RETURN(out.ops[2], b.Dest(0, out.aux == 1 ? Type::kU32 : Type::kPred));
    EMBER_ASSIGN_OR_RETURN(out.ops[0], b.Source(1, Type::kU32));
    int pred = 2;
    if (b.num_operands() == 4) {
      EMBER_ASSIGN_OR_RETURN(out.ops[1], b.Source(2, Type::kU32));
      pred = 3;
    }
    bool negated = false;
    EMBER_ASSIGN_OR_RETURN(out.ops[3], b.PredSource(pred, &negated));
    out.flag = negated;
    return absl::OkStatus();
  }
  return b.Error("unsupported barrier form");
}

absl::Status CompileNoOp(InstrBuilder& b) {
  // Memory ordering: with one host thread per block every access is already ordered.
  b.TakePerformanceHints();
  b.TakeOneOf({"gl", "proxy", "async", "alias", "generic", "tensormap", "mbarrier_init"});
  if (b.opcode() == "nanosleep") {
    b.Take("u32");
    EMBER_RETURN_IF_ERROR(b.ExpectOperands(1));
  } else if (b.opcode() != "griddepcontrol") {
    EMBER_RETURN_IF_ERROR(b.ExpectOperands(0));
  } else {
    b.TakeOneOf({"wait", "launch_dependents"});
  }
  b.out().exec = &Nothing;
  return absl::OkStatus();
}

}  // namespace

void RegisterControlInstructions(InstructionTable& table) {
  table.Add("bra", &CompileBra);
  table.Add("call", &CompileCall);
  table.Add("ret", &CompileRet);
  table.Add("exit", &CompileExit);
  table.Add("trap", &CompileTrap);
  table.Add("brkpt", &CompileTrap);
  table.Add("bar", &CompileBarrier);
  table.Add("barrier", &CompileBarrier);
  table.Add("membar", &CompileNoOp);
  table.Add("fence", &CompileNoOp);
  table.Add("nanosleep", &CompileNoOp);
  table.Add("griddepcontrol", &CompileNoOp);
}

}  // namespace ember::vgpu::ptx
