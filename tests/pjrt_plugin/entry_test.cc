// The entry-point contract: null args, short struct_size, every slot non-null, UNIMPLEMENTED
// entries naming their function.
#include <cstring>
#include <set>

#include "gtest/gtest.h"
#include "pjrt_plugin/error.h"
#include "pjrt_plugin/include/pjrt_c_api.h"

extern "C" const PJRT_Api* GetPjrtApi();

namespace ember::pjrt {
namespace {

std::string Consume(PJRT_Error* error, absl::StatusCode* code = nullptr) {
  if (error == nullptr) return "";
  std::string message(ErrorStatus(error).message());
  if (code != nullptr) *code = ErrorStatus(error).code();
  error->vtable->destroy(error);
  return message;
}

TEST(EntryTest, TableIsCompleteAndVersioned) {
  const PJRT_Api* api = GetPjrtApi();
  EXPECT_EQ(api->struct_size, PJRT_Api_STRUCT_SIZE);
  EXPECT_EQ(api->pjrt_api_version.major_version, 0);
  EXPECT_EQ(api->pjrt_api_version.minor_version, 114);
  const size_t first = offsetof(PJRT_Api, PJRT_Error_Destroy);
  int slots = 0;
  for (size_t offset = first; offset < sizeof(PJRT_Api); offset += sizeof(void*), ++slots) {
    void* slot;
    std::memcpy(&slot, reinterpret_cast<const char*>(api) + offset, sizeof(slot));
    EXPECT_NE(slot, nullptr) << "slot at offset " << offset;
  }
  EXPECT_EQ(slots, 138);
}

TEST(EntryTest, NullArgsAndShortStructSize) {
  const PJRT_Api* api = GetPjrtApi();
  absl::StatusCode code;
  EXPECT_NE(Consume(api->PJRT_Client_Devices(nullptr), &code).find("PJRT_Client_Devices: args is null"),
            std::string::npos);
  EXPECT_EQ(code, absl::StatusCode::kInvalidArgument);
  PJRT_Client_Devices_Args args{};
  args.struct_size = 8;
  std::string message = Consume(api->PJRT_Client_Devices(&args), &code);
  EXPECT_NE(message.find("PJRT_Client_Devices_Args.struct_size is 8"), std::string::npos) << message;
  args.struct_size = PJRT_Client_Devices_Args_STRUCT_SIZE;
  message = Consume(api->PJRT_Client_Devices(&args), &code);
  EXPECT_NE(message.find("`args->client` is null"), std::string::npos) << message;
}

TEST(EntryTest, UnimplementedEntriesNameThemselves) {
  const PJRT_Api* api = GetPjrtApi();
  PJRT_CopyToDeviceStream_AddChunk_Args args{};
  args.struct_size = PJRT_CopyToDeviceStream_AddChunk_Args_STRUCT_SIZE;
  absl::StatusCode code;
  std::string message = Consume(api->PJRT_CopyToDeviceStream_AddChunk(&args), &code);
  EXPECT_EQ(code, absl::StatusCode::kUnimplemented);
  EXPECT_NE(message.find("PJRT_CopyToDeviceStream_AddChunk"), std::string::npos);
}

TEST(EntryTest, PluginAttributesAreUniqueAndTyped) {
  PJRT_Plugin_Attributes_Args args{};
  args.struct_size = PJRT_Plugin_Attributes_Args_STRUCT_SIZE;
  ASSERT_EQ(GetPjrtApi()->PJRT_Plugin_Attributes(&args), nullptr);
  std::set<std::string> names;
  for (size_t i = 0; i < args.num_attributes; ++i) {
    const PJRT_NamedValue& v = args.attributes[i];
    std::string name(v.name, v.name_size);
    EXPECT_TRUE(names.insert(name).second) << name;
    if (name == "xla_version") {
      EXPECT_EQ(v.type, PJRT_NamedValue_kInt64);
    }
    if (name.find("stablehlo") == 0) {
      EXPECT_EQ(v.type, PJRT_NamedValue_kInt64List);
      EXPECT_EQ(v.value_size, 3u);
    }
  }
  EXPECT_TRUE(names.count("xla_version") && names.count("stablehlo_current_version") &&
              names.count("stablehlo_minimum_version"));
}

}  // namespace
}  // namespace ember::pjrt
