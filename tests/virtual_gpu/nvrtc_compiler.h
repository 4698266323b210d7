// Compiles CUDA C++ to PTX with the real NVRTC of the CUDA toolkit (it runs on the CPU), for the
// virtual GPU's tests. NVRTC is opened with dlopen; results are cached per source, arch and
// options, so a test binary compiles each kernel file once.
#ifndef EMBER_TESTS_VIRTUAL_GPU_NVRTC_COMPILER_H_
#define EMBER_TESTS_VIRTUAL_GPU_NVRTC_COMPILER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ember::vgpu::testing {

// `arch` is "compute_80" or "compute_90". FailedPrecondition when NVRTC cannot be loaded,
// InvalidArgument with NVRTC's log when the source does not compile.
absl::StatusOr<std::string> CompileToPtx(const std::string& source, const std::string& arch,
                                         const std::vector<std::string>& options = {});

}  // namespace ember::vgpu::testing

#endif  // EMBER_TESTS_VIRTUAL_GPU_NVRTC_COMPILER_H_
