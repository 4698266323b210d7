// What the virtual libcuda.so.1 exports beyond the Driver API: hooks for tests (leak counts,
// injected allocation failures, the last fault, interpreter statistics) and the small interface
// the virtual cuBLASLt and NCCL use to run work on a stream and to reach device memory. Test
// infrastructure only; Ember itself never calls these.
#ifndef EMBER_TESTS_VIRTUAL_GPU_DRIVER_VIRTUAL_GPU_HOOKS_H_
#define EMBER_TESTS_VIRTUAL_GPU_DRIVER_VIRTUAL_GPU_HOOKS_H_

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Streams, events, modules, device allocations and context retains still alive, plus what a
// context release had to free because the user had not.
int ember_vgpu_live_handles(void);
// The next `count` cuMemAlloc calls fail with CUDA_ERROR_OUT_OF_MEMORY.
void ember_vgpu_fail_next_allocations(int count);
// Copies the sticky fault message of `device`'s primary context (empty if none); returns its
// full length.
size_t ember_vgpu_last_fault(int device, char* buffer, size_t capacity);
// Totals since the process started: interpreted warp and thread instructions, kernel launches,
// and nanoseconds spent running kernels.
void ember_vgpu_statistics(uint64_t* warp_instructions, uint64_t* thread_instructions,
                           uint64_t* launches, uint64_t* nanoseconds);

// Launches made after these calls use the given interpreter budget (warp instructions; 0 restores
// the default of EMBER_VIRTUAL_GPU_MAX_INSTRUCTIONS or 2^34) and warp/block order (reverse or
// not; EMBER_VIRTUAL_GPU_SCHEDULE=reverse sets it for a whole process).
void ember_vgpu_set_instruction_budget(uint64_t warp_instructions);
void ember_vgpu_set_reverse_order(int reverse);

// For the library stand-ins. Calls `work(arg, run)` when `stream` (null: the current context's
// legacy stream) reaches it, whichever context is current. `run` is 0 once the context
// has faulted: the work must then only release `arg`. `work` may use ember_vgpu_resolve but not
// the Driver API.
CUresult ember_vgpu_stream_enqueue(CUstream stream, void (*work)(void* arg, int run), void* arg);
// The device of the current context (or of `stream` when it is not null).
CUresult ember_vgpu_stream_device(CUstream stream, int* device);
// Host bytes behind [address, address + size) as seen from `device` (its own memory, peers'
// memory, pinned host memory); 0 on success, otherwise writes why into `error`.
int ember_vgpu_resolve(int device, uint64_t address, uint64_t size, int write, void** host,
                       char* error, size_t capacity);
// Makes `code` the sticky error of `device`'s context with `message` (a library kernel failed).
void ember_vgpu_fault(int device, CUresult code, const char* message);

#ifdef __cplusplus
}
#endif

#endif  // EMBER_TESTS_VIRTUAL_GPU_DRIVER_VIRTUAL_GPU_HOOKS_H_
