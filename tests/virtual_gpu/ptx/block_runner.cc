#include "tests/virtual_gpu/ptx/block_runner.h"

#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/virtual_gpu/ptx/warp_scheduler.h"

namespace ember::vgpu::ptx {
namespace {

enum BarrierOp : uint32_t { kBarSync = 0, kBarRedPopc = 1, kBarRedAnd = 2, kBarRedOr = 3 };

struct Waiter {
  Warp* warp;
  int lane;
};

struct BarrierWait {
  std::vector<Waiter> waiters;
  std::set<int32_t> pcs;
  int64_t expected = -1;  // -1: every thread of the block
};

const Instr& InstrAt(const Warp& w, int32_t pc) { return w.launch->program->code[pc]; }

// Where a lane that is not at `pc` is: for messages about a wait that cannot complete.
std::string WhereIs(const Warp& w, int lane) {
  const uint32_t bit = 1u << lane;
  if (w.exited & bit) {
    return absl::StrCat("exited at line ", InstrAt(w, w.exit_pc[lane]).line);
  }
  const Instr& at = InstrAt(w, w.pc[lane]);
  return absl::StrCat("waits at line ", at.line, " (", at.text ? *at.text : "", ")");
}

bool ReportWarpSyncDeadlock(Block& b) {
  for (Warp& w : b.warps) {
    const uint32_t sync_waiters = w.waiting & ~w.waiting_barrier;
    if (sync_waiters == 0) continue;
    const int lane = __builtin_ctz(sync_waiters);
    const Instr& instr = InstrAt(w, w.pc[lane]);
    uint32_t member = sync_waiters;
    if (instr.sync_mask >= 0) member = Get<uint32_t>(w, instr.sync_mask, lane);
    uint32_t here = 0;
    ForEachLane(sync_waiters, [&](int l) {
      if (w.pc[l] == w.pc[lane]) here |= 1u << l;
    });
    const uint32_t missing = member & w.present & ~here;
    std::string detail = absl::StrFormat(
        "lanes 0x%08x of warp %d wait here for the other lanes of membermask 0x%08x", here,
        w.index, member);
    if (missing != 0) {
      const int other = __builtin_ctz(missing);
      absl::StrAppend(&detail, ", but lane ", other, " never arrives: it ", WhereIs(w, other));
    }
    return w.Fail(instr, lane, FaultKind::kLaunchFailed,
                  absl::StrCat(detail, " (on a GPU this hangs or is undefined)"));
  }
  return true;
}

}  // namespace

// Releases every barrier whose expected threads arrived; reports a deadlock when none can be.
bool ReleaseBarriers(Block& b) {
  std::map<uint32_t, BarrierWait> barriers;
  for (Warp& w : b.warps) {
    bool ok = true;
    ForEachLane(w.waiting_barrier, [&](int lane) {
      if (!ok) return;
      const Instr& instr = InstrAt(w, w.pc[lane]);
      const uint32_t id = Get<uint32_t>(w, instr.ops[0], lane);
      if (id >= 16) {
        ok = w.Fail(instr, lane, FaultKind::kLaunchFailed,
                    absl::StrCat("barrier id ", id, " out of range [0, 16)"));
        return;
      }
      BarrierWait& wait = barriers[id];
      wait.waiters.push_back({&w, lane});
      wait.pcs.insert(w.pc[lane]);
      if (instr.ops[1] >= 0) {
        const int64_t count = Get<uint32_t>(w, instr.ops[1], lane);
        if (count % 32 != 0 || count == 0) {
          ok = w.Fail(instr, lane, FaultKind::kLaunchFailed,
                      absl::StrCat("barrier thread count ", count,
                                   " is not a positive multiple of the warp size"));
          return;
        }
        if (wait.expected >= 0 && wait.expected != count) {
          ok = w.Fail(instr, lane, FaultKind::kLaunchFailed,
                      absl::StrCat("barrier ", id, " used with thread counts ", wait.expected,
                                   " and ", count, " at once"));
          return;
        }
        wait.expected = count;
      }
    });
    if (!ok) return false;
  }
  bool released = false;
  for (auto& [id, wait] : barriers) {
    const Waiter& first = wait.waiters.front();
    const Instr& instr = InstrAt(*first.warp, first.warp->pc[first.lane]);
    const uint64_t arrived = wait.waiters.size() + b.arrivals[id];
    if (wait.expected < 0) {
      // Every thread of the block must reach this very barrier instruction.
      for (Warp& w : b.warps) {
        if (w.exited != 0) {
          const int lane = __builtin_ctz(w.exited);
          return first.warp->Fail(
              instr, first.lane, FaultKind::kLaunchFailed,
              absl::StrCat("bar.sync waits for all ", b.nthreads, " threads of the block, but ",
                           w.ThreadName(lane), " exited at line ",
                           InstrAt(w, w.exit_pc[lane]).line,
                           " without reaching it (on a GPU this hangs or is undefined)"));
        }
      }
      if (wait.pcs.size() > 1) {
        for (const Waiter& other : wait.waiters) {
          if (other.warp->pc[other.lane] != first.warp->pc[first.lane]) {
            return first.warp->Fail(
                instr, first.lane, FaultKind::kLaunchFailed,
                absl::StrCat("divergent barrier: this thread waits at bar.sync line ", instr.line,
                             " while ", other.warp->ThreadName(other.lane),
                             " waits at line ",
                             InstrAt(*other.warp, other.warp->pc[other.lane]).line,
                             " (every thread of the block must reach the same barrier)"));
          }
        }
      }
      if (arrived < b.nthreads) continue;  // others wait elsewhere: reported as a deadlock
    } else if (arrived < static_cast<uint64_t>(wait.expected)) {
      continue;
    }
    // Release: bar.red computes its reduction over the waiting threads first.
    const uint32_t op = instr.aux;
    uint32_t popc = 0;
    bool all = true, any = false;
    if (op != kBarSync) {
      for (const Waiter& waiter : wait.waiters) {
        const Instr& at = InstrAt(*waiter.warp, waiter.warp->pc[waiter.lane]);
        const bool p = GetPred(*waiter.warp, at.ops[3], waiter.lane) != at.flag;
        popc += p ? 1 : 0;
        all = all && p;
        any = any || p;
      }
    }
    for (const Waiter& waiter : wait.waiters) {
      Warp& w = *waiter.warp;
      const Instr& at = InstrAt(w, w.pc[waiter.lane]);
      if (op == kBarRedPopc) Set<uint32_t>(w, at.ops[2], waiter.lane, popc);
      if (op == kBarRedAnd) Set<uint8_t>(w, at.ops[2], waiter.lane, all ? 1 : 0);
      if (op == kBarRedOr) Set<uint8_t>(w, at.ops[2], waiter.lane, any ? 1 : 0);
      const uint32_t bit = 1u << waiter.lane;
      w.waiting &= ~bit;
      w.waiting_barrier &= ~bit;
      ++w.pc[waiter.lane];
    }
    b.arrivals[id] = 0;
    released = true;
  }
  if (released) {
    b.epoch = b.launch->shadow.NewEpoch();
    return true;
  }
  if (!ReportWarpSyncDeadlock(b)) return false;
  // Only barrier waiters remain and none can be released.
  for (auto& [barrier_id, wait] : barriers) {
    const uint32_t id = barrier_id;  // the lambda below: clang 14 cannot capture a binding
    const Waiter& first = wait.waiters.front();
    const Instr& instr = InstrAt(*first.warp, first.warp->pc[first.lane]);
    std::string detail = absl::StrCat("barrier ", id, " waits for ",
                                      wait.expected < 0 ? b.nthreads : wait.expected,
                                      " threads but only ", wait.waiters.size() + b.arrivals[id],
                                      " arrive");
    for (Warp& w : b.warps) {
      const uint32_t elsewhere = w.present & ~w.exited & ~w.waiting_barrier;
      const uint32_t at_other = w.waiting_barrier;
      if (elsewhere != 0) {
        const int lane = __builtin_ctz(elsewhere);
        absl::StrAppend(&detail, "; ", w.ThreadName(lane), " ", WhereIs(w, lane));
        break;
      }
      bool reported = false;
      ForEachLane(at_other, [&](int lane) {
        if (reported) return;
        const uint32_t other_id = Get<uint32_t>(w, InstrAt(w, w.pc[lane]).ops[0], lane);
        if (other_id != id) {
          absl::StrAppend(&detail, "; ", w.ThreadName(lane), " waits at barrier ", other_id,
                          " on line ", InstrAt(w, w.pc[lane]).line);
          reported = true;
        }
      });
      if (reported) break;
    }
    return first.warp->Fail(instr, first.lane, FaultKind::kLaunchFailed,
                            absl::StrCat(detail, " (on a GPU this hangs)"));
  }
  // Nothing waits at a barrier and nothing runs: lanes wait on one another at warp-level sync.
  for (Warp& w : b.warps) {
    if ((w.present & ~w.exited) != 0) {
      const int lane = __builtin_ctz(w.present & ~w.exited);
      return w.Fail(InstrAt(w, w.pc[lane]), lane, FaultKind::kLaunchFailed,
                    "the block can make no progress (internal scheduler state)");
    }
  }
  return true;
}

bool RunBlock(Block& b) {
  const bool reverse = b.launch->options.reverse_warp_order;
  while (true) {
    const size_t n = b.warps.size();
    for (size_t i = 0; i < n; ++i) {
      Warp& w = b.warps[reverse ? n - 1 - i : i];
      if (!RunWarp(w)) return false;
    }
    bool all_exited = true;
    for (const Warp& w : b.warps) {
      if ((w.present & ~w.exited) != 0) all_exited = false;
    }
    if (all_exited) return true;
    if (!ReleaseBarriers(b)) return false;
  }
}

}  // namespace ember::vgpu::ptx
