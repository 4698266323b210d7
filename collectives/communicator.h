// The Communicator interface: one participant's handle on one collective operation among a
// clique of devices. Payloads are dense byte arrays; the caller (an adapter that knows the
// program, e.g. compiler/host/collective_hooks) lays data out so that every operation works on
// equal contiguous blocks, and supplies the reduction for AllReduce / ReduceScatter. This layer
// knows nothing about programs, shapes or element types.
#ifndef EMBER_COLLECTIVES_COMMUNICATOR_H_
#define EMBER_COLLECTIVES_COMMUNICATOR_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace ember::collectives {

using ConstBytes = absl::Span<const uint8_t>;
using MutableBytes = absl::Span<uint8_t>;

// Combines `inputs` (one per rank, in rank order, each output.size() bytes) into `output`.
using ReduceFn = std::function<absl::Status(absl::Span<const ConstBytes> inputs,
                                            MutableBytes output)>;

// Identifies one execution of one collective among a clique: every participant of that
// execution builds the same key. `run_id` separates launches (several may be in flight), `op`
// names the operation and its occurrence inside the launch, `devices` are the participants'
// global device ids in rank order.
struct CliqueKey {
  uint64_t run_id = 0;
  std::string op;
  std::vector<int64_t> devices;
  std::string ToString() const;
};

enum class CollectiveKind {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kCollectivePermute,
  kBroadcast,
  kReduce,
};
const char* CollectiveKindName(CollectiveKind kind);

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // recv = reduce(send of every rank); send.size() == recv.size().
  virtual absl::Status AllReduce(ConstBytes send, MutableBytes recv, const ReduceFn& reduce) = 0;
  // recv = the sends of ranks 0..size-1, concatenated; recv.size() == size * send.size().
  virtual absl::Status AllGather(ConstBytes send, MutableBytes recv) = 0;
  // send is `size` equal blocks; rank r receives reduce(block r of every rank).
  virtual absl::Status ReduceScatter(ConstBytes send, MutableBytes recv,
                                     const ReduceFn& reduce) = 0;
  // send is `size` equal blocks, block j going to rank j; recv block j comes from rank j.
  virtual absl::Status AllToAll(ConstBytes send, MutableBytes recv) = 0;
  // Every rank takes part. This rank receives the send of `source` (zeros when nullopt) and
  // sends to `targets` (the targets' own calls name this rank as their source).
  virtual absl::Status CollectivePermute(ConstBytes send, MutableBytes recv,
                                         std::optional<int> source,
                                         absl::Span<const int> targets) = 0;
  // Every rank receives root's send.
  virtual absl::Status Broadcast(ConstBytes send, MutableBytes recv, int root) = 0;
  // root receives reduce(send of every rank) (send.size() == recv.size()); the other ranks'
  // recv is zero-filled.
  virtual absl::Status Reduce(ConstBytes send, MutableBytes recv, int root,
                              const ReduceFn& reduce) = 0;
};

}  // namespace ember::collectives

#endif  // EMBER_COLLECTIVES_COMMUNICATOR_H_
