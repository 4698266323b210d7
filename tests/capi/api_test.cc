// The PJRT_Api table itself: size, version, no null slot, stable entry point, plugin attributes,
// the error object's function table, and the UNIMPLEMENTED stubs naming their function
// (reference §3-§4, §8, §9, §11, §14, §19).
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "pjrt_plugin/include/pjrt_c_api_ffi_extension.h"
#include "pjrt_plugin/include/pjrt_c_api_profiler_extension.h"
#include "tests/capi/capi_test_util.h"

namespace ember::capi_test {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

constexpr size_t kNumEntries = 0
#define X(name) +1
#include "tests/capi/pjrt_api_entries.inc"
#undef X
    ;
static_assert(kNumEntries == 138, "the 0.114 table has 138 function slots");

class CapiAbiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = Api();
    ASSERT_NE(api_, nullptr) << LoadError();
  }
  const PJRT_Api* api_ = nullptr;
};

TEST_F(CapiAbiTest, StructSizeIsTheFullTable) {
  EXPECT_EQ(api_->struct_size, PJRT_Api_STRUCT_SIZE);
  EXPECT_EQ(api_->struct_size, 1144u);
  EXPECT_EQ(api_->pjrt_api_version.struct_size, PJRT_Api_Version_STRUCT_SIZE);
}

// XLA: PjrtCApiTest.ApiVersion (exact match with the header the test was built from).
TEST_F(CapiAbiTest, ApiVersion) {
  EXPECT_EQ(api_->pjrt_api_version.major_version, PJRT_API_MAJOR);
  EXPECT_EQ(api_->pjrt_api_version.minor_version, PJRT_API_MINOR);
  EXPECT_EQ(api_->pjrt_api_version.major_version, 0);
  EXPECT_EQ(api_->pjrt_api_version.minor_version, 114);
}

