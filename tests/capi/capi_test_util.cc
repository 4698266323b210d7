// Plugin loading, handle ownership and error conversion for the C-ABI tests (see the header).
// The loader mirrors the framework's pjrt::LoadPjrtPlugin: dlopen(RTLD_LAZY), dlsym("GetPjrtApi"),
// call it once, then PJRT_Plugin_Initialize once.
#include "tests/capi/capi_test_util.h"

#include <dlfcn.h>

#include <condition_variable>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <ostream>

namespace ember::capi_test {
namespace {

// Owns the dlopen handle. RTLD_NODELETE keeps the code mapped after dlclose at process exit, so a
// plugin thread still finishing cannot run unmapped code; symbol binding is the framework's.
class PluginLibrary {
 public:
  explicit PluginLibrary(const std::string& path) {
    handle_ = dlopen(path.c_str(), RTLD_LAZY | RTLD_NODELETE);
    if (handle_ == nullptr) {
      error_ = "Failed to open " + path + ": " + dlerror();
      return;
    }
    using GetPjrtApiFn = const PJRT_Api* (*)();
    auto get_api = reinterpret_cast<GetPjrtApiFn>(dlsym(handle_, "GetPjrtApi"));
    if (get_api == nullptr) {
      error_ = "GetPjrtApi not found in " + path;
      return;
    }
    api_ = get_api();
    if (api_ == nullptr) {
      error_ = "GetPjrtApi returned null";
      return;
    }
    auto args = EMBER_ARGS(PJRT_Plugin_Initialize_Args);
    ErrorInfo init = TakeError(api_->PJRT_Plugin_Initialize(&args));
    if (!init.ok()) {
      error_ = "PJRT_Plugin_Initialize failed: " + init.message;
      api_ = nullptr;
    }
  }
  ~PluginLibrary() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  const PJRT_Api* api() const { return api_; }
  const std::string& error() const { return error_; }

