#include "runtime/executable.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/host/evaluator.h"
#include "runtime/host_layout.h"

namespace ember::runtime {
namespace {

std::string DimsString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// Reads a device allocation into a literal (device memory is read through the executor, so
// this works on any platform; on host devices it is a memcpy).
absl::StatusOr<ir::Literal> ReadLiteral(const ir::ValueType& type, Device* device,
                                        const DeviceAllocation& allocation) {
  EMBER_ASSIGN_OR_RETURN(ir::Literal literal, ir::Literal::Create(type.shape()));
  const uint64_t size = literal.bytes().size();
  if (size > 0) {
    EMBER_RETURN_IF_ERROR(device->executor()->SynchronousMemcpyD2H(literal.mutable_bytes().data(),
                                                                   allocation.memory(), size));
  }
  return literal;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Executable>> Executable::Create(
    std::shared_ptr<Client> client, std::unique_ptr<compiler::CompiledProgram> program) {
  auto executable = std::unique_ptr<Executable>(new Executable());
  const auto& options = program->options;
  if (options.num_replicas * options.num_partitions != 1) {
    return absl::UnimplementedError(absl::StrCat(
        "programs over several devices (", options.num_replicas, " replicas x ",
        options.num_partitions, " partitions) are not supported by Ember yet"));
  }
  for (const ir::ValueType& type : program->result_types) {
    if (!type.is_tensor()) {
      return absl::UnimplementedError(absl::StrCat("entry results of type ", type.ToString(),
                                                   " are not supported yet"));
    }
  }
  for (const ir::ValueType& type : program->parameter_types) {
    if (!type.is_tensor()) {
      return absl::UnimplementedError(absl::StrCat("entry parameters of type ", type.ToString(),
                                                   " are not supported yet"));
    }
  }
  Device* device = client->devices().front();
  if (!options.device_assignment.empty()) {
    EMBER_ASSIGN_OR_RETURN(device, client->LookupDevice(options.device_assignment[0][0]));
  }
  if (!device->executor()->MemoryIsHostAccessible()) {
    // Launches run the reference evaluator in a stream callback, which may not call into the
    // CUDA driver; GPU execution arrives with the CUDA backend.
    return absl::UnimplementedError(absl::StrCat(
        "executing programs on ", device->DebugString(),
        " is not supported yet (Ember runs programs on host devices; use EMBER_PLATFORM=host)"));
  }
  executable->devices_.push_back(device);
  executable->client_ = std::move(client);
  executable->program_ = std::move(program);
  return executable;
}

absl::Status Executable::CheckArguments(absl::Span<Buffer* const> arguments, Device* device) const {
  const auto& params = program_->parameter_types;
  if (arguments.size() != params.size()) {
    return absl::InvalidArgumentError(absl::StrCat(program_->name, " takes ", params.size(),
                                                   " arguments, got ", arguments.size()));
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Buffer* buffer = arguments[i];
    if (buffer == nullptr) return absl::InvalidArgumentError(absl::StrCat("argument ", i, " is null"));
    const ir::ValueType& want = params[i];
    if (buffer->element_type() != want.element_type() || buffer->dims() != want.dims()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, " is ", std::string(ir::ElementTypeName(buffer->element_type())),
          DimsString(buffer->dims()), " but ", program_->name, " expects ", want.ToString()));
    }
    if (buffer->device() != device) {
      return absl::InvalidArgumentError(absl::StrCat("argument ", i, " is on ",
                                                     buffer->device()->DebugString(), ", not on ",
                                                     device->DebugString()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Executable::Launch> Executable::Execute(
    absl::Span<const std::vector<Buffer*>> arguments, absl::Span<const int64_t> non_donatable,
    Device* only_device) {
  if (deleted_) return absl::FailedPreconditionError("the executable has been deleted");
  std::vector<Device*> devices = only_device ? std::vector<Device*>{only_device} : devices_;
  if (arguments.size() != devices.size()) {
    return absl::InvalidArgumentError(absl::StrCat("got argument lists for ", arguments.size(),
                                                   " devices; the executable runs on ",
                                                   devices.size()));
  }
  Launch launch;
  for (size_t d = 0; d < devices.size(); ++d) {
    Device* device = devices[d];
    EMBER_RETURN_IF_ERROR(CheckArguments(arguments[d], device));
    // Take every hold before changing anything, so a failed call leaves all buffers as they were.
    std::vector<Buffer::Hold> holds;
    for (Buffer* buffer : arguments[d]) {
      EMBER_ASSIGN_OR_RETURN(Buffer::Hold hold, buffer->Acquire("Execute"));
      holds.push_back(std::move(hold));
    }
    std::vector<std::shared_ptr<DeviceAllocation>> out_allocations;
    std::vector<AsyncEventRef> out_ready;
    std::vector<std::unique_ptr<Buffer>> outputs;
    for (const ir::ValueType& type : program_->result_types) {
      EMBER_ASSIGN_OR_RETURN(uint64_t size, DenseByteSize(type.element_type(), type.dims()));
      EMBER_ASSIGN_OR_RETURN(auto allocation, DeviceAllocation::Allocate(device->executor(), size));
      AsyncEventRef ready = AsyncEvent::Create();
      outputs.push_back(std::make_unique<Buffer>(client_, device, device->default_memory(),
                                                 type.element_type(), type.dims(), allocation,
                                                 ready));
      out_allocations.push_back(std::move(allocation));
      out_ready.push_back(std::move(ready));
    }
    // Donated inputs are deleted now; their memory lives until the launch is done.
    for (size_t i = 0; i < arguments[d].size(); ++i) {
      const bool kept = std::find(non_donatable.begin(), non_donatable.end(),
                                  static_cast<int64_t>(i)) != non_donatable.end();
      if (program_->donatable[i] && !kept) arguments[d][i]->Delete();
    }
    AsyncEventRef done = AsyncEvent::Create();
    std::vector<AsyncEventRef> inputs_ready;
    for (const auto& hold : holds) inputs_ready.push_back(hold.ready);
    auto finish = [out_ready, done](const absl::Status& status) {
      for (const auto& ready : out_ready) ready->Set(status);
      done->Set(status);
    };
    se::Stream* stream = device->compute_stream();
    std::shared_ptr<const compiler::CompiledProgram> program = program_;
    AsyncEvent::AfterAll(inputs_ready)->AndThen(
        [=, holds = std::move(holds)](absl::Status status) mutable {
          if (!status.ok()) {
            finish(status);
            return;
          }
          absl::Status enqueued = stream->EnqueueHostCallback(
              [=, holds = std::move(holds)]() -> absl::Status {
                absl::Status result = [&]() -> absl::Status {
                  std::vector<host::EvalValue> args;
                  for (size_t i = 0; i < holds.size(); ++i) {
                    EMBER_ASSIGN_OR_RETURN(
                        ir::Literal literal,
                        ReadLiteral(program->parameter_types[i], device, *holds[i].allocation));
                    args.push_back(host::EvalValue::Array(std::move(literal)));
                  }
                  EMBER_ASSIGN_OR_RETURN(std::vector<host::EvalValue> results,
                                         program->host->Run(std::move(args), host::EvalOptions{}));
                  if (results.size() != out_allocations.size()) {
                    return absl::InternalError(absl::StrCat("the program returned ", results.size(),
                                                            " values, expected ",
                                                            out_allocations.size()));
                  }
                  for (size_t r = 0; r < results.size(); ++r) {
                    const auto bytes = results[r].array.bytes();
                    if (bytes.size() != out_allocations[r]->memory().size) {
                      return absl::InternalError(absl::StrCat("result ", r, " has ", bytes.size(),
                                                              " bytes, expected ",
                                                              out_allocations[r]->memory().size));
                    }
                    if (!bytes.empty()) {
                      EMBER_RETURN_IF_ERROR(device->executor()->SynchronousMemcpyH2D(
                          out_allocations[r]->memory(), bytes.data(), bytes.size()));
                    }
                  }
                  return absl::OkStatus();
                }();
                finish(result);
                // A failed program fails its outputs, not the device's stream.
                return absl::OkStatus();
              });
          if (!enqueued.ok()) finish(enqueued);
        });
    launch.outputs.push_back(std::move(outputs));
    launch.done.push_back(std::move(done));
  }
  return launch;
}

}  // namespace ember::runtime
