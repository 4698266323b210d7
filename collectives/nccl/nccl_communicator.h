// NcclCommunicator: one rank of an NcclClique as a collectives::Communicator on CUDA device memory.
// Every operation is issued on the CUstream of the se::Stream it is given (a CudaStream of the
// rank's device), so it is ordered with the kernels and copies around it; AllToAll and
// CollectivePermute are ncclSend/ncclRecv pairs in one group (a rank's block for itself is a
// device copy). The returned event is recorded on the stream after the operation; when the stream
// fails (NCCL's own failure faults the device) the event's error names the operation, the clique,
// the rank and NCCL's asynchronous and last error (or the abort's reason, such as the watchdog's
// timeout), and the clique is marked failed. After a
// device fault the event completes once the stream is synchronized (see CudaStream).
#ifndef EMBER_COLLECTIVES_NCCL_NCCL_COMMUNICATOR_H_
#define EMBER_COLLECTIVES_NCCL_NCCL_COMMUNICATOR_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "collectives/communicator.h"
#include "collectives/nccl/nccl_clique.h"
#include "collectives/nccl/nccl_watchdog.h"

namespace ember::collectives::nccl {

class NcclCommunicator final : public Communicator,
                               public std::enable_shared_from_this<NcclCommunicator> {
 public:
  // `watchdog` fails the clique's operations that outlast its timeout.
  NcclCommunicator(std::shared_ptr<NcclClique> clique, RankId rank,
                   std::shared_ptr<NcclWatchdog> watchdog)
      : clique_(std::move(clique)), rank_(rank), watchdog_(std::move(watchdog)) {}

  RankId rank() const override { return rank_; }
  int size() const override { return clique_->key().size(); }
  const CliqueKey& clique() const override { return clique_->key(); }

  AsyncEventRef AllReduce(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                          size_t count, ReductionKind kind, se::Stream* stream) override;
  AsyncEventRef AllGather(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                          size_t count, se::Stream* stream) override;
  AsyncEventRef ReduceScatter(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                              size_t count, ReductionKind kind, se::Stream* stream) override;
  AsyncEventRef AllToAll(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                         size_t count, se::Stream* stream) override;
  AsyncEventRef CollectivePermute(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                                  size_t count, std::optional<RankId> source,
                                  absl::Span<const RankId> targets, se::Stream* stream) override;
  AsyncEventRef Broadcast(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                          size_t count, RankId root, se::Stream* stream) override;
  AsyncEventRef Reduce(se::DeviceMemory send, se::DeviceMemory recv, DataType type, size_t count,
                       ReductionKind kind, RankId root, se::Stream* stream) override;

  // ncclCommAbort on every rank of the clique; their queued and later operations fail.
  void Abort(const absl::Status& reason) override { clique_->Abort(reason); }
  // The clique's recorded failure, else ncclCommGetAsyncError of its communicators.
  absl::Status HealthCheck() const override { return clique_->Health(); }

 private:
  // Checks, then runs `issue(comm, stream)` with the rank's context current and records the
  // completion event. `call` names the NCCL entry point for asynchronous errors.
  template <typename Issue>
  AsyncEventRef Run(const char* op, const char* call, se::Stream* stream, absl::Status checked,
                    Issue issue);
  // "<op> (NCCL, devices [...], rank r)": how errors name the operation.
  std::string Where(const char* op) const;
  absl::Status Error(const char* op, absl::StatusCode code, absl::string_view what) const;
  absl::Status CheckBuffer(const char* op, const char* which, se::DeviceMemory mem,
                           size_t bytes) const;
  absl::Status CheckRank(const char* op, const char* which, RankId rank) const;

  const std::shared_ptr<NcclClique> clique_;
  const RankId rank_;
  const std::shared_ptr<NcclWatchdog> watchdog_;
};

}  // namespace ember::collectives::nccl

#endif  // EMBER_COLLECTIVES_NCCL_NCCL_COMMUNICATOR_H_
