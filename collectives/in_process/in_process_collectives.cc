#include "collectives/in_process/in_process_collectives.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace ember::collectives {
namespace {

class InProcessCommunicator final : public Communicator {
 public:
  InProcessCommunicator(InProcessCollectives* hub, CliqueKey key, int rank)
      : hub_(hub), key_(std::move(key)), rank_(rank) {}

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(key_.devices.size()); }

  absl::Status AllReduce(ConstBytes send, MutableBytes recv, const ReduceFn& reduce) override {
    EMBER_RETURN_IF_ERROR(CheckSize(CollectiveKind::kAllReduce, "recv", recv.size(), send.size()));
    EMBER_ASSIGN_OR_RETURN(auto rv, hub_->Exchange(key_, rank_, CollectiveKind::kAllReduce, send));
    absl::MutexLock lock(&rv->reduce_mu);
    if (!rv->reduced) {
      std::vector<ConstBytes> inputs;
      for (const auto& d : rv->deposits) inputs.push_back(ConstBytes(d.payload));
      rv->reduced_bytes.resize(recv.size());
      rv->reduce_status = reduce(inputs, MutableBytes(rv->reduced_bytes));
      rv->reduced = true;
    }
    if (!rv->reduce_status.ok()) return rv->reduce_status;
    if (!recv.empty()) std::memcpy(recv.data(), rv->reduced_bytes.data(), recv.size());
    return absl::OkStatus();
  }

  absl::Status AllGather(ConstBytes send, MutableBytes recv) override {
    EMBER_RETURN_IF_ERROR(
        CheckSize(CollectiveKind::kAllGather, "recv", recv.size(), send.size() * size()));
    EMBER_ASSIGN_OR_RETURN(auto rv, hub_->Exchange(key_, rank_, CollectiveKind::kAllGather, send));
    for (int r = 0; r < size(); ++r) Copy(rv->deposits[r].payload, 0, send.size(), recv, r);
    return absl::OkStatus();
  }

  absl::Status ReduceScatter(ConstBytes send, MutableBytes recv, const ReduceFn& reduce) override {
    EMBER_RETURN_IF_ERROR(
        CheckSize(CollectiveKind::kReduceScatter, "send", send.size(), recv.size() * size()));
    EMBER_ASSIGN_OR_RETURN(auto rv,
                           hub_->Exchange(key_, rank_, CollectiveKind::kReduceScatter, send));
    std::vector<ConstBytes> inputs;
    for (const auto& d : rv->deposits) {
      inputs.push_back(ConstBytes(d.payload).subspan(rank_ * recv.size(), recv.size()));
    }
    return reduce(inputs, recv);
  }

  absl::Status AllToAll(ConstBytes send, MutableBytes recv) override {
    EMBER_RETURN_IF_ERROR(CheckSize(CollectiveKind::kAllToAll, "recv", recv.size(), send.size()));
    if (send.size() % size() != 0) {
      return Error(CollectiveKind::kAllToAll,
                   absl::StrCat(send.size(), " bytes do not split into ", size(), " blocks"));
    }
    EMBER_ASSIGN_OR_RETURN(auto rv, hub_->Exchange(key_, rank_, CollectiveKind::kAllToAll, send));
    const size_t block = send.size() / size();
    for (int r = 0; r < size(); ++r) Copy(rv->deposits[r].payload, rank_ * block, block, recv, r);
    return absl::OkStatus();
  }

  absl::Status CollectivePermute(ConstBytes send, MutableBytes recv, std::optional<int> source,
                                 absl::Span<const int> targets) override {
    EMBER_RETURN_IF_ERROR(
        CheckSize(CollectiveKind::kCollectivePermute, "recv", recv.size(), send.size()));
    if (source.has_value() && (*source < 0 || *source >= size())) {
      return Error(CollectiveKind::kCollectivePermute,
                   absl::StrCat("source rank ", *source, " out of range"));
    }
    for (int t : targets) {
      if (t < 0 || t >= size()) {
        return Error(CollectiveKind::kCollectivePermute,
                     absl::StrCat("target rank ", t, " out of range"));
      }
    }
    EMBER_ASSIGN_OR_RETURN(auto rv,
                           hub_->Exchange(key_, rank_, CollectiveKind::kCollectivePermute, send));
    if (source.has_value()) {
      Copy(rv->deposits[*source].payload, 0, recv.size(), recv, 0);
    } else if (!recv.empty()) {
      std::memset(recv.data(), 0, recv.size());
    }
    return absl::OkStatus();
  }

  absl::Status Broadcast(ConstBytes send, MutableBytes recv, int root) override {
    EMBER_RETURN_IF_ERROR(CheckSize(CollectiveKind::kBroadcast, "recv", recv.size(), send.size()));
    if (root < 0 || root >= size()) {
      return Error(CollectiveKind::kBroadcast, absl::StrCat("root rank ", root, " out of range"));
    }
    EMBER_ASSIGN_OR_RETURN(auto rv, hub_->Exchange(key_, rank_, CollectiveKind::kBroadcast, send));
    Copy(rv->deposits[root].payload, 0, recv.size(), recv, 0);
    return absl::OkStatus();
  }

  absl::Status Reduce(ConstBytes send, MutableBytes recv, int root,
                      const ReduceFn& reduce) override {
    EMBER_RETURN_IF_ERROR(CheckSize(CollectiveKind::kReduce, "recv", recv.size(), send.size()));
    if (root < 0 || root >= size()) {
      return Error(CollectiveKind::kReduce, absl::StrCat("root rank ", root, " out of range"));
    }
    EMBER_ASSIGN_OR_RETURN(auto rv, hub_->Exchange(key_, rank_, CollectiveKind::kReduce, send));
    if (rank_ != root) {
      if (!recv.empty()) std::memset(recv.data(), 0, recv.size());
      return absl::OkStatus();
    }
    std::vector<ConstBytes> inputs;
    for (const auto& d : rv->deposits) inputs.push_back(ConstBytes(d.payload));
    return reduce(inputs, recv);
  }

