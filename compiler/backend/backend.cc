#include "compiler/backend/backend.h"

#include "absl/strings/str_cat.h"

namespace ember::backend {

absl::Status BackendRegistry::Register(std::unique_ptr<Backend> backend) {
  if (backend == nullptr) return absl::InvalidArgumentError("registering a null backend");
  if (Find(backend->name()) != nullptr) {
    return absl::AlreadyExistsError(
        absl::StrCat("a backend named '", std::string(backend->name()), "' is registered already"));
  }
  backends_.push_back(std::move(backend));
  return absl::OkStatus();
}

const Backend* BackendRegistry::Find(std::string_view name) const {
  for (const auto& b : backends_) {
    if (b->name() == name) return b.get();
  }
  return nullptr;
}

std::vector<std::string> BackendRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& b : backends_) names.emplace_back(b->name());
  return names;
}

}  // namespace ember::backend
