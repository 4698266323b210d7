#include "runtime/executable.h"

#include <algorithm>
#include <atomic>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "base/status_macros.h"
#include "runtime/host_layout.h"
#include "stream_executor/worker_thread.h"

namespace ember::runtime {
namespace {

std::string DimsString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
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

// Set (OK) once `use` is, whatever its status: a failed earlier use still ended.
// `status` (its code kept) with what was being allocated: "allocating result 0 (f32[...]) of
// jit_f, computed by stablehlo.sort at f.py:3:9: out of memory on host device 0: ...".
absl::Status WithContext(const absl::Status& status, const std::string& what) {
  return absl::Status(status.code(), absl::StrCat("allocating ", what, ": ", status.message()));
}

AsyncEventRef Completion(const AsyncEventRef& use) {
  AsyncEventRef done = AsyncEvent::Create();
  use->AndThen([done](const absl::Status&) { done->Set(absl::OkStatus()); });
  return done;
}

// One device's part of a launch: what it binds, what it holds until it is done, and the events
// it sets then.
struct DeviceLaunch {
  Device* device = nullptr;
  std::vector<Buffer::Hold> holds;
  std::vector<std::shared_ptr<DeviceAllocation>> out;
  std::shared_ptr<DeviceAllocation> temp;
  std::vector<AsyncEventRef> out_ready;
  AsyncEventRef done;
  backend::ExecuteParams params;
};

// Lets go of what a device launch held, then sets its events with `status`.
void Finish(DeviceLaunch& d, const absl::Status& status) {
  // The arena and the argument holds go back before anyone hears of the results: a caller that
  // waits for them and launches again must find the memory free (two arenas at once doubled a
  // training loop's peak).
  d.holds.clear();
  d.temp.reset();
  for (const auto& ready : d.out_ready) ready->Set(status);
  d.done->Set(status);
}

// A launch put on its stream, and the stream event after it (the launch's completion).
struct OnStream {
  absl::Status enqueued;
  absl::StatusOr<std::shared_ptr<se::Event>> event;
};

OnStream PutOnStream(const backend::Executable& executable,
                     const std::shared_ptr<DeviceLaunch>& d) {
  OnStream put;
  put.enqueued = executable.ExecuteOnStream(d->params);
  if (!put.enqueued.ok()) d->params.status->Fail(put.enqueued);
  put.event = d->device->compute_stream()->RecordEvent();
  return put;
}

// `on_done` once the launch put on the stream is done. It may run at once, on this thread (the
// stream already ran it): callers must hold no lock that what it sets off could take.
absl::Status WhenDone(const std::shared_ptr<DeviceLaunch>& d, OnStream put,
                      std::function<void(const absl::Status&)> on_done) {
  if (!put.event.ok()) return put.event.status();
  (*put.event)->AndThen([d, on_done = std::move(on_done)](absl::Status stream_status) {
    on_done(stream_status.ok() ? d->params.status->status() : stream_status);
  });
  return put.enqueued;
}

// Enqueues a device's launch and, after it, the completion that finishes it (the launch's own
// failures, recorded in its status, or a failure of the stream). `on_done` runs once with the
// result. Errors enqueueing the launch are returned (nothing was enqueued then, or what was will
// be skipped because the launch status failed).
absl::Status Enqueue(const backend::Executable& executable, const std::shared_ptr<DeviceLaunch>& d,
                     std::function<void(const absl::Status&)> on_done) {
  return WhenDone(d, PutOnStream(executable, d), std::move(on_done));
}

}  // namespace

Executable::~Executable() = default;

absl::StatusOr<std::unique_ptr<Executable>> Executable::Create(
    std::shared_ptr<Client> client, std::unique_ptr<compiler::CompiledProgram> program) {
  auto executable = std::unique_ptr<Executable>(new Executable());
  const auto& options = program->options;
  if (program->executable == nullptr) {
    return absl::InvalidArgumentError("the program was not compiled by a backend");
  }
  const int64_t num_devices = options.num_replicas * options.num_partitions;
  if (num_devices < 1) {
    return absl::InvalidArgumentError(absl::StrCat("a program needs at least one device, got ",
                                                   options.num_replicas, " replicas x ",
                                                   options.num_partitions, " partitions"));
  }
  const backend::BufferLayout& layout = program->executable->layout();
  for (const ir::ValueType& type : layout.result_types) {
    if (!type.is_tensor() && !type.is_token()) {
      return absl::UnimplementedError(absl::StrCat("entry results of type ", type.ToString(),
                                                   " are not supported yet"));
    }
  }
  for (const ir::ValueType& type : layout.parameter_types) {
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
    if (device->platform() != program->executable->platform()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the program was compiled by the ", program->executable->backend(), " backend for ",
          program->executable->platform(), " devices and cannot run on ", device->DebugString()));
    }
  }
  if (executable->devices_.size() > 1 && client->collectives() == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        "the program runs on ", executable->devices_.size(), " ",
        std::string(client->se_platform_name()),
        " devices, but Ember has no collectives transport for them: ",
        client->no_collectives_reason()));
  }
  for (size_t i = 0; i < executable->devices_.size(); ++i) {
    if (!executable->devices_[i]->addressable()) continue;
    executable->addressable_devices_.push_back(executable->devices_[i]);
    executable->addressable_positions_.push_back(i);
  }
  executable->parameter_types_ = layout.parameter_types;
  executable->result_types_ = layout.result_types;
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
          program_->spmd ? " (its shard on one device)" : ""));
    }
    if (buffer->client() != client_.get()) {
      // Device names repeat across clients ("ember:host:0" in each): say what differs.
      return absl::InvalidArgumentError(absl::StrCat(
          "argument ", i, where, " is a buffer of another PJRT client (on its ",
          buffer->device()->DebugString(), "); ", program_->name,
          " was loaded by this client: transfer the data to this client's devices first"));
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
  if (only_device != nullptr && !only_device->addressable()) {
    return absl::InvalidArgumentError(absl::StrCat(only_device->DebugString(),
                                                   " belongs to process ",
                                                   only_device->process_index(),
                                                   ": this process cannot run programs on it"));
  }
  std::vector<Device*> devices =
      only_device ? std::vector<Device*>{only_device} : addressable_devices_;
  // Where each launched device sits in the device assignment (its replica and partition).
  std::vector<size_t> positions =
      only_device ? std::vector<size_t>{0} : addressable_positions_;
  if (arguments.size() != devices.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "got argument lists for ", arguments.size(), " devices; the executable runs on ",
        devices.size(),
        devices.size() == devices_.size()
            ? ""
            : absl::StrCat(" of this process (of ", devices_.size(), " in all)")));
  }
  // Several devices take part (here or in other processes): the launch meets its peers at its
  // collectives.
  const bool multi_device = only_device == nullptr && devices_.size() > 1;
  // Check everything before changing anything, so a failed call leaves all buffers as they were.
  for (size_t d = 0; d < devices.size(); ++d) {
    EMBER_RETURN_IF_ERROR(CheckArguments(arguments[d], devices[d], d));
  }
  const backend::Executable& compiled = *program_->executable;
  const backend::BufferLayout& layout = compiled.layout();
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
  // A slot per device among its in-flight launches (devices in id order, so two callers never
  // each hold a slot the other waits for), given back when the launch is done, or when this
  // call fails before queuing it and the guard above sets its event.
  std::vector<size_t> by_id(devices.size());
  for (size_t d = 0; d < devices.size(); ++d) by_id[d] = d;
  std::sort(by_id.begin(), by_id.end(),
            [&](size_t a, size_t b) { return devices[a]->id() < devices[b]->id(); });
  const bool on_stream = se::WorkerThread::InAnyTask();
  for (size_t d : by_id) {
    Device* device = devices[d];
    device->admission().Acquire(/*wait=*/!on_stream);
    launch.done[d]->AndThen([device](absl::Status) { device->admission().Release(); });
  }
  std::vector<std::shared_ptr<DeviceLaunch>> work(devices.size());
  for (size_t d = 0; d < devices.size(); ++d) {
    work[d] = std::make_shared<DeviceLaunch>();
    work[d]->device = devices[d];
    work[d]->done = launch.done[d];
    for (Buffer* buffer : arguments[d]) {
      EMBER_ASSIGN_OR_RETURN(Buffer::Hold hold, buffer->Acquire("Execute", launch.done[d]));
      work[d]->holds.push_back(std::move(hold));
    }
  }
  // Which arguments are donated, and which results may then be written into a donated
  // argument's memory instead of fresh memory (decided by the backend).
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
  for (size_t d = 0; d < devices.size(); ++d) {
    for (size_t r = 0; r < result_types_.size() && r < layout.result_aliases.size(); ++r) {
      const int p = layout.result_aliases[r];
      if (p < 0 || static_cast<size_t>(p) >= donated.size() || !donated[p] ||
          !Unshared(arguments[d], work[d]->holds, p)) {
        continue;
      }
      alias_of[d][r] = p;
      donor[d][p] = true;
    }
  }
  // Fresh memory first (results, the arena of temporaries), so a failed allocation leaves every
  // argument as it was.
  const std::string& launch_name = program_->executable->thunks().name();
  for (size_t d = 0; d < devices.size(); ++d) {
    DeviceLaunch& w = *work[d];
    w.out.resize(result_types_.size());
    for (size_t r = 0; r < result_types_.size(); ++r) {
      if (alias_of[d][r] >= 0) continue;
      const ir::ValueType& type = result_types_[r];
      EMBER_ASSIGN_OR_RETURN(uint64_t size, DenseByteSize(type.element_type(), type.dims()));
      absl::StatusOr<std::shared_ptr<DeviceAllocation>> out =
          DeviceAllocation::Allocate(devices[d]->executor(), size);
      if (!out.ok()) {
        const std::string source = r < layout.result_sources.size()
                                       ? absl::StrCat(", computed by ", layout.result_sources[r])
                                       : "";
        return WithContext(out.status(), absl::StrCat("result ", r, " (", type.ToString(), ") of ",
                                                      launch_name, source));
      }
      w.out[r] = *std::move(out);
    }
    if (layout.temp_bytes > 0) {
      absl::StatusOr<std::shared_ptr<DeviceAllocation>> temp = DeviceAllocation::Allocate(
          devices[d]->executor(), static_cast<uint64_t>(layout.temp_bytes));
      if (!temp.ok()) {
        std::string what = absl::StrCat("the temporaries of ", launch_name);
        if (!layout.largest_temp.empty()) {
          absl::StrAppend(&what, "; the largest is ", layout.largest_temp);
        }
        return WithContext(temp.status(), what);
      }
      w.temp = *std::move(temp);
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
  std::shared_ptr<const compiler::CompiledProgram> program = program_;
  std::shared_ptr<collectives::CliqueScope> scope;
  if (multi_device) {
    scope = std::make_shared<collectives::CliqueScope>(client_->collectives());
  }
  std::vector<int64_t> device_ids;
  for (Device* device : multi_device ? devices_ : devices) device_ids.push_back(device->id());
  static std::atomic<int64_t> next_run_id{1};
  const int64_t run_id = next_run_id.fetch_add(1, std::memory_order_relaxed);
  std::vector<AsyncEventRef> inputs_ready;
  for (size_t d = 0; d < devices.size(); ++d) {
    DeviceLaunch& w = *work[d];
    Device* device = devices[d];
    std::vector<std::unique_ptr<Buffer>> outputs;
    for (size_t r = 0; r < result_types_.size(); ++r) {
      const ir::ValueType& type = result_types_[r];
      std::shared_ptr<DeviceAllocation>& allocation = w.out[r];
      if (alias_of[d][r] >= 0) {
        if (donor[d][alias_of[d][r]]) {
          allocation = w.holds[alias_of[d][r]].allocation;
        } else {
          EMBER_ASSIGN_OR_RETURN(uint64_t size, DenseByteSize(type.element_type(), type.dims()));
          EMBER_ASSIGN_OR_RETURN(allocation, DeviceAllocation::Allocate(device->executor(), size));
        }
      }
      AsyncEventRef ready = AsyncEvent::Create();
      outputs.push_back(std::make_unique<Buffer>(client_, device, device->default_memory(),
                                                 type.element_type(), type.dims(), allocation,
                                                 ready));
      w.out_ready.push_back(std::move(ready));
    }
    launch.outputs.push_back(std::move(outputs));
    // The launch's allocations, in the layout's order: arguments, results, arena.
    std::vector<se::DeviceMemory> memory;
    for (const Buffer::Hold& hold : w.holds) memory.push_back(hold.allocation->memory());
    for (const auto& allocation : w.out) memory.push_back(allocation->memory());
    if (w.temp != nullptr) memory.push_back(w.temp->memory());
    auto collective = std::make_shared<backend::CollectiveParams>();
    collective->scope = scope;
    collective->device_ids = device_ids;
    collective->num_replicas = multi_device ? num_replicas() : 1;
    collective->num_partitions = multi_device ? num_partitions() : 1;
    collective->replica_id = static_cast<int64_t>(positions[d]) / collective->num_partitions;
    collective->partition_id = static_cast<int64_t>(positions[d]) % collective->num_partitions;
    w.params.stream = device->compute_stream();
    w.params.owner = program;
    w.params.buffers = std::make_shared<backend::BufferAllocations>(std::move(memory));
    w.params.status = std::make_shared<backend::LaunchStatus>();
    w.params.collectives = std::move(collective);
    w.params.device_ordinal = device->local_hardware_id();
    w.params.run_id = run_id;
    w.params.ffi_context = ffi_context;
    w.params.host_memory = device->executor()->HostWorkAccount();
    for (const auto& hold : w.holds) inputs_ready.push_back(hold.ready);
    inputs_ready.insert(inputs_ready.end(), donor_uses[d].begin(), donor_uses[d].end());
  }
  unless_queued.queued = true;

  if (!multi_device) {
    std::shared_ptr<DeviceLaunch> w = work[0];
    AsyncEvent::AfterAll(inputs_ready)->AndThen([w, program](absl::Status status) {
      if (!status.ok()) {
        Finish(*w, status);
        return;
      }
      const backend::Executable& compiled = *program->executable;
      se::Stream* stream = w->device->compute_stream();
      // A cheap launch runs on this thread when the stream is idle: the work it enqueues runs
      // at once (Stream::TryRunHostCallbackInline), so it is done when the call returns. So does
      // a launch from a host callback running on this very stream (TryRunNestedHostCallback):
      // queued, it would wait for the callback, which waits for it. The events are set only
      // after the run, outside it: what they set off (another launch's enqueue, say) must not
      // run as part of it.
      absl::Status enqueued;
      absl::AnyInvocable<absl::Status() &&> run = [&]() -> absl::Status {
        enqueued = compiled.ExecuteOnStream(w->params);
        return absl::OkStatus();
      };
      if ((compiled.dispatch_inline() && stream->TryRunHostCallbackInline(run)) ||
          stream->TryRunNestedHostCallback(run)) {
        w->params.status->Fail(enqueued);
        Finish(*w, w->params.status->status());
        return;
      }
      enqueued = Enqueue(compiled, w, [w](const absl::Status& result) { Finish(*w, result); });
      if (!enqueued.ok() && !w->done->IsReady()) Finish(*w, enqueued);
    });
    return launch;
  }

  // Several devices. Once every device's inputs are ready, the launch is put on the devices'
  // streams under the client's launch-order lock, so all streams see multi-device launches in
  // the same order (a launch waiting at a collective never waits for a peer stuck behind a later
  // launch), and no stream ever blocks waiting for inputs that work queued behind it would
  // produce. A device that fails aborts the launch's cliques, so its peers fail instead of
  // waiting at their collectives.
  auto finish = [scope](DeviceLaunch& w, const absl::Status& status) {
    if (!status.ok()) scope->Abort(status);
    Finish(w, status);
  };
  std::shared_ptr<absl::Mutex> launch_order = client_->launch_order_mutex();
  AsyncEvent::AfterAll(inputs_ready)->AndThen([work, finish, launch_order,
                                               program](absl::Status status) {
    if (!status.ok()) {
      for (const auto& w : work) finish(*w, status);
      return;
    }
    std::vector<std::pair<std::shared_ptr<DeviceLaunch>, absl::Status>> not_enqueued;
    // Put on the streams under the lock; their completions are hooked up after it: a launch that
    // is already done finishes at once, on this thread, and what that sets off (another
    // launch waiting for these results) takes the lock in turn.
    std::vector<OnStream> put;
    {
      absl::MutexLock lock(launch_order.get());
      for (const auto& w : work) put.push_back(PutOnStream(*program->executable, w));
    }
    for (size_t d = 0; d < work.size(); ++d) {
      const std::shared_ptr<DeviceLaunch>& w = work[d];
      absl::Status enqueued = WhenDone(w, std::move(put[d]),
                                       [w, finish](const absl::Status& result) { finish(*w, result); });
      if (!enqueued.ok()) not_enqueued.emplace_back(w, enqueued);
    }
    for (auto& [w, error] : not_enqueued) {
      // Peers already enqueued wait for this device at their collectives: the abort fails them.
      if (!w->done->IsReady()) finish(*w, error);
    }
  });
  return launch;
}

}  // namespace ember::runtime
