#include "collectives/gloo/gloo_collectives.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
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

// The TCP device's attributes for `hostname`: its first address this machine can bind. Gloo's
// own lookup (CreateDevice) is not used: it reads an uninitialized result when getaddrinfo
// fails and leaks the list when no address binds.
absl::StatusOr<gloo::transport::tcp::attr> ListenAddress(const std::string& hostname) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rv = getaddrinfo(hostname.c_str(), nullptr, &hints, &found); rv != 0) {
    return absl::UnavailableError(absl::StrCat("gloo: cannot open a TCP device on '", hostname,
                                               "': cannot resolve it: ", gai_strerror(rv)));
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> list(found, freeaddrinfo);
  std::string last_error = "no address";
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
    if (fd == -1) {
      last_error = absl::StrCat("socket(2): ", std::strerror(errno));
      continue;
    }
    const bool bound = bind(fd, a->ai_addr, a->ai_addrlen) == 0;
    if (!bound) last_error = absl::StrCat("bind(2): ", std::strerror(errno));
    close(fd);
    if (!bound) continue;
    gloo::transport::tcp::attr attr;
    attr.hostname = hostname;
    attr.ai_family = a->ai_family;
    attr.ai_socktype = a->ai_socktype;
    attr.ai_protocol = a->ai_protocol;
    std::memcpy(&attr.ai_addr, a->ai_addr, a->ai_addrlen);
    attr.ai_addrlen = static_cast<int>(a->ai_addrlen);
    return attr;
  }
  return absl::UnavailableError(absl::StrCat("gloo: cannot open a TCP device on '", hostname,
                                             "': no address of it can be bound (", last_error,
                                             ")"));
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
  EMBER_ASSIGN_OR_RETURN(const gloo::transport::tcp::attr attr, ListenAddress(hostname));
  try {
    device_ = std::make_shared<gloo::transport::tcp::Device>(attr);
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
