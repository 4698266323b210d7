// Resolves a thread's address in a state space (PTX ISA "State Spaces", "Generic Addressing") to
// the host bytes behind it, with every check the virtual GPU makes: alignment, bounds of the
// shared/local/parameter areas, live device allocations (through the driver), read-only spaces,
// and the shared-memory race and poison checks. Null after reporting a fault.
#ifndef EMBER_TESTS_VIRTUAL_GPU_PTX_MEMORY_ACCESS_H_
#define EMBER_TESTS_VIRTUAL_GPU_PTX_MEMORY_ACCESS_H_

#include <cstdint>

#include "tests/virtual_gpu/ptx/exec_state.h"
#include "tests/virtual_gpu/ptx/shared_memory_checker.h"

namespace ember::vgpu::ptx {

enum class AccessKind : uint8_t { kRead, kWrite, kAtomic };

uint8_t* ResolveAccess(Space space, Warp& w, const Instr& instr, int lane, uint64_t address,
                       uint32_t size, AccessKind kind);

}  // namespace ember::vgpu::ptx

#endif  // EMBER_TESTS_VIRTUAL_GPU_PTX_MEMORY_ACCESS_H_
