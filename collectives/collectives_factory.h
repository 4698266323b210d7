// Creates the collectives transport for a stream-executor platform by explicit call (no static
// registration): in-process rendezvous for the host devices of one process, Gloo for host devices
// spread over several processes (rendezvous through the job's key-value store), NCCL for GPUs
// (unique ids through the same store across processes).
#ifndef EMBER_COLLECTIVES_COLLECTIVES_FACTORY_H_
#define EMBER_COLLECTIVES_COLLECTIVES_FACTORY_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectives/collectives.h"
#include "collectives/key_value_store.h"
#include "stream_executor/platform.h"

namespace ember::collectives {

struct CollectivesOptions {
  // How long an operation waits for its peers before it fails.
  absl::Duration timeout = absl::Minutes(5);
  // The processes of the job; with more than one, `kv_store` is where their transports meet.
  int process_count = 1;
  std::shared_ptr<KeyValueStore> kv_store;
  // CUDA (NCCL): the platform whose GPUs communicate (it must outlive the transport), where
  // libnccl.so.2 is opened from first, and this process's global device ids (first_device_id +
  // CUDA ordinal).
  se::Platform* platform = nullptr;
  std::string library_directory;
  int64_t first_device_id = 0;
};

// `platform` is se::Platform::Name() ("host", "cuda").
absl::StatusOr<std::shared_ptr<Collectives>> CreateCollectives(std::string_view platform,
                                                               const CollectivesOptions& options);

}  // namespace ember::collectives

#endif  // EMBER_COLLECTIVES_COLLECTIVES_FACTORY_H_
