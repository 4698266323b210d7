// GlooStoreAdapter: Gloo's rendezvous store (gloo::rendezvous::Store) over Ember's KeyValueStore,
// so that the ranks of a clique find each other's TCP addresses through the job's store. Keys are
// prefixed (clique and generation), values are base64 text so that any store carries them, and
// every wait ends by one deadline or when the clique is failed (Abort during a connect).
#ifndef EMBER_COLLECTIVES_GLOO_GLOO_STORE_ADAPTER_H_
#define EMBER_COLLECTIVES_GLOO_GLOO_STORE_ADAPTER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "collectives/key_value_store.h"
#include "gloo/rendezvous/store.h"

namespace ember::collectives {

// What the adapter throws: Gloo's Store interface reports failures only by exception, and
// connectFullMesh lets it through to our caller, who turns it back into `status`. `key` is the
// unprefixed key (Gloo's "rank_<r>" or "<r>": it names the rank that did not arrive).
class GlooStoreError : public std::runtime_error {
 public:
  GlooStoreError(absl::Status status, std::string key)
      : std::runtime_error(std::string(status.message())),
        status_(std::move(status)),
        key_(std::move(key)) {}
  const absl::Status& status() const { return status_; }
  const std::string& key() const { return key_; }
  // The rank the key belongs to, or -1.
  int rank() const;

 private:
  absl::Status status_;
  std::string key_;
};

class GlooStoreAdapter final : public gloo::rendezvous::Store {
 public:
  // `cancelled` returns a non-OK status once waiting is pointless (the clique failed).
  GlooStoreAdapter(std::shared_ptr<KeyValueStore> store, std::string prefix, absl::Time deadline,
                   std::function<absl::Status()> cancelled);

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;

 private:
  // The value of `key`, polling in short slices so that a cancellation ends the wait early.
  std::string Fetch(const std::string& key, absl::Time deadline);

  const std::shared_ptr<KeyValueStore> store_;
  const std::string prefix_;
  const absl::Time deadline_;
  const std::function<absl::Status()> cancelled_;
};

}  // namespace ember::collectives

#endif  // EMBER_COLLECTIVES_GLOO_GLOO_STORE_ADAPTER_H_
