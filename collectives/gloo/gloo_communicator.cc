#include "collectives/gloo/gloo_communicator.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "collectives/operation_checks.h"
#include "collectives/reduction.h"
#include "gloo/context.h"
#include "gloo/transport/unbound_buffer.h"

namespace ember::collectives {
namespace {

// Element range [begin, begin + size) of rank `r`'s share when `count` elements split over `n`
// ranks (the first count % n ranks take one more).
struct Chunk {
  size_t begin;
  size_t size;
};
Chunk ChunkOf(size_t count, int n, int r) {
  const size_t base = count / n, extra = count % n, rr = static_cast<size_t>(r);
  return Chunk{rr * base + std::min(rr, extra), base + (rr < extra ? 1 : 0)};
}

bool Overlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  if (a_bytes == 0 || b_bytes == 0) return false;
  const auto* pa = static_cast<const uint8_t*>(a);
  const auto* pb = static_cast<const uint8_t*>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

// The send buffer, or a private copy of it where it overlaps the receive buffer (a message
// landing in recv must not change what later messages send).
const uint8_t* SendSource(se::DeviceMemory send, size_t send_bytes, se::DeviceMemory recv,
                          size_t recv_bytes, std::vector<uint8_t>& staged) {
  const auto* src = static_cast<const uint8_t*>(send.opaque);
  if (!Overlap(send.opaque, send_bytes, recv.opaque, recv_bytes)) return src;
  staged.assign(src, src + send_bytes);
  return staged.data();
}

void Copy(const void* from, void* to, size_t bytes) {
  if (bytes > 0 && from != to) std::memmove(to, from, bytes);
}

std::chrono::milliseconds Millis(absl::Duration d) {
  return std::chrono::milliseconds(
      std::max<int64_t>(1, absl::ToInt64Milliseconds(absl::Ceil(d, absl::Milliseconds(1)))));
}

// Thrown out of the waits when one returns because the clique was failed (abortWait*).
struct Aborted {};

}  // namespace

GlooCommunicator::GlooCommunicator(std::shared_ptr<GlooClique> clique, RankId rank)
    : clique_(std::move(clique)), rank_(rank) {}

GlooCommunicator::~GlooCommunicator() = default;

AsyncEventRef GlooCommunicator::Run(se::Stream* stream,
                                    std::function<absl::Status(GlooCommunicator&)> op) {
  if (stream == nullptr) return AsyncEvent::CreateReady(op(*this));
  AsyncEventRef done = AsyncEvent::Create();
  absl::Status enqueued =
      stream->EnqueueHostCallback([op = std::move(op), done, self = shared_from_this()]() {
        absl::Status status = op(*self);
        done->Set(status);
        return status;
      });
  if (!enqueued.ok()) done->Set(enqueued);
  return done;
}

AsyncEventRef GlooCommunicator::AllReduce(se::DeviceMemory send, se::DeviceMemory recv,
                                          DataType type, size_t count, ReductionKind kind,
                                          se::Stream* stream) {
  return Run(stream,
             [=](GlooCommunicator& c) { return c.DoAllReduce(send, recv, type, count, kind); });
}

AsyncEventRef GlooCommunicator::AllGather(se::DeviceMemory send, se::DeviceMemory recv,
                                          DataType type, size_t count, se::Stream* stream) {
  return Run(stream, [=](GlooCommunicator& c) { return c.DoAllGather(send, recv, type, count); });
}

AsyncEventRef GlooCommunicator::ReduceScatter(se::DeviceMemory send, se::DeviceMemory recv,
                                              DataType type, size_t count, ReductionKind kind,
                                              se::Stream* stream) {
  return Run(stream,
             [=](GlooCommunicator& c) { return c.DoReduceScatter(send, recv, type, count, kind); });
}

AsyncEventRef GlooCommunicator::AllToAll(se::DeviceMemory send, se::DeviceMemory recv,
                                         DataType type, size_t count, se::Stream* stream) {
  return Run(stream, [=](GlooCommunicator& c) { return c.DoAllToAll(send, recv, type, count); });
}

AsyncEventRef GlooCommunicator::CollectivePermute(se::DeviceMemory send, se::DeviceMemory recv,
                                                  DataType type, size_t count,
                                                  std::optional<RankId> source,
                                                  absl::Span<const RankId> targets,
                                                  se::Stream* stream) {
  std::vector<RankId> target_list(targets.begin(), targets.end());
  return Run(stream, [=](GlooCommunicator& c) {
    return c.DoCollectivePermute(send, recv, type, count, source, target_list);
  });
}

AsyncEventRef GlooCommunicator::Broadcast(se::DeviceMemory send, se::DeviceMemory recv,
                                          DataType type, size_t count, RankId root,
                                          se::Stream* stream) {
  return Run(stream,
             [=](GlooCommunicator& c) { return c.DoBroadcast(send, recv, type, count, root); });
}

AsyncEventRef GlooCommunicator::Reduce(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                                       size_t count, ReductionKind kind, RankId root,
                                       se::Stream* stream) {
  return Run(stream,
             [=](GlooCommunicator& c) { return c.DoReduce(send, recv, type, count, kind, root); });
}

void GlooCommunicator::Abort(const absl::Status& reason) { clique_->Fail(reason); }

absl::Status GlooCommunicator::HealthCheck() const { return clique_->health(); }

// All-reduce as a reduce-scatter then an all-gather over the ranks' chunks: rank r receives
// chunk r of every rank, folds them in rank order, and sends the result to everyone.
absl::Status GlooCommunicator::DoAllReduce(se::DeviceMemory send, se::DeviceMemory recv,
                                           DataType type, size_t count, ReductionKind kind) {
  const char* op = "all-reduce";
  const size_t esize = DataTypeBytes(type), bytes = count * esize;
  EMBER_RETURN_IF_ERROR(CheckReduction(op, type, kind));
  EMBER_RETURN_IF_ERROR(CheckBuffer(op, "send", send, bytes));
  EMBER_RETURN_IF_ERROR(CheckBuffer(op, "recv", recv, bytes));
  absl::MutexLock lock(&op_mu_);
  EMBER_ASSIGN_OR_RETURN(const uint64_t seq, Begin());
  const int n = size(), me = rank_.value;
  const auto* src = static_cast<const uint8_t*>(send.opaque);
  auto* dst = static_cast<uint8_t*>(recv.opaque);
  const Chunk mine = ChunkOf(count, n, me);
  const size_t mine_bytes = mine.size * esize;
  std::vector<uint8_t> gathered(n * mine_bytes);
  Copy(src + mine.begin * esize, gathered.data() + me * mine_bytes, mine_bytes);
  std::vector<Transfer> scatter;
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    const Chunk theirs = ChunkOf(count, n, p);
    if (mine_bytes > 0) scatter.push_back({p, false, gathered.data() + p * mine_bytes, mine_bytes});
    if (theirs.size > 0) {
      scatter.push_back(
          {p, true, const_cast<uint8_t*>(src) + theirs.begin * esize, theirs.size * esize});
    }
  }
  EMBER_RETURN_IF_ERROR(Exchange(op, seq, 0, scatter));
  for (int r = 1; r < n; ++r) {
    EMBER_RETURN_IF_ERROR(Annotate(
        op, Accumulate(type, kind, gathered.data() + r * mine_bytes, gathered.data(), mine.size)));
  }
  // Every send of the first phase has completed: recv may alias send.
  Copy(gathered.data(), dst + mine.begin * esize, mine_bytes);
  std::vector<Transfer> gather;
  for (int p = 0; p < n; ++p) {
    if (p == me) continue;
    const Chunk theirs = ChunkOf(count, n, p);
    if (mine_bytes > 0) gather.push_back({p, true, dst + mine.begin * esize, mine_bytes});
    if (theirs.size > 0) {
      gather.push_back({p, false, dst + theirs.begin * esize, theirs.size * esize});
    }
  }
  return Exchange(op, seq, 1, gather);
}

