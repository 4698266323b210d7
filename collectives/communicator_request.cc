#include "collectives/communicator_request.h"

#include "absl/strings/str_cat.h"

namespace ember::collectives {

absl::Status CheckCommunicatorRequest(const CliqueKey& clique, RankId rank) {
  if (clique.devices.empty()) {
    return absl::InvalidArgumentError("a clique needs at least one device");
  }
  if (rank.value < 0 || rank.value >= clique.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", rank.value, " out of range for ", clique.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace ember::collectives
