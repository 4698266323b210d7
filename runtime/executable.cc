#include "runtime/executable.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "compiler/host/collective_hooks.h"
#include "compiler/evaluator/evaluator.h"
#include "ffi/ffi_calls.h"
#include "profiler/trace.h"
#include "runtime/host_layout.h"
#include "runtime/spmd_program.h"

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

absl::Status WriteResults(std::vector<ir::Literal>& results, Device* device,
                          const std::vector<std::shared_ptr<DeviceAllocation>>& out) {
  if (results.size() != out.size()) {
    return absl::InternalError(
        absl::StrCat("the program returned ", results.size(), " values, expected ", out.size()));
  }
  for (size_t r = 0; r < results.size(); ++r) {
    const auto bytes = results[r].bytes();
    if (bytes.size() != out[r]->memory().size) {
      return absl::InternalError(absl::StrCat("result ", r, " has ", bytes.size(),
                                              " bytes, expected ", out[r]->memory().size));
    }
    if (!bytes.empty()) {
      EMBER_RETURN_IF_ERROR(
          device->executor()->SynchronousMemcpyH2D(out[r]->memory(), bytes.data(), bytes.size()));
    }
  }
  return absl::OkStatus();
}

// Runs a program on one host device without copies: parameters are read where the argument
// buffers live and results are written into the output allocations: fresh memory, or the memory
// of a donated argument where the program's result_aliases() allow it (donated arguments stay
// alive in `holds` until the launch is done).
absl::Status RunInPlace(const compiler::CompiledProgram& program,
                        const std::vector<Buffer::Hold>& holds,
                        const std::vector<std::shared_ptr<DeviceAllocation>>& out,
                        const eval::EvalOptions& options) {
  std::vector<const void*> args(holds.size());
  for (size_t i = 0; i < holds.size(); ++i) args[i] = holds[i].allocation->memory().opaque;
  std::vector<void*> results(out.size());
  std::vector<uint64_t> sizes(out.size());
  for (size_t r = 0; r < out.size(); ++r) {
    results[r] = out[r]->memory().opaque;
    sizes[r] = out[r]->memory().size;
  }
  return program.host->RunInPlace(args, results, sizes, options);
}

// May a result be written into argument p's memory as far as the launch itself goes? Not when
// another argument shares it (the same buffer passed twice would be read after it is
// overwritten) or something outside Ember sees it (external references).
bool Unshared(absl::Span<Buffer* const> arguments, const std::vector<Buffer::Hold>& holds, int p) {
  for (size_t j = 0; j < arguments.size(); ++j) {
    if (static_cast<int>(j) == p) continue;
    if (arguments[j] == arguments[p] || holds[j].allocation == holds[p].allocation) return false;
  }
  return !arguments[p]->HasExternalReferences();
}

// A launch on the trace (jax.profiler.trace): an event on the device's plane, with the
// kernels it runs on the same plane.
struct LaunchTrace {
  LaunchTrace(const Device& device, const std::string& program)
      : plane(absl::StrCat("/custom:Ember device ", device.id())),
        event("Launches", [&] { return program; }) {}
  profiler::ScopedPlane plane;
  profiler::ScopedEvent event;
};

// Set (OK) once `use` is, whatever its status: a failed earlier use still ended.
AsyncEventRef Completion(const AsyncEventRef& use) {
  AsyncEventRef done = AsyncEvent::Create();
  use->AndThen([done](const absl::Status&) { done->Set(absl::OkStatus()); });
  return done;
}

absl::Duration DefaultCollectiveTimeout() {
  if (const char* env = std::getenv("EMBER_COLLECTIVE_TIMEOUT_SECONDS")) {
    char* end = nullptr;
    const double seconds = std::strtod(env, &end);
    if (end != env && seconds > 0) return absl::Seconds(seconds);
  }
  return absl::Seconds(60);
}

// Multi-device launches are put on the devices' streams under one lock, so every stream sees
// the launches in the same order: a launch waiting at a collective on one device can never wait
// for a peer stuck behind a later launch on another.
absl::Mutex& EnqueueMutex() {
  static absl::Mutex* mu = new absl::Mutex();
  return *mu;
}

