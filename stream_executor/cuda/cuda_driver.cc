#include "stream_executor/cuda/cuda_driver.h"

#include <dlfcn.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace ember::se::cuda {
namespace {

// Two steps so that the argument is macro-expanded first: the string is the ABI symbol that
// cuda.h maps the API name to ("cuMemAlloc_v2").
#define EMBER_CUDA_STRINGIFY_(x) #x
#define EMBER_CUDA_STRINGIFY(x) EMBER_CUDA_STRINGIFY_(x)

std::string DlErrorText() {
  const char* text = dlerror();
  return text != nullptr ? text : "unknown dlerror";
}

template <typename Fn>
absl::Status Resolve(void* handle, const std::string& library, const char* symbol, Fn* out) {
  dlerror();  // clear any stale error
  void* address = dlsym(handle, symbol);
  if (address == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("CUDA driver ", library, " lacks ", symbol,
                                                      " (driver older than the toolkit Ember was "
                                                      "built with?): ",
                                                      DlErrorText()));
  }
  *out = reinterpret_cast<Fn>(address);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaDriver>> CudaDriver::Load(const std::string& library,
                                                             const std::string& library_directory) {
  EMBER_ASSIGN_OR_RETURN(OpenedLibrary opened,
                         OpenCudaLibrary(library, library_directory, "CUDA driver"));
  void* raw_handle = opened.handle.get();
  const std::string path = opened.path;
  auto driver = std::make_unique<CudaDriver>(PrivateTag{}, std::move(opened.handle), path,
                                             library_directory);
#define EMBER_CUDA_RESOLVE_FUNCTION(fn)                                                          \
  if (absl::Status status = Resolve(raw_handle, path, EMBER_CUDA_STRINGIFY(fn), &driver->fn);    \
      !status.ok()) {                                                                            \
    return status;                                                                               \
  }
  EMBER_CUDA_DRIVER_FUNCTIONS(EMBER_CUDA_RESOLVE_FUNCTION)
#undef EMBER_CUDA_RESOLVE_FUNCTION
  return driver;
}

}  // namespace ember::se::cuda
