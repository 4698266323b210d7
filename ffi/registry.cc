#include "ffi/registry.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace ember::ffi {

Registry& Registry::Global() {
  static Registry* registry = new Registry();  // lives for the process, as registrations do
  return *registry;
}

absl::Status Registry::RegisterHandler(std::string_view name, std::string_view platform,
                                       const XLA_FFI_Handler_Bundle& bundle,
                                       XLA_FFI_Handler_Traits traits) {
  if (name.empty())
    return absl::InvalidArgumentError("FFI handler registration: empty target name");
  if (!absl::EqualsIgnoreCase(absl::string_view(platform.data(), platform.size()),
                              absl::string_view(kPlatformName.data(), kPlatformName.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("FFI handler '", std::string(name), "' is registered for platform '",
                     std::string(platform), "'; Ember is '", std::string(kPlatformName), "'"));
  }
  if (bundle.execute == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("FFI handler '", std::string(name), "' has no execute handler"));
  }
  if (bundle.instantiate != nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "FFI handler '", std::string(name),
        "' has an instantiate stage (a stateful handler); Ember runs only the execute stage"));
  }
  absl::MutexLock lock(&mu_);
  auto it = handlers_.find(name);
  if (it != handlers_.end()) {
    if (it->second.bundle.execute == bundle.execute) return absl::OkStatus();
    return absl::AlreadyExistsError(absl::StrCat(
        "a different FFI handler is already registered for '", std::string(name), "' on Ember"));
  }
  handlers_.emplace(std::string(name), Handler{bundle, traits});
  return absl::OkStatus();
}

std::optional<Handler> Registry::FindHandler(std::string_view name) const {
  absl::MutexLock lock(&mu_);
  auto it = handlers_.find(name);
  if (it == handlers_.end()) return std::nullopt;
  return it->second;
}

absl::Status Registry::RegisterType(std::string_view name, int64_t* type_id) {
  if (type_id == nullptr) return absl::InvalidArgumentError("FFI type registration: null type id");
  if (name.empty()) return absl::InvalidArgumentError("FFI type registration: empty type name");
  absl::MutexLock lock(&mu_);
  auto it = types_.find(name);
  if (it != types_.end()) {
    if (*type_id != 0 && *type_id != it->second) {
      return absl::InvalidArgumentError(absl::StrCat("FFI type '", std::string(name), "' has id ",
                                                     it->second, ", not ", *type_id));
    }
    *type_id = it->second;
    return absl::OkStatus();
  }
  if (*type_id == 0) {
    *type_id = next_type_id_++;
  } else {
    for (const auto& [other, id] : types_) {
      if (id == *type_id) {
        return absl::AlreadyExistsError(
            absl::StrCat("FFI type id ", id, " already belongs to '", other, "'"));
      }
    }
    next_type_id_ = std::max(next_type_id_, *type_id + 1);
  }
  types_.emplace(std::string(name), *type_id);
  return absl::OkStatus();
}

}  // namespace ember::ffi
