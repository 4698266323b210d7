// The executable form of one PTX kernel: a linear instruction array (the kernel and every
// function it calls, branch and call targets resolved to indices), each instruction bound to the
// handler of its family and type, operands resolved to register-file slots. Immutable once built;
// one program may serve many launches and many loaded modules (module-variable addresses are
// patched into a per-module copy of the constant pool, see `relocations`).
#ifndef EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_PROGRAM_H_
#define EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_PROGRAM_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tests/virtual_gpu/ptx/float_format.h"
#include "tests/virtual_gpu/ptx/ptx_ast.h"
#include "tests/virtual_gpu/ptx/ptx_types.h"

namespace ember::vgpu::ptx {

struct Warp;
struct Instr;
// Runs `instr` for the lanes in `mask` (guard already applied). False after reporting a fault
// through Warp::Fail.
using ExecFn = bool (*)(const Instr& instr, Warp& warp, uint32_t mask);

// How an instruction moves the program counter; everything but kNext is handled by the warp
// scheduler (warp.cc), not by an ExecFn.
enum class Flow : uint8_t {
  kNext,
  kBranch,    // target
  kCall,      // target = callee entry; aux = index into KernelProgram::calls
  kReturn,
  kExit,
  kBarrier,   // bar.sync / bar.red / bar.arrive (aux: BarrierOp)
  kWarpSync,  // shfl/vote/match/redux/bar.warp.sync/activemask (exec runs once all arrived)
  kTrap,
};

// Register-file slots: the special registers first, then the constant pool, then registers.
enum SpecialSlot : int32_t {
  kSlotTidX, kSlotTidY, kSlotTidZ, kSlotNtidX, kSlotNtidY, kSlotNtidZ,
  kSlotCtaidX, kSlotCtaidY, kSlotCtaidZ, kSlotNctaidX, kSlotNctaidY, kSlotNctaidZ,
  kSlotLaneId, kSlotWarpId, kSlotNwarpId, kSlotSmId, kSlotNsmId, kSlotGridId,
  kSlotLanemaskEq, kSlotLanemaskLe, kSlotLanemaskLt, kSlotLanemaskGe, kSlotLanemaskGt,
  kSlotDynamicSmem, kSlotTotalSmem, kSlotZero,
  kNumSpecialSlots,
};

struct Instr {
  ExecFn exec = nullptr;
  Flow flow = Flow::kNext;
  uint8_t num_ops = 0;
  bool guard_negated = false;
  int32_t guard = -1;  // predicate slot
  int32_t sync_mask = -1;  // kWarpSync: the membermask operand's slot (-1: none, e.g. activemask)
  int32_t ops[12] = {};
  int64_t imm = 0;     // address offset
  uint32_t target = 0;
  uint32_t aux = 0;    // family-specific
  uint32_t aux2 = 0;
  Type type = Type::kNone;
  Type type2 = Type::kNone;
  Space space = Space::kNone;
  Rounding rounding = Rounding::kNearest;
  uint8_t width = 0;   // family-specific (access size, vector length, register width)
  uint8_t vec = 1;
  bool ftz = false;
  bool sat = false;
  bool flag = false;   // family-specific
  int line = 0;
  int function = 0;    // index into KernelProgram::function_names
  const std::string* text = nullptr;  // the statement as written
};

// A parameter-space copy done by call/ret: `bytes` from the caller's variable to the callee's.
struct ParamCopy {
  uint32_t from_offset;
  uint32_t to_offset;
  uint32_t bytes;
};
struct CallSite {
  std::vector<ParamCopy> arguments;  // caller's call-site .param -> callee parameters
  std::vector<ParamCopy> results;    // callee return parameters -> caller's call-site .param
};

// A constant-pool entry that holds the address of a module variable (plus an offset).
struct Relocation {
  int32_t constant_index;
  std::string symbol;
  int64_t offset;
};

struct KernelParam {
  std::string name;
  uint32_t offset;
  uint32_t size;
  uint32_t align;
};

struct KernelProgram {
  std::string name;
  std::vector<Instr> code;
  std::vector<std::string> function_names;  // [0] is the kernel
  int32_t num_slots = 0;
  int32_t constant_base = kNumSpecialSlots;
  std::vector<uint64_t> constants;
  std::vector<Relocation> relocations;
  std::vector<CallSite> calls;
  std::vector<KernelParam> params;
  uint32_t param_bytes = 0;
  // Shared memory: static variables from offset 0; the extern (dynamic) array after them.
  uint32_t static_shared_bytes = 0;
  uint32_t dynamic_shared_align = 16;
  uint32_t dynamic_shared_offset = 0;  // static bytes rounded up to the dynamic alignment
  // Per thread.
  uint32_t local_bytes = 0;
  uint32_t param_scratch_bytes = 0;
  int max_call_depth = 0;
  int maxntid[3] = {0, 0, 0};
  int reqntid[3] = {0, 0, 0};
  int registers = 0;  // declared registers over the kernel and its callees (for attributes)
  // Texts of the statements (Instr::text points here).
  std::vector<std::unique_ptr<std::string>> texts;
  int ptx_version = 0;  // major * 10 + minor
  int target_sm = 0;    // 80 for sm_80
};

}  // namespace ember::vgpu::ptx

#endif  // EMBER_TESTS_VIRTUAL_GPU_PTX_PTX_PROGRAM_H_
