// Collectives among host devices of one process. The ranks of a clique share one InProcessClique;
// the n-th operation of every rank meets at the clique's n-th rendezvous, where each rank deposits
// a copy of its send buffer, waits for the others, then reads what it needs from their deposits.
// A rendezvous that does not fill within the timeout fails with an error naming the operation,
// the clique and the missing ranks' devices, and fails the clique (as does Abort); a failed
// clique is dropped from the cache, so the next request builds a new one.
#ifndef EMBER_COLLECTIVES_IN_PROCESS_IN_PROCESS_COLLECTIVES_H_
#define EMBER_COLLECTIVES_IN_PROCESS_IN_PROCESS_COLLECTIVES_H_

#include <memory>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collectives/collectives.h"

namespace ember::collectives {

class InProcessClique;

class InProcessCollectives final : public Collectives {
 public:
  explicit InProcessCollectives(absl::Duration timeout = absl::Seconds(60));
  ~InProcessCollectives() override;
  InProcessCollectives(const InProcessCollectives&) = delete;
  InProcessCollectives& operator=(const InProcessCollectives&) = delete;

  const char* name() const override { return "in_process"; }
  absl::StatusOr<std::shared_ptr<Communicator>> GetCommunicator(const CliqueKey& clique,
                                                                RankId rank) override;
  absl::Duration timeout() const { return timeout_; }

 private:
  const absl::Duration timeout_;
  absl::Mutex mu_;
  absl::flat_hash_map<CliqueKey, std::shared_ptr<InProcessClique>> cliques_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ember::collectives

#endif  // EMBER_COLLECTIVES_IN_PROCESS_IN_PROCESS_COLLECTIVES_H_
