// GlooClique: this process's share of one generation of a clique over Gloo: the ranks of the
// clique that live here connect through it (each rank its own full mesh of TCP pairs, found
// through the key-value store under keys of this generation), and it holds the clique's health.
// Failing it (an operation's error, Abort) wakes every operation of its local ranks and closes
// their connections, which fails the operations of the ranks in other processes too.
#ifndef EMBER_COLLECTIVES_GLOO_GLOO_CLIQUE_H_
#define EMBER_COLLECTIVES_GLOO_GLOO_CLIQUE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "collectives/key_value_store.h"
#include "collectives/types.h"

namespace gloo {
class Context;
namespace transport {
class Device;
class UnboundBuffer;
}  // namespace transport
}  // namespace gloo

namespace ember::collectives {

class GlooClique {
 public:
  // `device` may be null for a clique of one device (it never connects).
  GlooClique(CliqueKey key, uint64_t generation, std::shared_ptr<KeyValueStore> store,
             std::shared_ptr<gloo::transport::Device> device, absl::Duration timeout);
  ~GlooClique();
  GlooClique(const GlooClique&) = delete;
  GlooClique& operator=(const GlooClique&) = delete;

  const CliqueKey& key() const { return key_; }
  uint64_t generation() const { return generation_; }
  absl::Duration timeout() const { return timeout_; }
  // "ember/gloo/<devices>/g<generation>/": where this generation's ranks publish addresses.
  const std::string& key_prefix() const { return prefix_; }

  // Connects `rank` to every other rank (full mesh, waiting up to the timeout for them to
  // publish their addresses). The error says which rank did not arrive where that is known;
  // the caller names the operation and fails the clique.
  absl::StatusOr<std::shared_ptr<gloo::Context>> Connect(int rank);

  // An operation's buffers, for the time it waits on them, so that Fail can wake the wait.
  // Track fails (with the clique's error) once the clique has failed.
  absl::Status Track(const std::vector<gloo::transport::UnboundBuffer*>& buffers);
  void Untrack(const std::vector<gloo::transport::UnboundBuffer*>& buffers);

  // Fails the clique (the first reason wins): wakes the waiting operations of every local rank
  // and closes their connections, so that peers in other processes fail too.
  void Fail(const absl::Status& reason);
  // OK while the clique works, else the error that failed it.
  absl::Status health() const;

 private:
  const CliqueKey key_;
  const uint64_t generation_;
  const std::shared_ptr<KeyValueStore> store_;
  std::shared_ptr<gloo::transport::Device> device_;
  const absl::Duration timeout_;
  const std::string prefix_;

  mutable absl::Mutex mu_;
  absl::Status failed_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<gloo::Context>> contexts_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<gloo::transport::UnboundBuffer*> tracked_ ABSL_GUARDED_BY(mu_);
};

// Closes every connection of `context`, swallowing what Gloo throws (closing is best effort).
void CloseConnectionsQuietly(gloo::Context& context);

}  // namespace ember::collectives

#endif  // EMBER_COLLECTIVES_GLOO_GLOO_CLIQUE_H_
