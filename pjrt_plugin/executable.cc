// PJRT_Client_Compile, PJRT_Executable_* and PJRT_LoadedExecutable_*.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "compiler/driver/compile_program.h"
#include "compiler/frontend/options/compile_options.h"
#include "pjrt_plugin/bindings.h"
#include "pjrt_plugin/client_handle.h"
#include "pjrt_plugin/element_types.h"
#include "pjrt_plugin/entry.h"
#include "pjrt_plugin/event_handle.h"
#include "pjrt_plugin/handles.h"
#include "pjrt_plugin/options.h"
#include "pjrt_plugin/serialized_executable.h"
#include "runtime/executable.h"

// Owned by the framework (PJRT_Executable_Destroy); one per PJRT_LoadedExecutable_GetExecutable
// call, sharing the compiled program. Holds the C-layout answers to the output queries.
struct PJRT_Executable {
  std::shared_ptr<ember::runtime::Executable> executable;
  std::vector<PJRT_Buffer_Type> output_types;
  std::vector<int64_t> output_dims;      // all outputs' dims, concatenated
  std::vector<size_t> output_dim_sizes;  // rank of each output
  std::vector<const char*> memory_kinds;
  std::vector<size_t> memory_kind_sizes;
  ember::pjrt::NamedValueList cost_properties;
  // SPMD programs: the signature with its shardings, as PJRT_Executable_OptimizedProgram's MLIR.
  std::string optimized_program;
  // What it was compiled from (PJRT_Executable_Serialize, GetCompileOptions).
  std::shared_ptr<const ember::pjrt::ProgramSource> source;
};

// Owned by the framework (PJRT_LoadedExecutable_Destroy).
struct PJRT_LoadedExecutable {
  // Valid while client_alive has not expired (see PJRT_Buffer::client_alive).
  PJRT_Client* client = nullptr;
  std::weak_ptr<const bool> client_alive;
  std::shared_ptr<ember::runtime::Executable> executable;
  std::vector<PJRT_Device*> devices;
  std::vector<PJRT_LogicalDeviceIds> logical_ids;
  std::shared_ptr<const ember::pjrt::ProgramSource> source;
};

