// Creates the collectives transport for a stream-executor platform by explicit call (no static
// registration): in-process rendezvous for host devices of one process; NCCL for GPUs and Gloo
// across processes come with their folders.
#ifndef EMBER_COLLECTIVES_COLLECTIVES_FACTORY_H_
#define EMBER_COLLECTIVES_COLLECTIVES_FACTORY_H_

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectives/collectives.h"

namespace ember::collectives {

// `platform` is se::Platform::Name() ("host", "cuda"). `timeout`: how long an operation waits
// for its peers before it fails.
absl::StatusOr<std::shared_ptr<Collectives>> CreateCollectives(std::string_view platform,
                                                               absl::Duration timeout);

}  // namespace ember::collectives

#endif  // EMBER_COLLECTIVES_COLLECTIVES_FACTORY_H_
