#include "tests/virtual_gpu/nvrtc_compiler.h"

#include <dlfcn.h>
#include <nvrtc.h>

#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"

namespace ember::vgpu::testing {
namespace {

struct Nvrtc {
  decltype(&nvrtcCreateProgram) create = nullptr;
  decltype(&nvrtcCompileProgram) compile = nullptr;
  decltype(&nvrtcGetPTXSize) ptx_size = nullptr;
  decltype(&nvrtcGetPTX) ptx = nullptr;
  decltype(&nvrtcGetProgramLogSize) log_size = nullptr;
  decltype(&nvrtcGetProgramLog) log = nullptr;
  decltype(&nvrtcDestroyProgram) destroy = nullptr;
  std::string error;
};

const Nvrtc& Library() {
  static const Nvrtc nvrtc = [] {
    Nvrtc n;
    void* handle = dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* e = dlerror();
      n.error = absl::StrCat("cannot load NVRTC (libnvrtc.so.13): ", e ? e : "unknown error");
      return n;
    }
    n.create = reinterpret_cast<decltype(n.create)>(dlsym(handle, "nvrtcCreateProgram"));
    n.compile = reinterpret_cast<decltype(n.compile)>(dlsym(handle, "nvrtcCompileProgram"));
    n.ptx_size = reinterpret_cast<decltype(n.ptx_size)>(dlsym(handle, "nvrtcGetPTXSize"));
    n.ptx = reinterpret_cast<decltype(n.ptx)>(dlsym(handle, "nvrtcGetPTX"));
    n.log_size = reinterpret_cast<decltype(n.log_size)>(dlsym(handle, "nvrtcGetProgramLogSize"));
    n.log = reinterpret_cast<decltype(n.log)>(dlsym(handle, "nvrtcGetProgramLog"));
    n.destroy = reinterpret_cast<decltype(n.destroy)>(dlsym(handle, "nvrtcDestroyProgram"));
    if (!n.create || !n.compile || !n.ptx_size || !n.ptx || !n.log_size || !n.log || !n.destroy) {
      n.error = "NVRTC lacks an entry point";
    }
    return n;
  }();
  return nvrtc;
}

}  // namespace

absl::StatusOr<std::string> CompileToPtx(const std::string& source, const std::string& arch,
                                         const std::vector<std::string>& options) {
  static absl::Mutex mu(absl::kConstInit);
  static std::map<std::tuple<std::string, std::string, std::string>, std::string> cache;
  const auto key = std::make_tuple(source, arch, absl::StrJoin(options, " "));
  {
    absl::MutexLock lock(&mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  const Nvrtc& n = Library();
  if (!n.error.empty()) return absl::FailedPreconditionError(n.error);
  nvrtcProgram program = nullptr;
  if (n.create(&program, source.c_str(), "kernels.cu", 0, nullptr, nullptr) != NVRTC_SUCCESS) {
    return absl::InternalError("nvrtcCreateProgram failed");
  }
  std::vector<std::string> all = {absl::StrCat("--gpu-architecture=", arch),
                                  absl::StrCat("-I", EMBER_CUDA_INCLUDE_DIR), "-default-device",
                                  "-std=c++17"};
  all.insert(all.end(), options.begin(), options.end());
  std::vector<const char*> argv;
  for (const std::string& o : all) argv.push_back(o.c_str());
  const nvrtcResult compiled = n.compile(program, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  n.log_size(program, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 0) n.log(program, log.data());
  if (compiled != NVRTC_SUCCESS) {
    n.destroy(&program);
    return absl::InvalidArgumentError(absl::StrCat("NVRTC failed for ", arch, ":\n", log));
  }
  size_t size = 0;
  n.ptx_size(program, &size);
  std::string ptx(size, '\0');
  n.ptx(program, ptx.data());
  n.destroy(&program);
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  absl::MutexLock lock(&mu);
  cache[key] = ptx;
  return ptx;
}

}  // namespace ember::vgpu::testing