namespace ember::pjrt {
namespace {

constexpr char kDeviceMemoryKind[] = "device";

std::unique_ptr<PJRT_Executable> NewExecutableHandle(
    std::shared_ptr<runtime::Executable> executable) {
  auto handle = std::make_unique<PJRT_Executable>();
  handle->executable = std::move(executable);
  // What one device returns: for SPMD programs, the shards (as XLA reports the partitioned
  // program's result shapes).
  for (const ir::ValueType& type : handle->executable->device_result_types()) {
    handle->output_types.push_back(ToPjrtBufferType(type.element_type()));
    handle->output_dims.insert(handle->output_dims.end(), type.dims().begin(), type.dims().end());
    handle->output_dim_sizes.push_back(type.dims().size());
    handle->memory_kinds.push_back(kDeviceMemoryKind);
    handle->memory_kind_sizes.push_back(sizeof(kDeviceMemoryKind) - 1);
  }
  const runtime::Executable& bound = *handle->executable;
  // XLA's property names, which frameworks read (JAX's compiled.cost_analysis()).
  const passes::ProgramCost& cost = bound.program().executable->reports().cost;
  handle->cost_properties.AddFloat("flops", static_cast<float>(cost.flops));
  handle->cost_properties.AddFloat("transcendentals", static_cast<float>(cost.transcendentals));
  handle->cost_properties.AddFloat("bytes accessed", static_cast<float>(cost.bytes_accessed));
  if (bound.program().spmd && bound.devices().size() > 1) {
    // The per-device program where the text form can say it; else its signature, which is
    // what the framework reads the shardings from.
    handle->optimized_program =
        !bound.program().device_program_text.empty()
            ? bound.program().device_program_text
            : compiler::SignatureModuleText(bound.program().signature, bound.program().name,
                                            bound.num_replicas(), bound.num_partitions());
  }
  return handle;
}

// Compiles `format`/`code` with the serialized CompileOptionsProto `options` and binds it to
// the client's devices (PJRT_Client_Compile and PJRT_Executable_DeserializeAndLoad).
absl::StatusOr<std::unique_ptr<PJRT_LoadedExecutable>> CompileAndLoad(PJRT_Client* client,
                                                                      std::string format,
                                                                      std::string code,
                                                                      std::string options) {
  if (format != "mlir" && format != "hlo" && format != "hlo_with_config") {
    return Verbatim(
        absl::InvalidArgumentError(absl::StrCat("Unknown program format '", format, "'.")));
  }
  EMBER_ASSIGN_OR_RETURN(frontend::CompileOptions compile_options,
                         frontend::ReadCompileOptions(absl::Span<const uint8_t>(
                             reinterpret_cast<const uint8_t*>(options.data()), options.size())));
  EMBER_ASSIGN_OR_RETURN(CompilerOptions compiler_options, ReadCompilerOptions(compile_options));
  EMBER_ASSIGN_OR_RETURN(const backend::Backend* backend,
                         compiler::SelectBackend(*client->backends,
                                                 client->client->se_platform_name(),
                                                 compiler_options));
  EMBER_ASSIGN_OR_RETURN(
      auto compiled,
      compiler::CompileProgram(
          format,
          absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(code.data()), code.size()),
          compile_options, *backend, compiler_options));
  const std::string fingerprint = compiled->fingerprint;
  EMBER_ASSIGN_OR_RETURN(auto executable,
                         runtime::Executable::Create(client->client, std::move(compiled)));
  auto handle = std::make_unique<PJRT_LoadedExecutable>();
  handle->client = client;
  handle->client_alive = client->alive;
  handle->executable = std::move(executable);
  // This process's devices of the assignment, with their (replica, partition).
  const int64_t partitions = handle->executable->num_partitions();
  int64_t index = 0;
  for (runtime::Device* device : handle->executable->devices()) {
    if (device->addressable()) {
      handle->devices.push_back(client->device_map.at(device));
      handle->logical_ids.push_back(PJRT_LogicalDeviceIds{static_cast<int>(index / partitions),
                                                          static_cast<int>(index % partitions)});
    }
    ++index;
  }
  handle->source = std::make_shared<const ProgramSource>(ProgramSource{
      std::move(format), std::move(code), std::move(options), fingerprint});
  return handle;
}

EMBER_PJRT_ENTRY(PJRT_Client_Compile) {
  EMBER_PJRT_REQUIRE(args->client);
  EMBER_PJRT_REQUIRE(args->program);
  EMBER_RETURN_IF_ERROR(CheckNestedStructSize("program", args->program->struct_size,
                                              PJRT_Program_STRUCT_SIZE));
  const PJRT_Program& program = *args->program;
  if (program.format == nullptr) return absl::InvalidArgumentError("`program->format` is null");
  if (program.code == nullptr && program.code_size != 0) {
    return absl::InvalidArgumentError("`program->code` is null");
  }
  if (args->compile_options == nullptr && args->compile_options_size != 0) {
    return absl::InvalidArgumentError("`compile_options` is null");
  }
  EMBER_ASSIGN_OR_RETURN(
      std::unique_ptr<PJRT_LoadedExecutable> handle,
      CompileAndLoad(args->client, std::string(program.format, program.format_size),
                     std::string(program.code, program.code_size),
                     std::string(args->compile_options, args->compile_options_size)));
  args->executable = handle.release();
  return absl::OkStatus();
}

void DeleteSerializedBytes(PJRT_SerializedExecutable* bytes) {
  delete reinterpret_cast<std::string*>(bytes);
}

void DeleteSerializedOptions(PJRT_SerializedCompileOptions* bytes) {
  delete reinterpret_cast<std::string*>(bytes);
}

EMBER_PJRT_ENTRY(PJRT_Executable_Serialize) {
  EMBER_PJRT_REQUIRE(args->executable);
  if (args->executable->source == nullptr) {
    return absl::FailedPreconditionError("the executable has no program to serialize");
  }
  auto* bytes = new std::string(SerializeExecutable(*args->executable->source));
  args->serialized_bytes = bytes->data();
  args->serialized_bytes_size = bytes->size();
  args->serialized_executable = reinterpret_cast<PJRT_SerializedExecutable*>(bytes);
  args->serialized_executable_deleter = &DeleteSerializedBytes;
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Executable_GetCompileOptions) {
  EMBER_PJRT_REQUIRE(args->executable);
  if (args->executable->source == nullptr) {
    return absl::FailedPreconditionError("the executable has no compile options");
  }
  auto* bytes = new std::string(args->executable->source->compile_options);
  args->serialized_bytes = bytes->data();
  args->serialized_bytes_size = bytes->size();
  args->serialized_compile_options = reinterpret_cast<PJRT_SerializedCompileOptions*>(bytes);
  args->serialized_compile_options_deleter = &DeleteSerializedOptions;
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Executable_DeserializeAndLoad) {
  EMBER_PJRT_REQUIRE(args->client);
  if (args->serialized_executable == nullptr && args->serialized_executable_size != 0) {
    return absl::InvalidArgumentError("`serialized_executable` is null");
  }
  EMBER_ASSIGN_OR_RETURN(
      ProgramSource source,
      DeserializeExecutable(std::string_view(args->serialized_executable,
                                             args->serialized_executable_size)));
  // Options given at load time replace the stored ones (the field exists from struct_size 72).
  if (EMBER_PJRT_HAS_FIELD(args, overridden_serialized_compile_options_size) &&
      args->overridden_serialized_compile_options != nullptr) {
    source.compile_options = std::string(args->overridden_serialized_compile_options,
                                         args->overridden_serialized_compile_options_size);
  }
  EMBER_ASSIGN_OR_RETURN(std::unique_ptr<PJRT_LoadedExecutable> handle,
                         CompileAndLoad(args->client, std::move(source.format),
                                        std::move(source.code), std::move(source.compile_options)));
  args->loaded_executable = handle.release();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Executable_Destroy) {
  std::unique_ptr<PJRT_Executable> owned(args->executable);
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Executable_Name) {
  EMBER_PJRT_REQUIRE(args->executable);
  const std::string& name = args->executable->executable->program().name;
  args->executable_name = name.data();
  args->executable_name_size = name.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Executable_NumReplicas) {
  EMBER_PJRT_REQUIRE(args->executable);
  args->num_replicas = args->executable->executable->num_replicas();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Executable_NumPartitions) {
  EMBER_PJRT_REQUIRE(args->executable);
  args->num_partitions = args->executable->executable->num_partitions();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Executable_NumOutputs) {
  EMBER_PJRT_REQUIRE(args->executable);
  args->num_outputs = args->executable->output_types.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Executable_SizeOfGeneratedCodeInBytes) {
  EMBER_PJRT_REQUIRE(args->executable);
  args->size_in_bytes =
      args->executable->executable->program().executable->reports().generated_code_bytes;
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Executable_OutputElementTypes) {
  EMBER_PJRT_REQUIRE(args->executable);
  args->output_types = args->executable->output_types.data();
  args->num_output_types = args->executable->output_types.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Executable_OutputDimensions) {
  EMBER_PJRT_REQUIRE(args->executable);
  args->num_outputs = args->executable->output_dim_sizes.size();
  args->dims = args->executable->output_dims.data();
  args->dim_sizes = args->executable->output_dim_sizes.data();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Executable_OutputMemoryKinds) {
  EMBER_PJRT_REQUIRE(args->executable);
  args->num_outputs = args->executable->memory_kinds.size();
  args->memory_kinds = args->executable->memory_kinds.data();
  args->memory_kind_sizes = args->executable->memory_kind_sizes.data();
  return absl::OkStatus();
}

// For SPMD programs: a module with the entry's signature and the shardings Ember gives its
// parameters and results (GSPMD `mhlo.sharding` strings), which is what the framework reads
// the output shardings from. Other programs have nothing to report beyond the input program.
EMBER_PJRT_ENTRY(PJRT_Executable_OptimizedProgram) {
  EMBER_PJRT_REQUIRE(args->executable);
  EMBER_PJRT_REQUIRE(args->program);
  EMBER_RETURN_IF_ERROR(CheckNestedStructSize("program", args->program->struct_size,
                                              PJRT_Program_STRUCT_SIZE));
  const std::string& text = args->executable->optimized_program;
  if (text.empty()) {
    return absl::UnimplementedError(
        "PJRT_Executable_OptimizedProgram is not implemented by Ember yet for single-device "
        "programs");
  }
  static constexpr char kFormat[] = "mlir";
  PJRT_Program* program = args->program;
  program->format = kFormat;
  program->format_size = sizeof(kFormat) - 1;
  if (program->code == nullptr) {
    program->code_size = text.size();
    return absl::OkStatus();
  }
  if (program->code_size < text.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the program buffer holds ", program->code_size,
                                                   " bytes; the optimized program needs ",
                                                   text.size()));
  }
  std::memcpy(program->code, text.data(), text.size());
  program->code_size = text.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Executable_GetCostAnalysis) {
  EMBER_PJRT_REQUIRE(args->executable);
  args->properties = args->executable->cost_properties.data();
  args->num_properties = args->executable->cost_properties.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Executable_Fingerprint) {
  EMBER_PJRT_REQUIRE(args->executable);
  const std::string& fingerprint = args->executable->executable->program().fingerprint;
  args->executable_fingerprint = fingerprint.data();
  args->executable_fingerprint_size = fingerprint.size();
  return absl::OkStatus();
}