// Walks the raw table from the first to the last function field, so a slot missing from the
// entries list would still be counted.
TEST_F(CapiAbiTest, EveryFunctionSlotIsNonNull) {
  constexpr size_t kFirst = offsetof(PJRT_Api, PJRT_Error_Destroy);
  constexpr size_t kLast = offsetof(PJRT_Api, PJRT_TopologyDescription_GetMemorySpaceKindIds);
  const auto* raw = reinterpret_cast<const unsigned char*>(api_);
  size_t slots = 0;
  size_t non_null = 0;
  for (size_t offset = kFirst; offset <= kLast; offset += sizeof(void*)) {
    uintptr_t slot = 0;
    std::memcpy(&slot, raw + offset, sizeof(slot));
    ++slots;
    if (slot != 0) ++non_null;
  }
  EXPECT_EQ(slots, 138u);
  EXPECT_EQ(slots, kNumEntries);
  EXPECT_EQ(kLast + sizeof(void*), PJRT_Api_STRUCT_SIZE);

  std::vector<std::string> null_slots;
#define X(name) \
  if (api_->name == nullptr) null_slots.push_back(#name);
#include "tests/capi/pjrt_api_entries.inc"
#undef X
  EXPECT_EQ(non_null, 138u) << "null slots: " << ::testing::PrintToString(null_slots);
}

// The framework may dlopen the same path twice (two frameworks in one process) and calls
// PJRT_Plugin_Initialize once per framework: both must be harmless.
TEST_F(CapiAbiTest, SecondLoadReturnsTheSameTableAndInitializeIsIdempotent) {
  void* handle = dlopen(PluginPath().c_str(), RTLD_LAZY | RTLD_NODELETE);
  ASSERT_NE(handle, nullptr) << dlerror();
  using GetPjrtApiFn = const PJRT_Api* (*)();
  auto get_api = reinterpret_cast<GetPjrtApiFn>(dlsym(handle, "GetPjrtApi"));
  ASSERT_NE(get_api, nullptr);
  EXPECT_EQ(get_api(), api_);
  EXPECT_EQ(get_api(), get_api());
  auto args = EMBER_ARGS(PJRT_Plugin_Initialize_Args);
  EXPECT_TRUE(IsOk(api_->PJRT_Plugin_Initialize(&args)));
  dlclose(handle);

  // A client still works after the second initialize.
  ErrorInfo error;
  ClientPtr client = CreateClient({}, &error);
  ASSERT_TRUE(error.ok()) << error;
  EXPECT_FALSE(Devices(client.get()).empty());
}

// Entries the plugin has not built yet must still answer, with a message naming the function.
// Called with valid-size args and null handles, a built entry may reject the null instead.
TEST_F(CapiAbiTest, UnbuiltEntriesAnswerWithTheirName) {
  {
    auto args = EMBER_ARGS(PJRT_Executable_Serialize_Args);
    ErrorInfo error = TakeError(api_->PJRT_Executable_Serialize(&args));
    EXPECT_THAT(error.code, AnyOf(PJRT_Error_Code_UNIMPLEMENTED, PJRT_Error_Code_INVALID_ARGUMENT));
    EXPECT_THAT(error.message, HasSubstr("PJRT_Executable_Serialize"));
  }
  {
    auto args = EMBER_ARGS(PJRT_Executable_DeserializeAndLoad_Args);
    ErrorInfo error = TakeError(api_->PJRT_Executable_DeserializeAndLoad(&args));
    EXPECT_THAT(error.code, AnyOf(PJRT_Error_Code_UNIMPLEMENTED, PJRT_Error_Code_INVALID_ARGUMENT));
    EXPECT_THAT(error.message, HasSubstr("PJRT_Executable_DeserializeAndLoad"));
  }
  {
    auto args = EMBER_ARGS(PJRT_CopyToDeviceStream_AddChunk_Args);
    ErrorInfo error = TakeError(api_->PJRT_CopyToDeviceStream_AddChunk(&args));
    EXPECT_THAT(error.code, AnyOf(PJRT_Error_Code_UNIMPLEMENTED, PJRT_Error_Code_INVALID_ARGUMENT));
    EXPECT_THAT(error.message, HasSubstr("PJRT_CopyToDeviceStream_AddChunk"));
  }
  {
    auto args = EMBER_ARGS(PJRT_TopologyDescription_GetMemorySpaceKindIds_Args);
    ErrorInfo error = TakeError(api_->PJRT_TopologyDescription_GetMemorySpaceKindIds(&args));
    EXPECT_THAT(error.code, AnyOf(PJRT_Error_Code_UNIMPLEMENTED, PJRT_Error_Code_INVALID_ARGUMENT));
    EXPECT_THAT(error.message, HasSubstr("PJRT_TopologyDescription_GetMemorySpaceKindIds"));
  }
}

// XLA: PjrtCApiTest.PluginAttributes, plus the types the framework requires (§11).
TEST_F(CapiAbiTest, PluginAttributes) {
  auto args = EMBER_ARGS(PJRT_Plugin_Attributes_Args);
  ASSERT_TRUE(IsOk(api_->PJRT_Plugin_Attributes(&args)));
  ASSERT_GT(args.num_attributes, 0u);
  ASSERT_NE(args.attributes, nullptr);

  std::set<std::string> names;
  const PJRT_NamedValue* xla_version = nullptr;
  const PJRT_NamedValue* current = nullptr;
  const PJRT_NamedValue* minimum = nullptr;
  for (size_t i = 0; i < args.num_attributes; ++i) {
    const PJRT_NamedValue& value = args.attributes[i];
    ASSERT_NE(value.name, nullptr);
    std::string name(value.name, value.name_size);
    EXPECT_TRUE(names.insert(name).second) << "duplicate attribute " << name;
    if (name == "xla_version") xla_version = &value;
    if (name == "stablehlo_current_version") current = &value;
    if (name == "stablehlo_minimum_version") minimum = &value;
  }
  ASSERT_NE(xla_version, nullptr);
  EXPECT_EQ(xla_version->type, PJRT_NamedValue_kInt64);
  EXPECT_EQ(xla_version->value_size, 1u);
  EXPECT_GE(xla_version->int64_value, 0);
  for (const PJRT_NamedValue* version : {current, minimum}) {
    ASSERT_NE(version, nullptr);
    SCOPED_TRACE(std::string(version->name, version->name_size));
    ASSERT_EQ(version->type, PJRT_NamedValue_kInt64List);
    ASSERT_EQ(version->value_size, 3u);
    ASSERT_NE(version->int64_array_value, nullptr);
    for (int i = 0; i < 3; ++i) EXPECT_GE(version->int64_array_value[i], 0);
  }
  std::vector<int64_t> cur(current->int64_array_value, current->int64_array_value + 3);
  std::vector<int64_t> min(minimum->int64_array_value, minimum->int64_array_value + 3);
  EXPECT_LE(min, cur) << "minimum StableHLO version above the current one";
  EXPECT_GE(cur, (std::vector<int64_t>{1, 0, 0}));

  // The array lives for the whole process: a second call returns the same contents.
  auto again = EMBER_ARGS(PJRT_Plugin_Attributes_Args);
  ASSERT_TRUE(IsOk(api_->PJRT_Plugin_Attributes(&again)));
  EXPECT_EQ(again.num_attributes, args.num_attributes);
  EXPECT_EQ(again.attributes, args.attributes);
}

// XLA: PjrtCommonCApiHelpersTest.PjrtErrorToStatus. A null PJRT_Error* is success, and
// PJRT_Error_Destroy must accept null (§9).
TEST_F(CapiAbiTest, PjrtErrorToStatusOfNullIsOk) {
  EXPECT_TRUE(TakeError(nullptr).ok());
  auto args = EMBER_ARGS(PJRT_Error_Destroy_Args);
  args.error = nullptr;
  api_->PJRT_Error_Destroy(&args);
}

// XLA code without a PJRT_Api at hand goes through error->vtable (§8.1-8.3): the table must agree
// with the PJRT_Api error entries, and ForEachPayload must succeed.
TEST_F(CapiAbiTest, ErrorObjectCarriesAConsistentFunctionTable) {
  ErrorInfo create_error;
  ClientPtr client = CreateClient({}, &create_error);
  ASSERT_TRUE(create_error.ok()) << create_error;
  auto lookup = EMBER_ARGS(PJRT_Client_LookupDevice_Args);
  lookup.client = client.get();
  lookup.id = -7;
  ErrorPtr error(api_->PJRT_Client_LookupDevice(&lookup));
  ASSERT_NE(error, nullptr);

  auto code_args = EMBER_ARGS(PJRT_Error_GetCode_Args);
  code_args.error = error.get();
  ASSERT_TRUE(IsOk(api_->PJRT_Error_GetCode(&code_args)));
  auto message_args = EMBER_ARGS(PJRT_Error_Message_Args);
  message_args.error = error.get();
  api_->PJRT_Error_Message(&message_args);
  ASSERT_NE(message_args.message, nullptr);
  std::string message(message_args.message, message_args.message_size);
  EXPECT_THAT(message, HasSubstr("-7"));
  // The text stays valid and identical for the life of the error.
  auto message_again = EMBER_ARGS(PJRT_Error_Message_Args);
  message_again.error = error.get();
  api_->PJRT_Error_Message(&message_again);
  EXPECT_EQ(std::string(message_again.message, message_again.message_size), message);

  const PJRT_Error_FunctionTable* table = error->vtable;
  ASSERT_NE(table, nullptr);
  EXPECT_GE(table->struct_size, PJRT_Error_FunctionTable_STRUCT_SIZE);
  ASSERT_NE(table->get_code, nullptr);
  ASSERT_NE(table->message, nullptr);
  ASSERT_NE(table->destroy, nullptr);
  ASSERT_NE(table->for_each_payload, nullptr);
  EXPECT_EQ(table->get_code(error.get()), code_args.code);
  const char* text = nullptr;
  size_t size = 0;
  table->message(error.get(), &text, &size);
  EXPECT_EQ(std::string(text, size), message);

  struct Visits {
    int count = 0;
  } visits;
  auto payload_args = EMBER_ARGS(PJRT_Error_ForEachPayload_Args);
  payload_args.error = error.get();
  payload_args.visitor = [](const char*, size_t, const char*, size_t, void* user_arg) {
    ++static_cast<Visits*>(user_arg)->count;
  };
  payload_args.user_arg = &visits;
  EXPECT_TRUE(IsOk(api_->PJRT_Error_ForEachPayload(&payload_args)));
  EXPECT_GE(visits.count, 0);

  // Destroying through the table is what XLA's DestroyPjRtError does.
  table->destroy(error.release());
}

}  // namespace
}  // namespace ember::capi_test

