// The process-wide tables of the XLA FFI as Ember keeps them: custom-call handlers by target
// name (registered through the PJRT FFI extension, or by handlers calling
// XLA_FFI_Handler_Register) and user type ids by type name. Registrations are for the "ember"
// platform; like XLA's, they last for the process.
#ifndef EMBER_FFI_REGISTRY_H_
#define EMBER_FFI_REGISTRY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "ffi/xla_ffi_api.h"

namespace ember::ffi {

// The platform name handlers are registered for (compared case-insensitively).
inline constexpr std::string_view kPlatformName = "ember";

struct Handler {
  XLA_FFI_Handler_Bundle bundle{};
  XLA_FFI_Handler_Traits traits = 0;
};

class Registry {
 public:
  static Registry& Global();

  // Registers `name` for `platform` (which must be Ember's). Registering the same handlers again
  // is a no-op; different ones under a registered name is ALREADY_EXISTS, as in XLA. Only the
  // execute stage runs on Ember: a bundle with an instantiate handler (stateful handlers) is
  // UNIMPLEMENTED; prepare and initialize handlers are GPU stages XLA:CPU skips too.
  absl::Status RegisterHandler(std::string_view name, std::string_view platform,
                               const XLA_FFI_Handler_Bundle& bundle, XLA_FFI_Handler_Traits traits);
  std::optional<Handler> FindHandler(std::string_view name) const;

  // Type ids for user data: `*type_id` 0 asks for a fresh id (written back); otherwise it must
  // match the id `name` already has, or claim it when the name is new and the id unused.
  absl::Status RegisterType(std::string_view name, int64_t* type_id);

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, Handler, std::less<>> handlers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t, std::less<>> types_ ABSL_GUARDED_BY(mu_);
  int64_t next_type_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace ember::ffi

#endif  // EMBER_FFI_REGISTRY_H_
