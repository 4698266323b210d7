// The state of a kernel while it runs on the virtual GPU: the launch (grid, parameters, global
// memory, the first fault), each block (shared memory and its race/poison shadow) and each warp
// (32 lanes' registers in a slot-major register file, per-lane program counters, call stacks and
// local memory). Instruction handlers read and write it through the small helpers at the end.
#ifndef EMBER_TESTS_VIRTUAL_GPU_PTX_EXEC_STATE_H_
#define EMBER_TESTS_VIRTUAL_GPU_PTX_EXEC_STATE_H_

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/virtual_gpu/ptx/ptx_program.h"
#include "tests/virtual_gpu/ptx/shared_memory_checker.h"

namespace ember::vgpu::ptx {

// What a fault maps to in the Driver API (the driver turns it into a sticky CUresult).
enum class FaultKind : uint8_t {
  kNone,
  kIllegalAddress,      // CUDA_ERROR_ILLEGAL_ADDRESS: outside any live allocation, out of bounds
  kMisalignedAddress,   // CUDA_ERROR_MISALIGNED_ADDRESS
  kLaunchFailed,        // CUDA_ERROR_LAUNCH_FAILED: races, barrier/shuffle misuse, poison reads
  kIllegalInstruction,  // CUDA_ERROR_ILLEGAL_INSTRUCTION: trap
  kTimeout,             // CUDA_ERROR_LAUNCH_TIMEOUT: instruction budget exhausted
};

// One contiguous piece of device-visible memory, as the driver describes it to the interpreter.
struct DeviceRange {
  uint64_t base = 0;
  uint64_t size = 0;
  uint8_t* host = nullptr;
  bool writable = true;
  const std::atomic<bool>* freed = nullptr;  // set by cuMemFree while a launch holds the range
  std::shared_ptr<const void> keep_alive;    // keeps `host` valid for the launch
  std::string description;                   // "the 4096-byte allocation at 0x..."
};

// The driver's view of device memory for one launch. Find fails with the reason the address is
// not usable ("use after free of ...", "not inside any allocation of device 0").
class GlobalMemory {
 public:
  virtual ~GlobalMemory() = default;
  virtual absl::StatusOr<DeviceRange> Find(uint64_t address) = 0;
};

struct LaunchDims {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t dynamic_shared_bytes = 0;
};

struct LaunchOptions {
  uint64_t instruction_budget = uint64_t{1} << 34;  // warp instructions per launch
  bool check_shared_races = true;
  bool check_shared_poison = true;
  bool reverse_warp_order = false;  // run warps and blocks in reverse order (order sensitivity)
  uint32_t sm_count = 1;
};

// Windows of the generic address space (PTX ISA "Generic Addressing"): a generic address in
// one of these maps to the thread's .shared or .local (or a kernel's .param) space; everything
// else is global. Device allocations live far above them.
inline constexpr uint64_t kSharedWindow = 0x0000900000000000ull;
inline constexpr uint64_t kLocalWindow = 0x0000910000000000ull;
inline constexpr uint64_t kParamWindow = 0x0000920000000000ull;
inline constexpr uint64_t kWindowSize = 0x0000010000000000ull;

struct Launch;
struct Block;

std::string HexAddress(uint64_t address);  // "0x0000a00000001000"

struct Warp {
  Launch* launch = nullptr;
  Block* block = nullptr;
  std::vector<uint64_t> regs;  // slot * 32 + lane
  int32_t pc[32] = {};
  int32_t exit_pc[32] = {};
  uint32_t present = 0;  // lanes that exist (a partial last warp has fewer)
  uint32_t exited = 0;
  uint32_t waiting = 0;  // stopped at a barrier or a warp-synchronous instruction
  uint32_t waiting_barrier = 0;  // the subset of `waiting` stopped at bar.sync/bar.red
  int index = 0;         // warp index in the block
  uint16_t tid[32] = {};  // linear thread index in the block
  uint32_t sync_epoch = 1;  // bumped by bar.warp.sync (race-check ordering inside the warp)
  std::vector<uint8_t> local;     // lane * local_bytes
  std::vector<uint8_t> scratch;   // lane * param_scratch_bytes (call-site .param variables)
  std::vector<int32_t> call_stack;  // lane * max_call_depth
  uint8_t depth[32] = {};

  uint64_t* Slot(int32_t slot) { return regs.data() + static_cast<size_t>(slot) * 32; }
  // Records the launch's first fault, naming the kernel, line, thread and block. Returns false.
  bool Fail(const Instr& instr, int lane, FaultKind kind, const std::string& detail);
  std::string ThreadName(int lane) const;
};

struct Block {
  Launch* launch = nullptr;
  uint32_t ctaid[3] = {};
  uint32_t nthreads = 0;
  std::vector<uint8_t> shared;
  uint32_t epoch = 0;        // bumped by every released bar.sync
  uint32_t first_epoch = 0;  // epoch at block start (older shadow entries mean "unwritten")
  std::vector<Warp> warps;
  // bar.arrive arrivals per barrier id since its last release.
  uint32_t arrivals[16] = {};
};

struct Launch {
  const KernelProgram* program = nullptr;
  std::vector<uint64_t> constants;  // relocated constant pool
  std::vector<uint8_t> params;      // kernel parameter buffer
  LaunchDims dims;
  LaunchOptions options;
  GlobalMemory* memory = nullptr;
  SharedMemoryChecker shadow;
  uint32_t threads_per_block = 0;
  uint64_t warp_instructions = 0;
  uint64_t thread_instructions = 0;
  bool faulted = false;
  FaultKind fault_kind = FaultKind::kNone;
  std::string fault_message;
  uint64_t clock = 0;  // %clock64: advances with executed instructions
  // Small cache of recently used device ranges.
  DeviceRange cache[4];
  int cache_next = 0;
  // Resolves [address, address + size) in global memory for reading or writing; null after
  // reporting the fault.
  uint8_t* ResolveGlobal(Warp& warp, const Instr& instr, int lane, uint64_t address, uint64_t size,
                         bool write);
};

// ---- helpers for instruction handlers
template <class T>
inline T Get(Warp& w, int32_t slot, int lane) {
  T value;
  std::memcpy(&value, &w.regs[static_cast<size_t>(slot) * 32 + lane], sizeof(T));
  return value;
}
template <class T>
inline void Set(Warp& w, int32_t slot, int lane, T value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  w.regs[static_cast<size_t>(slot) * 32 + lane] = bits;
}
inline bool GetPred(Warp& w, int32_t slot, int lane) {
  return w.regs[static_cast<size_t>(slot) * 32 + lane] != 0;
}

template <class F>
inline void ForEachLane(uint32_t mask, F&& f) {
  if (mask == 0xffffffffu) {
    for (int lane = 0; lane < 32; ++lane) f(lane);
  } else {
    while (mask != 0) {
      const int lane = __builtin_ctz(mask);
      mask &= mask - 1;
      f(lane);
    }
  }
}

// Lanes of `mask` whose guard holds.
uint32_t GuardMask(Warp& w, const Instr& instr, uint32_t mask);

}  // namespace ember::vgpu::ptx

#endif  // EMBER_TESTS_VIRTUAL_GPU_PTX_EXEC_STATE_H_
