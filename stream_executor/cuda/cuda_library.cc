#include "stream_executor/cuda/cuda_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <utility>

#include "absl/strings/str_cat.h"

namespace ember::se::cuda {
namespace {

std::string DlErrorText() {
  const char* text = dlerror();
  return text != nullptr ? text : "unknown dlerror";
}

bool IsFile(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && !S_ISDIR(info.st_mode);
}

}  // namespace

void DlCloser::operator()(void* handle) const { dlclose(handle); }

absl::StatusOr<OpenedLibrary> OpenCudaLibrary(const std::string& soname,
                                              const std::string& directory,
                                              const std::string& what) {
  std::string path = soname;
  if (!directory.empty() && soname.find('/') == std::string::npos) {
    const std::string candidate = absl::StrCat(directory, "/", soname);
    if (IsFile(candidate)) path = candidate;
  }
  dlerror();  // clear any stale error
  DlHandle handle(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE));
  if (handle == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("no ", what, " found (", DlErrorText(), ")"));
  }
  return OpenedLibrary{std::move(handle), std::move(path)};
}

}  // namespace ember::se::cuda
