// TFNPD_InitPlugin: the entry point TensorFlow's NextPluggableDevice loader calls next to
// GetPjrtApi. It names the device (EMBER, compiled for TF's XLA_CPU_JIT backend) and returns the
// TFNPD_Api table: device count, device-state setup (the PJRT client, created by the TensorFlow
// helper library, see tf_helper/), the device shape function and same-device buffer copies.
// The plugin never links TensorFlow: the helper is opened only here, inside a TF process.
#include <dlfcn.h>

#include <cstddef>
#include <cstdlib>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "pjrt_plugin/client_handle.h"
#include "pjrt_plugin/handles.h"
#include "pjrt_plugin/include/tf_plugin_c_api.h"
#include "pjrt_plugin/options.h"
#include "pjrt_plugin/tf_status.h"
#include "pjrt_plugin/tf_xla_shape.h"
#include "runtime/client.h"

extern "C" __attribute__((visibility("default"))) const TFNPD_Api* TFNPD_InitPlugin(
    TFNPD_PluginParams* params, TF_Status* status);

namespace ember::pjrt {
namespace {

constexpr char kDeviceType[] = "EMBER";
// tensorflow-cpu registers no other XLA backend; the device type only chooses tf2xla's lowering.
constexpr char kCompilationDevice[] = "XLA_CPU_JIT";
// Above TF's CPU devices, so ops with a kernel on EMBER (XLA launches, variables) are placed
// there by default, below its GPU devices.
constexpr int32_t kPriority = 150;
constexpr char kHelperLibrary[] = "libember_tf_helper.so";
constexpr char kHelperEntry[] = "EmberTf_CreateAndSetPjRtClient";

// jit_compile on a pluggable device goes through PJRT only with this TF flag. TF parses
// TF_XLA_FLAGS on first use, after the plugin loads, so adding it here still counts; a user's
// own setting of the flag (true or false) is left alone.
void EnableTfDeviceApi() {
  constexpr char kFlag[] = "--tf_xla_use_device_api=true";
  const char* current = std::getenv("TF_XLA_FLAGS");
  if (current == nullptr || *current == '\0') {
    setenv("TF_XLA_FLAGS", kFlag, /*overwrite=*/1);
  } else if (!absl::StrContains(current, "tf_xla_use_device_api")) {
    setenv("TF_XLA_FLAGS", absl::StrCat(current, " ", kFlag).c_str(), /*overwrite=*/1);
  }
}

// The helper is found next to this library (the wheel and the build tree both put it there).
absl::StatusOr<std::string> HelperPath() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&TFNPD_InitPlugin), &info) == 0 || info.dli_fname == nullptr) {
    return absl::InternalError("cannot tell where the Ember plugin library was loaded from");
  }
  std::string dir(info.dli_fname);
  const size_t slash = dir.rfind('/');
  dir = slash == std::string::npos ? "." : dir.substr(0, slash);
  return absl::StrCat(dir, "/", kHelperLibrary);
}

absl::Mutex client_mu;
bool client_created ABSL_GUARDED_BY(client_mu) = false;

// Creates TF's PJRT client for EMBER once per process (TF keeps it in its resource manager).
absl::Status CreateTensorFlowClient() {
  absl::MutexLock lock(&client_mu);
  if (client_created) return absl::OkStatus();
  EMBER_ASSIGN_OR_RETURN(std::string path, HelperPath());
  void* helper = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (helper == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot load Ember's TensorFlow helper ", path, " (", why ? why : "unknown error",
        "); it is built next to libpjrt_ember.so when TensorFlow is installed at configure "
        "time (scripts/setup.sh)"));
  }
  using CreateFn = int (*)(const char* device_type, char* message, size_t message_size);
  auto create = reinterpret_cast<CreateFn>(dlsym(helper, kHelperEntry));
  if (create == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(path, " does not export ", kHelperEntry));
  }
  char message[1024] = {0};
  const int code = create(kDeviceType, message, sizeof(message));
  if (code != 0) {
    message[sizeof(message) - 1] = '\0';
    return absl::Status(static_cast<absl::StatusCode>(code),
                        absl::StrCat("creating TensorFlow's PJRT client for ", kDeviceType, ": ",
                                     message));
  }
  client_created = true;
  return absl::OkStatus();
}

int32_t GetDeviceCount(TF_Status* status) {
  absl::StatusOr<Options> options = ReadOptions({});
  absl::StatusOr<int> count =
      options.ok() ? runtime::Client::CountDevices(options->devices) : options.status();
  if (!count.ok()) {
    SetTfStatus(status, absl::Status(count.status().code(),
                                     absl::StrCat("TFNPD_GetDeviceCount: ", count.status().message())));
    return 0;
  }
  return *count;
}

