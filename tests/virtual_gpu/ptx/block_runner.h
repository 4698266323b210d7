// Runs one thread block: its warps in turn until each has exited or waits, then releases the
// barriers every expected thread reached (bar.sync / bar.red / counted bar.sync with bar.arrive).
// When no barrier can be released the block is deadlocked, which on a GPU is a hang: here it is a
// fault that names the waiting threads, the instructions and lines they wait at, and why the
// others will never come (exited, or waiting elsewhere).
#ifndef EMBER_TESTS_VIRTUAL_GPU_PTX_BLOCK_RUNNER_H_
#define EMBER_TESTS_VIRTUAL_GPU_PTX_BLOCK_RUNNER_H_

#include "tests/virtual_gpu/ptx/exec_state.h"

namespace ember::vgpu::ptx {

// False after a fault.
bool RunBlock(Block& block);

}  // namespace ember::vgpu::ptx

#endif  // EMBER_TESTS_VIRTUAL_GPU_PTX_BLOCK_RUNNER_H_
