// CUresult names and descriptions, and the detail the virtual driver attaches to a failure: the
// last failing call on a thread records why, and cuGetErrorString for that code returns the
// standard text followed by the detail, so an error surfacing in Ember names what was wrong
// (e.g. the kernel, line, thread and address of an illegal access).
#ifndef EMBER_TESTS_VIRTUAL_GPU_DRIVER_ERRORS_H_
#define EMBER_TESTS_VIRTUAL_GPU_DRIVER_ERRORS_H_

#include <cuda.h>

#include <string>

namespace ember::vgpu {

// Records `detail` for `code` on this thread and returns `code`.
CUresult Fail(CUresult code, const std::string& detail);
// Forgets this thread's detail (done at the start of every call).
void ClearDetail();

const char* ErrorName(CUresult code);         // "CUDA_ERROR_INVALID_VALUE"; null if unknown
const char* ErrorDescription(CUresult code);  // "invalid argument"; null if unknown
// The description plus this thread's detail for `code`, valid until the next call here.
const char* DescriptionWithDetail(CUresult code);

}  // namespace ember::vgpu

#endif  // EMBER_TESTS_VIRTUAL_GPU_DRIVER_ERRORS_H_
