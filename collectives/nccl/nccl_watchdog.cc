#include "collectives/nccl/nccl_watchdog.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"

namespace ember::collectives::nccl {
namespace {

// How often finished operations are swept out when no deadline is nearer.
constexpr absl::Duration kSweep = absl::Milliseconds(200);

}  // namespace

NcclWatchdog::NcclWatchdog(absl::Duration timeout)
    : timeout_(timeout), thread_([this] { Loop(); }) {}

NcclWatchdog::~NcclWatchdog() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void NcclWatchdog::Watch(std::weak_ptr<NcclClique> clique, RankId rank, uint64_t seq,
                         const char* op, std::shared_ptr<const std::atomic<bool>> done) {
  absl::MutexLock lock(&mu_);
  entries_.push_back(Entry{std::move(clique), rank, seq, op, std::move(done), absl::Now() + timeout_});
}

void NcclWatchdog::Loop() {
  absl::MutexLock lock(&mu_);
  while (!stop_) {
    const absl::Time now = absl::Now();
    std::vector<Entry> expired;
    absl::Time next = now + kSweep;
    auto finished = [&](const Entry& e) {
      if (e.done->load() || e.clique.expired()) return true;
      if (e.deadline <= now) {
        expired.push_back(e);
        return true;
      }
      next = std::min(next, e.deadline);
      return false;
    };
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(), finished), entries_.end());
    if (!expired.empty()) {
      // Abort takes NCCL's time and the clique's locks: not under ours.
      mu_.Unlock();
      for (const Entry& e : expired) {
        std::shared_ptr<NcclClique> clique = e.clique.lock();
        if (clique == nullptr || !clique->failure().ok()) continue;
        std::vector<int64_t> missing = clique->MissingFor(e.seq);
        clique->Abort(absl::DeadlineExceededError(absl::StrCat(
            e.op, " (NCCL operation #", e.seq, " of ", clique->key().ToString(),
            ") timed out after ", absl::FormatDuration(timeout_),
            missing.empty() ? std::string(clique->SpansProcesses()
                                              ? "; every rank of this process issued it"
                                              : "; every rank issued it")
                            : absl::StrCat("; devices [", absl::StrJoin(missing, ","),
                                           "] never issued it"))));
      }
      mu_.Lock();
      continue;
    }
    if (entries_.empty()) {
      auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !entries_.empty(); };
      mu_.Await(absl::Condition(&wake));
    } else {
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; };
      mu_.AwaitWithDeadline(absl::Condition(&stopping), next);
    }
  }
}

}  // namespace ember::collectives::nccl
