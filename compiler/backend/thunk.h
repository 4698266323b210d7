// Thunk: one step of a compiled program on one device (a kernel launch, a library call such as
// a matrix product or convolution, a copy, a memset, a collective, control flow, a host callback,
// or a sequence of those), enqueued on a stream by the runtime. Thunks read and write the
// launch's buffers through slices that buffer assignment gave them; the runtime binds the
// slices' allocations (the arguments, the results and one arena of temporaries) per launch.
// Nothing here knows a platform: a backend's thunks decide how their work reaches the stream.
#ifndef EMBER_COMPILER_BACKEND_THUNK_H_
#define EMBER_COMPILER_BACKEND_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "collectives/clique_scope.h"
#include "ffi/execution_context.h"
#include "stream_executor/device_memory.h"
#include "stream_executor/stream.h"

namespace ember::backend {

// The allocations of one launch, in the order BufferAllocations lists them: parameter i is
// allocation i, result r is allocation num_parameters + r, and the arena of temporaries (when
// the executable has one) is the last.
struct BufferSlice {
  int allocation = -1;
  int64_t offset = 0;
  int64_t size = 0;
};

class BufferAllocations {
 public:
  explicit BufferAllocations(std::vector<se::DeviceMemory> allocations)
      : allocations_(std::move(allocations)) {}
  size_t size() const { return allocations_.size(); }
  se::DeviceMemory allocation(int index) const { return allocations_[index]; }
  // The memory of `slice` (null memory for an allocation index out of range).
  se::DeviceMemory Slice(const BufferSlice& slice) const;

 private:
  std::vector<se::DeviceMemory> allocations_;
};

// The first failure of a launch's work on one device. Work that runs on the host records its
// failure here and returns OK to the stream, so a failed launch fails its own outputs, not the
// device's stream (later launches still run); the runtime reads it once the launch is done.
class LaunchStatus {
 public:
  void Fail(const absl::Status& status);
  absl::Status status() const;
  bool ok() const { return status().ok(); }

 private:
  mutable absl::Mutex mu_;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
};

// Where one device stands in a launch over several devices (replica r, partition p is flattened
// device r * num_partitions + p).
struct CollectiveParams {
  // The launch's communicators (one scope for all its devices); null for a single device.
  std::shared_ptr<collectives::CliqueScope> scope;
  std::vector<int64_t> device_ids;  // global device id of each flattened device
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  int64_t replica_id = 0;
  int64_t partition_id = 0;
};

struct ExecuteParams {
  se::Stream* stream = nullptr;
  // Keeps the executable (and the module its thunks read) alive until the enqueued work ran.
  std::shared_ptr<const void> owner;
  // Held by the enqueued work until it ran.
  std::shared_ptr<const BufferAllocations> buffers;
  std::shared_ptr<LaunchStatus> status;
  std::shared_ptr<const CollectiveParams> collectives;
  // Which launch this is, on which device (for traces and the FFI handlers the program calls),
  // and the user data the framework attached to the execution (may be null).
  int32_t device_ordinal = 0;
  int64_t run_id = 0;
  std::shared_ptr<const ffi::ExecutionContext> ffi_context;
};

class Thunk {
 public:
  enum class Kind {
    kKernel,        // a generated (fused) kernel
    kLibraryCall,   // dot, convolution, ...
    kCopy,
    kMemset,
    kCollective,
    kWhile,
    kConditional,
    kHostCallback,
    kEvaluator,     // the reference evaluator runs one or more ops (host backend fallback)
    kSequence,
  };
  Thunk(Kind kind, std::string name) : kind_(kind), name_(std::move(name)) {}
  virtual ~Thunk() = default;
  Thunk(const Thunk&) = delete;
  Thunk& operator=(const Thunk&) = delete;

  Kind kind() const { return kind_; }
  // What it runs, for reports and traces ("fusion.3", "dot_general at model.py:41").
  const std::string& name() const { return name_; }

  // Enqueues the thunk's work on params.stream, in order with what was enqueued before. An error
  // means it was not enqueued; failures of the work itself go to params.status (or the stream).
  virtual absl::Status ExecuteOnStream(const ExecuteParams& params) const = 0;

 private:
  Kind kind_;
  std::string name_;
};

const char* ThunkKindName(Thunk::Kind kind);

class ThunkSequence : public Thunk {
 public:
  explicit ThunkSequence(std::vector<std::unique_ptr<Thunk>> thunks, std::string name = "sequence")
      : Thunk(Kind::kSequence, std::move(name)), thunks_(std::move(thunks)) {}
  const std::vector<std::unique_ptr<Thunk>>& thunks() const { return thunks_; }
  absl::Status ExecuteOnStream(const ExecuteParams& params) const override;

 private:
  std::vector<std::unique_ptr<Thunk>> thunks_;
};

}  // namespace ember::backend

#endif  // EMBER_COMPILER_BACKEND_THUNK_H_
