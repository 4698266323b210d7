#include "collectives/nccl/nccl_communicator.h"

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "collectives/operation_checks.h"
#include "collectives/nccl/nccl_types.h"
#include "stream_executor/cuda/cuda_stream.h"

namespace ember::collectives::nccl {
namespace {

using se::cuda::CudaStream;

absl::Status FirstError(std::initializer_list<absl::Status> statuses) {
  for (const absl::Status& status : statuses) {
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

se::DeviceMemory Block(se::DeviceMemory mem, size_t index, size_t bytes) {
  return se::DeviceMemory{static_cast<uint8_t*>(mem.opaque) + index * bytes, bytes};
}

// `body`'s NCCL calls inside one ncclGroupStart/End; the group is closed even when one fails.
absl::Status Grouped(const NcclLibrary& nccl, ncclComm_t comm,
                     absl::FunctionRef<absl::Status()> body) {
  EMBER_RETURN_IF_ERROR(nccl.Check(nccl.GroupStart(), "ncclGroupStart", comm));
  absl::Status status = body();
  absl::Status ended = nccl.Check(nccl.GroupEnd(), "ncclGroupEnd", comm);
  return status.ok() ? ended : status;
}

}  // namespace

std::string NcclCommunicator::Where(const char* op) const {
  return absl::StrCat(op, " (NCCL, ", clique_->key().ToString(), ", rank ", rank_.value, ")");
}

absl::Status NcclCommunicator::Error(const char* op, absl::StatusCode code,
                                     absl::string_view what) const {
  return absl::Status(code, absl::StrCat(Where(op), ": ", what));
}

absl::Status NcclCommunicator::CheckBuffer(const char* op, const char* which, se::DeviceMemory mem,
                                           size_t bytes) const {
  return CheckBufferArgument(Where(op), which, mem, bytes);
}

absl::Status NcclCommunicator::CheckRank(const char* op, const char* which, RankId rank) const {
  return CheckRankArgument(Where(op), which, rank, size());
}

template <typename Issue>
AsyncEventRef NcclCommunicator::Run(const char* op, const char* call, se::Stream* stream,
                                    absl::Status checked, Issue issue) {
  if (!checked.ok()) return AsyncEvent::CreateReady(std::move(checked));
  auto* cuda = dynamic_cast<CudaStream*>(stream);
  if (cuda == nullptr) {
    return AsyncEvent::CreateReady(Error(
        op, absl::StatusCode::kInvalidArgument,
        stream == nullptr ? "NCCL needs a stream of the rank's GPU, got none"
                          : "NCCL needs a CUDA stream of the rank's GPU"));
  }
  absl::Status issued =
      clique_->WithComm(rank_, [&](ncclComm_t comm) { return issue(comm, *cuda); });
  absl::StatusOr<std::shared_ptr<se::Event>> event =
      issued.ok() ? cuda->RecordEvent() : absl::StatusOr<std::shared_ptr<se::Event>>(issued);
  if (!event.ok()) {
    // The peers' matching calls will never be met: the clique is done.
    absl::Status failed = Error(op, event.status().code(), event.status().message());
    clique_->Fail(failed);
    return AsyncEvent::CreateReady(failed);
  }
  const uint64_t seq = clique_->NoteIssued(rank_);
  auto finished = std::make_shared<std::atomic<bool>>(false);
  watchdog_->Watch(clique_, rank_, seq, op, finished);
  AsyncEventRef done = AsyncEvent::Create();
  (*event)->AndThen([done, finished, self = shared_from_this(), op,
                     call](absl::Status status) mutable {
    finished->store(true);
    if (!status.ok()) {
      // The stream names the device fault; why it happened is NCCL's asynchronous and last error,
      // or, once the clique was aborted (its communicators are gone), the abort's reason.
      absl::Status why = self->clique_->AsyncError(self->rank_, call);
      if (why.ok()) why = self->clique_->failure();
      status = why.ok() ? self->Error(op, status.code(), status.message())
                        : self->Error(op, why.code(),
                                      absl::StrCat(why.message(), "; the stream reports: ",
                                                   status.message()));
      self->clique_->Fail(status);
    }
    // Let go of the communicator before anyone hears: a waiter may then tear the devices down,
    // and the clique (when this was its last user) must not be destroyed after that.
    self.reset();
    done->Set(status);
  });
  return done;
}

AsyncEventRef NcclCommunicator::AllReduce(se::DeviceMemory send, se::DeviceMemory recv,
                                          DataType type, size_t count, ReductionKind kind,
                                          se::Stream* stream) {
  const char* op = "all_reduce";
  const size_t bytes = count * DataTypeBytes(type);
  absl::StatusOr<NcclReduction> red = NcclReductionFor(type, kind, count);
  absl::Status checked = FirstError(
      {red.ok() ? absl::OkStatus() : Error(op, red.status().code(), red.status().message()),
       CheckBuffer(op, "send", send, bytes), CheckBuffer(op, "recv", recv, bytes)});
  const NcclLibrary& nccl = clique_->nccl();
  return Run(op, "ncclAllReduce", stream, checked, [&](ncclComm_t comm, CudaStream& s) {
    return nccl.Check(nccl.AllReduce(send.opaque, recv.opaque, red->elements.count,
                                     red->elements.type, red->op, comm, s.handle()),
                      "ncclAllReduce", comm);
  });
}

AsyncEventRef NcclCommunicator::AllGather(se::DeviceMemory send, se::DeviceMemory recv,
                                          DataType type, size_t count, se::Stream* stream) {
  const char* op = "all_gather";
  const size_t bytes = count * DataTypeBytes(type);
  absl::Status checked = FirstError(
      {CheckBuffer(op, "send", send, bytes), CheckBuffer(op, "recv", recv, bytes * size())});
  const NcclElements moved = NcclMoveElements(type, count);
  const NcclLibrary& nccl = clique_->nccl();
  return Run(op, "ncclAllGather", stream, checked, [&](ncclComm_t comm, CudaStream& s) {
    return nccl.Check(
        nccl.AllGather(send.opaque, recv.opaque, moved.count, moved.type, comm, s.handle()),
        "ncclAllGather", comm);
  });
}

AsyncEventRef NcclCommunicator::ReduceScatter(se::DeviceMemory send, se::DeviceMemory recv,
                                              DataType type, size_t count, ReductionKind kind,
                                              se::Stream* stream) {
  const char* op = "reduce_scatter";
  const size_t bytes = count * DataTypeBytes(type);
  absl::StatusOr<NcclReduction> red = NcclReductionFor(type, kind, count);
  absl::Status checked = FirstError(
      {red.ok() ? absl::OkStatus() : Error(op, red.status().code(), red.status().message()),
       CheckBuffer(op, "send", send, bytes * size()), CheckBuffer(op, "recv", recv, bytes)});
  const NcclLibrary& nccl = clique_->nccl();
  return Run(op, "ncclReduceScatter", stream, checked, [&](ncclComm_t comm, CudaStream& s) {
    return nccl.Check(nccl.ReduceScatter(send.opaque, recv.opaque, red->elements.count,
                                         red->elements.type, red->op, comm, s.handle()),
                      "ncclReduceScatter", comm);
  });
}

AsyncEventRef NcclCommunicator::AllToAll(se::DeviceMemory send, se::DeviceMemory recv,
                                         DataType type, size_t count, se::Stream* stream) {
  const char* op = "all_to_all";
  const size_t bytes = count * DataTypeBytes(type);
  absl::Status checked = FirstError({CheckBuffer(op, "send", send, bytes * size()),
                                     CheckBuffer(op, "recv", recv, bytes * size())});
  const NcclElements moved = NcclMoveElements(type, count);
  const NcclLibrary& nccl = clique_->nccl();
  return Run(op, "ncclSend/ncclRecv", stream, checked, [&](ncclComm_t comm, CudaStream& s) {
    EMBER_RETURN_IF_ERROR(Grouped(nccl, comm, [&]() -> absl::Status {
      for (int peer = 0; peer < size(); ++peer) {
        if (peer == rank_.value) continue;
        EMBER_RETURN_IF_ERROR(nccl.Check(nccl.Send(Block(send, peer, bytes).opaque, moved.count,
                                                   moved.type, peer, comm, s.handle()),
                                         "ncclSend", comm));
        EMBER_RETURN_IF_ERROR(nccl.Check(nccl.Recv(Block(recv, peer, bytes).opaque, moved.count,
                                                   moved.type, peer, comm, s.handle()),
                                         "ncclRecv", comm));
      }
      return absl::OkStatus();
    }));
    // NCCL does not send to the calling rank itself: its own block is a copy.
    if (bytes == 0) return absl::OkStatus();
    return s.MemcpyD2D(Block(recv, rank_.value, bytes), Block(send, rank_.value, bytes), bytes);
  });
}

AsyncEventRef NcclCommunicator::CollectivePermute(se::DeviceMemory send, se::DeviceMemory recv,
                                                  DataType type, size_t count,
                                                  std::optional<RankId> source,
                                                  absl::Span<const RankId> targets,
                                                  se::Stream* stream) {
  const char* op = "collective_permute";
  const size_t bytes = count * DataTypeBytes(type);
  absl::Status checked =
      FirstError({CheckBuffer(op, "send", send, bytes), CheckBuffer(op, "recv", recv, bytes),
                  source.has_value() ? CheckRank(op, "source", *source) : absl::OkStatus()});
  for (RankId target : targets) {
    if (checked.ok()) checked = CheckRank(op, "target", target);
  }
  const NcclElements moved = NcclMoveElements(type, count);
  const NcclLibrary& nccl = clique_->nccl();
  return Run(op, "ncclSend/ncclRecv", stream, checked, [&](ncclComm_t comm, CudaStream& s) {
    const bool from_self = source.has_value() && *source == rank_;
    EMBER_RETURN_IF_ERROR(Grouped(nccl, comm, [&]() -> absl::Status {
      for (RankId target : targets) {
        if (target == rank_) continue;
        EMBER_RETURN_IF_ERROR(nccl.Check(
            nccl.Send(send.opaque, moved.count, moved.type, target.value, comm, s.handle()),
            "ncclSend", comm));
      }
      if (source.has_value() && !from_self) {
        EMBER_RETURN_IF_ERROR(nccl.Check(
            nccl.Recv(recv.opaque, moved.count, moved.type, source->value, comm, s.handle()),
            "ncclRecv", comm));
      }
      return absl::OkStatus();
    }));
    if (bytes == 0) return absl::OkStatus();
    if (from_self) return s.MemcpyD2D(recv, send, bytes);
    if (!source.has_value()) return s.Memset(recv, 0, bytes);
    return absl::OkStatus();
  });
}

AsyncEventRef NcclCommunicator::Broadcast(se::DeviceMemory send, se::DeviceMemory recv,
                                          DataType type, size_t count, RankId root,
                                          se::Stream* stream) {
  const char* op = "broadcast";
  const size_t bytes = count * DataTypeBytes(type);
  absl::Status checked =
      FirstError({CheckBuffer(op, "send", send, bytes), CheckBuffer(op, "recv", recv, bytes),
                  CheckRank(op, "root", root)});
  const NcclElements moved = NcclMoveElements(type, count);
  const NcclLibrary& nccl = clique_->nccl();
  return Run(op, "ncclBroadcast", stream, checked, [&](ncclComm_t comm, CudaStream& s) {
    return nccl.Check(nccl.Broadcast(send.opaque, recv.opaque, moved.count, moved.type,
                                     root.value, comm, s.handle()),
                      "ncclBroadcast", comm);
  });
}

AsyncEventRef NcclCommunicator::Reduce(se::DeviceMemory send, se::DeviceMemory recv,
                                       DataType type, size_t count, ReductionKind kind,
                                       RankId root, se::Stream* stream) {
  const char* op = "reduce";
  const size_t bytes = count * DataTypeBytes(type);
  absl::StatusOr<NcclReduction> red = NcclReductionFor(type, kind, count);
  absl::Status checked = FirstError(
      {red.ok() ? absl::OkStatus() : Error(op, red.status().code(), red.status().message()),
       CheckBuffer(op, "send", send, bytes), CheckBuffer(op, "recv", recv, bytes),
       CheckRank(op, "root", root)});
  const NcclLibrary& nccl = clique_->nccl();
  return Run(op, "ncclReduce", stream, checked, [&](ncclComm_t comm, CudaStream& s) {
    EMBER_RETURN_IF_ERROR(nccl.Check(nccl.Reduce(send.opaque, recv.opaque, red->elements.count,
                                                 red->elements.type, red->op, root.value, comm,
                                                 s.handle()),
                                     "ncclReduce", comm));
    // NCCL leaves the other ranks' recv alone; the Communicator contract zero-fills it.
    if (rank_ == root || bytes == 0) return absl::OkStatus();
    return s.Memset(recv, 0, bytes);
  });
}

}  // namespace ember::collectives::nccl
