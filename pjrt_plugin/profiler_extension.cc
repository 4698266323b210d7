// The PJRT profiler extension: the plugin profiler jax.profiler.trace drives. A profiler is an
// Ember trace session (profiler/): Start and Stop bound what it records (compile stages, and per
// device the launches and their kernels), CollectData hands the events over as a serialized
// XSpace, which the framework merges into the trace it writes.
#include "pjrt_plugin/profiler_extension.h"

#include <cstring>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "profiler/trace.h"

struct PLUGIN_Profiler {
  ember::profiler::Session session;
  std::string collected;  // the XSpace bytes, kept between the two CollectData calls
  bool collected_valid = false;
};

struct PLUGIN_Profiler_Error {
  absl::Status status;
  std::string message;
};

namespace ember::pjrt {
namespace {

PLUGIN_Profiler_Error* Fail(absl::Status status) {
  return new PLUGIN_Profiler_Error{status, std::string(status.message())};
}

// struct_size is not checked: jaxlib's plugin tracer does not always fill it in (Stop arrives
// with struct_size 1), and every field read here has been in these structs since version 0.
template <typename Args>
absl::Status Check(const Args* args, const char* function, bool needs_profiler) {
  if (args == nullptr) return absl::InvalidArgumentError(absl::StrCat(function, ": args is null"));
  if constexpr (requires { args->profiler; }) {
    if (needs_profiler && args->profiler == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(function, ": `profiler` is null"));
    }
  }
  return absl::OkStatus();
}

#define EMBER_PROFILER_CHECK(args, needs_profiler) \
  if (absl::Status s = Check(args, __func__, needs_profiler); !s.ok()) return Fail(s)

void ErrorDestroy(PLUGIN_Profiler_Error_Destroy_Args* args) {
  if (args != nullptr) delete args->error;
}

void ErrorMessage(PLUGIN_Profiler_Error_Message_Args* args) {
  if (args == nullptr || args->error == nullptr) return;
  args->message = args->error->message.data();
  args->message_size = args->error->message.size();
}

PLUGIN_Profiler_Error* ErrorGetCode(PLUGIN_Profiler_Error_GetCode_Args* args) {
  EMBER_PROFILER_CHECK(args, false);
  args->code = args->error != nullptr ? static_cast<int>(args->error->status.code()) : 0;
  return nullptr;
}

PLUGIN_Profiler_Error* Create(PLUGIN_Profiler_Create_Args* args) {
  EMBER_PROFILER_CHECK(args, false);
  // The options (tensorflow.ProfileOptions) select host/device tracing levels; Ember records
  // the same events at every level.
  args->profiler = new PLUGIN_Profiler();
  return nullptr;
}

PLUGIN_Profiler_Error* Destroy(PLUGIN_Profiler_Destroy_Args* args) {
  EMBER_PROFILER_CHECK(args, false);
  delete args->profiler;
  return nullptr;
}

PLUGIN_Profiler_Error* Start(PLUGIN_Profiler_Start_Args* args) {
  EMBER_PROFILER_CHECK(args, true);
  args->profiler->session.Start();
  return nullptr;
}

PLUGIN_Profiler_Error* Stop(PLUGIN_Profiler_Stop_Args* args) {
  EMBER_PROFILER_CHECK(args, true);
  args->profiler->session.Stop();
  return nullptr;
}

PLUGIN_Profiler_Error* CollectData(PLUGIN_Profiler_CollectData_Args* args) {
  EMBER_PROFILER_CHECK(args, true);
  PLUGIN_Profiler& p = *args->profiler;
  if (!p.collected_valid) {
    p.collected = p.session.CollectXSpace();
    p.collected_valid = true;
  }
  if (args->buffer == nullptr) {
    // XLA's plugin tracer reads the bytes from here (the buffer stays the profiler's until it is
    // destroyed); a caller that wants its own copy calls again with a buffer of this size.
    args->buffer = reinterpret_cast<uint8_t*>(p.collected.data());
    args->buffer_size_in_bytes = p.collected.size();
    return nullptr;
  }
  if (args->buffer_size_in_bytes < p.collected.size()) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat("PLUGIN_Profiler_CollectData: the buffer holds ", args->buffer_size_in_bytes,
                     " bytes; the trace needs ", p.collected.size())));
  }
  std::memcpy(args->buffer, p.collected.data(), p.collected.size());
  args->buffer_size_in_bytes = p.collected.size();
  return nullptr;
}

#undef EMBER_PROFILER_CHECK

}  // namespace

PJRT_Extension_Base* ProfilerExtension(PJRT_Extension_Base* next) {
  static PLUGIN_Profiler_Api api = {sizeof(PLUGIN_Profiler_Api),
                                    nullptr,
                                    &ErrorDestroy,
                                    &ErrorMessage,
                                    &ErrorGetCode,
                                    &Create,
                                    &Destroy,
                                    &Start,
                                    &Stop,
                                    &CollectData};
  static PJRT_Profiler_Extension extension = [] {
    PJRT_Profiler_Extension e{};
    e.struct_size = sizeof(PJRT_Profiler_Extension);
    e.type = PJRT_Extension_Type_Profiler;
    e.profiler_api = &api;
    return e;
  }();
  extension.next = next;
  return reinterpret_cast<PJRT_Extension_Base*>(&extension);
}

}  // namespace ember::pjrt