namespace ember::capi_test {
namespace {

// The FFI extension on the extension chain (what JAX and plugin packages look for) registers
// handlers and type ids, attaches user data to execute contexts, and rejects bad input.
TEST(CapiFfiExtensionTest, RegistersHandlersTypesAndUserData) {
  const PJRT_Api* api = Api();
  ASSERT_NE(api, nullptr) << LoadError();
  const PJRT_FFI_Extension* ffi = nullptr;
  for (const PJRT_Extension_Base* e = api->extension_start; e != nullptr; e = e->next) {
    if (e->type == PJRT_Extension_Type_FFI) ffi = reinterpret_cast<const PJRT_FFI_Extension*>(e);
  }
  ASSERT_NE(ffi, nullptr);
  EXPECT_EQ(ffi->base.struct_size, sizeof(PJRT_FFI_Extension));

  static const auto handler = +[](void*) -> void* { return nullptr; };
  PJRT_FFI_Register_Handler_Args reg{};
  reg.struct_size = PJRT_FFI_Register_Handler_Args_STRUCT_SIZE;
  reg.target_name = "ember_capi_test_target";
  reg.target_name_size = std::strlen(reg.target_name);
  reg.api_version = 1;
  reg.handler = reinterpret_cast<void*>(handler);
  reg.platform_name = "ember";
  reg.platform_name_size = 5;
  EXPECT_TRUE(TakeError(ffi->register_handler(&reg)).ok());
  reg.api_version = 0;
  ErrorInfo untyped = TakeError(ffi->register_handler(&reg));
  EXPECT_EQ(untyped.code, PJRT_Error_Code_UNIMPLEMENTED) << untyped;
  reg.api_version = 1;
  reg.platform_name = "cuda";
  reg.platform_name_size = 4;
  EXPECT_EQ(TakeError(ffi->register_handler(&reg)).code, PJRT_Error_Code_INVALID_ARGUMENT);
  EXPECT_EQ(TakeError(ffi->register_handler(nullptr)).code, PJRT_Error_Code_INVALID_ARGUMENT);

  PJRT_FFI_TypeID_Register_Args type{};
  type.struct_size = PJRT_FFI_TypeID_Register_Args_STRUCT_SIZE;
  type.type_name = "ember_capi_test_type";
  type.type_name_size = std::strlen(type.type_name);
  ASSERT_TRUE(TakeError(ffi->type_id_register(&type)).ok());
  EXPECT_NE(type.type_id, 0);

  auto create = EMBER_ARGS(PJRT_ExecuteContext_Create_Args);
  ASSERT_TRUE(TakeError(api->PJRT_ExecuteContext_Create(&create)).ok());
  ASSERT_NE(create.context, nullptr);
  static int deleted = 0;
  PJRT_FFI_UserData_Add_Args add{};
  add.struct_size = PJRT_FFI_UserData_Add_Args_STRUCT_SIZE;
  add.context = create.context;
  add.user_data = {type.type_id, &deleted, +[](void* p) { ++*static_cast<int*>(p); }};
  EXPECT_TRUE(TakeError(ffi->user_data_add(&add)).ok());
  EXPECT_EQ(TakeError(ffi->user_data_add(&add)).code, PJRT_Error_Code_ALREADY_EXISTS);
  add.context = nullptr;
  EXPECT_EQ(TakeError(ffi->user_data_add(&add)).code, PJRT_Error_Code_INVALID_ARGUMENT);
  auto destroy = EMBER_ARGS(PJRT_ExecuteContext_Destroy_Args);
  destroy.context = create.context;
  ASSERT_TRUE(TakeError(api->PJRT_ExecuteContext_Destroy(&destroy)).ok());
  EXPECT_EQ(deleted, 1);  // the deleter ran with the context
}

}  // namespace
}  // namespace ember::capi_test

