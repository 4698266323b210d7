// KeyValueStore: the rendezvous that processes of one job share (JAX's distributed runtime hands
// its coordination service's store to PJRT_Client_Create). Transports use it to find their peers
// (Gloo's TCP addresses, NCCL unique ids) and the client to learn the other processes' devices.
// Keys are written once; readers wait for them.
#ifndef EMBER_COLLECTIVES_KEY_VALUE_STORE_H_
#define EMBER_COLLECTIVES_KEY_VALUE_STORE_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ember::collectives {

class KeyValueStore {
 public:
  virtual ~KeyValueStore() = default;
  virtual absl::Status Set(std::string_view key, std::string_view value) = 0;
  // The value of `key`, waiting up to `timeout` for a peer to set it; DeadlineExceeded naming
  // the key when none does.
  virtual absl::StatusOr<std::string> Get(std::string_view key, absl::Duration timeout) = 0;
};

// A store inside one process: several clients or transports of one process (tests, a process
// that plays every node) rendezvous through it. Like JAX's, it refuses to overwrite a key.
class InMemoryKeyValueStore final : public KeyValueStore {
 public:
  absl::Status Set(std::string_view key, std::string_view value) override;
  absl::StatusOr<std::string> Get(std::string_view key, absl::Duration timeout) override;

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::string> values_ ABSL_GUARDED_BY(mu_);
};

// Another store's keys, under `prefix`: what one client of a job writes stays apart from what an
// earlier client of the same job wrote (keys are written once).
class PrefixedKeyValueStore final : public KeyValueStore {
 public:
  PrefixedKeyValueStore(std::shared_ptr<KeyValueStore> store, std::string prefix)
      : store_(std::move(store)), prefix_(std::move(prefix)) {}
  absl::Status Set(std::string_view key, std::string_view value) override;
  absl::StatusOr<std::string> Get(std::string_view key, absl::Duration timeout) override;

 private:
  const std::shared_ptr<KeyValueStore> store_;
  const std::string prefix_;
};

}  // namespace ember::collectives

#endif  // EMBER_COLLECTIVES_KEY_VALUE_STORE_H_
