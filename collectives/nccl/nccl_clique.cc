#include "collectives/nccl/nccl_clique.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace ember::collectives::nccl {

absl::StatusOr<std::shared_ptr<NcclClique>> NcclClique::Create(
    std::shared_ptr<const NcclLibrary> nccl, CliqueKey key,
    std::vector<se::cuda::CudaExecutor*> executors, const ncclUniqueId& id) {
  const int n = key.size();
  if (n == 0 || static_cast<int>(executors.size()) != n) {
    return absl::InvalidArgumentError(absl::StrCat("NCCL clique ", key.ToString(), ": ",
                                                   executors.size(), " devices for ", n, " ranks"));
  }
  std::vector<ncclComm_t> comms(n, nullptr);
  // Within a group ncclCommInitRank only registers the rank; ncclGroupEnd connects them all.
  absl::Status status = nccl->Check(nccl->GroupStart(), "ncclGroupStart", nullptr);
  bool group_open = status.ok();
  for (int r = 0; r < n && status.ok(); ++r) {
    if (executors[r] == nullptr) continue;  // another process's rank
    absl::StatusOr<se::cuda::ScopedContext> scope = executors[r]->context().Activate();
    status = scope.status();
    if (status.ok()) {
      status = nccl->Check(nccl->CommInitRank(&comms[r], n, id, r), "ncclCommInitRank", nullptr);
    }
  }
  if (group_open) {
    absl::Status ended = nccl->Check(nccl->GroupEnd(), "ncclGroupEnd", nullptr);
    if (status.ok()) status = ended;
  }
  if (!status.ok()) {
    for (int r = 0; r < n; ++r) {
      if (comms[r] == nullptr) continue;
      absl::StatusOr<se::cuda::ScopedContext> scope = executors[r]->context().Activate();
      nccl->CommAbort(comms[r]);
    }
    return absl::Status(status.code(), absl::StrCat("creating the NCCL communicators of ",
                                                    key.ToString(), ": ", status.message()));
  }
  return std::make_shared<NcclClique>(PrivateTag(), std::move(nccl), std::move(key),
                                      std::move(executors), std::move(comms));
}

NcclClique::NcclClique(PrivateTag, std::shared_ptr<const NcclLibrary> nccl, CliqueKey key,
                       std::vector<se::cuda::CudaExecutor*> executors,
                       std::vector<ncclComm_t> comms)
    : nccl_(std::move(nccl)),
      key_(std::move(key)),
      executors_(std::move(executors)),
      comms_(std::move(comms)),
      issued_(key_.devices.size(), 0) {}

NcclClique::~NcclClique() {
  absl::MutexLock lock(&comms_mu_);
  for (size_t r = 0; r < comms_.size(); ++r) {
    if (comms_[r] == nullptr) continue;
    absl::StatusOr<se::cuda::ScopedContext> scope = executors_[r]->context().Activate();
    nccl_->CommDestroy(comms_[r]);
  }
}

bool NcclClique::SpansProcesses() const {
  for (const se::cuda::CudaExecutor* executor : executors_) {
    if (executor == nullptr) return true;
  }
  return false;
}

absl::Status NcclClique::WithComm(RankId rank,
                                  absl::FunctionRef<absl::Status(ncclComm_t)> call) const {
  if (!IsLocal(rank)) {
    return absl::InternalError(absl::StrCat("NCCL ", key_.ToString(), ": rank ", rank.value,
                                            " belongs to another process"));
  }
  EMBER_RETURN_IF_ERROR(Health());
  absl::ReaderMutexLock lock(&comms_mu_);
  ncclComm_t comm = comms_[rank.value];
  if (comm == nullptr) {
    absl::MutexLock failure_lock(&failure_mu_);
    return failure_;
  }
  EMBER_ASSIGN_OR_RETURN(se::cuda::ScopedContext scope,
                         executors_[rank.value]->context().Activate());
  return call(comm);
}

absl::Status NcclClique::AsyncError(RankId rank, const char* call) const {
  absl::ReaderMutexLock lock(&comms_mu_);
  ncclComm_t comm = comms_[rank.value];
  if (comm == nullptr) return absl::OkStatus();
  ncclResult_t async = ncclSuccess;
  EMBER_RETURN_IF_ERROR(
      nccl_->Check(nccl_->CommGetAsyncError(comm, &async), "ncclCommGetAsyncError", comm));
  return nccl_->Check(async, call, comm);
}

uint64_t NcclClique::NoteIssued(RankId rank) {
  absl::MutexLock lock(&failure_mu_);
  return ++issued_[rank.value];
}

std::vector<int64_t> NcclClique::MissingFor(uint64_t seq) const {
  absl::MutexLock lock(&failure_mu_);
  std::vector<int64_t> missing;
  for (size_t r = 0; r < issued_.size(); ++r) {
    if (executors_[r] != nullptr && issued_[r] < seq) missing.push_back(key_.devices[r]);
  }
  return missing;
}

absl::Status NcclClique::failure() const {
  absl::MutexLock lock(&failure_mu_);
  return failure_;
}

void NcclClique::Fail(const absl::Status& reason) {
  absl::MutexLock lock(&failure_mu_);
  if (failure_.ok()) failure_ = reason;
}

void NcclClique::Abort(const absl::Status& reason) {
  Fail(reason.ok() ? absl::AbortedError("the clique was aborted") : reason);
  absl::MutexLock lock(&comms_mu_);
  for (size_t r = 0; r < comms_.size(); ++r) {
    if (comms_[r] == nullptr) continue;
    absl::StatusOr<se::cuda::ScopedContext> scope = executors_[r]->context().Activate();
    nccl_->CommAbort(comms_[r]);
    comms_[r] = nullptr;
  }
}

absl::Status NcclClique::Health() const {
  EMBER_RETURN_IF_ERROR(failure());
  for (int r = 0; r < key_.size(); ++r) {
    absl::Status async = AsyncError(RankId(r), "NCCL communicator");
    if (!async.ok()) {
      return absl::Status(async.code(), absl::StrCat(key_.ToString(), ", rank ", r, ": ",
                                                     async.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace ember::collectives::nccl