absl::Status GlooCommunicator::DoAllGather(se::DeviceMemory send, se::DeviceMemory recv,
                                           DataType type, size_t count) {
  const char* op = "all-gather";
  const size_t bytes = count * DataTypeBytes(type);
  EMBER_RETURN_IF_ERROR(CheckBuffer(op, "send", send, bytes));
  EMBER_RETURN_IF_ERROR(CheckBuffer(op, "recv", recv, bytes * size()));
  absl::MutexLock lock(&op_mu_);
  EMBER_ASSIGN_OR_RETURN(const uint64_t seq, Begin());
  std::vector<uint8_t> staged;
  const uint8_t* src = SendSource(send, bytes, recv, bytes * size(), staged);
  auto* dst = static_cast<uint8_t*>(recv.opaque);
  std::vector<Transfer> transfers;
  for (int p = 0; p < size() && bytes > 0; ++p) {
    if (p == rank_.value) continue;
    transfers.push_back({p, false, dst + p * bytes, bytes});
    transfers.push_back({p, true, const_cast<uint8_t*>(src), bytes});
  }
  EMBER_RETURN_IF_ERROR(Exchange(op, seq, 0, transfers));
  Copy(src, dst + rank_.value * bytes, bytes);
  return absl::OkStatus();
}

absl::Status GlooCommunicator::DoReduceScatter(se::DeviceMemory send, se::DeviceMemory recv,
                                               DataType type, size_t count, ReductionKind kind) {
  const char* op = "reduce-scatter";
  const size_t bytes = count * DataTypeBytes(type);
  EMBER_RETURN_IF_ERROR(CheckReduction(op, type, kind));
  EMBER_RETURN_IF_ERROR(CheckBuffer(op, "send", send, bytes * size()));
  EMBER_RETURN_IF_ERROR(CheckBuffer(op, "recv", recv, bytes));
  absl::MutexLock lock(&op_mu_);
  EMBER_ASSIGN_OR_RETURN(const uint64_t seq, Begin());
  const int n = size(), me = rank_.value;
  const auto* src = static_cast<const uint8_t*>(send.opaque);
  std::vector<uint8_t> gathered(n * bytes);
  Copy(src + me * bytes, gathered.data() + me * bytes, bytes);
  std::vector<Transfer> transfers;
  for (int p = 0; p < n && bytes > 0; ++p) {
    if (p == me) continue;
    transfers.push_back({p, false, gathered.data() + p * bytes, bytes});
    transfers.push_back({p, true, const_cast<uint8_t*>(src) + p * bytes, bytes});
  }
  EMBER_RETURN_IF_ERROR(Exchange(op, seq, 0, transfers));
  for (int r = 1; r < n; ++r) {
    EMBER_RETURN_IF_ERROR(
        Annotate(op, Accumulate(type, kind, gathered.data() + r * bytes, gathered.data(), count)));
  }
  Copy(gathered.data(), recv.opaque, bytes);
  return absl::OkStatus();
}

