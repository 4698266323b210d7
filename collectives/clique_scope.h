// CliqueScope: the communicators one multi-device launch uses. Every device of the launch gets
// its communicators through the same scope, which remembers them, so that when one device's part
// of the launch fails, Abort fails the collectives its peers are waiting in (instead of letting
// them wait for the timeout) and those cliques are not reused.
#ifndef EMBER_COLLECTIVES_CLIQUE_SCOPE_H_
#define EMBER_COLLECTIVES_CLIQUE_SCOPE_H_

#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "collectives/collectives.h"

namespace ember::collectives {

class CliqueScope {
 public:
  explicit CliqueScope(std::shared_ptr<Collectives> collectives)
      : collectives_(std::move(collectives)) {}

  // As Collectives::GetCommunicator; after Abort, the abort's error.
  absl::StatusOr<std::shared_ptr<Communicator>> GetCommunicator(const CliqueKey& clique,
                                                                RankId rank);
  // Aborts every communicator handed out so far (once; the first reason wins) and fails later
  // requests.
  void Abort(const absl::Status& reason);

 private:
  const std::shared_ptr<Collectives> collectives_;
  absl::Mutex mu_;
  absl::Status aborted_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<Communicator>> used_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ember::collectives

#endif  // EMBER_COLLECTIVES_CLIQUE_SCOPE_H_