void InitPluginInternalDeviceStates(TF_Status* status) {
  absl::Status result = CreateTensorFlowClient();
  if (!result.ok()) {
    SetTfStatus(status, absl::Status(result.code(), absl::StrCat("TFNPD_InitPluginInternalDeviceStates: ",
                                                                 result.message())));
  }
}

// Ember's devices take every shape as it is: the device shape is a copy of the host shape.
void XlaShapeToDeviceShapeRepresentation(XLA_Shape* host_shape, int /*data_type*/,
                                         bool /*use_fast_memory*/,
                                         XLA_LayoutPreference /*layout_preference*/,
                                         XLA_Shape* device_shape, TF_Status* status) {
  absl::Status result;
  if (host_shape == nullptr || device_shape == nullptr) {
    result = absl::InvalidArgumentError("the host or the device shape is null");
  } else {
    result = CopyXlaShape(*host_shape, *device_shape);
  }
  if (!result.ok()) {
    SetTfStatus(status, absl::Status(result.code(), absl::StrCat(
                                                        "TFNPD_XlaShapeToDeviceShapeRepresentation: ",
                                                        result.message())));
  }
}

absl::StatusOr<PJRT_Buffer*> CopyOnSameDevice(PJRT_Buffer* source, PJRT_Client* client) {
  if (source == nullptr || client == nullptr) {
    return absl::InvalidArgumentError("the source buffer or the client is null");
  }
  if (source->client_destroyed()) {
    return absl::InvalidArgumentError("the source buffer belongs to a client that was destroyed");
  }
  if (source->client != client) {
    return absl::InvalidArgumentError("the source buffer belongs to another client");
  }
  if (source->buffer == nullptr) return absl::InvalidArgumentError("the source buffer is deleted");
  EMBER_ASSIGN_OR_RETURN(auto copy, source->buffer->CopyTo(source->buffer->device(),
                                                           source->buffer->memory()));
  return NewBufferHandle(client, std::move(copy));
}

PJRT_Buffer* SameDevicePjRtBufferCopy(PJRT_Buffer* source, PJRT_Client* client, TF_Status* status) {
  absl::StatusOr<PJRT_Buffer*> copy = CopyOnSameDevice(source, client);
  if (!copy.ok()) {
    SetTfStatus(status, absl::Status(copy.status().code(),
                                     absl::StrCat("TFNPD_SameDevicePjRtBufferCopy: ",
                                                  copy.status().message())));
    return nullptr;
  }
  return *copy;
}

TFNPD_Api BuildTfApi() {
  TFNPD_Api api{};
  api.struct_size = EMBER_TFNPD_API_STRUCT_SIZE;
  api.TFNPD_SameDevicePjRtBufferCopy = &SameDevicePjRtBufferCopy;
  api.TFNPD_XlaShapeToDeviceShapeRepresentation = &XlaShapeToDeviceShapeRepresentation;
  api.TFNPD_GetDeviceCount = &GetDeviceCount;
  api.TFNPD_InitPluginInternalDeviceStates = &InitPluginInternalDeviceStates;
  return api;
}

}  // namespace
}  // namespace ember::pjrt

extern "C" const TFNPD_Api* TFNPD_InitPlugin(TFNPD_PluginParams* params, TF_Status* status) {
  if (params == nullptr || params->struct_size < EMBER_TFNPD_PLUGIN_PARAMS_MIN_SIZE) {
    ember::pjrt::SetTfStatus(
        status, absl::InvalidArgumentError(absl::StrCat(
                    "TFNPD_InitPlugin: the plugin parameters are ",
                    params == nullptr ? "null" : "smaller than the 37 bytes of TensorFlow 2.21")));
    return nullptr;
  }
  params->device_type = ember::pjrt::kDeviceType;
  params->compilation_device_name = ember::pjrt::kCompilationDevice;
  params->priority = ember::pjrt::kPriority;
  params->is_pluggable_device = true;
  if (params->struct_size > offsetof(TFNPD_PluginParams, use_pjrt_on_demand_compile)) {
    // Ops outside jit-compiled functions run on TF's CPU devices instead of op by op here.
    params->use_pjrt_on_demand_compile = false;
  }
  ember::pjrt::EnableTfDeviceApi();
  static const TFNPD_Api api = ember::pjrt::BuildTfApi();
  return &api;
}
