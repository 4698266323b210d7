// Collectives among host devices of one process. Participants of one collective execution
// meet at a rendezvous keyed by CliqueKey (launch id + op + devices): each deposits a copy of
// its send buffer, waits until all have arrived, then reads what it needs from the others'
// deposits. A rendezvous that does not fill within the timeout, or whose launch was aborted
// (a participant failed), returns an error naming the op and the missing participants instead
// of hanging.
#ifndef EMBER_COLLECTIVES_IN_PROCESS_IN_PROCESS_COLLECTIVES_H_
#define EMBER_COLLECTIVES_IN_PROCESS_IN_PROCESS_COLLECTIVES_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collectives/communicator.h"

namespace ember::collectives {

class InProcessCollectives {
 public:
  explicit InProcessCollectives(absl::Duration timeout = absl::Seconds(60));
  ~InProcessCollectives();
  InProcessCollectives(const InProcessCollectives&) = delete;
  InProcessCollectives& operator=(const InProcessCollectives&) = delete;

  // A fresh run id (for CliqueKey::run_id), unique within this object.
  uint64_t NewRunId() { return next_run_id_++; }

  // This participant's communicator for one collective execution. `rank` indexes key.devices.
  absl::StatusOr<std::unique_ptr<Communicator>> Join(const CliqueKey& key, int rank);

  // Fails every pending and later rendezvous of `run_id` with `status`.
  void Abort(uint64_t run_id, const absl::Status& status);
  // Drops the abort record of a finished run.
  void Forget(uint64_t run_id);

  absl::Duration timeout() const { return timeout_; }

  // Rendezvous state of one collective execution (internal; public for the communicator).
  struct Deposit {
    bool arrived = false;
    CollectiveKind kind = CollectiveKind::kAllReduce;
    std::vector<uint8_t> payload;
  };
  struct Rendezvous {
    std::vector<Deposit> deposits;
    int arrived = 0;
    bool complete = false;
    absl::Status status;
    // AllReduce: the first participant done waiting reduces for everyone (n - 1 combines
    // instead of n * (n - 1)); the others copy its result.
    mutable absl::Mutex reduce_mu;
    mutable bool reduced = false;
    mutable absl::Status reduce_status;
    mutable std::vector<uint8_t> reduced_bytes;
  };
  // Deposits `payload` as `rank` and waits for the others. The result is read-only.
  absl::StatusOr<std::shared_ptr<const Rendezvous>> Exchange(const CliqueKey& key, int rank,
                                                             CollectiveKind kind,
                                                             ConstBytes payload);

 private:
  const absl::Duration timeout_;
  std::atomic<uint64_t> next_run_id_{1};
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Rendezvous>> pending_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, absl::Status> aborted_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ember::collectives

#endif  // EMBER_COLLECTIVES_IN_PROCESS_IN_PROCESS_COLLECTIVES_H_
