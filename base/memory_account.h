// MemoryAccount: where memory that a device's work takes outside the device's allocator is
// counted and limited, such as the values the reference evaluator creates while it runs part of a
// launch. The device's allocator is the account of its device, so those bytes show in
// memory_stats and count against the memory limit like buffers do. Work makes its account current
// on its thread (ScopedMemoryAccount); what allocates then charges it (ir::Literal does).
#ifndef EMBER_BASE_MEMORY_ACCOUNT_H_
#define EMBER_BASE_MEMORY_ACCOUNT_H_

#include <cstdint>

#include "absl/status/status.h"

namespace ember {

class MemoryAccount {
 public:
  virtual ~MemoryAccount() = default;
  // Counts `bytes` more, or fails with ResourceExhausted (naming the sizes) and counts nothing.
  virtual absl::Status Charge(uint64_t bytes) = 0;
  // Gives back bytes an earlier Charge counted. Thread-safe, like Charge.
  virtual void Release(uint64_t bytes) = 0;

  // The account current on this thread, or null: nothing is counted.
  static MemoryAccount* Current();
};

// Makes `account` (may be null) current on this thread until the scope ends, then restores the
// one before.
class ScopedMemoryAccount {
 public:
  explicit ScopedMemoryAccount(MemoryAccount* account);
  ~ScopedMemoryAccount();
  ScopedMemoryAccount(const ScopedMemoryAccount&) = delete;
  ScopedMemoryAccount& operator=(const ScopedMemoryAccount&) = delete;

 private:
  MemoryAccount* previous_;
};

}  // namespace ember

#endif  // EMBER_BASE_MEMORY_ACCOUNT_H_
