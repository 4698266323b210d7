#include "collectives/in_process/in_process_collectives.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "collectives/communicator_request.h"
#include "collectives/operation_checks.h"
#include "collectives/reduction.h"

namespace ember::collectives {

// What one rank brings to a rendezvous: a copy of its send buffer, or (an operation whose ranks
// all stay until every rank is done with the others' buffers) the buffer itself and its recv.
struct Deposit {
  bool arrived = false;
  const char* op = "";
  DataType type = DataType::kU8;
  std::vector<uint8_t> copy;
  const uint8_t* data = nullptr;  // copy.data() or the rank's own send buffer
  size_t size = 0;
  uint8_t* recv = nullptr;  // by reference only
};

// The ranks' n-th operation on one clique.
struct Rendezvous {
  std::vector<Deposit> deposits;
  int arrived = 0;
  bool complete = false;
  absl::Status status;
  // AllReduce, on the ranks' own buffers: rank r reduces the r-th of n slices of the elements
  // (in rank order, as one rank alone would: results agree bit for bit) and writes it into every
  // rank's recv. No rank leaves before all slices are done, so every buffer stays valid while
  // others read or write it. The work is split n ways and nothing is copied twice.
  absl::Mutex reduce_mu;
  int slices_done ABSL_GUARDED_BY(reduce_mu) = 0;
  absl::Status reduce_status ABSL_GUARDED_BY(reduce_mu);
};

class InProcessClique {
 public:
  InProcessClique(CliqueKey key, absl::Duration timeout)
      : key_(std::move(key)), timeout_(timeout), next_seq_(key_.devices.size(), 0) {}

  const CliqueKey& key() const { return key_; }

  // Deposits `payload` as `rank`'s next operation and waits for the other ranks'. A copy, unless
  // `recv` is given: then the deposit is the buffers themselves (the caller keeps them valid until
  // every rank is done with them).
  absl::StatusOr<std::shared_ptr<Rendezvous>> Exchange(RankId rank, const char* op,
                                                       DataType type, const uint8_t* payload,
                                                       size_t bytes, uint8_t* recv = nullptr) {
    const int n = key_.size();
    std::vector<uint8_t> copy;
    if (recv == nullptr) copy.assign(payload, payload + bytes);
    absl::MutexLock lock(&mu_);
    if (!failed_.ok()) return failed_;
    const uint64_t seq = next_seq_[rank.value]++;
    std::shared_ptr<Rendezvous>& slot = pending_[seq];
    if (slot == nullptr) {
      slot = std::make_shared<Rendezvous>();
      slot->deposits.resize(n);
    }
    std::shared_ptr<Rendezvous> rv = slot;
    Deposit& mine = rv->deposits[rank.value];
    mine.arrived = true;
    mine.op = op;
    mine.type = type;
    mine.copy = std::move(copy);
    mine.data = recv == nullptr ? mine.copy.data() : payload;
    mine.size = bytes;
    mine.recv = recv;
    if (++rv->arrived == n) {
      // The last one in checks that everyone ran the same operation on the same data.
      for (int r = 0; r < n && rv->status.ok(); ++r) {
        const Deposit& d = rv->deposits[r];
        if (std::strcmp(d.op, op) != 0 || d.type != type) {
          rv->status = absl::InvalidArgumentError(absl::StrCat(
              key_.ToString(), ", operation ", seq, ": rank ", r, " ran ", d.op, " on ",
              DataTypeName(d.type), " but rank ", rank.value, " ran ", op, " on ",
              DataTypeName(type)));
        } else if (d.size != mine.size) {
          rv->status = absl::InvalidArgumentError(absl::StrCat(
              op, " (", key_.ToString(), "): rank ", r, " sent ", d.size,
              " bytes but rank ", rank.value, " sent ", mine.size));
        }
      }
      rv->complete = true;
      pending_.erase(seq);
      if (!rv->status.ok()) FailLocked(rv->status);
    } else {
      Rendezvous* raw = rv.get();
      auto done = [this, raw]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return raw->complete || !failed_.ok();
      };
      if (!mu_.AwaitWithTimeout(absl::Condition(&done), timeout_)) {
        std::vector<int64_t> missing;
        for (int r = 0; r < n; ++r) {
          if (!rv->deposits[r].arrived) missing.push_back(key_.devices[r]);
        }
        FailLocked(absl::DeadlineExceededError(absl::StrCat(
            op, " (", key_.ToString(), ", rank ", rank.value, "): timed out after ",
            absl::FormatDuration(timeout_), " waiting for devices [", absl::StrJoin(missing, ","),
            "] to join (", rv->arrived, " of ", n, " arrived)")));
      }
      if (!rv->complete) return failed_;
    }
    if (!rv->status.ok()) return rv->status;
    return rv;
  }