absl::Status GlooCommunicator::DoAllToAll(se::DeviceMemory send, se::DeviceMemory recv,
                                          DataType type, size_t count) {
  const char* op = "all-to-all";
  const size_t bytes = count * DataTypeBytes(type);
  EMBER_RETURN_IF_ERROR(CheckBuffer(op, "send", send, bytes * size()));
  EMBER_RETURN_IF_ERROR(CheckBuffer(op, "recv", recv, bytes * size()));
  absl::MutexLock lock(&op_mu_);
  EMBER_ASSIGN_OR_RETURN(const uint64_t seq, Begin());
  std::vector<uint8_t> staged;
  const uint8_t* src = SendSource(send, bytes * size(), recv, bytes * size(), staged);
  auto* dst = static_cast<uint8_t*>(recv.opaque);
  std::vector<Transfer> transfers;
  for (int p = 0; p < size() && bytes > 0; ++p) {
    if (p == rank_.value) continue;
    transfers.push_back({p, false, dst + p * bytes, bytes});
    transfers.push_back({p, true, const_cast<uint8_t*>(src) + p * bytes, bytes});
  }
  EMBER_RETURN_IF_ERROR(Exchange(op, seq, 0, transfers));
  Copy(src + rank_.value * bytes, dst + rank_.value * bytes, bytes);
  return absl::OkStatus();
}

absl::Status GlooCommunicator::DoCollectivePermute(se::DeviceMemory send, se::DeviceMemory recv,
                                                   DataType type, size_t count,
                                                   std::optional<RankId> source,
                                                   const std::vector<RankId>& targets) {
  const char* op = "collective-permute";
  const size_t bytes = count * DataTypeBytes(type);
  EMBER_RETURN_IF_ERROR(CheckBuffer(op, "send", send, bytes));
  EMBER_RETURN_IF_ERROR(CheckBuffer(op, "recv", recv, bytes));
  if (source.has_value()) EMBER_RETURN_IF_ERROR(CheckRank(op, "source", *source));
  for (RankId t : targets) EMBER_RETURN_IF_ERROR(CheckRank(op, "target", t));
  absl::MutexLock lock(&op_mu_);
  EMBER_ASSIGN_OR_RETURN(const uint64_t seq, Begin());
  std::vector<uint8_t> staged;
  const uint8_t* src = SendSource(send, bytes, recv, bytes, staged);
  std::vector<Transfer> transfers;
  if (bytes > 0) {
    // A target named twice still gets one message: its source names this rank once.
    std::vector<RankId> unique(targets);
    std::sort(unique.begin(), unique.end());
    unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
    for (RankId t : unique) {
      if (t != rank_) transfers.push_back({t.value, true, const_cast<uint8_t*>(src), bytes});
    }
    if (source.has_value() && *source != rank_) {
      transfers.push_back({source->value, false, recv.opaque, bytes});
    }
  }
  EMBER_RETURN_IF_ERROR(Exchange(op, seq, 0, transfers));
  if (!source.has_value()) {
    if (bytes > 0) std::memset(recv.opaque, 0, bytes);
  } else if (*source == rank_) {
    Copy(src, recv.opaque, bytes);
  }
  return absl::OkStatus();
}

