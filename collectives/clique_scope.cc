#include "collectives/clique_scope.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ember::collectives {

absl::StatusOr<std::shared_ptr<Communicator>> CliqueScope::GetCommunicator(const CliqueKey& clique,
                                                                         RankId rank) {
  {
    absl::MutexLock lock(&mu_);
    if (!aborted_.ok()) return aborted_;
  }
  absl::StatusOr<std::shared_ptr<Communicator>> comm = collectives_->GetCommunicator(clique, rank);
  if (!comm.ok()) return comm.status();
  absl::MutexLock lock(&mu_);
  if (!aborted_.ok()) {
    (*comm)->Abort(aborted_);
    return aborted_;
  }
  used_.push_back(*comm);
  return comm;
}

void CliqueScope::Abort(const absl::Status& reason) {
  std::vector<std::shared_ptr<Communicator>> used;
  {
    absl::MutexLock lock(&mu_);
    if (!aborted_.ok()) return;
    aborted_ = absl::Status(reason.code(),
                            absl::StrCat("the launch was aborted: ", std::string(reason.message())));
    used.swap(used_);
  }
  for (const auto& comm : used) comm->Abort(reason);
}

}  // namespace ember::collectives
