#include "collectives/collectives_factory.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "collectives/in_process/in_process_collectives.h"

namespace ember::collectives {

absl::StatusOr<std::shared_ptr<Collectives>> CreateCollectives(std::string_view platform,
                                                               absl::Duration timeout) {
  if (platform == "host") return std::make_shared<InProcessCollectives>(timeout);
  return absl::UnimplementedError(absl::StrCat(
      "collectives between ", std::string(platform),
      " devices are not supported yet (NCCL arrives with the CUDA backend)"));
}

}  // namespace ember::collectives
