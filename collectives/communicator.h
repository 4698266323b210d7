// Communicator: one rank's handle on a clique of devices, shaped like an NCCL communicator.
// Every operation takes device buffers, an element type, a count and (for reductions) a
// reduction kind, is ordered on a stream with the work around it, and completes through the
// event it returns. All ranks of a clique must issue the same operations in the same order (as
// with NCCL); the n-th operation of one rank meets the n-th operation of the others.
#ifndef EMBER_COLLECTIVES_COMMUNICATOR_H_
#define EMBER_COLLECTIVES_COMMUNICATOR_H_

#include <cstddef>
#include <optional>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/async_event.h"
#include "collectives/types.h"
#include "stream_executor/device_memory.h"
#include "stream_executor/stream.h"

namespace ember::collectives {

// `stream`: the stream the operation is ordered on (it runs when the stream reaches it). Host
// memory transports (in-process, Gloo) also accept a null stream: the operation then runs at
// once on the calling thread, which must be the thread doing this rank's work (a host device's
// stream task running a program). The returned event carries the operation's status; an
// operation that fails (timeout, a peer's failure, an abort) fails the clique: every pending and
// later operation of every rank fails too, and the communicator is not handed out again.
class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual RankId rank() const = 0;
  virtual int size() const = 0;
  virtual const CliqueKey& clique() const = 0;

  // recv = reduce over ranks of send; both hold `count` elements. recv may be send (in place):
  // buffer assignment writes an all-reduce over its dying operand.
  virtual AsyncEventRef AllReduce(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                                  size_t count, ReductionKind kind, se::Stream* stream) = 0;
  // recv = the sends of ranks 0..size-1, concatenated; send holds `count` elements.
  virtual AsyncEventRef AllGather(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                                  size_t count, se::Stream* stream) = 0;
  // send is size() blocks of `count` elements; rank r receives reduce(block r of every rank).
  virtual AsyncEventRef ReduceScatter(se::DeviceMemory send, se::DeviceMemory recv,
                                      DataType type, size_t count, ReductionKind kind,
                                      se::Stream* stream) = 0;
  // send is size() blocks of `count` elements, block j going to rank j; recv block j comes
  // from rank j.
  virtual AsyncEventRef AllToAll(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                                 size_t count, se::Stream* stream) = 0;
  // Every rank takes part: this rank sends `count` elements to each of `targets` and receives
  // from `source` (zeros when none; the source's own call names this rank as a target).
  virtual AsyncEventRef CollectivePermute(se::DeviceMemory send, se::DeviceMemory recv,
                                          DataType type, size_t count,
                                          std::optional<RankId> source,
                                          absl::Span<const RankId> targets,
                                          se::Stream* stream) = 0;
  // Every rank receives root's send.
  virtual AsyncEventRef Broadcast(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                                  size_t count, RankId root, se::Stream* stream) = 0;
  // root receives reduce over ranks of send; the other ranks' recv is zero-filled.
  virtual AsyncEventRef Reduce(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                               size_t count, ReductionKind kind, RankId root,
                               se::Stream* stream) = 0;

  // Fails every pending and later operation of the clique with `reason`, on every rank.
  virtual void Abort(const absl::Status& reason) = 0;
  // OK while the clique works; otherwise the error that failed it.
  virtual absl::Status HealthCheck() const = 0;
};

}  // namespace ember::collectives

#endif  // EMBER_COLLECTIVES_COMMUNICATOR_H_
