// NcclCollectives: the NCCL transport for GPUs of one process or of several. A clique's device ids
// are global ids (NcclTopology says which are this process's); its local ranks' communicators are
// created together on first use (ncclCommInitRank per local rank in one group) and cached per
// clique, reused by later launches until the clique fails or is aborted; a failed clique is never
// handed out again. A clique within this process gets its unique id from ncclGetUniqueId here; one
// spread over processes meets in the job's key-value store under "ember/nccl/<devices>/g<gen>/":
// every process says which ranks have arrived, waits for the others, then the process of rank 0
// publishes the unique id the others read. Generations are counted per process and clique (every
// attempt takes one), as in the Gloo transport: a rebuilt clique never reads a failed one's keys,
// and processes stay in step because a failure in one leaves the peers' operations on the clique
// to fail too (NCCL's error or their own watchdog), so they rebuild with the same next generation.
// Creation holds the transport's lock while it waits for peers: processes must ask for cliques in
// the same order (as the processes of one SPMD launch do), or they wait out the timeout.
// An operation that outlasts the timeout aborts its clique (NcclWatchdog).
#ifndef EMBER_COLLECTIVES_NCCL_NCCL_COLLECTIVES_H_
#define EMBER_COLLECTIVES_NCCL_NCCL_COLLECTIVES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collectives/collectives.h"
#include "collectives/key_value_store.h"
#include "collectives/nccl/nccl_clique.h"
#include "collectives/nccl/nccl_library.h"
#include "collectives/nccl/nccl_watchdog.h"
#include "stream_executor/platform.h"

namespace ember::collectives::nccl {

// Where this process sits in the job. The default: one process owning every GPU of the platform.
struct NcclTopology {
  // The job's key-value store, through which the processes of a clique exchange its unique id;
  // null when every clique lies in this process.
  std::shared_ptr<KeyValueStore> store;
  // This process's global device ids: first_device <= g < first_device + device_count, global id g
  // being CUDA ordinal g - first_device. A negative count means every device of the platform.
  int64_t first_device = 0;
  int64_t device_count = -1;
};

class NcclCollectives final : public Collectives {
 public:
  // `platform` is the CUDA platform; it must outlive the transport and the communicators handed
  // out. `library_directory`: where libnccl.so.2 is opened from first (NcclLibrary::Open).
  // `timeout`: how long an operation may take before the watchdog aborts its clique (NCCL itself
  // waits forever for a peer that never comes), and how long the processes of a clique wait for
  // each other in the key-value store when creating it.
  static absl::StatusOr<std::shared_ptr<NcclCollectives>> Create(
      se::Platform& platform, const std::string& library_directory,
      absl::Duration timeout = absl::Minutes(5), NcclTopology topology = {});
  // `topology.device_count` must be resolved (not negative); use Create.
  NcclCollectives(std::shared_ptr<const NcclLibrary> nccl, se::Platform& platform,
                  absl::Duration timeout, NcclTopology topology)
      : nccl_(std::move(nccl)),
        platform_(platform),
        timeout_(timeout),
        topology_(std::move(topology)),
        watchdog_(std::make_shared<NcclWatchdog>(timeout)) {}
  NcclCollectives(const NcclCollectives&) = delete;
  NcclCollectives& operator=(const NcclCollectives&) = delete;

  const char* name() const override { return "nccl"; }
  absl::StatusOr<std::shared_ptr<Communicator>> GetCommunicator(const CliqueKey& clique,
                                                                RankId rank) override;

  // How many cliques were created so far (cache misses), for tests of the cache.
  int cliques_created() const;
  // The store keys of `clique`'s generation `generation` start with this.
  static std::string KeyPrefix(const CliqueKey& clique, uint64_t generation);

 private:
  bool IsLocal(int64_t device) const {
    return device >= topology_.first_device &&
           device < topology_.first_device + topology_.device_count;
  }
  absl::StatusOr<std::shared_ptr<NcclClique>> CreateClique(const CliqueKey& clique,
                                                           uint64_t generation);
  // The clique's unique id from the processes of its ranks (`executors`: null for other
  // processes' ranks) through the store.
  absl::StatusOr<ncclUniqueId> ExchangeUniqueId(
      const CliqueKey& clique, uint64_t generation,
      const std::vector<se::cuda::CudaExecutor*>& executors);

  const std::shared_ptr<const NcclLibrary> nccl_;
  se::Platform& platform_;
  const absl::Duration timeout_;
  const NcclTopology topology_;
  const std::shared_ptr<NcclWatchdog> watchdog_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<CliqueKey, std::shared_ptr<NcclClique>> cliques_ ABSL_GUARDED_BY(mu_);
  // The generation the next creation of a clique uses (every attempt takes one, so a retry
  // after a failed rendezvous never reads the failed attempt's keys).
  absl::flat_hash_map<CliqueKey, uint64_t> next_generation_ ABSL_GUARDED_BY(mu_);
  int cliques_created_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ember::collectives::nccl

#endif  // EMBER_COLLECTIVES_NCCL_NCCL_COLLECTIVES_H_