// What the devices of one multi-device launch share.
struct LaunchGroup {
  uint64_t run_id = 0;
  std::shared_ptr<collectives::InProcessCollectives> hub;
  std::shared_ptr<const host::LaunchTopology> topology;
  std::shared_ptr<const compiler::CompiledProgram> program;
  std::shared_ptr<const SpmdProgram> spmd;
  std::shared_ptr<const ffi::ExecutionContext> ffi_context;  // user data for FFI handlers
  std::atomic<int> remaining{0};

  // SPMD: every device deposits its shards; the last one runs the global program.
  absl::Mutex mu;
  int arrived ABSL_GUARDED_BY(mu) = 0;
  bool finished ABSL_GUARDED_BY(mu) = false;
  absl::Status status ABSL_GUARDED_BY(mu);
  std::vector<std::vector<ir::Literal>> shards ABSL_GUARDED_BY(mu);
  std::vector<std::vector<ir::Literal>> results ABSL_GUARDED_BY(mu);

  host::JoinFn Join() const {
    collectives::InProcessCollectives* h = hub.get();
    return [h](const collectives::CliqueKey& key, int rank) { return h->Join(key, rank); };
  }

  // Device d's part of an SPMD launch: `args` are its shards (or the error that kept it from
  // reading them). Returns its result shards once the global run is done.
  absl::StatusOr<std::vector<ir::Literal>> SpmdStep(size_t d,
                                                    absl::StatusOr<std::vector<ir::Literal>> args) {
    const int n = static_cast<int>(topology->device_ids.size());
    absl::MutexLock lock(&mu);
    if (shards.empty()) shards.resize(n);
    if (!args.ok()) {
      if (status.ok()) status = args.status();
    } else {
      shards[d] = *std::move(args);
    }
    if (++arrived == n) {
      if (status.ok()) {
        std::vector<std::vector<ir::Literal>> inputs = std::move(shards);
        mu.Unlock();
        ffi::FfiCalls ffi_calls(0, static_cast<int64_t>(run_id), ffi_context);
        absl::StatusOr<std::vector<std::vector<ir::Literal>>> out =
            spmd->Run(std::move(inputs), *hub, run_id, &ffi_calls);
        mu.Lock();
        if (out.ok()) {
          results = *std::move(out);
        } else {
          status = out.status();
        }
      }
      finished = true;
    } else {
      mu.Await(absl::Condition(&finished));
    }
    if (!status.ok()) return status;
    return std::move(results[d]);
  }
};

}  // namespace

Executable::~Executable() = default;

void Executable::set_collective_timeout(absl::Duration timeout) {
  collectives_ = std::make_shared<collectives::InProcessCollectives>(timeout);
}

