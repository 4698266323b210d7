// Runs one warp: lanes at the lowest program counter execute together (a min-PC scheduler, which
// reconverges divergent lanes where their paths meet), until every lane has exited or waits at a
// barrier or at a warp-synchronous instruction whose other lanes have not arrived yet.
#ifndef EMBER_TESTS_VIRTUAL_GPU_PTX_WARP_SCHEDULER_H_
#define EMBER_TESTS_VIRTUAL_GPU_PTX_WARP_SCHEDULER_H_

#include "tests/virtual_gpu/ptx/exec_state.h"

namespace ember::vgpu::ptx {

// False after a fault (Launch::fault_message says what and where).
bool RunWarp(Warp& warp);

}  // namespace ember::vgpu::ptx

#endif  // EMBER_TESTS_VIRTUAL_GPU_PTX_WARP_SCHEDULER_H_
