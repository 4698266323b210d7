// NcclClique: the NCCL communicators of one clique's ranks in this process (one per local rank,
// each on its rank's GPU; the other ranks live in other processes), created together in a group
// and shared by the ranks' NcclCommunicators. It keeps the clique's first failure: once an
// operation failed or the clique was aborted, no local rank issues NCCL calls on it any more and
// the transport builds a new clique for the next request.
#ifndef EMBER_COLLECTIVES_NCCL_NCCL_CLIQUE_H_
#define EMBER_COLLECTIVES_NCCL_NCCL_CLIQUE_H_

#include <nccl.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "collectives/nccl/nccl_library.h"
#include "collectives/types.h"
#include "stream_executor/cuda/cuda_executor.h"

namespace ember::collectives::nccl {

class NcclClique {
  struct PrivateTag {
    explicit PrivateTag() = default;
  };

 public:
  // One communicator per local rank on `executors[rank]`'s device (distinct devices; null for a
  // rank of another process): ncclCommInitRank with `id` (the clique's unique id, the same in
  // every process) for every local rank inside one ncclGroupStart/End, so one thread can create
  // them all. The executors must outlive the clique.
  static absl::StatusOr<std::shared_ptr<NcclClique>> Create(
      std::shared_ptr<const NcclLibrary> nccl, CliqueKey key,
      std::vector<se::cuda::CudaExecutor*> executors, const ncclUniqueId& id);
  // Public for std::make_shared only; use Create.
  NcclClique(PrivateTag, std::shared_ptr<const NcclLibrary> nccl, CliqueKey key,
             std::vector<se::cuda::CudaExecutor*> executors, std::vector<ncclComm_t> comms);
  NcclClique(const NcclClique&) = delete;
  NcclClique& operator=(const NcclClique&) = delete;
  // Destroys the communicators (those not aborted) under their devices' contexts.
  ~NcclClique();

  const CliqueKey& key() const { return key_; }
  const NcclLibrary& nccl() const { return *nccl_; }
  // Whether `rank` lives in this process (has a communicator here).
  bool IsLocal(RankId rank) const { return executors_[rank.value] != nullptr; }
  // Whether some rank lives in another process.
  bool SpansProcesses() const;

  // Runs `call(comm)` with `rank`'s communicator, its device's context current, unless the clique
  // failed (then that failure). Abort waits for calls in progress, so a communicator is never used
  // while NCCL tears it down.
  absl::Status WithComm(RankId rank, absl::FunctionRef<absl::Status(ncclComm_t)> call) const;

  // NCCL's asynchronous error of `rank`'s communicator as a status (OK when none), named `call`
  // and carrying ncclGetLastError; OK after an abort (the abort's reason is the failure then).
  absl::Status AsyncError(RankId rank, const char* call) const;

  // Counts an operation `rank` issued and returns its number (1, 2, ...): the ranks' n-th
  // operations meet.
  uint64_t NoteIssued(RankId rank);
  // The devices of the local ranks that have issued fewer than `seq` operations (what ranks of
  // other processes issued is not seen from here).
  std::vector<int64_t> MissingFor(uint64_t seq) const;

  // Records `reason` as the clique's failure (the first one wins); nothing is torn down.
  void Fail(const absl::Status& reason);
  // Fail, then ncclCommAbort on every local rank's communicator (once): work they have queued
  // fails (the other processes' ranks fail when their own watchdogs or NCCL notice).
  void Abort(const absl::Status& reason);
  // The recorded failure (Fail, Abort), else OK.
  absl::Status failure() const;
  // The recorded failure, else the first local rank's asynchronous error, else OK.
  absl::Status Health() const;

 private:
  const std::shared_ptr<const NcclLibrary> nccl_;
  const CliqueKey key_;
  const std::vector<se::cuda::CudaExecutor*> executors_;
  // Readers: NCCL calls on a communicator; the writer: Abort, which nulls the communicators.
  mutable absl::Mutex comms_mu_;
  std::vector<ncclComm_t> comms_ ABSL_GUARDED_BY(comms_mu_);
  mutable absl::Mutex failure_mu_;
  absl::Status failure_ ABSL_GUARDED_BY(failure_mu_);
  std::vector<uint64_t> issued_ ABSL_GUARDED_BY(failure_mu_);
};

}  // namespace ember::collectives::nccl

#endif  // EMBER_COLLECTIVES_NCCL_NCCL_CLIQUE_H_
