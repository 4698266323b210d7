#include "collectives/gloo/gloo_collectives.h"

#include <csignal>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "collectives/communicator_request.h"
#include "collectives/gloo/gloo_clique.h"
#include "collectives/gloo/gloo_communicator.h"
#include "gloo/transport/tcp/device.h"

namespace ember::collectives {
namespace {

// Gloo writes to its sockets with writev, so a peer that dies would kill this process with
// SIGPIPE; with the signal ignored the write fails with EPIPE and the operation with an error.
// Only the default disposition is changed (Python, hence JAX, ignores SIGPIPE already).
void IgnoreSigpipe() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      std::signal(SIGPIPE, SIG_IGN);
    }
  });
}

}  // namespace

GlooCollectives::GlooCollectives(std::shared_ptr<KeyValueStore> store, absl::Duration timeout)
    : store_(std::move(store)), timeout_(timeout) {
  IgnoreSigpipe();
}

GlooCollectives::~GlooCollectives() = default;

std::string GlooCollectives::Hostname() {
  const char* env = std::getenv("EMBER_GLOO_HOSTNAME");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string("127.0.0.1");
}

absl::StatusOr<std::shared_ptr<gloo::transport::Device>> GlooCollectives::DeviceLocked() {
  if (device_ != nullptr) return device_;
  const std::string hostname = Hostname();
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = hostname;
    device_ = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("gloo: cannot open a TCP device on '", hostname, "': ", e.what()));
  } catch (...) {
    return absl::UnavailableError(
        absl::StrCat("gloo: cannot open a TCP device on '", hostname, "'"));
  }
  return device_;
}

absl::StatusOr<std::shared_ptr<Communicator>> GlooCollectives::GetCommunicator(
    const CliqueKey& clique, RankId rank) {
  EMBER_RETURN_IF_ERROR(CheckCommunicatorRequest(clique, rank));
  if (store_ == nullptr && clique.size() > 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "gloo: ", clique.ToString(), " spans several ranks but no key-value store was given"));
  }
  absl::MutexLock lock(&mu_);
  CliqueEntry& entry = cliques_[clique];
  if (entry.clique == nullptr || !entry.clique->health().ok()) {
    std::shared_ptr<gloo::transport::Device> device;
    if (clique.size() > 1) {
      EMBER_ASSIGN_OR_RETURN(device, DeviceLocked());
    }
    entry.clique = std::make_shared<GlooClique>(clique, entry.next_generation++, store_,
                                                std::move(device), timeout_);
    entry.communicators.clear();
  }
  std::shared_ptr<Communicator>& communicator = entry.communicators[rank.value];
  if (communicator == nullptr) {
    communicator = std::make_shared<GlooCommunicator>(entry.clique, rank);
  }
  return communicator;
}

}  // namespace ember::collectives