int64_t TotalBytes(const std::vector<ir::ValueType>& types) {
  int64_t total = 0;
  for (const ir::ValueType& type : types) {
    if (type.is_tensor()) total += static_cast<int64_t>(type.shape().ByteSize());
  }
  return total;
}

EMBER_PJRT_ENTRY(PJRT_Executable_GetCompiledMemoryStats) {
  EMBER_PJRT_REQUIRE(args->executable);
  const backend::Executable& compiled = *args->executable->executable->program().executable;
  const backend::BufferLayout& layout = compiled.layout();
  args->generated_code_size_in_bytes = compiled.reports().generated_code_bytes;
  args->argument_size_in_bytes = TotalBytes(layout.parameter_types);
  args->output_size_in_bytes = TotalBytes(layout.result_types);
  // Results written into donated parameters, and the arena of temporaries.
  int64_t alias = 0;
  for (size_t r = 0; r < layout.result_aliases.size() && r < layout.result_types.size(); ++r) {
    if (layout.result_aliases[r] >= 0 && layout.result_types[r].is_tensor()) {
      alias += static_cast<int64_t>(layout.result_types[r].shape().ByteSize());
    }
  }
  const int64_t temp = layout.temp_bytes;
  args->alias_size_in_bytes = alias;
  args->temp_size_in_bytes = temp;
  args->host_generated_code_size_in_bytes = 0;
  args->host_argument_size_in_bytes = 0;
  args->host_output_size_in_bytes = 0;
  args->host_alias_size_in_bytes = 0;
  args->host_temp_size_in_bytes = 0;
  const int64_t peak = args->argument_size_in_bytes + args->output_size_in_bytes - alias + temp;
  if (EMBER_PJRT_HAS_FIELD(args, peak_memory_in_bytes)) args->peak_memory_in_bytes = peak;
  if (EMBER_PJRT_HAS_FIELD(args, total_size_in_bytes)) args->total_size_in_bytes = peak;
  if (EMBER_PJRT_HAS_FIELD(args, total_allocation_bytes)) {
    args->total_allocation_bytes = args->output_size_in_bytes - alias + temp;
  }
  if (EMBER_PJRT_HAS_FIELD(args, indefinite_allocations)) args->indefinite_allocations = 0;
  if (EMBER_PJRT_HAS_FIELD(args, peak_unpadded_heap_bytes)) args->peak_unpadded_heap_bytes = 0;
  return absl::OkStatus();
}

