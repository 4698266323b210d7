#include "collectives/gloo/gloo_clique.h"

#include <chrono>
#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "collectives/gloo/gloo_store_adapter.h"
#include "gloo/rendezvous/context.h"
#include "gloo/transport/device.h"
#include "gloo/transport/unbound_buffer.h"

namespace ember::collectives {

GlooClique::GlooClique(CliqueKey key, uint64_t generation, std::shared_ptr<KeyValueStore> store,
                       std::shared_ptr<gloo::transport::Device> device, absl::Duration timeout)
    : key_(std::move(key)),
      generation_(generation),
      store_(std::move(store)),
      device_(std::move(device)),
      timeout_(timeout),
      prefix_(
          absl::StrCat("ember/gloo/", absl::StrJoin(key_.devices, ","), "/g", generation_, "/")) {}

GlooClique::~GlooClique() = default;

absl::StatusOr<std::shared_ptr<gloo::Context>> GlooClique::Connect(int rank) {
  if (absl::Status health = this->health(); !health.ok()) return health;
  if (device_ == nullptr) {
    return absl::InternalError("the clique has no transport device to connect through");
  }
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, key_.size());
  const std::string waiting_for = absl::StrCat(" within ", absl::FormatDuration(timeout_), ": ");
  try {
    context->setTimeout(std::chrono::duration_cast<std::chrono::milliseconds>(
        absl::ToChronoMilliseconds(timeout_)));
    GlooStoreAdapter store(store_, prefix_, absl::Now() + timeout_, [this] { return health(); });
    context->connectFullMesh(store, device_);
  } catch (const GlooStoreError& e) {
    // A cancellation carries the clique's own error: hand it on unchanged.
    if (!health().ok()) return health();
    if (absl::IsDeadlineExceeded(e.status()) && e.rank() >= 0) {
      return absl::DeadlineExceededError(absl::StrCat("peer rank ", e.rank(), " did not arrive",
                                                      waiting_for, e.status().message()));
    }
    return absl::Status(
        e.status().code(),
        absl::StrCat("rendezvous through the key-value store failed: ", e.status().message()));
  } catch (const std::exception& e) {
    if (!health().ok()) return health();
    return absl::UnavailableError(absl::StrCat("connecting to the other ranks failed: ", e.what()));
  } catch (...) {
    return absl::UnavailableError("connecting to the other ranks failed: unknown exception");
  }
  {
    absl::MutexLock lock(&mu_);
    if (failed_.ok()) {
      contexts_.push_back(context);
      return context;
    }
  }
  // Failed while connecting: this context never joins, and its peers learn it at once.
  CloseConnectionsQuietly(*context);
  return health();
}

absl::Status GlooClique::Track(const std::vector<gloo::transport::UnboundBuffer*>& buffers) {
  absl::MutexLock lock(&mu_);
  if (!failed_.ok()) return failed_;
  tracked_.insert(buffers.begin(), buffers.end());
  return absl::OkStatus();
}

void GlooClique::Untrack(const std::vector<gloo::transport::UnboundBuffer*>& buffers) {
  absl::MutexLock lock(&mu_);
  for (gloo::transport::UnboundBuffer* b : buffers) tracked_.erase(b);
}

void GlooClique::Fail(const absl::Status& reason) {
  std::vector<std::shared_ptr<gloo::Context>> contexts;
  {
    absl::MutexLock lock(&mu_);
    if (failed_.ok()) {
      failed_ = reason.ok() ? absl::CancelledError(absl::StrCat("gloo ", key_.ToString(),
                                                                ": failed without a reason"))
                            : reason;
    }
    // Under the lock: a tracked buffer lives until its operation untracks it. The abort flags
    // are sticky, so an operation about to wait returns at once too.
    for (gloo::transport::UnboundBuffer* b : tracked_) {
      b->abortWaitRecv();
      b->abortWaitSend();
    }
    contexts = contexts_;
  }
  // Outside the lock: closing waits for the device thread's next tick.
  for (const auto& context : contexts) CloseConnectionsQuietly(*context);
}

absl::Status GlooClique::health() const {
  absl::MutexLock lock(&mu_);
  return failed_;
}

void CloseConnectionsQuietly(gloo::Context& context) {
  try {
    context.closeConnections();
  } catch (...) {
    // Best effort: a pair that cannot close is already broken.
  }
}

}  // namespace ember::collectives