namespace ember::capi_test {
namespace {

// The profiler extension: a profiler records between Start and Stop and hands its events over
// as XSpace bytes it keeps (XLA's plugin tracer reads them in place) or copies into a caller's
// buffer; bad calls are errors with a message and a code, never crashes.
TEST(CapiProfilerExtensionTest, LifecycleAndBadInput) {
  const PJRT_Api* api = Api();
  ASSERT_NE(api, nullptr) << LoadError();
  const PJRT_Profiler_Extension* ext = nullptr;
  for (const PJRT_Extension_Base* e = api->extension_start; e != nullptr; e = e->next) {
    if (e->type == PJRT_Extension_Type_Profiler) {
      ext = reinterpret_cast<const PJRT_Profiler_Extension*>(e);
    }
  }
  ASSERT_NE(ext, nullptr);
  const PLUGIN_Profiler_Api* p = ext->profiler_api;
  ASSERT_NE(p, nullptr);
  PLUGIN_Profiler_Create_Args create{sizeof(create), nullptr, 0, nullptr};
  ASSERT_EQ(p->create(&create), nullptr);
  PLUGIN_Profiler_Start_Args start{sizeof(start), create.profiler};
  ASSERT_EQ(p->start(&start), nullptr);
  PLUGIN_Profiler_Stop_Args stop{sizeof(stop), create.profiler};
  ASSERT_EQ(p->stop(&stop), nullptr);
  PLUGIN_Profiler_CollectData_Args collect{sizeof(collect), create.profiler, nullptr, 0};
  ASSERT_EQ(p->collect_data(&collect), nullptr);
  const size_t size = collect.buffer_size_in_bytes;
  EXPECT_TRUE(size == 0 || collect.buffer != nullptr);
  std::vector<uint8_t> copy(size + 1);
  collect.buffer = copy.data();
  collect.buffer_size_in_bytes = copy.size();
  ASSERT_EQ(p->collect_data(&collect), nullptr);
  EXPECT_EQ(collect.buffer_size_in_bytes, size);
  collect.buffer_size_in_bytes = 0;  // too small for anything
  PLUGIN_Profiler_Error* small = size > 0 ? p->collect_data(&collect) : nullptr;
  if (small != nullptr) {
    PLUGIN_Profiler_Error_Destroy_Args destroy_error{sizeof(destroy_error), nullptr, small};
    p->error_destroy(&destroy_error);
  }
  PLUGIN_Profiler_Start_Args null_profiler{sizeof(null_profiler), nullptr};
  PLUGIN_Profiler_Error* error = p->start(&null_profiler);
  ASSERT_NE(error, nullptr);
  PLUGIN_Profiler_Error_Message_Args message{sizeof(message), nullptr, error, nullptr, 0};
  p->error_message(&message);
  EXPECT_THAT(std::string(message.message, message.message_size), HasSubstr("profiler"));
  PLUGIN_Profiler_Error_GetCode_Args code{sizeof(code), nullptr, error, 0};
  EXPECT_EQ(p->error_get_code(&code), nullptr);
  EXPECT_EQ(code.code, 3);  // INVALID_ARGUMENT
  PLUGIN_Profiler_Error_Destroy_Args destroy_error{sizeof(destroy_error), nullptr, error};
  p->error_destroy(&destroy_error);
  PLUGIN_Profiler_Error* null_args = p->create(nullptr);
  EXPECT_NE(null_args, nullptr);
  PLUGIN_Profiler_Error_Destroy_Args destroy_null{sizeof(destroy_null), nullptr, null_args};
  p->error_destroy(&destroy_null);
  PLUGIN_Profiler_Destroy_Args destroy{sizeof(destroy), create.profiler};
  EXPECT_EQ(p->destroy(&destroy), nullptr);
}

}  // namespace
}  // namespace ember::capi_test
