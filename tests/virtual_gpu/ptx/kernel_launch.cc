#include "tests/virtual_gpu/ptx/kernel_launch.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "tests/virtual_gpu/ptx/block_runner.h"

namespace ember::vgpu::ptx {
namespace {

constexpr uint8_t kSharedPoison = 0xcd;

void InitWarp(Launch& launch, Block& block, Warp& w, int index) {
  const KernelProgram& program = *launch.program;
  w.launch = &launch;
  w.block = &block;
  w.index = index;
  w.regs.assign(static_cast<size_t>(program.num_slots) * 32, 0);
  for (size_t c = 0; c < launch.constants.size(); ++c) {
    uint64_t* slot = w.Slot(program.constant_base + static_cast<int32_t>(c));
    std::fill(slot, slot + 32, launch.constants[c]);
  }
  w.local.assign(static_cast<size_t>(program.local_bytes) * 32, 0);
  w.scratch.assign(static_cast<size_t>(program.param_scratch_bytes) * 32, 0);
  w.call_stack.assign(static_cast<size_t>(std::max(program.max_call_depth, 1)) * 32, 0);
}

// Per-block state of a warp: program counters, masks and the special registers.
void StartWarp(Launch& launch, Block& block, Warp& w) {
  const LaunchDims& d = launch.dims;
  const uint32_t first = static_cast<uint32_t>(w.index) * 32;
  w.present = 0;
  w.exited = 0;
  w.waiting = 0;
  w.waiting_barrier = 0;
  w.sync_epoch = 1;
  std::fill(std::begin(w.pc), std::end(w.pc), 0);
  std::fill(std::begin(w.depth), std::end(w.depth), 0);
  const uint32_t nwarps = static_cast<uint32_t>(block.warps.size());
  for (int lane = 0; lane < 32; ++lane) {
    const uint32_t t = first + static_cast<uint32_t>(lane);
    if (t >= block.nthreads) break;
    w.present |= 1u << lane;
    w.tid[lane] = static_cast<uint16_t>(t);
    const uint32_t values[kNumSpecialSlots] = {
        t % d.block[0], (t / d.block[0]) % d.block[1], t / (d.block[0] * d.block[1]),
        d.block[0], d.block[1], d.block[2],
        block.ctaid[0], block.ctaid[1], block.ctaid[2],
        d.grid[0], d.grid[1], d.grid[2],
        static_cast<uint32_t>(lane), static_cast<uint32_t>(w.index), std::max(nwarps, 64u),
        (block.ctaid[0] + block.ctaid[1] * d.grid[0]) % launch.options.sm_count,
        launch.options.sm_count, 1,
        1u << lane, (lane == 31 ? 0xffffffffu : (2u << lane) - 1), (1u << lane) - 1,
        ~((1u << lane) - 1), lane == 31 ? 0u : ~((2u << lane) - 1),
        d.dynamic_shared_bytes, launch.program->static_shared_bytes + d.dynamic_shared_bytes,
        0};
    for (int s = 0; s < kNumSpecialSlots; ++s) w.Slot(s)[lane] = values[s];
  }
}

}  // namespace

LaunchResult RunKernel(const KernelProgram& program, std::vector<uint64_t> constants,
                       std::vector<uint8_t> params, const LaunchDims& dims, GlobalMemory& memory,
                       const LaunchOptions& options) {
  Launch launch;
  launch.program = &program;
  launch.constants = std::move(constants);
  launch.params = std::move(params);
  launch.dims = dims;
  launch.options = options;
  if (launch.options.sm_count == 0) launch.options.sm_count = 1;
  launch.memory = &memory;
  launch.threads_per_block = dims.block[0] * dims.block[1] * dims.block[2];
  const uint32_t shared_bytes = dims.dynamic_shared_bytes > 0
                                    ? program.dynamic_shared_offset + dims.dynamic_shared_bytes
                                    : program.static_shared_bytes;
  launch.shadow.Resize(shared_bytes);

  Block block;
  block.launch = &launch;
  block.nthreads = launch.threads_per_block;
  block.shared.assign(shared_bytes, kSharedPoison);
  const uint32_t nwarps = (block.nthreads + 31) / 32;
  block.warps.resize(nwarps);
  for (uint32_t i = 0; i < nwarps; ++i) InitWarp(launch, block, block.warps[i], static_cast<int>(i));

  const uint64_t blocks = uint64_t{dims.grid[0]} * dims.grid[1] * dims.grid[2];
  LaunchResult result;
  for (uint64_t n = 0; n < blocks; ++n) {
    const uint64_t linear = options.reverse_warp_order ? blocks - 1 - n : n;
    block.ctaid[0] = static_cast<uint32_t>(linear % dims.grid[0]);
    block.ctaid[1] = static_cast<uint32_t>((linear / dims.grid[0]) % dims.grid[1]);
    block.ctaid[2] = static_cast<uint32_t>(linear / (uint64_t{dims.grid[0]} * dims.grid[1]));
    block.first_epoch = launch.shadow.NewEpoch();
    block.epoch = block.first_epoch;
    std::fill(std::begin(block.arrivals), std::end(block.arrivals), 0);
    if (!block.shared.empty()) std::memset(block.shared.data(), kSharedPoison, block.shared.size());
    for (Warp& w : block.warps) StartWarp(launch, block, w);
    if (!RunBlock(block)) break;
  }
  result.fault = launch.faulted ? launch.fault_kind : FaultKind::kNone;
  result.message = launch.fault_message;
  result.warp_instructions = launch.warp_instructions;
  result.thread_instructions = launch.thread_instructions;
  return result;
}

}  // namespace ember::vgpu::ptx
