// libpjrt_ember.so: the library frameworks load. It holds no Ember code: GetPjrtApi and
// TFNPD_InitPlugin open libpjrt_ember_core.so (next to it) and forward to the same entry points
// there. The core is opened with RTLD_DEEPBIND so that it and its own dependencies (Debian's
// libprotobuf above all) bind to each other before anything already in the process: TensorFlow
// puts its own, incompatible protobuf runtime into the global scope, and without this the core's
// generated protobuf code would register into and run against TensorFlow's. Sanitizer runtimes
// refuse RTLD_DEEPBIND, so sanitizer builds open the core plainly (they never run inside TF).
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "pjrt_plugin/include/pjrt_c_api.h"
#include "pjrt_plugin/include/tf_plugin_c_api.h"

extern "C" __attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi();
extern "C" __attribute__((visibility("default"))) const TFNPD_Api* TFNPD_InitPlugin(
    TFNPD_PluginParams* params, TF_Status* status);

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

constexpr char kCoreLibrary[] = "libpjrt_ember_core.so";

// The core's handle, opened on first use; null (with the reason printed once) when it cannot be.
void* Core() {
  static void* const handle = [] () -> void* {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&GetPjrtApi), &info) == 0 || info.dli_fname == nullptr) {
      std::fprintf(stderr, "Ember: cannot tell where libpjrt_ember.so was loaded from\n");
      return nullptr;
    }
    std::string path(info.dli_fname);
    const size_t slash = path.rfind('/');
    path = (slash == std::string::npos ? std::string(".") : path.substr(0, slash)) + "/" + kCoreLibrary;
    const int flags = RTLD_NOW | RTLD_LOCAL | (kSanitized ? 0 : RTLD_DEEPBIND);
    void* core = dlopen(path.c_str(), flags);
    if (core == nullptr) {
      const char* why = dlerror();
      std::fprintf(stderr, "Ember: cannot load %s: %s\n", path.c_str(), why ? why : "unknown error");
    }
    return core;
  }();
  return handle;
}

template <typename Fn>
Fn CoreEntry(const char* name) {
  void* core = Core();
  if (core == nullptr) return nullptr;
  void* entry = dlsym(core, name);
  if (entry == nullptr) std::fprintf(stderr, "Ember: %s does not export %s\n", kCoreLibrary, name);
  return reinterpret_cast<Fn>(entry);
}

}  // namespace

extern "C" const PJRT_Api* GetPjrtApi() {
  using Fn = const PJRT_Api* (*)();
  static const Fn entry = CoreEntry<Fn>("GetPjrtApi");
  return entry == nullptr ? nullptr : entry();
}

extern "C" const TFNPD_Api* TFNPD_InitPlugin(TFNPD_PluginParams* params, TF_Status* status) {
  using Fn = const TFNPD_Api* (*)(TFNPD_PluginParams*, TF_Status*);
  static const Fn entry = CoreEntry<Fn>("TFNPD_InitPlugin");
  if (entry == nullptr) {
    // TensorFlow stops the process on a failed status, naming it; without TF_SetStatus, stop here
    // rather than let it read a null table. The reason was printed above.
    using SetStatusFn = void (*)(TF_Status*, int, const char*);
    auto set_status = reinterpret_cast<SetStatusFn>(dlsym(RTLD_DEFAULT, "TF_SetStatus"));
    if (set_status == nullptr || status == nullptr) std::abort();
    set_status(status, /*FAILED_PRECONDITION*/ 9, "Ember: cannot load libpjrt_ember_core.so");
    return nullptr;
  }
  return entry(params, status);
}
