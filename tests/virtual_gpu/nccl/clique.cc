#include "tests/virtual_gpu/nccl/clique.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ember::vgpu::nccl {
namespace {

std::atomic<int64_t> g_timeout_ms{-1};

size_t SegmentBytes(uint64_t slot_bytes) {
  // Header, then one payload per rank slot, then one per mailbox. The segment is sparse: pages
  // exist only once written.
  const size_t header = (sizeof(CliqueHeader) + 4095) / 4096 * 4096;
  return header + static_cast<size_t>(slot_bytes) * (kMaxRanks + kMaxRanks * kMaxRanks);
}

}  // namespace

std::string OpDescriptor::Describe() const {
  static const char* const kKinds[] = {"AllReduce", "Broadcast", "Reduce", "AllGather",
                                       "ReduceScatter", "AlltoAll", "Gather", "Scatter"};
  static const char* const kTypes[] = {"int8", "uint8", "int32", "uint32", "int64", "uint64",
                                       "float16", "float32", "float64", "bfloat16", "float8e4m3",
                                       "float8e5m2"};
  static const char* const kOps[] = {"sum", "prod", "max", "min", "avg"};
  std::string text = absl::StrCat(kind >= 0 && kind < 8 ? kKinds[kind] : "?", "(count ", count, ", ",
                                  datatype >= 0 && datatype < 12 ? kTypes[datatype] : "?");
  if (kind == 0 || kind == 2 || kind == 4) {
    absl::StrAppend(&text, ", ", redop >= 0 && redop < 5 ? kOps[redop] : "custom op");
  }
  if (root >= 0) absl::StrAppend(&text, ", root ", root);
  return absl::StrCat(text, ")");
}

int64_t TimeoutMs() {
  int64_t t = g_timeout_ms.load();
  if (t >= 0) return t;
  int seconds = 60;
  if (const char* text = std::getenv("EMBER_VIRTUAL_NCCL_TIMEOUT_SECONDS")) {
    if (!absl::SimpleAtoi(text, &seconds) || seconds <= 0) seconds = 60;
  }
  return int64_t{seconds} * 1000;
}

void SetTimeoutMs(int64_t ms) { g_timeout_ms = ms; }

absl::StatusOr<std::string> Clique::Create(uint64_t slot_bytes) {
  std::random_device device;
  const std::string name = absl::StrCat("/ember-vnccl-", getpid(), "-", device(), device());
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return absl::InternalError(absl::StrCat("shm_open(", name, "): ", std::strerror(errno)));
  const size_t bytes = SegmentBytes(slot_bytes);
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    close(fd);
    shm_unlink(name.c_str());
    return absl::InternalError(absl::StrCat("ftruncate of ", name, ": ", std::strerror(errno)));
  }
  void* map = mmap(nullptr, sizeof(CliqueHeader), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {
    shm_unlink(name.c_str());
    return absl::InternalError(absl::StrCat("mmap of ", name, ": ", std::strerror(errno)));
  }
  // The segment starts zeroed: every atomic is 0, no rank joined.
  auto* header = static_cast<CliqueHeader*>(map);
  header->slot_bytes = slot_bytes;
  header->magic = kCliqueMagic;
  munmap(map, sizeof(CliqueHeader));
  return name;
}

absl::StatusOr<std::shared_ptr<Clique>> Clique::Join(const std::string& name, int nranks, int rank,
                                                     int device) {
  if (nranks < 1 || nranks > kMaxRanks) {
    return absl::InvalidArgumentError(absl::StrCat("nranks ", nranks, " is outside [1, ", kMaxRanks, "]"));
  }
  if (rank < 0 || rank >= nranks) {
    return absl::InvalidArgumentError(absl::StrCat("rank ", rank, " is outside [0, ", nranks, ")"));
  }
  const int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the unique id names no live communicator (", name, ": ", std::strerror(errno),
        "); was it produced by ncclGetUniqueId on this machine?"));
  }
  CliqueHeader probe;
  if (pread(fd, &probe.magic, sizeof(probe.magic), 0) != sizeof(probe.magic) || probe.magic != kCliqueMagic) {
    close(fd);
    return absl::InvalidArgumentError("the unique id's segment is not a virtual NCCL clique");
  }
  uint64_t slot_bytes = 0;
  pread(fd, &slot_bytes, sizeof(slot_bytes), offsetof(CliqueHeader, slot_bytes));
  const size_t bytes = SegmentBytes(slot_bytes);
  void* map = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return absl::InternalError(absl::StrCat("mmap of ", name, ": ", std::strerror(errno)));
  auto clique = std::shared_ptr<Clique>(new Clique(name, static_cast<CliqueHeader*>(map), bytes, nranks));
  CliqueHeader& h = clique->header();
  int32_t expected = 0;
  if (!h.nranks.compare_exchange_strong(expected, nranks) && expected != nranks) {
    return absl::InvalidArgumentError(absl::StrCat("rank ", rank, " joins with nranks ", nranks,
                                                   " but another rank joined with nranks ", expected));
  }
  int32_t absent = 0;
  if (!h.present[rank].compare_exchange_strong(absent, 1)) {
    return absl::InvalidArgumentError(absl::StrCat("rank ", rank, " of this communicator is already taken"));
  }
  h.pids[rank] = getpid();
  h.devices[rank] = device;
  h.joined.fetch_add(1);
  return clique;
}

Clique::~Clique() { munmap(header_, bytes_); }

uint8_t* Clique::SlotPayload(int rank) {
  const size_t header = (sizeof(CliqueHeader) + 4095) / 4096 * 4096;
  return reinterpret_cast<uint8_t*>(header_) + header + static_cast<size_t>(rank) * header_->slot_bytes;
}

uint8_t* Clique::MailboxPayload(int from, int to) {
  return SlotPayload(kMaxRanks + from * kMaxRanks + to);
}

void Clique::Abort(const std::string& reason) {
  int32_t expected = 0;
  if (header_->aborted.compare_exchange_strong(expected, 2)) {
    std::snprintf(header_->abort_reason, sizeof(header_->abort_reason), "%s", reason.c_str());
    header_->aborted.store(1);  // the reason is in place
  }
}

std::string Clique::abort_reason() const {
  while (header_->aborted.load() == 2) std::this_thread::yield();
  return header_->abort_reason;
}

bool Clique::Wait(const std::function<bool()>& ready, const std::function<std::string()>& on_timeout,
                  int64_t timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int spins = 0;
  while (!ready()) {
    if (aborted()) return false;
    if (std::chrono::steady_clock::now() > deadline) {
      Abort(on_timeout());
      return false;
    }
    if (++spins < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(spins < 1000 ? 20 : 200));
    }
  }
  return true;
}

void Clique::Unlink() { shm_unlink(name_.c_str()); }

}  // namespace ember::vgpu::nccl
