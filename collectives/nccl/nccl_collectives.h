// NcclCollectives: the NCCL transport for the GPUs of one process. A clique's device ids are the
// CUDA platform's device ordinals; its communicators are created together on first use (a unique
// id from ncclGetUniqueId, ncclCommInitRank per rank in one group) and cached per clique, reused by
// later launches until the clique fails or is aborted; a failed clique is never handed out again.
// An operation that outlasts the timeout aborts its clique (NcclWatchdog).
// Several processes (unique ids through a key-value store) come later.
#ifndef EMBER_COLLECTIVES_NCCL_NCCL_COLLECTIVES_H_
#define EMBER_COLLECTIVES_NCCL_NCCL_COLLECTIVES_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collectives/collectives.h"
#include "collectives/nccl/nccl_clique.h"
#include "collectives/nccl/nccl_library.h"
#include "collectives/nccl/nccl_watchdog.h"
#include "stream_executor/platform.h"

namespace ember::collectives::nccl {

class NcclCollectives final : public Collectives {
 public:
  // `platform` is the CUDA platform; it must outlive the transport and the communicators handed
  // out. `library_directory`: where libnccl.so.2 is opened from first (NcclLibrary::Open).
  // `timeout`: how long an operation may take before the watchdog aborts its clique (NCCL itself
  // waits forever for a peer that never comes).
  static absl::StatusOr<std::shared_ptr<NcclCollectives>> Create(
      se::Platform& platform, const std::string& library_directory,
      absl::Duration timeout = absl::Minutes(5));
  NcclCollectives(std::shared_ptr<const NcclLibrary> nccl, se::Platform& platform,
                  absl::Duration timeout)
      : nccl_(std::move(nccl)),
        platform_(platform),
        watchdog_(std::make_shared<NcclWatchdog>(timeout)) {}
  NcclCollectives(const NcclCollectives&) = delete;
  NcclCollectives& operator=(const NcclCollectives&) = delete;

  const char* name() const override { return "nccl"; }
  absl::StatusOr<std::shared_ptr<Communicator>> GetCommunicator(const CliqueKey& clique,
                                                                RankId rank) override;

  // How many cliques were created so far (cache misses), for tests of the cache.
  int cliques_created() const;

 private:
  absl::StatusOr<std::shared_ptr<NcclClique>> CreateClique(const CliqueKey& clique);

  const std::shared_ptr<const NcclLibrary> nccl_;
  se::Platform& platform_;
  const std::shared_ptr<NcclWatchdog> watchdog_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<CliqueKey, std::shared_ptr<NcclClique>> cliques_ ABSL_GUARDED_BY(mu_);
  int cliques_created_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ember::collectives::nccl

#endif  // EMBER_COLLECTIVES_NCCL_NCCL_COLLECTIVES_H_
