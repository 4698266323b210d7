// User data a framework attaches to one execution (PJRT_ExecuteContext + the FFI extension's
// user_data_add), which handlers read back by type id (XLA_FFI_ExecutionContext_Get).
#ifndef EMBER_FFI_EXECUTION_CONTEXT_H_
#define EMBER_FFI_EXECUTION_CONTEXT_H_

#include <cstdint>
#include <map>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace ember::ffi {

class ExecutionContext {
 public:
  ExecutionContext() = default;
  ExecutionContext(const ExecutionContext&) = delete;
  ExecutionContext& operator=(const ExecutionContext&) = delete;
  ~ExecutionContext();  // calls the deleters

  // One entry per type id; `deleter` (may be null) runs when the context is destroyed.
  absl::Status Insert(int64_t type_id, void* data, void (*deleter)(void*));
  absl::StatusOr<void*> Lookup(int64_t type_id) const;

 private:
  struct Entry {
    void* data = nullptr;
    void (*deleter)(void*) = nullptr;
  };
  mutable absl::Mutex mu_;
  std::map<int64_t, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ember::ffi

#endif  // EMBER_FFI_EXECUTION_CONTEXT_H_
