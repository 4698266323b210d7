// GetPjrtApi: the one exported symbol. The table is built once: every slot is first stamped with
// an UNIMPLEMENTED entry naming its function, then each object family binds its real entries.
#include <algorithm>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "pjrt_plugin/bindings.h"
#include "pjrt_plugin/error.h"
#include "pjrt_plugin/ffi_extension.h"
#include "pjrt_plugin/profiler_extension.h"
#include "pjrt_plugin/include/pjrt_c_api.h"

namespace ember::pjrt {
namespace {

template <size_t N>
struct FixedString {
  char text[N];
  constexpr FixedString(const char (&s)[N]) { std::copy_n(s, N, text); }  // NOLINT
};

template <FixedString kName, typename Args>
PJRT_Error* Unimplemented(Args*) {
  return MakeError(absl::UnimplementedError(
      absl::StrCat(kName.text, " is not implemented by Ember yet")));
}

template <FixedString kName, typename Args, typename Ret>
void Stamp(Ret (*&slot)(Args*)) {
  // PJRT_Error_Destroy and PJRT_Error_Message return void; they are always bound for real.
  if constexpr (std::is_same_v<Ret, PJRT_Error*>) slot = &Unimplemented<kName, Args>;
}

PJRT_Api BuildApi() {
#ifdef NDEBUG
  // The system's Abseil (Debian's shared library, used by this plugin alone) is built with
  // absl::Mutex's deadlock detection on: every lock and unlock of every mutex went through its
  // global lock-order graph, 7% of the host's dispatch time. Release builds turn it off, as an
  // NDEBUG Abseil would have it; debug and sanitizer builds keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
  PJRT_Api api{};
  api.struct_size = PJRT_Api_STRUCT_SIZE;
  // Extensions: FFI (handler registration and execute-context user data), profiler.
  api.extension_start = FfiExtension(ProfilerExtension(nullptr));
  api.pjrt_api_version.struct_size = PJRT_Api_Version_STRUCT_SIZE;
  api.pjrt_api_version.extension_start = nullptr;
  api.pjrt_api_version.major_version = PJRT_API_MAJOR;
  api.pjrt_api_version.minor_version = PJRT_API_MINOR;
#define X(name) Stamp<#name>(api.name);
#include "pjrt_plugin/include/pjrt_api_entries.inc"
#undef X
  BindErrorEntries(api);
  BindPluginEntries(api);
  BindEventEntries(api);
  BindClientEntries(api);
  BindDeviceEntries(api);
  BindMemoryEntries(api);
  BindTopologyEntries(api);
  BindBufferEntries(api);
  BindExecutableEntries(api);
  BindFfiEntries(api);
  return api;
}

}  // namespace
}  // namespace ember::pjrt

extern "C" __attribute__((visibility("default"))) const PJRT_Api* GetPjrtApi() {
  static const PJRT_Api api = ember::pjrt::BuildApi();
  return &api;
}
