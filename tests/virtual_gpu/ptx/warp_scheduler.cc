#include "tests/virtual_gpu/ptx/warp_scheduler.h"

#include <climits>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace ember::vgpu::ptx {
namespace {

void SetPcs(Warp& w, uint32_t mask, int32_t pc) {
  ForEachLane(mask, [&](int lane) { w.pc[lane] = pc; });
}

// call: pushes the return point and copies the arguments into the callee's parameters.
bool DoCall(Warp& w, const Instr& instr, int32_t pc, uint32_t lanes) {
  const KernelProgram& program = *w.launch->program;
  const CallSite& site = program.calls[instr.aux];
  const int max_depth = program.max_call_depth;
  bool ok = true;
  ForEachLane(lanes, [&](int lane) {
    if (!ok) return;
    if (w.depth[lane] >= max_depth) {
      ok = w.Fail(instr, lane, FaultKind::kLaunchFailed, "call stack overflow");
      return;
    }
    w.call_stack[static_cast<size_t>(lane) * max_depth + w.depth[lane]++] = pc;
    uint8_t* scratch = w.scratch.data() + static_cast<size_t>(lane) * program.param_scratch_bytes;
    for (const ParamCopy& copy : site.arguments) {
      std::memmove(scratch + copy.to_offset, scratch + copy.from_offset, copy.bytes);
    }
  });
  return ok;
}

// ret: lanes at depth 0 exit; the others copy results back and continue after their call.
void DoReturn(Warp& w, int32_t pc, uint32_t lanes) {
  const KernelProgram& program = *w.launch->program;
  const int max_depth = program.max_call_depth;
  ForEachLane(lanes, [&](int lane) {
    if (w.depth[lane] == 0) {
      w.exited |= 1u << lane;
      w.exit_pc[lane] = pc;
      return;
    }
    const int32_t call_pc = w.call_stack[static_cast<size_t>(lane) * max_depth + --w.depth[lane]];
    const CallSite& site = program.calls[program.code[call_pc].aux];
    uint8_t* scratch = w.scratch.data() + static_cast<size_t>(lane) * program.param_scratch_bytes;
    for (const ParamCopy& copy : site.results) {
      std::memmove(scratch + copy.to_offset, scratch + copy.from_offset, copy.bytes);
    }
    w.pc[lane] = call_pc + 1;
  });
}

std::string LaneList(uint32_t mask) { return absl::StrFormat("0x%08x", mask); }

// A warp-synchronous instruction reached by `arriving` lanes at `pc`. Runs it when every
// non-exited lane of the membermask is there; otherwise the arrivals wait. Returns false on a
// fault; sets *done to the lanes that executed it.
bool WarpSync(Warp& w, const Instr& instr, int32_t pc, uint32_t arriving, uint32_t* done) {
  *done = 0;
  uint32_t member = 0;
  if (instr.sync_mask >= 0) {
    bool first = true;
    bool ok = true;
    ForEachLane(arriving, [&](int lane) {
      if (!ok) return;
      const uint32_t m = Get<uint32_t>(w, instr.sync_mask, lane);
      if (first) {
        member = m;
        first = false;
      } else if (m != member) {
        ok = w.Fail(instr, lane, FaultKind::kLaunchFailed,
                    absl::StrCat("membermask ", LaneList(m), " differs from membermask ",
                                 LaneList(member), " of other lanes executing it together"));
      }
      if (ok && !(m & (1u << lane))) {
        ok = w.Fail(instr, lane, FaultKind::kLaunchFailed,
                    absl::StrCat("lane ", lane, " executes it with membermask ", LaneList(m),
                                 ", which does not include the lane itself"));
      }
    });
    if (!ok) return false;
    // Lanes already waiting here executed it with some mask: it must be the same.
  } else {
    member = arriving;  // activemask: the lanes executing together
  }
  uint32_t waiting_here = 0;
  ForEachLane(w.waiting & ~w.waiting_barrier, [&](int lane) {
    if (w.pc[lane] == pc) waiting_here |= 1u << lane;
  });
  if (waiting_here != 0 && instr.sync_mask >= 0) {
    const int lane = __builtin_ctz(waiting_here);
    const uint32_t m = Get<uint32_t>(w, instr.sync_mask, lane);
    if (m != member) {
      return w.Fail(instr, lane, FaultKind::kLaunchFailed,
                    absl::StrCat("membermask ", LaneList(m), " differs from membermask ",
                                 LaneList(member), " of lanes arriving later"));
    }
  }
  const uint32_t arrived = arriving | waiting_here;
  const uint32_t needed = member & w.present & ~w.exited;
  if ((needed & ~arrived) != 0) {
    w.waiting |= arriving;
    SetPcs(w, arriving, pc);
    return true;
  }
  w.waiting &= ~waiting_here;
  if (instr.exec != nullptr && !instr.exec(instr, w, arrived)) return false;
  *done = arrived;
  return true;
}

}  // namespace