absl::Status GlooCommunicator::DoBroadcast(se::DeviceMemory send, se::DeviceMemory recv,
                                           DataType type, size_t count, RankId root) {
  const char* op = "broadcast";
  const size_t bytes = count * DataTypeBytes(type);
  EMBER_RETURN_IF_ERROR(CheckBuffer(op, "send", send, bytes));
  EMBER_RETURN_IF_ERROR(CheckBuffer(op, "recv", recv, bytes));
  EMBER_RETURN_IF_ERROR(CheckRank(op, "root", root));
  absl::MutexLock lock(&op_mu_);
  EMBER_ASSIGN_OR_RETURN(const uint64_t seq, Begin());
  std::vector<Transfer> transfers;
  if (bytes > 0) {
    if (rank_ == root) {
      for (int p = 0; p < size(); ++p) {
        if (p != root.value) transfers.push_back({p, true, send.opaque, bytes});
      }
    } else {
      transfers.push_back({root.value, false, recv.opaque, bytes});
    }
  }
  EMBER_RETURN_IF_ERROR(Exchange(op, seq, 0, transfers));
  // The root's sends have completed, so recv may alias send.
  if (rank_ == root) Copy(send.opaque, recv.opaque, bytes);
  return absl::OkStatus();
}

absl::Status GlooCommunicator::DoReduce(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                                        size_t count, ReductionKind kind, RankId root) {
  const char* op = "reduce";
  const size_t bytes = count * DataTypeBytes(type);
  EMBER_RETURN_IF_ERROR(CheckReduction(op, type, kind));
  EMBER_RETURN_IF_ERROR(CheckBuffer(op, "send", send, bytes));
  EMBER_RETURN_IF_ERROR(CheckBuffer(op, "recv", recv, bytes));
  EMBER_RETURN_IF_ERROR(CheckRank(op, "root", root));
  absl::MutexLock lock(&op_mu_);
  EMBER_ASSIGN_OR_RETURN(const uint64_t seq, Begin());
  const int n = size();
  if (rank_ != root) {
    std::vector<Transfer> transfers;
    if (bytes > 0) transfers.push_back({root.value, true, send.opaque, bytes});
    EMBER_RETURN_IF_ERROR(Exchange(op, seq, 0, transfers));
    if (bytes > 0) std::memset(recv.opaque, 0, bytes);
    return absl::OkStatus();
  }
  std::vector<uint8_t> gathered(n * bytes);
  Copy(send.opaque, gathered.data() + root.value * bytes, bytes);
  std::vector<Transfer> transfers;
  for (int p = 0; p < n && bytes > 0; ++p) {
    if (p != root.value) transfers.push_back({p, false, gathered.data() + p * bytes, bytes});
  }
  EMBER_RETURN_IF_ERROR(Exchange(op, seq, 0, transfers));
  for (int r = 1; r < n; ++r) {
    EMBER_RETURN_IF_ERROR(
        Annotate(op, Accumulate(type, kind, gathered.data() + r * bytes, gathered.data(), count)));
  }
  Copy(gathered.data(), recv.opaque, bytes);
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> GlooCommunicator::Begin() {
  EMBER_RETURN_IF_ERROR(clique_->health());
  return next_seq_++;
}

absl::Status GlooCommunicator::Exchange(const char* op, uint64_t seq, int phase,
                                        const std::vector<Transfer>& transfers) {
  if (transfers.empty()) return absl::OkStatus();
  if (context_ == nullptr) {
    absl::StatusOr<std::shared_ptr<gloo::Context>> connected = clique_->Connect(rank_.value);
    if (!connected.ok()) {
      // The clique's own error (an abort) goes on unchanged; a connect failure gets named.
      absl::Status health = clique_->health();
      if (!health.ok()) return health;
      absl::Status failure = Annotate(op, connected.status());
      clique_->Fail(failure);
      return clique_->health();
    }
    context_ = *std::move(connected);
  }
  // Two slots per operation (all-reduce has two phases); every rank numbers alike.
  const uint64_t slot = seq * 2 + phase;
  std::vector<std::unique_ptr<gloo::transport::UnboundBuffer>> buffers;
  std::vector<gloo::transport::UnboundBuffer*> raw;
  absl::Status status;
  int peer = -1;
  try {
    for (const Transfer& t : transfers) {
      buffers.push_back(context_->createUnboundBuffer(t.data, t.bytes));
      raw.push_back(buffers.back().get());
    }
  } catch (const std::exception& e) {
    status = absl::InternalError(absl::StrCat("creating Gloo buffers failed: ", e.what()));
  } catch (...) {
    status = absl::InternalError("creating Gloo buffers failed: unknown exception");
  }
  if (status.ok()) {
    status = clique_->Track(raw);
    if (!status.ok()) return status;  // failed before this operation began: as it stands
  } else {
    status = Annotate(op, status);
  }
  bool aborted = false;
  if (status.ok()) {
    const absl::Time deadline = absl::Now() + clique_->timeout();
    try {
      // Receives first, so that a peer's message finds its buffer waiting.
      for (size_t i = 0; i < transfers.size(); ++i) {
        if (transfers[i].send) continue;
        peer = transfers[i].peer;
        buffers[i]->recv(peer, slot);
      }
      for (size_t i = 0; i < transfers.size(); ++i) {
        if (!transfers[i].send) continue;
        peer = transfers[i].peer;
        buffers[i]->send(peer, slot);
      }
      // Waits in rank order, receives then sends: the first peer still missing at the
      // deadline is the one named.
      for (int pass = 0; pass < 2; ++pass) {
        for (size_t i = 0; i < transfers.size(); ++i) {
          if (transfers[i].send != (pass == 1)) continue;
          peer = transfers[i].peer;
          const auto left = Millis(deadline - absl::Now());
          const bool done =
              transfers[i].send ? buffers[i]->waitSend(left) : buffers[i]->waitRecv(left);
          if (!done) throw Aborted{};
        }
      }
    } catch (const Aborted&) {
      aborted = true;
    } catch (const std::exception& e) {
      const std::string what = e.what();
      if (absl::StrContains(what, "Timed out")) {
        status = absl::DeadlineExceededError(
            absl::StrCat("peer rank ", peer, " did not arrive within ",
                         absl::FormatDuration(clique_->timeout()), ": ", what));
      } else {
        status = absl::UnavailableError(
            absl::StrCat("connection to peer rank ", peer, " failed: ", what));
      }
      status = Annotate(op, status);
    } catch (...) {
      status = Annotate(op, absl::InternalError(absl::StrCat(
                                "unknown exception exchanging with peer rank ", peer)));
    }
  }
  if (aborted || !status.ok()) {
    // No message may land in our buffers once they are gone: close this rank's pairs first.
    CloseConnectionsQuietly(*context_);
    if (!status.ok()) clique_->Fail(status);
    status = clique_->health();
    if (status.ok()) status = Annotate(op, absl::InternalError("aborted without a reason"));
  }
  clique_->Untrack(raw);
  return status;
}

std::string GlooCommunicator::Where(const char* op) const {
  return absl::StrCat("gloo ", op, " on ", clique_->key().ToString(), ", rank ", rank_.value);
}

absl::Status GlooCommunicator::Annotate(const char* op, const absl::Status& status) const {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(Where(op), ": ", status.message()));
}

absl::Status GlooCommunicator::CheckReduction(const char* op, DataType type,
                                              ReductionKind kind) const {
  return CheckReductionArgument(Where(op), type, kind);
}

absl::Status GlooCommunicator::CheckBuffer(const char* op, const char* which, se::DeviceMemory mem,
                                           size_t bytes) const {
  return CheckBufferArgument(Where(op), which, mem, bytes);
}

absl::Status GlooCommunicator::CheckRank(const char* op, const char* which, RankId r) const {
  return CheckRankArgument(Where(op), which, r, size());
}

}  // namespace ember::collectives