 private:
  absl::Status Error(CollectiveKind kind, const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(CollectiveKindName(kind), " (", key_.ToString(), ", rank ", rank_, "): ", what));
  }
  absl::Status CheckSize(CollectiveKind kind, const char* which, size_t got, size_t want) const {
    if (got == want) return absl::OkStatus();
    return Error(kind, absl::StrCat(which, " has ", got, " bytes, expected ", want));
  }
  // Copies `n` bytes at `offset` of `from` into block `block` (of n bytes) of `to`.
  static void Copy(const std::vector<uint8_t>& from, size_t offset, size_t n, MutableBytes to,
                   int block) {
    if (n > 0) std::memcpy(to.data() + block * n, from.data() + offset, n);
  }

  InProcessCollectives* hub_;
  CliqueKey key_;
  int rank_;
};

std::string MapKey(const CliqueKey& key) {
  return absl::StrCat(key.run_id, "/", key.op, "/", absl::StrJoin(key.devices, ","));
}

}  // namespace

InProcessCollectives::InProcessCollectives(absl::Duration timeout) : timeout_(timeout) {}
InProcessCollectives::~InProcessCollectives() = default;

absl::StatusOr<std::unique_ptr<Communicator>> InProcessCollectives::Join(const CliqueKey& key,
                                                                         int rank) {
  if (key.devices.empty()) return absl::InvalidArgumentError("a clique needs at least one device");
  if (rank < 0 || rank >= static_cast<int>(key.devices.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", rank, " out of range for ", key.ToString()));
  }
  return std::unique_ptr<Communicator>(new InProcessCommunicator(this, key, rank));
}

void InProcessCollectives::Abort(uint64_t run_id, const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  aborted_.try_emplace(run_id, status);
}

void InProcessCollectives::Forget(uint64_t run_id) {
  absl::MutexLock lock(&mu_);
  aborted_.erase(run_id);
}

absl::StatusOr<std::shared_ptr<const InProcessCollectives::Rendezvous>>
InProcessCollectives::Exchange(const CliqueKey& key, int rank, CollectiveKind kind,
                               ConstBytes payload) {
  const int n = static_cast<int>(key.devices.size());
  const std::string map_key = MapKey(key);
  std::vector<uint8_t> copy(payload.begin(), payload.end());
  absl::MutexLock lock(&mu_);
  auto aborted = [&]() -> const absl::Status* {
    auto it = aborted_.find(key.run_id);
    return it == aborted_.end() ? nullptr : &it->second;
  };
  if (const absl::Status* s = aborted()) {
    return absl::Status(s->code(), absl::StrCat(CollectiveKindName(kind), " (", key.ToString(),
                                                "): the launch was aborted: ",
                                                std::string(s->message())));
  }
  std::shared_ptr<Rendezvous>& slot = pending_[map_key];
  if (slot == nullptr) {
    slot = std::make_shared<Rendezvous>();
    slot->deposits.resize(n);
  }
  std::shared_ptr<Rendezvous> rv = slot;
  Deposit& mine = rv->deposits[rank];
  if (mine.arrived) {
    return absl::InternalError(absl::StrCat(CollectiveKindName(kind), " (", key.ToString(),
                                            "): rank ", rank, " joined twice"));
  }
  mine.arrived = true;
  mine.kind = kind;
  mine.payload = std::move(copy);
  if (++rv->arrived == n) {
    // The last one in checks that everyone ran the same operation on the same amount of data.
    for (int r = 0; r < n; ++r) {
      const Deposit& d = rv->deposits[r];
      if (d.kind != kind) {
        rv->status = absl::InvalidArgumentError(absl::StrCat(
            key.ToString(), ": rank ", r, " ran ", CollectiveKindName(d.kind), " but rank ", rank,
            " ran ", CollectiveKindName(kind)));
        break;
      }
      if (d.payload.size() != rv->deposits[rank].payload.size()) {
        rv->status = absl::InvalidArgumentError(absl::StrCat(
            CollectiveKindName(kind), " (", key.ToString(), "): rank ", r, " sent ",
            d.payload.size(), " bytes but rank ", rank, " sent ",
            rv->deposits[rank].payload.size()));
        break;
      }
    }
    rv->complete = true;
    pending_.erase(map_key);
  } else {
    Rendezvous* raw = rv.get();
    auto done = [this, raw, run_id = key.run_id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return raw->complete || aborted_.contains(run_id);
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&done), timeout_)) {
      std::vector<int64_t> missing;
      for (int r = 0; r < n; ++r) {
        if (!rv->deposits[r].arrived) missing.push_back(key.devices[r]);
      }
      rv->status = absl::DeadlineExceededError(absl::StrCat(
          CollectiveKindName(kind), " (", key.ToString(), "): timed out after ",
          absl::FormatDuration(timeout_), " waiting for devices [", absl::StrJoin(missing, ","),
          "] to join (", rv->arrived, " of ", n, " arrived)"));
      rv->complete = true;
      auto it = pending_.find(map_key);
      if (it != pending_.end() && it->second == rv) pending_.erase(it);
    } else if (!rv->complete) {
      const absl::Status* s = aborted();
      return absl::Status(s->code(), absl::StrCat(CollectiveKindName(kind), " (", key.ToString(),
                                                  "): the launch was aborted: ",
                                                  std::string(s->message())));
    }
  }
  if (!rv->status.ok()) return rv->status;
  return std::shared_ptr<const Rendezvous>(rv);
}

}  // namespace ember::collectives