 private:
  void* handle_ = nullptr;
  const PJRT_Api* api_ = nullptr;
  std::string error_;
};

const PluginLibrary& Library() {
  static const PluginLibrary library(PluginPath());
  return library;
}

// Shared between WaitReady and the OnReady callback, which may fire after a timeout.
struct ReadyState {
  std::mutex mu;
  std::condition_variable cv;
  bool fired = false;
  ErrorInfo status;
};

void OnReadyToState(PJRT_Error* error, void* user_arg) {
  std::unique_ptr<std::shared_ptr<ReadyState>> holder(
      static_cast<std::shared_ptr<ReadyState>*>(user_arg));
  ErrorInfo status = TakeError(error);
  std::lock_guard<std::mutex> lock((*holder)->mu);
  (*holder)->status = status;
  (*holder)->fired = true;
  (*holder)->cv.notify_all();
}

}  // namespace

std::string PluginPath() {
  if (const char* env = std::getenv("EMBER_PJRT_PLUGIN_PATH"); env != nullptr && *env != '\0') {
    return env;
  }
  return EMBER_PJRT_PLUGIN_DEFAULT_PATH;
}

const PJRT_Api* Api() { return Library().api(); }
const std::string& LoadError() { return Library().error(); }

// ---------------------------------------------------------------- errors

std::string CodeName(PJRT_Error_Code code) {
  static const char* const kNames[] = {"OK",
                                       "CANCELLED",
                                       "UNKNOWN",
                                       "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED",
                                       "NOT_FOUND",
                                       "ALREADY_EXISTS",
                                       "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION",
                                       "ABORTED",
                                       "OUT_OF_RANGE",
                                       "UNIMPLEMENTED",
                                       "INTERNAL",
                                       "UNAVAILABLE",
                                       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  int index = static_cast<int>(code);
  if (index < 0 || index >= static_cast<int>(std::size(kNames))) {
    return "code " + std::to_string(index);
  }
  return kNames[index];
}

std::ostream& operator<<(std::ostream& os, const ErrorInfo& error) {
  return os << CodeName(error.code) << ": \"" << error.message << "\"";
}

void ErrorDeleter::operator()(PJRT_Error* error) const {
  auto args = EMBER_ARGS(PJRT_Error_Destroy_Args);
  args.error = error;
  Api()->PJRT_Error_Destroy(&args);
}

ErrorInfo TakeError(PJRT_Error* error) {
  ErrorInfo info;
  if (error == nullptr) return info;
  ErrorPtr owned(error);
  const PJRT_Api* api = Api();
  auto code_args = EMBER_ARGS(PJRT_Error_GetCode_Args);
  code_args.error = error;
  PJRT_Error* code_error = api->PJRT_Error_GetCode(&code_args);
  if (code_error != nullptr) {
    ErrorPtr discard(code_error);
    info.code = PJRT_Error_Code_UNKNOWN;
    info.message = "<PJRT_Error_GetCode itself failed>";
    return info;
  }
  info.code = code_args.code;
  auto message_args = EMBER_ARGS(PJRT_Error_Message_Args);
  message_args.error = error;
  api->PJRT_Error_Message(&message_args);
  if (message_args.message != nullptr) {
    info.message.assign(message_args.message, message_args.message_size);
  }
  if (info.code == PJRT_Error_Code_OK) {
    // A returned error object must never say OK (§9); keep it visible as a failure.
    info.code = PJRT_Error_Code_UNKNOWN;
    info.message = "<error object with code OK> " + info.message;
  }
  return info;
}

::testing::AssertionResult IsOk(PJRT_Error* error) {
  ErrorInfo info = TakeError(error);
  if (info.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "unexpected error " << info;
}

::testing::AssertionResult IsError(PJRT_Error* error, PJRT_Error_Code code,
                                   const std::string& needle) {
  ErrorInfo info = TakeError(error);
  if (info.ok()) {
    return ::testing::AssertionFailure() << "expected " << CodeName(code) << ", got success";
  }
  if (info.code != code || info.message.find(needle) == std::string::npos) {
    return ::testing::AssertionFailure()
           << "expected " << CodeName(code) << " containing \"" << needle << "\", got " << info;
  }
  return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------- handles

void ClientDeleter::operator()(PJRT_Client* client) const {
  auto args = EMBER_ARGS(PJRT_Client_Destroy_Args);
  args.client = client;
  EXPECT_TRUE(IsOk(Api()->PJRT_Client_Destroy(&args))) << "PJRT_Client_Destroy";
}

void BufferDeleter::operator()(PJRT_Buffer* buffer) const {
  auto args = EMBER_ARGS(PJRT_Buffer_Destroy_Args);
  args.buffer = buffer;
  EXPECT_TRUE(IsOk(Api()->PJRT_Buffer_Destroy(&args))) << "PJRT_Buffer_Destroy";
}

void EventDeleter::operator()(PJRT_Event* event) const {
  auto args = EMBER_ARGS(PJRT_Event_Destroy_Args);
  args.event = event;
  EXPECT_TRUE(IsOk(Api()->PJRT_Event_Destroy(&args))) << "PJRT_Event_Destroy";
}

// ---------------------------------------------------------------- client, devices, memories

PJRT_NamedValue Int64Option(const char* name, int64_t value) {
  auto option = EMBER_ARGS(PJRT_NamedValue);
  option.name = name;
  option.name_size = std::strlen(name);
  option.type = PJRT_NamedValue_kInt64;
  option.int64_value = value;
  option.value_size = 1;
  return option;
}

PJRT_NamedValue StringOption(const char* name, const char* value) {
  auto option = EMBER_ARGS(PJRT_NamedValue);
  option.name = name;
  option.name_size = std::strlen(name);
  option.type = PJRT_NamedValue_kString;
  option.string_value = value;
  option.value_size = std::strlen(value);
  return option;
}

std::vector<PJRT_NamedValue> HostOptions(int64_t count) {
  return {StringOption("platform", "host"), Int64Option("host_device_count", count)};
}

ClientPtr CreateClient(const std::vector<PJRT_NamedValue>& options, ErrorInfo* error) {
  auto args = EMBER_ARGS(PJRT_Client_Create_Args);
  args.create_options = options.empty() ? nullptr : options.data();
  args.num_options = options.size();
  *error = TakeError(Api()->PJRT_Client_Create(&args));
  if (!error->ok()) return nullptr;
  return ClientPtr(args.client);
}

std::vector<PJRT_Device*> Devices(PJRT_Client* client) {
  auto args = EMBER_ARGS(PJRT_Client_Devices_Args);
  args.client = client;
  EXPECT_TRUE(IsOk(Api()->PJRT_Client_Devices(&args))) << "PJRT_Client_Devices";
  if (args.devices == nullptr) return {};
  return {args.devices, args.devices + args.num_devices};
}

std::vector<PJRT_Device*> AddressableDevices(PJRT_Client* client) {
  auto args = EMBER_ARGS(PJRT_Client_AddressableDevices_Args);
  args.client = client;
  EXPECT_TRUE(IsOk(Api()->PJRT_Client_AddressableDevices(&args)));
  if (args.addressable_devices == nullptr) return {};
  return {args.addressable_devices, args.addressable_devices + args.num_addressable_devices};
}

std::vector<PJRT_Memory*> ClientMemories(PJRT_Client* client) {
  auto args = EMBER_ARGS(PJRT_Client_AddressableMemories_Args);
  args.client = client;
  EXPECT_TRUE(IsOk(Api()->PJRT_Client_AddressableMemories(&args)));
  if (args.addressable_memories == nullptr) return {};
  return {args.addressable_memories, args.addressable_memories + args.num_addressable_memories};
}

PJRT_DeviceDescription* Description(PJRT_Device* device) {
  auto args = EMBER_ARGS(PJRT_Device_GetDescription_Args);
  args.device = device;
  EXPECT_TRUE(IsOk(Api()->PJRT_Device_GetDescription(&args)));
  return args.device_description;
}

int DeviceId(PJRT_Device* device) {
  auto args = EMBER_ARGS(PJRT_DeviceDescription_Id_Args);
  args.device_description = Description(device);
  args.id = -1;
  EXPECT_TRUE(IsOk(Api()->PJRT_DeviceDescription_Id(&args)));
  return args.id;
}

std::vector<PJRT_Memory*> DeviceMemories(PJRT_Device* device) {
  auto args = EMBER_ARGS(PJRT_Device_AddressableMemories_Args);
  args.device = device;
  EXPECT_TRUE(IsOk(Api()->PJRT_Device_AddressableMemories(&args)));
  if (args.memories == nullptr) return {};
  return {args.memories, args.memories + args.num_memories};
}

PJRT_Memory* DefaultMemory(PJRT_Device* device) {
  auto args = EMBER_ARGS(PJRT_Device_DefaultMemory_Args);
  args.device = device;
  EXPECT_TRUE(IsOk(Api()->PJRT_Device_DefaultMemory(&args)));
  return args.memory;
}

std::string MemoryKind(PJRT_Memory* memory) {
  auto args = EMBER_ARGS(PJRT_Memory_Kind_Args);
  args.memory = memory;
  EXPECT_TRUE(IsOk(Api()->PJRT_Memory_Kind(&args)));
  if (args.kind == nullptr) return "";
  return std::string(args.kind, args.kind_size);
}

std::vector<PJRT_Device*> MemoryDevices(PJRT_Memory* memory) {
  auto args = EMBER_ARGS(PJRT_Memory_AddressableByDevices_Args);
  args.memory = memory;
  EXPECT_TRUE(IsOk(Api()->PJRT_Memory_AddressableByDevices(&args)));
  if (args.devices == nullptr) return {};
  return {args.devices, args.devices + args.num_devices};
}

// ---------------------------------------------------------------- buffers and events

Upload FromHost(PJRT_Client* client, const UploadSpec& spec) {
  auto args = EMBER_ARGS(PJRT_Client_BufferFromHostBuffer_Args);
  args.client = client;
  args.data = spec.data;
  static_assert(sizeof(args.type) == sizeof(spec.type));
  std::memcpy(&args.type, &spec.type, sizeof(spec.type));
  args.dims = spec.dims.data();
  args.num_dims = spec.dims.size();
  if (spec.byte_strides != nullptr) {
    args.byte_strides = spec.byte_strides->data();
    args.num_byte_strides = spec.byte_strides->size();
  }
  static_assert(sizeof(args.host_buffer_semantics) == sizeof(spec.semantics));
  std::memcpy(&args.host_buffer_semantics, &spec.semantics, sizeof(spec.semantics));
  args.device = spec.device;
  args.memory = spec.memory;
  Upload upload;
  upload.status = TakeError(Api()->PJRT_Client_BufferFromHostBuffer(&args));
  if (upload.status.ok()) {
    upload.buffer.reset(args.buffer);
    upload.done_with_host_buffer.reset(args.done_with_host_buffer);
  }
  return upload;
}

BufferPtr UploadF32(PJRT_Client* client, PJRT_Device* device, const std::vector<float>& data,
                    const std::vector<int64_t>& dims) {
  UploadSpec spec;
  spec.dims = dims;
  spec.data = data.data();
  spec.device = device;
  Upload upload = FromHost(client, spec);
  EXPECT_TRUE(upload.status.ok()) << "PJRT_Client_BufferFromHostBuffer: " << upload.status;
  EXPECT_NE(upload.buffer, nullptr);
  return std::move(upload.buffer);
}

Readback ToHost(PJRT_Buffer* buffer) {
  Readback result;
  auto query = EMBER_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  query.src = buffer;
  result.status = TakeError(Api()->PJRT_Buffer_ToHostBuffer(&query));
  if (!result.status.ok()) return result;
  EventPtr query_event(query.event);  // A size query need not return one; own it if it does.
  // Over-allocate by one so a zero-byte array still gets a non-null dst, as jaxlib passes.
  result.bytes.assign(query.dst_size + 1, 0xEE);
  auto copy = EMBER_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  copy.src = buffer;
  copy.dst = result.bytes.data();
  copy.dst_size = query.dst_size;
  result.status = TakeError(Api()->PJRT_Buffer_ToHostBuffer(&copy));
  if (!result.status.ok()) return result;
  if (copy.event == nullptr) {
    result.status = {PJRT_Error_Code_UNKNOWN, "PJRT_Buffer_ToHostBuffer returned a null event"};
    return result;
  }
  EventPtr event(copy.event);
  result.status = Await(event.get());
  result.bytes.resize(query.dst_size);
  return result;
}

std::vector<float> ToHostF32(PJRT_Buffer* buffer) {
  Readback readback = ToHost(buffer);
  EXPECT_TRUE(readback.status.ok()) << readback.status;
  std::vector<float> values(readback.bytes.size() / sizeof(float));
  std::memcpy(values.data(), readback.bytes.data(), values.size() * sizeof(float));
  return values;
}

ErrorInfo Await(PJRT_Event* event) {
  auto args = EMBER_ARGS(PJRT_Event_Await_Args);
  args.event = event;
  return TakeError(Api()->PJRT_Event_Await(&args));
}

bool WaitReady(PJRT_Event* event, ErrorInfo* status, std::chrono::milliseconds timeout) {
  auto state = std::make_shared<ReadyState>();
  auto args = EMBER_ARGS(PJRT_Event_OnReady_Args);
  args.event = event;
  args.callback = &OnReadyToState;
  auto holder = std::make_unique<std::shared_ptr<ReadyState>>(state);
  args.user_arg = holder.get();
  ErrorInfo registered = TakeError(Api()->PJRT_Event_OnReady(&args));
  if (!registered.ok()) {
    *status = registered;
    return true;
  }
  holder.release();  // The callback owns it now.
  std::unique_lock<std::mutex> lock(state->mu);
  if (!state->cv.wait_for(lock, timeout, [&] { return state->fired; })) return false;
  *status = state->status;
  return true;
}

PJRT_Buffer_Type ElementType(PJRT_Buffer* buffer) {
  auto args = EMBER_ARGS(PJRT_Buffer_ElementType_Args);
  args.buffer = buffer;
  EXPECT_TRUE(IsOk(Api()->PJRT_Buffer_ElementType(&args)));
  return args.type;
}

std::vector<int64_t> Dimensions(PJRT_Buffer* buffer) {
  auto args = EMBER_ARGS(PJRT_Buffer_Dimensions_Args);
  args.buffer = buffer;
  EXPECT_TRUE(IsOk(Api()->PJRT_Buffer_Dimensions(&args)));
  if (args.num_dims == 0) return {};
  EXPECT_NE(args.dims, nullptr);
  if (args.dims == nullptr) return {};
  return {args.dims, args.dims + args.num_dims};
}

bool IsDeleted(PJRT_Buffer* buffer) {
  auto args = EMBER_ARGS(PJRT_Buffer_IsDeleted_Args);
  args.buffer = buffer;
  EXPECT_TRUE(IsOk(Api()->PJRT_Buffer_IsDeleted(&args)));
  return args.is_deleted;
}

// ---------------------------------------------------------------- fixture

void CapiTest::SetUp() {
  api_ = Api();
  ASSERT_NE(api_, nullptr) << LoadError();
  ErrorInfo error;
  client_ = CreateClient({}, &error);
  ASSERT_TRUE(error.ok()) << "PJRT_Client_Create: " << error;
  ASSERT_NE(client_, nullptr);
  devices_ = Devices(client_.get());
  ASSERT_FALSE(devices_.empty());
}

void CapiTest::TearDown() { client_.reset(); }

}  // namespace ember::capi_test
