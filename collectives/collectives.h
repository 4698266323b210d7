// Collectives: one transport (in-process host devices, Gloo across processes, NCCL across GPUs)
// as a factory of communicators. A communicator belongs to a clique (the participating devices
// in rank order); the transport creates it on first use and caches it, so later launches over
// the same devices reuse it, until it fails or is aborted.
#ifndef EMBER_COLLECTIVES_COLLECTIVES_H_
#define EMBER_COLLECTIVES_COLLECTIVES_H_

#include <memory>

#include "absl/status/statusor.h"
#include "collectives/communicator.h"
#include "collectives/types.h"

namespace ember::collectives {

class Collectives {
 public:
  virtual ~Collectives() = default;
  // "in_process", "gloo", "nccl".
  virtual const char* name() const = 0;
  // `rank`'s communicator in `clique`: the cached one while it is healthy, else a new one.
  virtual absl::StatusOr<std::shared_ptr<Communicator>> GetCommunicator(const CliqueKey& clique,
                                                                        RankId rank) = 0;
};

}  // namespace ember::collectives

#endif  // EMBER_COLLECTIVES_COLLECTIVES_H_
