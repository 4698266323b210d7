// GlooCommunicator: one rank's handle on a GlooClique. Operations move host memory through the
// rank's Gloo context (unbound buffers over TCP pairs, one message per peer and phase), and
// reductions fold the ranks' contributions in rank order with Accumulate, so that every result
// equals the in-process transport's bit for bit (Gloo's own ring algorithms fold in an order
// that depends on the rank, which floats and f16 would show). The rank connects on its first
// operation that moves data, so that a missing peer is an operation's error naming that peer.
#ifndef EMBER_COLLECTIVES_GLOO_GLOO_COMMUNICATOR_H_
#define EMBER_COLLECTIVES_GLOO_GLOO_COMMUNICATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "collectives/communicator.h"
#include "collectives/gloo/gloo_clique.h"

namespace ember::collectives {

class GlooCommunicator final : public Communicator,
                               public std::enable_shared_from_this<GlooCommunicator> {
 public:
  GlooCommunicator(std::shared_ptr<GlooClique> clique, RankId rank);
  ~GlooCommunicator() override;

  RankId rank() const override { return rank_; }
  int size() const override { return clique_->key().size(); }
  const CliqueKey& clique() const override { return clique_->key(); }

  AsyncEventRef AllReduce(se::DeviceMemory send, se::DeviceMemory recv, DataType type, size_t count,
                          ReductionKind kind, se::Stream* stream) override;
  AsyncEventRef AllGather(se::DeviceMemory send, se::DeviceMemory recv, DataType type, size_t count,
                          se::Stream* stream) override;
  AsyncEventRef ReduceScatter(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                              size_t count, ReductionKind kind, se::Stream* stream) override;
  AsyncEventRef AllToAll(se::DeviceMemory send, se::DeviceMemory recv, DataType type, size_t count,
                         se::Stream* stream) override;
  AsyncEventRef CollectivePermute(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                                  size_t count, std::optional<RankId> source,
                                  absl::Span<const RankId> targets, se::Stream* stream) override;
  AsyncEventRef Broadcast(se::DeviceMemory send, se::DeviceMemory recv, DataType type, size_t count,
                          RankId root, se::Stream* stream) override;
  AsyncEventRef Reduce(se::DeviceMemory send, se::DeviceMemory recv, DataType type, size_t count,
                       ReductionKind kind, RankId root, se::Stream* stream) override;

  void Abort(const absl::Status& reason) override;
  absl::Status HealthCheck() const override;

 private:
  // One message of an operation: `bytes` at `data` to or from `peer`.
  struct Transfer {
    int peer;
    bool send;
    void* data;
    size_t bytes;
  };

  // Runs `op` now (null stream) or when `stream` reaches it, holding this communicator.
  AsyncEventRef Run(se::Stream* stream, std::function<absl::Status(GlooCommunicator&)> op);

  absl::Status DoAllReduce(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                           size_t count, ReductionKind kind);
  absl::Status DoAllGather(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                           size_t count);
  absl::Status DoReduceScatter(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                               size_t count, ReductionKind kind);
  absl::Status DoAllToAll(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                          size_t count);
  absl::Status DoCollectivePermute(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                                   size_t count, std::optional<RankId> source,
                                   const std::vector<RankId>& targets);
  absl::Status DoBroadcast(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                           size_t count, RankId root);
  absl::Status DoReduce(se::DeviceMemory send, se::DeviceMemory recv, DataType type, size_t count,
                        ReductionKind kind, RankId root);

  // The clique's error once it failed; else the next operation's sequence number (every rank
  // numbers its operations alike, and the number picks the Gloo slots the messages travel on).
  absl::StatusOr<uint64_t> Begin() ABSL_EXCLUSIVE_LOCKS_REQUIRED(op_mu_);
  // Moves `transfers` (phase `phase` of operation `seq`), connecting first if this rank has not.
  // A failure fails the clique; the error names the operation and, where known, the peer.
  absl::Status Exchange(const char* op, uint64_t seq, int phase,
                        const std::vector<Transfer>& transfers)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(op_mu_);

  std::string Where(const char* op) const;
  absl::Status Annotate(const char* op, const absl::Status& status) const;
  absl::Status CheckReduction(const char* op, DataType type, ReductionKind kind) const;
  absl::Status CheckBuffer(const char* op, const char* which, se::DeviceMemory mem,
                           size_t bytes) const;
  absl::Status CheckRank(const char* op, const char* which, RankId r) const;

  const std::shared_ptr<GlooClique> clique_;
  const RankId rank_;
  // One operation at a time per rank: its sequence number and its context.
  absl::Mutex op_mu_;
  uint64_t next_seq_ ABSL_GUARDED_BY(op_mu_) = 0;
  std::shared_ptr<gloo::Context> context_ ABSL_GUARDED_BY(op_mu_);
};

}  // namespace ember::collectives

#endif  // EMBER_COLLECTIVES_GLOO_GLOO_COMMUNICATOR_H_
