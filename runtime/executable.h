// A compiled program bound to the devices it runs on. Execute queues one launch per device and
// returns at once with output buffers whose ready events fire when the launch finishes. Today
// every launch runs the reference evaluator on the device's compute stream (host devices).
#ifndef EMBER_RUNTIME_EXECUTABLE_H_
#define EMBER_RUNTIME_EXECUTABLE_H_

#include <atomic>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/driver/compile_program.h"
#include "runtime/buffer.h"
#include "runtime/client.h"

namespace ember::runtime {

class Executable {
 public:
  // `devices` in launch order: device (replica r, partition p) at r * num_partitions + p.
  static absl::StatusOr<std::unique_ptr<Executable>> Create(
      std::shared_ptr<Client> client, std::unique_ptr<compiler::CompiledProgram> program);

  const compiler::CompiledProgram& program() const { return *program_; }
  const std::vector<Device*>& devices() const { return devices_; }
  int64_t num_replicas() const { return program_->options.num_replicas; }
  int64_t num_partitions() const { return program_->options.num_partitions; }

  struct Launch {
    std::vector<std::vector<std::unique_ptr<Buffer>>> outputs;  // per device, per result
    std::vector<AsyncEventRef> done;                            // per device
  };
  // `arguments[d]` are the buffers for devices()[d] (or for `only_device` when set, with one
  // list). Inputs listed in `non_donatable` are never donated.
  absl::StatusOr<Launch> Execute(absl::Span<const std::vector<Buffer*>> arguments,
                                 absl::Span<const int64_t> non_donatable, Device* only_device);

  void Delete() { deleted_ = true; }
  bool IsDeleted() const { return deleted_; }

 private:
  Executable() = default;
  absl::Status CheckArguments(absl::Span<Buffer* const> arguments, Device* device) const;

  std::shared_ptr<Client> client_;
  std::shared_ptr<const compiler::CompiledProgram> program_;
  std::vector<Device*> devices_;
  std::atomic<bool> deleted_{false};
};

}  // namespace ember::runtime

#endif  // EMBER_RUNTIME_EXECUTABLE_H_