absl::StatusOr<std::unique_ptr<Executable>> Executable::Create(
    std::shared_ptr<Client> client, std::unique_ptr<compiler::CompiledProgram> program) {
  auto executable = std::unique_ptr<Executable>(new Executable());
  const auto& options = program->options;
  const int64_t num_devices = options.num_replicas * options.num_partitions;
  if (num_devices < 1) {
    return absl::InvalidArgumentError(absl::StrCat("a program needs at least one device, got ",
                                                   options.num_replicas, " replicas x ",
                                                   options.num_partitions, " partitions"));
  }
  for (const ir::ValueType& type : program->result_types) {
    if (!type.is_tensor() && !type.is_token()) {
      return absl::UnimplementedError(absl::StrCat("entry results of type ", type.ToString(),
                                                   " are not supported yet"));
    }
  }
  for (const ir::ValueType& type : program->parameter_types) {
    if (!type.is_tensor() && !type.is_token()) {
      return absl::UnimplementedError(absl::StrCat("entry parameters of type ", type.ToString(),
                                                   " are not supported yet"));
    }
  }
  if (!options.device_assignment.empty()) {
    for (const auto& replica : options.device_assignment) {
      for (int64_t id : replica) {
        EMBER_ASSIGN_OR_RETURN(Device * device, client->LookupDevice(id));
        executable->devices_.push_back(device);
      }
    }
    if (static_cast<int64_t>(executable->devices_.size()) != num_devices) {
      return absl::InvalidArgumentError(
          absl::StrCat("the device assignment names ", executable->devices_.size(),
                       " devices for ", options.num_replicas, " replicas x ",
                       options.num_partitions, " partitions"));
    }
  } else {
    if (static_cast<int64_t>(client->devices().size()) < num_devices) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the program runs on ", options.num_replicas, " replicas x ", options.num_partitions,
          " partitions but the client has ", client->devices().size(), " devices"));
    }
    executable->devices_.assign(client->devices().begin(),
                                client->devices().begin() + num_devices);
  }
  for (size_t i = 0; i < executable->devices_.size(); ++i) {
    Device* device = executable->devices_[i];
    if (std::find(executable->devices_.begin(), executable->devices_.begin() + i, device) !=
        executable->devices_.begin() + i) {
      return absl::InvalidArgumentError(
          absl::StrCat("the device assignment names ", device->DebugString(), " twice"));
    }
    if (!device->executor()->MemoryIsHostAccessible()) {
      // Launches run the reference evaluator in a stream callback, which may not call into the
      // CUDA driver; GPU execution arrives with the CUDA backend.
      return absl::UnimplementedError(absl::StrCat(
          "executing programs on ", device->DebugString(),
          " is not supported yet (Ember runs programs on host devices; use EMBER_PLATFORM=host)"));
    }
  }
  executable->parameter_types_ = program->parameter_types;
  executable->result_types_ = program->result_types;
  bool has_manual = false;
  for (const auto& inst : program->entry->instructions()) {
    const ir::Attribute* target = inst->attribute("call_target_name");
    has_manual |= inst->opcode() == ir::Opcode::kCustomCall && target != nullptr &&
                  target->kind == ir::Attribute::Kind::kString &&
                  target->s == "sdy.manual_computation";
  }
  if ((options.num_partitions > 1 && options.use_spmd_partitioning) || has_manual) {
    if (options.num_replicas != 1) {
      return absl::UnimplementedError(absl::StrCat(
          "SPMD programs over several replicas (", options.num_replicas,
          " replicas x ", options.num_partitions, " partitions) are not supported yet"));
    }
    std::vector<int64_t> ids;
    for (Device* device : executable->devices_) ids.push_back(device->id());
    EMBER_ASSIGN_OR_RETURN(std::unique_ptr<SpmdProgram> spmd,
                           SpmdProgram::Create(*program, std::move(ids)));
    executable->parameter_types_ = spmd->shard_parameter_types();
    executable->result_types_ = spmd->shard_result_types();
    executable->spmd_ = std::move(spmd);
  }
  executable->collectives_ =
      std::make_shared<collectives::InProcessCollectives>(DefaultCollectiveTimeout());
  executable->client_ = std::move(client);
  executable->program_ = std::move(program);
  return executable;
}

