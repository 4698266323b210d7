// Opens the CUDA libraries Ember uses (libcuda.so.1, and for the backend libcublasLt.so.13 and
// libnccl.so.2) with dlopen, from a configured directory first: EMBER_CUDA_LIBRARY_PATH (or the
// cuda_library_path client option) names it, e.g. build/virtual_gpu/lib for the virtual GPU.
#ifndef EMBER_STREAM_EXECUTOR_CUDA_CUDA_LIBRARY_H_
#define EMBER_STREAM_EXECUTOR_CUDA_CUDA_LIBRARY_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace ember::se::cuda {

// Closes the library handle. Libraries are opened with RTLD_NODELETE: drivers keep threads and
// exit handlers of their own, so their code must stay mapped after Ember lets go of them.
struct DlCloser {
  void operator()(void* handle) const;
};
using DlHandle = std::unique_ptr<void, DlCloser>;

struct OpenedLibrary {
  DlHandle handle;
  std::string path;  // what was opened: "<directory>/<soname>" or the bare soname
};

// `soname` from `directory` when that holds a file of that name, otherwise through the dynamic
// loader's search path. FailedPrecondition "<what> not found (<dlerror>)" when it cannot be
// opened. A file that exists in `directory` but fails to load is an error too, not a reason to
// fall back to another copy.
absl::StatusOr<OpenedLibrary> OpenCudaLibrary(const std::string& soname,
                                              const std::string& directory,
                                              const std::string& what);

}  // namespace ember::se::cuda

#endif  // EMBER_STREAM_EXECUTOR_CUDA_CUDA_LIBRARY_H_