void DeleteSerializedAssignment(PJRT_DeviceAssignmentSerialized* serialized) {
  delete reinterpret_cast<std::string*>(serialized);
}

EMBER_PJRT_ENTRY(PJRT_LoadedExecutable_GetDeviceAssignment) {
  EMBER_PJRT_REQUIRE(args->executable);
  const runtime::Executable& executable = *args->executable->executable;
  std::vector<std::vector<int64_t>> assignment(
      executable.num_replicas(), std::vector<int64_t>(executable.num_partitions()));
  int64_t index = 0;
  for (runtime::Device* device : executable.devices()) {
    assignment[index / executable.num_partitions()][index % executable.num_partitions()] =
        device->id();
    ++index;
  }
  auto* bytes = new std::string(frontend::SerializeDeviceAssignment(assignment));
  args->serialized_bytes = bytes->data();
  args->serialized_bytes_size = bytes->size();
  args->serialized_device_assignment = reinterpret_cast<PJRT_DeviceAssignmentSerialized*>(bytes);
  args->serialized_device_assignment_deleter = &DeleteSerializedAssignment;
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_LoadedExecutable_Destroy) {
  std::unique_ptr<PJRT_LoadedExecutable> owned(args->executable);
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_LoadedExecutable_GetExecutable) {
  EMBER_PJRT_REQUIRE(args->loaded_executable);
  std::unique_ptr<PJRT_Executable> handle = NewExecutableHandle(args->loaded_executable->executable);
  handle->source = args->loaded_executable->source;
  args->executable = handle.release();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_LoadedExecutable_AddressableDevices) {
  EMBER_PJRT_REQUIRE(args->executable);
  if (args->executable->client_alive.expired()) {
    return absl::FailedPreconditionError(
        "the executable was loaded by a client that was destroyed: its devices went with it");
  }
  args->addressable_devices = args->executable->devices.data();
  args->num_addressable_devices = args->executable->devices.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_LoadedExecutable_AddressableDeviceLogicalIds) {
  EMBER_PJRT_REQUIRE(args->executable);
  args->addressable_device_logical_ids = args->executable->logical_ids.data();
  args->num_addressable_device_logical_ids = args->executable->logical_ids.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_LoadedExecutable_Delete) {
  EMBER_PJRT_REQUIRE(args->executable);
  args->executable->executable->Delete();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_LoadedExecutable_IsDeleted) {
  EMBER_PJRT_REQUIRE(args->executable);
  args->is_deleted = args->executable->executable->IsDeleted();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_LoadedExecutable_Fingerprint) {
  EMBER_PJRT_REQUIRE(args->executable);
  const std::string& fingerprint = args->executable->executable->program().fingerprint;
  args->executable_fingerprint = fingerprint.data();
  args->executable_fingerprint_size = fingerprint.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_LoadedExecutable_Execute) {
  EMBER_PJRT_REQUIRE(args->executable);
  EMBER_PJRT_REQUIRE(args->options);
  EMBER_RETURN_IF_ERROR(CheckNestedStructSize(
      "options", args->options->struct_size,
      offsetof(PJRT_ExecuteOptions, num_non_donatable_input_indices) + sizeof(size_t)));
  PJRT_LoadedExecutable& loaded = *args->executable;
  if (loaded.client_alive.expired()) {
    // Its results would need the destroyed client's device handles.
    return absl::FailedPreconditionError(
        "the executable was loaded by a client that was destroyed: compile it on a live client");
  }
  // Frameworks pass no output lists (or null ones) for a program without results.
  const bool has_outputs = !loaded.executable->device_result_types().empty();
  if (args->num_devices > 0) {
    if (args->num_args > 0) EMBER_PJRT_REQUIRE(args->argument_lists);
    if (has_outputs) EMBER_PJRT_REQUIRE(args->output_lists);
  }
  runtime::Device* only_device = nullptr;
  if (args->execute_device != nullptr) {
    if (args->num_devices != 1) {
      return absl::InvalidArgumentError(
          "num_devices and corresponding output list sizes must be 1 when calling "
          "PJRT_LoadedExecutable_Execute with non-null execute_device");
    }
    only_device = args->execute_device->device;
  }
  std::vector<std::vector<runtime::Buffer*>> arguments(args->num_devices);
  for (size_t d = 0; d < args->num_devices; ++d) {
    if (args->num_args > 0 && args->argument_lists[d] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("`argument_lists[", d, "]` is null"));
    }
    if (has_outputs && args->output_lists[d] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("`output_lists[", d, "]` is null"));
    }
    for (size_t i = 0; i < args->num_args; ++i) {
      PJRT_Buffer* buffer = args->argument_lists[d][i];
      if (buffer == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("argument ", i, " for device ", d, " is null"));
      }
      if (buffer->client_destroyed()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "argument ", i, " for device ", d, " belongs to a client that was destroyed: copy "
            "its data to this client first (PJRT_Buffer_ToHostBuffer, then "
            "PJRT_Client_BufferFromHostBuffer)"));
      }
      arguments[d].push_back(buffer->buffer.get());
    }
  }
  absl::Span<const int64_t> non_donatable;
  if (args->options->non_donatable_input_indices != nullptr) {
    non_donatable = absl::Span<const int64_t>(args->options->non_donatable_input_indices,
                                              args->options->num_non_donatable_input_indices);
  }
  // FFI user data the framework attached to this execution (the field exists from 0.64).
  std::shared_ptr<const ffi::ExecutionContext> ffi_context;
  if (EMBER_PJRT_HAS_FIELD(args->options, context) && args->options->context != nullptr) {
    ffi_context = args->options->context->context;
  }
  EMBER_ASSIGN_OR_RETURN(
      runtime::Executable::Launch launch,
      loaded.executable->Execute(arguments, non_donatable, only_device, std::move(ffi_context)));
  for (size_t d = 0; d < launch.outputs.size(); ++d) {
    for (size_t r = 0; r < launch.outputs[d].size(); ++r) {
      args->output_lists[d][r] = NewBufferHandle(loaded.client, std::move(launch.outputs[d][r]));
    }
    if (args->device_complete_events != nullptr) {
      args->device_complete_events[d] = NewEventHandle(launch.done[d]);
    }
  }
  return absl::OkStatus();
}

}  // namespace