absl::Status Executable::CheckArguments(absl::Span<Buffer* const> arguments, Device* device,
                                        size_t d) const {
  const auto& params = parameter_types_;
  const std::string where = devices_.size() > 1 ? absl::StrCat(" (device list ", d, ")") : "";
  if (arguments.size() != params.size()) {
    return absl::InvalidArgumentError(absl::StrCat(program_->name, " takes ", params.size(),
                                                   " arguments, got ", arguments.size(), where));
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Buffer* buffer = arguments[i];
    if (buffer == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("argument ", i, where, " is null"));
    }
    const ir::ValueType& want = params[i];
    // A token parameter only orders the program after the one that made the token: JAX passes
    // the previous launch's token result, or a bool[0] array the first time.
    if (!want.is_token() &&
        (buffer->element_type() != want.element_type() || buffer->dims() != want.dims())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, where, " is ", std::string(ir::ElementTypeName(buffer->element_type())),
          DimsString(buffer->dims()), " but ", program_->name, " expects ", want.ToString(),
          spmd_ != nullptr ? " (its shard on one device)" : ""));
    }
    if (buffer->device() != device) {
      return absl::InvalidArgumentError(absl::StrCat("argument ", i, where, " is on ",
                                                     buffer->device()->DebugString(), ", not on ",
                                                     device->DebugString()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Executable::Launch> Executable::Execute(
    absl::Span<const std::vector<Buffer*>> arguments, absl::Span<const int64_t> non_donatable,
    Device* only_device, std::shared_ptr<const ffi::ExecutionContext> ffi_context) {
  if (deleted_) return absl::FailedPreconditionError("the executable has been deleted");
  if (only_device != nullptr && devices_.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the executable runs on ", devices_.size(),
        " devices together; it cannot be executed on one device (", only_device->DebugString(),
        ")"));
  }
  std::vector<Device*> devices = only_device ? std::vector<Device*>{only_device} : devices_;
  if (arguments.size() != devices.size()) {
    return absl::InvalidArgumentError(absl::StrCat("got argument lists for ", arguments.size(),
                                                   " devices; the executable runs on ",
                                                   devices.size()));
  }
  // Check everything before changing anything, so a failed call leaves all buffers as they were.
  for (size_t d = 0; d < devices.size(); ++d) {
    EMBER_RETURN_IF_ERROR(CheckArguments(arguments[d], devices[d], d));
  }
  Launch launch;
  for (size_t d = 0; d < devices.size(); ++d) launch.done.push_back(AsyncEvent::Create());
  // Each argument records its device's done event as a use of its memory (a later launch that
  // takes the memory over waits for this one). Should this call fail before the launch is
  // queued, the events are set, so nobody waits on them.
  struct SetUnlessQueued {
    std::vector<AsyncEventRef>& done;
    bool queued = false;
    ~SetUnlessQueued() {
      if (queued) return;
      for (const AsyncEventRef& e : done) e->Set(absl::CancelledError("the launch did not start"));
    }
  } unless_queued{launch.done};
  std::vector<std::vector<Buffer::Hold>> holds(devices.size());
  for (size_t d = 0; d < devices.size(); ++d) {
    for (Buffer* buffer : arguments[d]) {
      EMBER_ASSIGN_OR_RETURN(Buffer::Hold hold, buffer->Acquire("Execute", launch.done[d]));
      holds[d].push_back(std::move(hold));
    }
  }
  // Which arguments are donated, and which results may then be written into a donated
  // argument's memory instead of fresh memory (decided by the compiler; only programs that run
  // as they are, not SPMD programs, whose devices run shards of another program).
  std::vector<bool> donated(parameter_types_.size(), false);
  for (size_t i = 0; i < donated.size(); ++i) {
    donated[i] = i < program_->donatable.size() && program_->donatable[i] &&
                 std::find(non_donatable.begin(), non_donatable.end(),
                           static_cast<int64_t>(i)) == non_donatable.end();
  }
  // A donated buffer may not be passed again in the same call (XLA's rule; JAX relies on it).
  for (size_t d = 0; d < devices.size(); ++d) {
    for (size_t i = 0; i < arguments[d].size() && i < donated.size(); ++i) {
      if (!donated[i]) continue;
      for (size_t j = 0; j < arguments[d].size(); ++j) {
        if (j == i || arguments[d][j] != arguments[d][i]) continue;
        return absl::InvalidArgumentError(absl::StrCat(
            "Attempt to ", j < donated.size() && donated[j] ? "donate the same buffer twice" :
            "use a buffer that was donated", " in Execute() (arguments ", std::min(i, j), " and ",
            std::max(i, j), " on device ", d, "); e.g. f(donate(a), a)"));
      }
    }
  }
  std::vector<std::vector<int>> alias_of(devices.size(),
                                         std::vector<int>(result_types_.size(), -1));
  std::vector<std::vector<bool>> donor(devices.size(), std::vector<bool>(donated.size(), false));
  if (spmd_ == nullptr && program_->host != nullptr) {
    const std::vector<int>& aliases = program_->host->result_aliases();
    for (size_t d = 0; d < devices.size(); ++d) {
      for (size_t r = 0; r < result_types_.size() && r < aliases.size(); ++r) {
        const int p = aliases[r];
        if (p < 0 || static_cast<size_t>(p) >= donated.size() || !donated[p] ||
            !Unshared(arguments[d], holds[d], p)) {
          continue;
        }
        alias_of[d][r] = p;
        donor[d][p] = true;
      }
    }
  }
  std::vector<std::vector<std::shared_ptr<DeviceAllocation>>> out_allocations(devices.size());
  std::vector<std::vector<AsyncEventRef>> out_ready(devices.size());
  // Fresh memory first, so a failed allocation leaves every argument as it was.
  for (size_t d = 0; d < devices.size(); ++d) {
    out_allocations[d].resize(result_types_.size());
    for (size_t r = 0; r < result_types_.size(); ++r) {
      if (alias_of[d][r] >= 0) continue;
      const ir::ValueType& type = result_types_[r];
      EMBER_ASSIGN_OR_RETURN(uint64_t size, DenseByteSize(type.element_type(), type.dims()));
      EMBER_ASSIGN_OR_RETURN(out_allocations[d][r],
                             DeviceAllocation::Allocate(devices[d]->executor(), size));
    }
  }
  // Donated inputs are deleted now; their memory lives until the launch is done, or on in the
  // result that takes it over. That result's launch first waits for every earlier use of it.
  std::vector<std::vector<AsyncEventRef>> donor_uses(devices.size());
  for (size_t d = 0; d < devices.size(); ++d) {
    for (size_t i = 0; i < arguments[d].size(); ++i) {
      if (!donated[i]) continue;
      if (!donor[d][i]) {
        arguments[d][i]->Delete();
        continue;
      }
      std::optional<std::vector<AsyncEventRef>> uses =
          arguments[d][i]->DeleteForDonation(launch.done[d].get());
      if (!uses.has_value()) {
        donor[d][i] = false;  // an external reference appeared meanwhile: fresh memory after all
        continue;
      }
      for (const AsyncEventRef& use : *uses) donor_uses[d].push_back(Completion(use));
    }
  }
  for (size_t d = 0; d < devices.size(); ++d) {
    Device* device = devices[d];
    std::vector<std::unique_ptr<Buffer>> outputs;
    for (size_t r = 0; r < result_types_.size(); ++r) {
      const ir::ValueType& type = result_types_[r];
      std::shared_ptr<DeviceAllocation>& allocation = out_allocations[d][r];
      if (alias_of[d][r] >= 0) {
        if (donor[d][alias_of[d][r]]) {
          allocation = holds[d][alias_of[d][r]].allocation;
        } else {
          EMBER_ASSIGN_OR_RETURN(uint64_t size, DenseByteSize(type.element_type(), type.dims()));
          EMBER_ASSIGN_OR_RETURN(allocation, DeviceAllocation::Allocate(device->executor(), size));
        }
      }
      AsyncEventRef ready = AsyncEvent::Create();
      outputs.push_back(std::make_unique<Buffer>(client_, device, device->default_memory(),
                                                 type.element_type(), type.dims(), allocation,
                                                 ready));
      out_ready[d].push_back(std::move(ready));
    }
    launch.outputs.push_back(std::move(outputs));
  }
  unless_queued.queued = true;
  std::shared_ptr<const compiler::CompiledProgram> program = program_;
  const std::vector<ir::ValueType> parameter_types = parameter_types_;

  if (devices.size() == 1 && spmd_ == nullptr) {
    Device* device = devices[0];
    std::vector<AsyncEventRef> inputs_ready = donor_uses[0];
    for (const auto& hold : holds[0]) inputs_ready.push_back(hold.ready);
    auto finish = [out_ready = out_ready[0], done = launch.done[0]](const absl::Status& status) {
      for (const auto& ready : out_ready) ready->Set(status);
      done->Set(status);
    };
    se::Stream* stream = device->compute_stream();
    AsyncEvent::AfterAll(inputs_ready)->AndThen(
        [=, holds = std::move(holds[0]), out = out_allocations[0]](absl::Status status) mutable {
          if (!status.ok()) {
            finish(status);
            return;
          }
          absl::AnyInvocable<absl::Status() &&> run =
              [=, holds = std::move(holds)]() -> absl::Status {
            ffi::FfiCalls ffi_calls(device->local_hardware_id(), ffi::FfiCalls::NewRunId(),
                                    ffi_context);
            eval::EvalOptions options;
            options.external_calls = &ffi_calls;
            absl::Status result;
            {
              const LaunchTrace trace(*device, program->name);  // ends before the outputs are
              result = RunInPlace(*program, holds, out, options);  // ready
            }
            finish(result);
            // A failed program fails its outputs, not the device's stream.
            return absl::OkStatus();
          };
          if (program->run_inline && stream->TryRunHostCallbackInline(run)) return;
          absl::Status enqueued = stream->EnqueueHostCallback(std::move(run));
          if (!enqueued.ok()) finish(enqueued);
        });
    return launch;
  }

  // Several devices. Once every device's inputs are ready, one launch per device is put on the
  // devices' streams under one lock, so all streams see multi-device launches in the same
  // order (a launch waiting at a collective never waits for a peer stuck behind a later launch),
  // and no stream ever blocks waiting for inputs that work queued behind it would produce.
  auto group = std::make_shared<LaunchGroup>();
  group->hub = collectives_;
  group->run_id = collectives_->NewRunId();
  group->program = program_;
  group->spmd = spmd_;
  group->ffi_context = ffi_context;
  group->remaining = static_cast<int>(devices.size());
  {
    auto topology = std::make_shared<host::LaunchTopology>();
    topology->num_replicas = num_replicas();
    topology->num_partitions = num_partitions();
    for (Device* device : devices) topology->device_ids.push_back(device->id());
    group->topology = std::move(topology);
  }
  struct DeviceWork {
    Device* device = nullptr;
    std::vector<Buffer::Hold> holds;
    std::vector<std::shared_ptr<DeviceAllocation>> out;
    std::vector<AsyncEventRef> out_ready;
    AsyncEventRef done;
    int64_t replica = 0;
    int64_t partition = 0;
  };
  auto work = std::make_shared<std::vector<DeviceWork>>(devices.size());
  std::vector<AsyncEventRef> inputs_ready;
  for (size_t d = 0; d < devices.size(); ++d) {
    DeviceWork& w = (*work)[d];
    w.device = devices[d];
    for (const auto& hold : holds[d]) inputs_ready.push_back(hold.ready);
    inputs_ready.insert(inputs_ready.end(), donor_uses[d].begin(), donor_uses[d].end());
    w.holds = std::move(holds[d]);
    w.out = std::move(out_allocations[d]);
    w.out_ready = std::move(out_ready[d]);
    w.done = launch.done[d];
    w.replica = static_cast<int64_t>(d) / num_partitions();
    w.partition = static_cast<int64_t>(d) % num_partitions();
  }
  auto finish = [](LaunchGroup& g, DeviceWork& w, const absl::Status& status) {
    if (!status.ok()) g.hub->Abort(g.run_id, status);
    for (const auto& ready : w.out_ready) ready->Set(status);
    w.done->Set(status);
    if (--g.remaining == 0) g.hub->Forget(g.run_id);
  };
  AsyncEvent::AfterAll(inputs_ready)->AndThen([group, work, finish, parameter_types,
                                               ffi_context](absl::Status status) {
    if (!status.ok()) {
      for (DeviceWork& w : *work) finish(*group, w, status);
      return;
    }
    std::vector<std::pair<size_t, absl::Status>> not_enqueued;
    {
      absl::MutexLock lock(&EnqueueMutex());
      for (size_t d = 0; d < work->size(); ++d) {
        DeviceWork* w = &(*work)[d];
        absl::Status enqueued = w->device->compute_stream()->EnqueueHostCallback(
            [group, work, w, d, finish, parameter_types, ffi_context]() -> absl::Status {
              if (group->spmd == nullptr) {
                host::CommunicatorHooks hooks(group->Join(), group->run_id, group->topology,
                                              w->replica, w->partition);
                ffi::FfiCalls ffi_calls(w->device->local_hardware_id(),
                                        static_cast<int64_t>(group->run_id), ffi_context);
                eval::EvalOptions options = hooks.Options();
                options.external_calls = &ffi_calls;
                absl::Status result;
                {
                  const LaunchTrace trace(*w->device, group->program->name);
                  result = RunInPlace(*group->program, w->holds, w->out, options);
                }
                finish(*group, *w, result);
                return absl::OkStatus();
              }
              absl::StatusOr<std::vector<ir::Literal>> args =
                  [&]() -> absl::StatusOr<std::vector<ir::Literal>> {
                std::vector<ir::Literal> literals;
                for (size_t i = 0; i < w->holds.size(); ++i) {
                  EMBER_ASSIGN_OR_RETURN(
                      ir::Literal literal,
                      ReadLiteral(parameter_types[i], w->device, *w->holds[i].allocation));
                  literals.push_back(std::move(literal));
                }
                return literals;
              }();
              absl::Status result = [&]() -> absl::Status {
                const LaunchTrace trace(*w->device, group->program->name);
                std::vector<ir::Literal> results;
                EMBER_ASSIGN_OR_RETURN(results, group->SpmdStep(d, std::move(args)));
                return WriteResults(results, w->device, w->out);
              }();
              finish(*group, *w, result);
              return absl::OkStatus();
            });
        if (!enqueued.ok()) not_enqueued.emplace_back(d, enqueued);
      }
    }
    for (auto& [d, error] : not_enqueued) {
      // Peers already enqueued wait for this device: at their collectives (the abort in finish
      // wakes them) or, for SPMD programs, at the shard exchange (this error completes it).
      if (group->spmd != nullptr) (void)group->SpmdStep(d, error);
      finish(*group, (*work)[d], error);
    }
  });
  return launch;
}

}  // namespace ember::runtime