  void Fail(const absl::Status& status) {
    absl::MutexLock lock(&mu_);
    FailLocked(status);
  }
  absl::Status health() const {
    absl::MutexLock lock(&mu_);
    return failed_;
  }

 private:
  void FailLocked(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (failed_.ok()) failed_ = status;
    pending_.clear();
  }

  const CliqueKey key_;
  const absl::Duration timeout_;
  mutable absl::Mutex mu_;
  absl::Status failed_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> next_seq_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<uint64_t, std::shared_ptr<Rendezvous>> pending_ ABSL_GUARDED_BY(mu_);
};

namespace {

// Runs `op` now (null stream) or when `stream` reaches it; the event carries its status.
AsyncEventRef RunOn(se::Stream* stream, std::function<absl::Status()> op) {
  if (stream == nullptr) return AsyncEvent::CreateReady(op());
  AsyncEventRef done = AsyncEvent::Create();
  absl::Status enqueued = stream->EnqueueHostCallback([op = std::move(op), done]() {
    absl::Status status = op();
    done->Set(status);
    return status;
  });
  if (!enqueued.ok()) done->Set(enqueued);
  return done;
}

// Operations enqueued on a stream hold the communicator (shared_from_this): the caller may drop
// its reference before the stream reaches them.
class InProcessCommunicator final : public Communicator,
                                    public std::enable_shared_from_this<InProcessCommunicator> {
 public:
  InProcessCommunicator(std::shared_ptr<InProcessClique> clique, RankId rank)
      : clique_(std::move(clique)), rank_(rank) {}

  RankId rank() const override { return rank_; }
  int size() const override { return clique_->key().size(); }
  const CliqueKey& clique() const override { return clique_->key(); }

  AsyncEventRef AllReduce(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                          size_t count, ReductionKind kind, se::Stream* stream) override {
    return RunOn(stream, [=, this, self = shared_from_this()]() -> absl::Status {
      const char* op = "all_reduce";
      const size_t bytes = count * DataTypeBytes(type);
      EMBER_RETURN_IF_ERROR(CheckReduction(op, type, kind));
      EMBER_RETURN_IF_ERROR(CheckBuffer(op, "send", send, bytes));
      EMBER_RETURN_IF_ERROR(CheckBuffer(op, "recv", recv, bytes));
      EMBER_ASSIGN_OR_RETURN(auto rv,
                             Exchange(op, type, send, bytes, static_cast<uint8_t*>(recv.opaque)));
      const size_t element = DataTypeBytes(type);
      const size_t first = count * rank_.value / size();
      const size_t end = count * (rank_.value + 1) / size();
      // Tile by tile, each tile reduced aside in cache (a rank's recv may be its send, which
      // other slices still read), then written to every recv: every byte is read and written
      // once.
      constexpr size_t kTileBytes = 32 * 1024;
      const size_t tile_elements = std::max<size_t>(1, kTileBytes / element);
      thread_local std::vector<uint8_t> tile;
      if (tile.size() < tile_elements * element) tile.resize(tile_elements * element);
      absl::Status status;
      for (size_t at = first; at < end && status.ok(); at += tile_elements) {
        const size_t n_elements = std::min(tile_elements, end - at);
        const size_t offset = at * element, bytes_here = n_elements * element;
        Copy(rv->deposits[0].data + offset, tile.data(), bytes_here);
        for (int r = 1; r < size() && status.ok(); ++r) {
          status = Accumulate(type, kind, rv->deposits[r].data + offset, tile.data(), n_elements);
        }
        if (!status.ok()) break;
        for (const Deposit& d : rv->deposits) Copy(tile.data(), d.recv + offset, bytes_here);
      }
      // Every rank of a completed rendezvous gets here, so the wait for the others' slices ends.
      {
        absl::MutexLock lock(&rv->reduce_mu);
        if (rv->reduce_status.ok()) rv->reduce_status = status;
        ++rv->slices_done;
        Rendezvous* raw = rv.get();
        const int n = size();
        auto all_done = [raw, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(raw->reduce_mu) {
          return raw->slices_done == n;
        };
        rv->reduce_mu.Await(absl::Condition(&all_done));
        status = rv->reduce_status;
      }
      return Annotate(op, status);
    });
  }

  AsyncEventRef AllGather(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                          size_t count, se::Stream* stream) override {
    return RunOn(stream, [=, this, self = shared_from_this()]() -> absl::Status {
      const char* op = "all_gather";
      const size_t bytes = count * DataTypeBytes(type);
      EMBER_RETURN_IF_ERROR(CheckBuffer(op, "send", send, bytes));
      EMBER_RETURN_IF_ERROR(CheckBuffer(op, "recv", recv, bytes * size()));
      EMBER_ASSIGN_OR_RETURN(auto rv, Exchange(op, type, send, bytes));
      for (int r = 0; r < size(); ++r) {
        Copy(rv->deposits[r].data, static_cast<uint8_t*>(recv.opaque) + r * bytes, bytes);
      }
      return absl::OkStatus();
    });
  }

  AsyncEventRef ReduceScatter(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                              size_t count, ReductionKind kind, se::Stream* stream) override {
    return RunOn(stream, [=, this, self = shared_from_this()]() -> absl::Status {
      const char* op = "reduce_scatter";
      const size_t bytes = count * DataTypeBytes(type);
      EMBER_RETURN_IF_ERROR(CheckReduction(op, type, kind));
      EMBER_RETURN_IF_ERROR(CheckBuffer(op, "send", send, bytes * size()));
      EMBER_RETURN_IF_ERROR(CheckBuffer(op, "recv", recv, bytes));
      EMBER_ASSIGN_OR_RETURN(auto rv, Exchange(op, type, send, bytes * size()));
      const size_t offset = rank_.value * bytes;
      std::vector<uint8_t> acc(rv->deposits[0].data + offset,
                               rv->deposits[0].data + offset + bytes);
      for (int r = 1; r < size(); ++r) {
        EMBER_RETURN_IF_ERROR(Annotate(
            op, Accumulate(type, kind, rv->deposits[r].data + offset, acc.data(), count)));
      }
      Copy(acc.data(), recv.opaque, bytes);
      return absl::OkStatus();
    });
  }

  AsyncEventRef AllToAll(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                         size_t count, se::Stream* stream) override {
    return RunOn(stream, [=, this, self = shared_from_this()]() -> absl::Status {
      const char* op = "all_to_all";
      const size_t bytes = count * DataTypeBytes(type);
      EMBER_RETURN_IF_ERROR(CheckBuffer(op, "send", send, bytes * size()));
      EMBER_RETURN_IF_ERROR(CheckBuffer(op, "recv", recv, bytes * size()));
      EMBER_ASSIGN_OR_RETURN(auto rv, Exchange(op, type, send, bytes * size()));
      for (int r = 0; r < size(); ++r) {
        Copy(rv->deposits[r].data + rank_.value * bytes,
             static_cast<uint8_t*>(recv.opaque) + r * bytes, bytes);
      }
      return absl::OkStatus();
    });
  }

  AsyncEventRef CollectivePermute(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                                  size_t count, std::optional<RankId> source,
                                  absl::Span<const RankId> targets, se::Stream* stream) override {
    std::vector<RankId> target_list(targets.begin(), targets.end());
    return RunOn(stream, [=, this, self = shared_from_this()]() -> absl::Status {
      const char* op = "collective_permute";
      const size_t bytes = count * DataTypeBytes(type);
      EMBER_RETURN_IF_ERROR(CheckBuffer(op, "send", send, bytes));
      EMBER_RETURN_IF_ERROR(CheckBuffer(op, "recv", recv, bytes));
      if (source.has_value()) EMBER_RETURN_IF_ERROR(CheckRank(op, "source", *source));
      for (RankId t : target_list) EMBER_RETURN_IF_ERROR(CheckRank(op, "target", t));
      EMBER_ASSIGN_OR_RETURN(auto rv, Exchange(op, type, send, bytes));
      if (source.has_value()) {
        Copy(rv->deposits[source->value].data, recv.opaque, bytes);
      } else if (bytes > 0) {
        std::memset(recv.opaque, 0, bytes);
      }
      return absl::OkStatus();
    });
  }

  AsyncEventRef Broadcast(se::DeviceMemory send, se::DeviceMemory recv, DataType type,
                          size_t count, RankId root, se::Stream* stream) override {
    return RunOn(stream, [=, this, self = shared_from_this()]() -> absl::Status {
      const char* op = "broadcast";
      const size_t bytes = count * DataTypeBytes(type);
      EMBER_RETURN_IF_ERROR(CheckBuffer(op, "send", send, bytes));
      EMBER_RETURN_IF_ERROR(CheckBuffer(op, "recv", recv, bytes));
      EMBER_RETURN_IF_ERROR(CheckRank(op, "root", root));
      EMBER_ASSIGN_OR_RETURN(auto rv, Exchange(op, type, send, bytes));
      Copy(rv->deposits[root.value].data, recv.opaque, bytes);
      return absl::OkStatus();
    });
  }

  AsyncEventRef Reduce(se::DeviceMemory send, se::DeviceMemory recv, DataType type, size_t count,
                       ReductionKind kind, RankId root, se::Stream* stream) override {
    return RunOn(stream, [=, this, self = shared_from_this()]() -> absl::Status {
      const char* op = "reduce";
      const size_t bytes = count * DataTypeBytes(type);
      EMBER_RETURN_IF_ERROR(CheckReduction(op, type, kind));
      EMBER_RETURN_IF_ERROR(CheckBuffer(op, "send", send, bytes));
      EMBER_RETURN_IF_ERROR(CheckBuffer(op, "recv", recv, bytes));
      EMBER_RETURN_IF_ERROR(CheckRank(op, "root", root));
      EMBER_ASSIGN_OR_RETURN(auto rv, Exchange(op, type, send, bytes));
      if (rank_ != root) {
        if (bytes > 0) std::memset(recv.opaque, 0, bytes);
        return absl::OkStatus();
      }
      std::vector<uint8_t> acc(rv->deposits[0].data, rv->deposits[0].data + bytes);
      for (int r = 1; r < size(); ++r) {
        EMBER_RETURN_IF_ERROR(
            Annotate(op, Accumulate(type, kind, rv->deposits[r].data, acc.data(), count)));
      }
      Copy(acc.data(), recv.opaque, bytes);
      return absl::OkStatus();
    });
  }

  void Abort(const absl::Status& reason) override { clique_->Fail(reason); }
  absl::Status HealthCheck() const override { return clique_->health(); }

 private:
  absl::StatusOr<std::shared_ptr<Rendezvous>> Exchange(const char* op, DataType type,
                                                       se::DeviceMemory send, size_t bytes,
                                                       uint8_t* recv = nullptr) {
    absl::StatusOr<std::shared_ptr<Rendezvous>> rv = clique_->Exchange(
        rank_, op, type, static_cast<const uint8_t*>(send.opaque), bytes, recv);
    if (!rv.ok()) clique_->Fail(rv.status());
    return rv;
  }
  absl::Status Annotate(const char* op, const absl::Status& status) const {
    if (status.ok()) return status;
    return absl::Status(status.code(), absl::StrCat(Where(op), ": ", status.message()));
  }
  std::string Where(const char* op) const {
    return absl::StrCat(op, " (", clique_->key().ToString(), ", rank ", rank_.value, ")");
  }
  absl::Status CheckReduction(const char* op, DataType type, ReductionKind kind) const {
    return CheckReductionArgument(Where(op), type, kind);
  }
  absl::Status CheckBuffer(const char* op, const char* which, se::DeviceMemory mem,
                           size_t bytes) const {
    return CheckBufferArgument(Where(op), which, mem, bytes);
  }
  absl::Status CheckRank(const char* op, const char* which, RankId r) const {
    return CheckRankArgument(Where(op), which, r, size());
  }
  static void Copy(const void* from, void* to, size_t bytes) {
    if (bytes > 0) std::memcpy(to, from, bytes);
  }

  std::shared_ptr<InProcessClique> clique_;
  RankId rank_;
};

}  // namespace

InProcessCollectives::InProcessCollectives(absl::Duration timeout) : timeout_(timeout) {}
InProcessCollectives::~InProcessCollectives() = default;

absl::StatusOr<std::shared_ptr<Communicator>> InProcessCollectives::GetCommunicator(
    const CliqueKey& clique, RankId rank) {
  EMBER_RETURN_IF_ERROR(CheckCommunicatorRequest(clique, rank));
  absl::MutexLock lock(&mu_);
  std::shared_ptr<InProcessClique>& slot = cliques_[clique];
  if (slot == nullptr || !slot->health().ok()) {
    slot = std::make_shared<InProcessClique>(clique, timeout_);
  }
  return std::shared_ptr<Communicator>(std::make_shared<InProcessCommunicator>(slot, rank));
}

}  // namespace ember::collectives
