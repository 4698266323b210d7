// Collectives among host devices of several processes over Gloo's TCP transport. The ranks of a
// clique find each other through the job's key-value store (under keys naming the clique and a
// generation, so that a clique rebuilt after a failure never reads the old addresses) and
// connect full mesh, ranks of one process to each other too (over loopback). TCP listens on
// 127.0.0.1 unless EMBER_GLOO_HOSTNAME names the address to use (for several machines).
// Communicators are cached per clique and rank while the clique is healthy; a failed clique is
// replaced, with the next generation, on the next request. Generations are counted per process:
// a failure in one process closes its connections, so the other processes' next operation on
// the clique fails too and they move to the same next generation (a process learns of a peer's
// failure at its next operation, not through HealthCheck).
#ifndef EMBER_COLLECTIVES_GLOO_GLOO_COLLECTIVES_H_
#define EMBER_COLLECTIVES_GLOO_GLOO_COLLECTIVES_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collectives/collectives.h"
#include "collectives/key_value_store.h"

namespace gloo::transport {
class Device;
}  // namespace gloo::transport

namespace ember::collectives {

class GlooClique;

class GlooCollectives final : public Collectives {
 public:
  // `timeout` bounds connecting (peers publishing their addresses and accepting connections)
  // and each phase of an operation (an all-reduce has two: reduce-scatter, then all-gather).
  GlooCollectives(std::shared_ptr<KeyValueStore> store, absl::Duration timeout);
  ~GlooCollectives() override;
  GlooCollectives(const GlooCollectives&) = delete;
  GlooCollectives& operator=(const GlooCollectives&) = delete;

  const char* name() const override { return "gloo"; }
  absl::StatusOr<std::shared_ptr<Communicator>> GetCommunicator(const CliqueKey& clique,
                                                                RankId rank) override;
  absl::Duration timeout() const { return timeout_; }
  // The address the TCP device listens on: EMBER_GLOO_HOSTNAME, else 127.0.0.1.
  static std::string Hostname();

 private:
  struct CliqueEntry {
    std::shared_ptr<GlooClique> clique;
    uint64_t next_generation = 0;
    absl::flat_hash_map<int, std::shared_ptr<Communicator>> communicators;
  };

  // The TCP device every context of this transport uses (one event thread), opened on first use.
  absl::StatusOr<std::shared_ptr<gloo::transport::Device>> DeviceLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::shared_ptr<KeyValueStore> store_;
  const absl::Duration timeout_;
  absl::Mutex mu_;
  std::shared_ptr<gloo::transport::Device> device_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<CliqueKey, CliqueEntry> cliques_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ember::collectives

#endif  // EMBER_COLLECTIVES_GLOO_GLOO_COLLECTIVES_H_
