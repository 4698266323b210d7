// NcclWatchdog: fails NCCL operations that do not complete within the transport's timeout. NCCL
// itself waits forever for a peer that never comes; the watchdog aborts the operation's clique
// (ncclCommAbort, which fails the work its ranks have queued) with a DeadlineExceeded error naming
// the operation, the clique and the devices of this process whose ranks never issued it (the
// clique counts what each local rank has issued; ranks of other processes are not seen here).
#ifndef EMBER_COLLECTIVES_NCCL_NCCL_WATCHDOG_H_
#define EMBER_COLLECTIVES_NCCL_NCCL_WATCHDOG_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collectives/nccl/nccl_clique.h"

namespace ember::collectives::nccl {

class NcclWatchdog {
 public:
  explicit NcclWatchdog(absl::Duration timeout);
  NcclWatchdog(const NcclWatchdog&) = delete;
  NcclWatchdog& operator=(const NcclWatchdog&) = delete;
  ~NcclWatchdog();  // stops watching; pending operations are left alone

  absl::Duration timeout() const { return timeout_; }

  // Watches `rank`'s operation number `seq` (NcclClique::NoteIssued) of `clique` until `done` is
  // set; past the timeout it aborts the clique.
  void Watch(std::weak_ptr<NcclClique> clique, RankId rank, uint64_t seq, const char* op,
             std::shared_ptr<const std::atomic<bool>> done);

 private:
  struct Entry {
    std::weak_ptr<NcclClique> clique;
    RankId rank;
    uint64_t seq = 0;
    const char* op = "";
    std::shared_ptr<const std::atomic<bool>> done;
    absl::Time deadline;
  };
  void Loop();

  const absl::Duration timeout_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: started once the rest is set up
};

}  // namespace ember::collectives::nccl

#endif  // EMBER_COLLECTIVES_NCCL_NCCL_WATCHDOG_H_