bool RunWarp(Warp& w) {
  Launch& launch = *w.launch;
  const Instr* code = launch.program->code.data();
  const uint64_t budget = launch.options.instruction_budget;
  while (true) {
    const uint32_t runnable = w.present & ~w.exited & ~w.waiting;
    if (runnable == 0) return true;
    int32_t pc = INT_MAX;
    ForEachLane(runnable, [&](int lane) {
      if (w.pc[lane] < pc) pc = w.pc[lane];
    });
    uint32_t mask = 0;
    int32_t next_other = INT_MAX;
    ForEachLane(runnable, [&](int lane) {
      if (w.pc[lane] == pc) {
        mask |= 1u << lane;
      } else if (w.pc[lane] < next_other) {
        next_other = w.pc[lane];
      }
    });
    // Runs the group from `pc` until it splits, meets other lanes, or stops.
    while (true) {
      const Instr& instr = code[pc];
      if (++launch.warp_instructions > budget) {
        return w.Fail(instr, -1, FaultKind::kTimeout,
                      absl::StrCat("the launch exceeded its budget of ", budget,
                                   " warp instructions (an endless loop? raise "
                                   "EMBER_VIRTUAL_GPU_MAX_INSTRUCTIONS if not)"));
      }
      const uint32_t exec = instr.guard >= 0 ? GuardMask(w, instr, mask) : mask;
      launch.thread_instructions += static_cast<uint64_t>(__builtin_popcount(exec));
      if (instr.flow == Flow::kNext) {
        if (exec != 0 && !instr.exec(instr, w, exec)) return false;
        ++pc;
      } else if (instr.flow == Flow::kBranch) {
        if (exec == mask) {
          pc = static_cast<int32_t>(instr.target);
        } else if (exec == 0) {
          ++pc;
        } else {
          SetPcs(w, exec, static_cast<int32_t>(instr.target));
          SetPcs(w, mask & ~exec, pc + 1);
          break;
        }
      } else if (instr.flow == Flow::kCall) {
        if (exec == 0) {
          ++pc;
        } else {
          if (!DoCall(w, instr, pc, exec)) return false;
          SetPcs(w, exec, static_cast<int32_t>(instr.target));
          SetPcs(w, mask & ~exec, pc + 1);
          break;
        }
      } else if (instr.flow == Flow::kReturn || instr.flow == Flow::kExit) {
        if (exec == 0) {
          ++pc;
        } else {
          SetPcs(w, mask & ~exec, pc + 1);
          if (instr.flow == Flow::kExit) {
            w.exited |= exec;
            ForEachLane(exec, [&](int lane) { w.exit_pc[lane] = pc; });
          } else {
            DoReturn(w, pc, exec);
          }
          break;
        }
      } else if (instr.flow == Flow::kBarrier) {
        if (exec == 0) {
          ++pc;
        } else if (instr.width == 1) {  // bar.arrive: counts the arrival, does not wait
          const uint32_t id = Get<uint32_t>(w, instr.ops[0], __builtin_ctz(exec));
          if (id >= 16) {
            return w.Fail(instr, __builtin_ctz(exec), FaultKind::kLaunchFailed,
                          absl::StrCat("barrier id ", id, " out of range [0, 16)"));
          }
          w.block->arrivals[id] += static_cast<uint32_t>(__builtin_popcount(exec));
          ++pc;
        } else {
          SetPcs(w, exec, pc);
          w.waiting |= exec;
          w.waiting_barrier |= exec;
          SetPcs(w, mask & ~exec, pc + 1);
          break;
        }
      } else if (instr.flow == Flow::kWarpSync) {
        if (exec == 0) {
          ++pc;
        } else {
          uint32_t done = 0;
          if (!WarpSync(w, instr, pc, exec, &done)) return false;
          SetPcs(w, mask & ~exec, pc + 1);
          if (done == 0) break;  // the arrivals wait
          SetPcs(w, done, pc + 1);
          if (done != mask) break;  // lanes that waited joined: regroup
          ++pc;
        }
      } else {  // kTrap
        if (exec != 0) {
          return w.Fail(instr, __builtin_ctz(exec), FaultKind::kIllegalInstruction,
                        "trap instruction executed");
        }
        ++pc;
      }
      if (pc >= next_other) {
        SetPcs(w, mask, pc);
        break;
      }
    }
  }
}

}  // namespace ember::vgpu::ptx
