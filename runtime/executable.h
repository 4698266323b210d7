// A compiled program bound to the devices it runs on. Execute queues one launch per device and
// returns at once with output buffers whose ready events fire when the launch finishes.
//
// Several devices: the device assignment's replica r, partition p is device r * P + p. Every
// device runs the program on its own stream with its own replica/partition ids, and the
// collective ops of one launch run on the client's collectives transport, through one
// CliqueScope per launch (a failing device aborts the cliques its peers wait in). An SPMD program
// arrives in its per-device form (the compiler's spmd pass): every device runs it on its shards.
// The user data a framework attaches to an execution reaches the FFI handlers the program calls.
// Token parameters (the ordered-effect tokens JAX threads through programs) take any buffer;
// token results are zero-byte buffers of element type token.
#ifndef EMBER_RUNTIME_EXECUTABLE_H_
#define EMBER_RUNTIME_EXECUTABLE_H_

#include <atomic>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/driver/compile_program.h"
#include "compiler/backend/executable.h"
#include "ffi/execution_context.h"
#include "runtime/buffer.h"
#include "runtime/client.h"

namespace ember::runtime {

class Executable {
 public:
  // Binds `program` to the devices of its device assignment (or the client's first
  // replicas x partitions devices when it has none).
  static absl::StatusOr<std::unique_ptr<Executable>> Create(
      std::shared_ptr<Client> client, std::unique_ptr<compiler::CompiledProgram> program);
  ~Executable();

  const compiler::CompiledProgram& program() const { return *program_; }
  // In launch order: device (replica r, partition p) at r * num_partitions + p. In a
  // multi-process job these include other processes' devices; this process launches on its own,
  // the addressable ones (in launch order), each with its position in devices().
  const std::vector<Device*>& devices() const { return devices_; }
  const std::vector<Device*>& addressable_devices() const { return addressable_devices_; }
  int64_t num_replicas() const { return program_->options.num_replicas; }
  int64_t num_partitions() const { return program_->options.num_partitions; }
  // What one device takes and returns (for an SPMD program, its shards).
  const std::vector<ir::ValueType>& device_parameter_types() const { return parameter_types_; }
  const std::vector<ir::ValueType>& device_result_types() const { return result_types_; }

  struct Launch {
    std::vector<std::vector<std::unique_ptr<Buffer>>> outputs;  // per device, per result
    std::vector<AsyncEventRef> done;                            // per device
  };
  // `arguments[d]` are the buffers for addressable_devices()[d] (or for `only_device` when set, with one
  // list; only for single-device executables). Inputs listed in `non_donatable` are never
  // donated.
  // `ffi_context`: user data the framework attached to this execution for the FFI handlers the
  // program calls (may be null).
  absl::StatusOr<Launch> Execute(absl::Span<const std::vector<Buffer*>> arguments,
                                 absl::Span<const int64_t> non_donatable, Device* only_device,
                                 std::shared_ptr<const ffi::ExecutionContext> ffi_context = nullptr);

  void Delete() { deleted_ = true; }
  bool IsDeleted() const { return deleted_; }

 private:
  Executable() = default;
  absl::Status CheckArguments(absl::Span<Buffer* const> arguments, Device* device, size_t d) const;

  std::shared_ptr<Client> client_;
  std::shared_ptr<const compiler::CompiledProgram> program_;
  std::vector<Device*> devices_;
  std::vector<Device*> addressable_devices_;
  std::vector<size_t> addressable_positions_;  // of addressable_devices_[d] in devices_
  std::vector<ir::ValueType> parameter_types_;
  std::vector<ir::ValueType> result_types_;
  std::atomic<bool> deleted_{false};
};

}  // namespace ember::runtime

#endif  // EMBER_RUNTIME_EXECUTABLE_H_
