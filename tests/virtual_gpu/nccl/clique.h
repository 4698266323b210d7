// The meeting place of one NCCL communicator's ranks: a POSIX shared-memory segment named by the
// ncclUniqueId, so ranks may live in one process (threads, or one thread in a group) or in several
// processes on one machine. It holds who joined, each rank's current collective (descriptor and a
// copy of its send buffer) and point-to-point mailboxes. Every wait has a timeout and ends early
// when the clique is aborted (by ncclCommAbort, a mismatch between ranks, or a timeout), with the
// reason readable by every rank.
#ifndef EMBER_TESTS_VIRTUAL_GPU_NCCL_CLIQUE_H_
#define EMBER_TESTS_VIRTUAL_GPU_NCCL_CLIQUE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace ember::vgpu::nccl {

inline constexpr int kMaxRanks = 16;
inline constexpr uint32_t kCliqueMagic = 0x56434c51;  // "VCLQ"

// What a rank asked for in one collective; all ranks must agree on it.
struct OpDescriptor {
  int32_t kind = 0;  // OpKind
  int32_t datatype = 0;
  int32_t redop = 0;
  int32_t root = -1;
  uint64_t count = 0;
  std::string Describe() const;
};

struct alignas(64) RankSlot {
  std::atomic<uint64_t> deposited{0};  // number of the collective whose payload is in place
  std::atomic<uint64_t> consumed{0};   // number of the collective this rank finished reading
  OpDescriptor op;
  uint64_t payload_bytes = 0;
};

struct alignas(64) Mailbox {  // messages from one rank to another
  std::atomic<uint64_t> sent{0};
  std::atomic<uint64_t> received{0};
  int32_t datatype = 0;
  uint64_t count = 0;
  uint64_t payload_bytes = 0;
};

struct CliqueHeader {
  uint32_t magic;
  std::atomic<int32_t> nranks;  // set by the first rank to join
  std::atomic<int32_t> joined;  // only grows: "everyone has joined" stays true once it is
  std::atomic<int32_t> left;    // ranks that destroyed their communicator
  std::atomic<int32_t> aborted;
  uint64_t slot_bytes;  // payload capacity of each rank slot and each mailbox
  int32_t pids[kMaxRanks];
  int32_t devices[kMaxRanks];
  std::atomic<int32_t> present[kMaxRanks];
  char abort_reason[1024];
  RankSlot slots[kMaxRanks];
  Mailbox mailboxes[kMaxRanks][kMaxRanks];  // [from][to]
};

// One process's mapping of a clique segment.
class Clique {
 public:
  // Creates the segment for a new unique id (ncclGetUniqueId): `name` is returned for the id.
  static absl::StatusOr<std::string> Create(uint64_t slot_bytes);
  // Maps the segment `name` and takes `rank` of `nranks` in it.
  static absl::StatusOr<std::shared_ptr<Clique>> Join(const std::string& name, int nranks, int rank,
                                                      int device);
  ~Clique();
  Clique(const Clique&) = delete;
  Clique& operator=(const Clique&) = delete;

  CliqueHeader& header() { return *header_; }
  int nranks() const { return nranks_; }
  uint8_t* SlotPayload(int rank);
  uint8_t* MailboxPayload(int from, int to);
  uint64_t slot_bytes() const { return header_->slot_bytes; }
  const std::string& name() const { return name_; }

  // Aborts the clique for every rank (the first reason wins).
  void Abort(const std::string& reason);
  bool aborted() const { return header_->aborted.load() != 0; }
  std::string abort_reason() const;
  // Waits until `ready()` holds; false (after aborting the clique with `on_timeout()`'s text) when
  // `timeout_ms` passes, false at once when the clique is aborted.
  bool Wait(const std::function<bool()>& ready, const std::function<std::string()>& on_timeout,
            int64_t timeout_ms);
  // Removes the segment's name (the last rank to leave).
  void Unlink();

 private:
  Clique(std::string name, CliqueHeader* header, size_t bytes, int nranks)
      : name_(std::move(name)), header_(header), bytes_(bytes), nranks_(nranks) {}
  std::string name_;
  CliqueHeader* header_;
  size_t bytes_;
  int nranks_;
};

// The timeout of every wait (EMBER_VIRTUAL_NCCL_TIMEOUT_SECONDS, default 60, or set by a test).
int64_t TimeoutMs();
void SetTimeoutMs(int64_t ms);

}  // namespace ember::vgpu::nccl

#endif  // EMBER_TESTS_VIRTUAL_GPU_NCCL_CLIQUE_H_
