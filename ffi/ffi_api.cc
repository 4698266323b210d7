#include "ffi/ffi_api.h"

#include <cstdlib>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "ffi/registry.h"

namespace ember::ffi {
namespace {

std::string_view Span(const XLA_FFI_ByteSpan& s) {
  return s.ptr == nullptr ? std::string_view() : std::string_view(s.ptr, s.len);
}

absl::StatusCode ToStatusCode(XLA_FFI_Error_Code code) {
  const int value = static_cast<int>(code);
  return value >= 1 && value <= 16 ? static_cast<absl::StatusCode>(value)
                                   : absl::StatusCode::kUnknown;
}

// Every entry checks what a handler could get wrong and answers with an error, never a crash.
#define EMBER_FFI_REQUIRE(cond, what)                                                 \
  if (!(cond)) {                                                                      \
    return MakeError(absl::InvalidArgumentError(absl::StrCat(__func__, ": ", what))); \
  }

XLA_FFI_Error* ErrorCreate(XLA_FFI_Error_Create_Args* args) {
  if (args == nullptr) return MakeError(absl::UnknownError("XLA_FFI_Error_Create: null args"));
  absl::StatusCode code = ToStatusCode(args->errc);
  if (code == absl::StatusCode::kOk) code = absl::StatusCode::kUnknown;
  return MakeError(absl::Status(code, args->message != nullptr ? args->message : ""));
}

void ErrorGetMessage(XLA_FFI_Error_GetMessage_Args* args) {
  if (args == nullptr) return;
  args->message = args->error != nullptr ? args->error->message.c_str() : "";
}

void ErrorDestroy(XLA_FFI_Error_Destroy_Args* args) {
  if (args != nullptr) delete args->error;
}

XLA_FFI_Error* HandlerRegister(XLA_FFI_Handler_Register_Args* args) {
  EMBER_FFI_REQUIRE(args != nullptr, "null args");
  return MakeError(Registry::Global().RegisterHandler(Span(args->name), Span(args->platform),
                                                      args->bundle, args->traits));
}

XLA_FFI_Error* StreamGet(XLA_FFI_Stream_Get_Args* args) {
  EMBER_FFI_REQUIRE(args != nullptr, "null args");
  return MakeError(absl::UnimplementedError(
      "XLA_FFI_Stream_Get: Ember's host devices have no platform stream (handlers for them run "
      "on the device's own thread, in program order)"));
}

XLA_FFI_Error* TypeRegister(XLA_FFI_Type_Register_Args* args) {
  EMBER_FFI_REQUIRE(args != nullptr && args->type_id != nullptr, "null args or type_id");
  return MakeError(Registry::Global().RegisterType(Span(args->name), &args->type_id->type_id));
}

XLA_FFI_Error* ExecutionContextGet(XLA_FFI_ExecutionContext_Get_Args* args) {
  EMBER_FFI_REQUIRE(args != nullptr && args->ctx != nullptr && args->type_id != nullptr,
                    "null args, ctx or type_id");
  if (args->ctx->user_data == nullptr) {
    return MakeError(absl::NotFoundError(absl::StrCat(
        "XLA_FFI_ExecutionContext_Get: no user data is attached to this execution (type id ",
        args->type_id->type_id, ")")));
  }
  absl::StatusOr<void*> data = args->ctx->user_data->Lookup(args->type_id->type_id);
  if (!data.ok()) return MakeError(data.status());
  args->data = *data;
  return nullptr;
}

XLA_FFI_Error* StateSet(XLA_FFI_State_Set_Args* args) {
  EMBER_FFI_REQUIRE(args != nullptr, "null args");
  return MakeError(absl::UnimplementedError(
      "XLA_FFI_State_Set: Ember runs only the execute stage (no per-instance state)"));
}

XLA_FFI_Error* StateGet(XLA_FFI_State_Get_Args* args) {
  EMBER_FFI_REQUIRE(args != nullptr, "null args");
  return MakeError(absl::NotFoundError(
      "XLA_FFI_State_Get: Ember runs only the execute stage (no per-instance state)"));
}

XLA_FFI_Error* DeviceMemoryAllocate(XLA_FFI_DeviceMemory_Allocate_Args* args) {
  EMBER_FFI_REQUIRE(args != nullptr, "null args");
  EMBER_FFI_REQUIRE(args->alignment == 0 || (args->alignment & (args->alignment - 1)) == 0,
                    "alignment is not a power of two");
  const size_t alignment = args->alignment < 64 ? 64 : args->alignment;
  const size_t size = (args->size + alignment - 1) / alignment * alignment;
  args->data = size == 0 ? nullptr : std::aligned_alloc(alignment, size);
  if (size != 0 && args->data == nullptr) {
    return MakeError(absl::ResourceExhaustedError(
        absl::StrCat("XLA_FFI_DeviceMemory_Allocate: out of memory for ", args->size, " bytes")));
  }
  return nullptr;
}

XLA_FFI_Error* DeviceMemoryFree(XLA_FFI_DeviceMemory_Free_Args* args) {
  EMBER_FFI_REQUIRE(args != nullptr, "null args");
  std::free(args->data);
  return nullptr;
}

// Tasks run on the calling thread, which the API allows ("tasks can be executed in the caller
// thread"): the launch already runs on its device's own thread.
XLA_FFI_Error* ThreadPoolSchedule(XLA_FFI_ThreadPool_Schedule_Args* args) {
  EMBER_FFI_REQUIRE(args != nullptr && args->task != nullptr, "null args or task");
  args->task(args->data);
  return nullptr;
}

XLA_FFI_Error* ThreadPoolNumThreads(XLA_FFI_ThreadPool_NumThreads_Args* args) {
  EMBER_FFI_REQUIRE(args != nullptr && args->num_threads != nullptr, "null args or num_threads");
  *args->num_threads = 1;
  return nullptr;
}

XLA_FFI_Error* FutureCreate(XLA_FFI_Future_Create_Args* args) {
  EMBER_FFI_REQUIRE(args != nullptr, "null args");
  args->future = new XLA_FFI_Future();
  return nullptr;
}

XLA_FFI_Error* FutureSetAvailable(XLA_FFI_Future_SetAvailable_Args* args) {
  EMBER_FFI_REQUIRE(args != nullptr && args->future != nullptr, "null args or future");
  EMBER_FFI_REQUIRE(!args->future->done.HasBeenNotified(), "the future is already complete");
  args->future->done.Notify();
  return nullptr;
}

XLA_FFI_Error* FutureSetError(XLA_FFI_Future_SetError_Args* args) {
  EMBER_FFI_REQUIRE(args != nullptr && args->future != nullptr, "null args or future");
  EMBER_FFI_REQUIRE(!args->future->done.HasBeenNotified(), "the future is already complete");
  args->future->status = ConsumeError(args->error);
  if (args->future->status.ok()) args->future->status = absl::UnknownError("future failed");
  args->future->done.Notify();
  return nullptr;
}

XLA_FFI_Error* RunIdGet(XLA_FFI_RunId_Get_Args* args) {
  EMBER_FFI_REQUIRE(args != nullptr && args->ctx != nullptr, "null args or ctx");
  args->run_id = args->ctx->run_id;
  return nullptr;
}

XLA_FFI_Error* DeviceOrdinalGet(XLA_FFI_DeviceOrdinal_Get_Args* args) {
  EMBER_FFI_REQUIRE(args != nullptr && args->ctx != nullptr, "null args or ctx");
  args->device_ordinal = args->ctx->device_ordinal;
  return nullptr;
}

#undef EMBER_FFI_REQUIRE

XLA_FFI_Api BuildApi() {
  XLA_FFI_Api api{};
  api.struct_size = sizeof(XLA_FFI_Api);
  api.api_version.struct_size = sizeof(XLA_FFI_Api_Version);
  api.api_version.major_version = EMBER_XLA_FFI_API_MAJOR;
  api.api_version.minor_version = EMBER_XLA_FFI_API_MINOR;
  api.XLA_FFI_Error_Create = &ErrorCreate;
  api.XLA_FFI_Error_GetMessage = &ErrorGetMessage;
  api.XLA_FFI_Error_Destroy = &ErrorDestroy;
  api.XLA_FFI_Handler_Register = &HandlerRegister;
  api.XLA_FFI_Stream_Get = &StreamGet;
  api.XLA_FFI_Type_Register = &TypeRegister;
  api.XLA_FFI_ExecutionContext_Get = &ExecutionContextGet;
  api.XLA_FFI_State_Set = &StateSet;
  api.XLA_FFI_State_Get = &StateGet;
  api.XLA_FFI_DeviceMemory_Allocate = &DeviceMemoryAllocate;
  api.XLA_FFI_DeviceMemory_Free = &DeviceMemoryFree;
  api.XLA_FFI_ThreadPool_Schedule = &ThreadPoolSchedule;
  api.XLA_FFI_ThreadPool_NumThreads = &ThreadPoolNumThreads;
  api.XLA_FFI_Future_Create = &FutureCreate;
  api.XLA_FFI_Future_SetAvailable = &FutureSetAvailable;
  api.XLA_FFI_Future_SetError = &FutureSetError;
  api.XLA_FFI_RunId_Get = &RunIdGet;
  api.XLA_FFI_DeviceOrdinal_Get = &DeviceOrdinalGet;
  return api;
}

}  // namespace

const XLA_FFI_Api* GetXlaFfiApi() {
  static const XLA_FFI_Api api = BuildApi();
  return &api;
}

XLA_FFI_Error* MakeError(const absl::Status& status) {
  if (status.ok()) return nullptr;
  return new XLA_FFI_Error{status, std::string(status.message())};
}

absl::Status ConsumeError(XLA_FFI_Error* error) {
  if (error == nullptr) return absl::OkStatus();
  absl::Status status = error->status;
  delete error;
  return status;
}

}  // namespace ember::ffi
