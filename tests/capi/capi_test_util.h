// Helpers for the C-ABI conformance tests: load the plugin with dlopen, own its handles with RAII,
// and turn PJRT_Error* into (code, message). Everything goes through the PJRT_Api table only; the
// tests never see Ember's C++ types.
#ifndef EMBER_TESTS_CAPI_CAPI_TEST_UTIL_H_
#define EMBER_TESTS_CAPI_CAPI_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "pjrt_plugin/include/pjrt_c_api.h"

namespace ember::capi_test {

// The PJRT_Api of the plugin (after one PJRT_Plugin_Initialize), or null with LoadError() set.
const PJRT_Api* Api();
const std::string& LoadError();
// EMBER_PJRT_PLUGIN_PATH if set, else the path of the pjrt_ember target of this build.
std::string PluginPath();

// A zeroed args struct whose struct_size is `struct_size` (the caller's view of the layout).
template <typename T>
T MakeArgs(size_t struct_size) {
  T args;
  std::memset(static_cast<void*>(&args), 0, sizeof(args));
  args.struct_size = struct_size;
  return args;
}
#define EMBER_ARGS(T) ::ember::capi_test::MakeArgs<T>(T##_STRUCT_SIZE)

// ---------------------------------------------------------------- errors
struct ErrorInfo {
  PJRT_Error_Code code = PJRT_Error_Code_OK;
  std::string message;
  bool ok() const { return code == PJRT_Error_Code_OK; }
};
std::string CodeName(PJRT_Error_Code code);
std::ostream& operator<<(std::ostream& os, const ErrorInfo& error);

struct ErrorDeleter {
  void operator()(PJRT_Error* error) const;
};
using ErrorPtr = std::unique_ptr<PJRT_Error, ErrorDeleter>;

// Reads code and message through PJRT_Error_GetCode / PJRT_Error_Message, then destroys the
// error. A null error is OK (what XLA's PjrtErrorToStatus does).
ErrorInfo TakeError(PJRT_Error* error);
// gtest predicate that takes ownership: ASSERT_TRUE(IsOk(api->PJRT_X(&args))).
::testing::AssertionResult IsOk(PJRT_Error* error);
// Expects `error` to carry `code` and a message containing `needle`.
::testing::AssertionResult IsError(PJRT_Error* error, PJRT_Error_Code code,
                                   const std::string& needle);

// ---------------------------------------------------------------- handles
struct ClientDeleter {
  void operator()(PJRT_Client* client) const;
};
struct BufferDeleter {
  void operator()(PJRT_Buffer* buffer) const;
};
struct EventDeleter {
  void operator()(PJRT_Event* event) const;
};
using ClientPtr = std::unique_ptr<PJRT_Client, ClientDeleter>;
using BufferPtr = std::unique_ptr<PJRT_Buffer, BufferDeleter>;
using EventPtr = std::unique_ptr<PJRT_Event, EventDeleter>;

// ---------------------------------------------------------------- client, devices, memories
PJRT_NamedValue Int64Option(const char* name, int64_t value);
PJRT_NamedValue StringOption(const char* name, const char* value);
ClientPtr CreateClient(const std::vector<PJRT_NamedValue>& options, ErrorInfo* error);
// Ember's create options for `count` host devices: platform "host" pins the host platform (on a
// GPU machine "auto" would pick CUDA), host_device_count sets how many.
std::vector<PJRT_NamedValue> HostOptions(int64_t count);

std::vector<PJRT_Device*> Devices(PJRT_Client* client);
std::vector<PJRT_Device*> AddressableDevices(PJRT_Client* client);
std::vector<PJRT_Memory*> ClientMemories(PJRT_Client* client);
PJRT_DeviceDescription* Description(PJRT_Device* device);
int DeviceId(PJRT_Device* device);
std::vector<PJRT_Memory*> DeviceMemories(PJRT_Device* device);
PJRT_Memory* DefaultMemory(PJRT_Device* device);
std::string MemoryKind(PJRT_Memory* memory);
std::vector<PJRT_Device*> MemoryDevices(PJRT_Memory* memory);

// ---------------------------------------------------------------- buffers and events
struct Upload {
  ErrorInfo status;
  BufferPtr buffer;
  EventPtr done_with_host_buffer;
};
struct UploadSpec {
  // An int, not the enum: bad-input tests pass values outside PJRT_Buffer_Type, as a C caller
  // can, and holding those in the C++ enum type would be undefined behaviour in the test itself.
  int32_t type = PJRT_Buffer_Type_F32;
  std::vector<int64_t> dims;
  const void* data = nullptr;
  int32_t semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;  // int: as `type`
  const std::vector<int64_t>* byte_strides = nullptr;
  PJRT_Device* device = nullptr;
  PJRT_Memory* memory = nullptr;
};
Upload FromHost(PJRT_Client* client, const UploadSpec& spec);
// f32 data with the given dims on `device`, kImmutableOnlyDuringCall; fails the test on error.
BufferPtr UploadF32(PJRT_Client* client, PJRT_Device* device, const std::vector<float>& data,
                    const std::vector<int64_t>& dims);

struct Readback {
  ErrorInfo status;
  std::vector<uint8_t> bytes;
};
// ToHostBuffer: size query with dst = null, then the copy, then waits on the returned event.
Readback ToHost(PJRT_Buffer* buffer);
std::vector<float> ToHostF32(PJRT_Buffer* buffer);

// PJRT_Event_Await, returning the event's status.
ErrorInfo Await(PJRT_Event* event);
// Waits through PJRT_Event_OnReady with a deadline, so a never-firing event fails instead of
// hanging the suite. Returns false on timeout (the callback state stays alive for a late fire).
bool WaitReady(PJRT_Event* event, ErrorInfo* status,
               std::chrono::milliseconds timeout = std::chrono::seconds(20));

PJRT_Buffer_Type ElementType(PJRT_Buffer* buffer);
std::vector<int64_t> Dimensions(PJRT_Buffer* buffer);
bool IsDeleted(PJRT_Buffer* buffer);

// ---------------------------------------------------------------- fixture
// A fresh client (no create options) per test; `api_` and `client_` are valid in the body.
class CapiTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  PJRT_Device* FirstDevice() const { return devices_.at(0); }

  const PJRT_Api* api_ = nullptr;
  ClientPtr client_;
  std::vector<PJRT_Device*> devices_;
};
// The suite name of XLA's pjrt_c_api_test.cc, for the cases ported from it.
using PjrtCApiTest = CapiTest;

}  // namespace ember::capi_test

#endif  // EMBER_TESTS_CAPI_CAPI_TEST_UTIL_H_