void BindExecutableEntries(PJRT_Api& api) {
  api.PJRT_Client_Compile = &PJRT_Client_Compile_Entry;
  api.PJRT_Executable_Destroy = &PJRT_Executable_Destroy_Entry;
  api.PJRT_Executable_Name = &PJRT_Executable_Name_Entry;
  api.PJRT_Executable_NumReplicas = &PJRT_Executable_NumReplicas_Entry;
  api.PJRT_Executable_NumPartitions = &PJRT_Executable_NumPartitions_Entry;
  api.PJRT_Executable_NumOutputs = &PJRT_Executable_NumOutputs_Entry;
  api.PJRT_Executable_SizeOfGeneratedCodeInBytes = &PJRT_Executable_SizeOfGeneratedCodeInBytes_Entry;
  api.PJRT_Executable_OutputElementTypes = &PJRT_Executable_OutputElementTypes_Entry;
  api.PJRT_Executable_OutputDimensions = &PJRT_Executable_OutputDimensions_Entry;
  api.PJRT_Executable_OutputMemoryKinds = &PJRT_Executable_OutputMemoryKinds_Entry;
  api.PJRT_Executable_Fingerprint = &PJRT_Executable_Fingerprint_Entry;
  api.PJRT_Executable_Serialize = &PJRT_Executable_Serialize_Entry;
  api.PJRT_Executable_GetCompileOptions = &PJRT_Executable_GetCompileOptions_Entry;
  api.PJRT_Executable_DeserializeAndLoad = &PJRT_Executable_DeserializeAndLoad_Entry;
  api.PJRT_Executable_OptimizedProgram = &PJRT_Executable_OptimizedProgram_Entry;
  api.PJRT_Executable_GetCompiledMemoryStats = &PJRT_Executable_GetCompiledMemoryStats_Entry;
  api.PJRT_Executable_GetCostAnalysis = &PJRT_Executable_GetCostAnalysis_Entry;
  api.PJRT_LoadedExecutable_Destroy = &PJRT_LoadedExecutable_Destroy_Entry;
  api.PJRT_LoadedExecutable_GetExecutable = &PJRT_LoadedExecutable_GetExecutable_Entry;
  api.PJRT_LoadedExecutable_AddressableDevices = &PJRT_LoadedExecutable_AddressableDevices_Entry;
  api.PJRT_LoadedExecutable_AddressableDeviceLogicalIds =
      &PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Entry;
  api.PJRT_LoadedExecutable_GetDeviceAssignment = &PJRT_LoadedExecutable_GetDeviceAssignment_Entry;
  api.PJRT_LoadedExecutable_Delete = &PJRT_LoadedExecutable_Delete_Entry;
  api.PJRT_LoadedExecutable_IsDeleted = &PJRT_LoadedExecutable_IsDeleted_Entry;
  api.PJRT_LoadedExecutable_Fingerprint = &PJRT_LoadedExecutable_Fingerprint_Entry;
  api.PJRT_LoadedExecutable_Execute = &PJRT_LoadedExecutable_Execute_Entry;
}

}  // namespace ember::pjrt
