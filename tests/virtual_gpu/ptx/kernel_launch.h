// Runs a compiled kernel over its grid on the calling thread, block after block, and reports the
// first fault (kind and a message naming kernel, line, thread and address) or success, with the
// number of instructions it interpreted.
#ifndef EMBER_TESTS_VIRTUAL_GPU_PTX_KERNEL_LAUNCH_H_
#define EMBER_TESTS_VIRTUAL_GPU_PTX_KERNEL_LAUNCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tests/virtual_gpu/ptx/exec_state.h"

namespace ember::vgpu::ptx {

struct LaunchResult {
  FaultKind fault = FaultKind::kNone;
  std::string message;
  uint64_t warp_instructions = 0;
  uint64_t thread_instructions = 0;
};

// `constants` is the program's constant pool with module addresses patched in; `params` the
// kernel parameter buffer (KernelProgram::param_bytes). Dimensions and shared-memory sizes must
// already be validated against the device (the driver does that).
LaunchResult RunKernel(const KernelProgram& program, std::vector<uint64_t> constants,
                       std::vector<uint8_t> params, const LaunchDims& dims, GlobalMemory& memory,
                       const LaunchOptions& options);

}  // namespace ember::vgpu::ptx

#endif  // EMBER_TESTS_VIRTUAL_GPU_PTX_KERNEL_LAUNCH_H_
