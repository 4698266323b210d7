#include "pjrt_plugin/tf_status.h"

#include <dlfcn.h>

#include <cstdio>
#include <string>

namespace ember::pjrt {
namespace {

using SetStatusFn = void (*)(TF_Status*, int code, const char* message);

SetStatusFn FindTfSetStatus() {
  if (void* fn = dlsym(RTLD_DEFAULT, "TF_SetStatus")) return reinterpret_cast<SetStatusFn>(fn);
  // RTLD_NOLOAD: only a library TensorFlow already loaded; never pull TF into a JAX process.
  void* framework = dlopen("libtensorflow_framework.so.2", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
  if (framework == nullptr) return nullptr;
  return reinterpret_cast<SetStatusFn>(dlsym(framework, "TF_SetStatus"));
}

}  // namespace

void SetTfStatus(TF_Status* tf_status, const absl::Status& status) {
  static const SetStatusFn set_status = FindTfSetStatus();
  if (tf_status != nullptr && set_status != nullptr) {
    const std::string message(status.message());
    set_status(tf_status, static_cast<int>(status.code()), message.c_str());
    return;
  }
  if (!status.ok()) {
    std::fprintf(stderr, "Ember (TensorFlow device): %s\n", status.ToString().c_str());
  }
}

}  // namespace ember::pjrt
