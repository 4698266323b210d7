// PJRT_Error: the function table, the four error entries, code mapping.
#include "pjrt_plugin/error.h"

#include "absl/strings/cord.h"
#include "gtest/gtest.h"
#include "pjrt_plugin/include/pjrt_c_api.h"

extern "C" const PJRT_Api* GetPjrtApi();

namespace ember::pjrt {
namespace {

TEST(ErrorTest, OkIsNull) { EXPECT_EQ(MakeError(absl::OkStatus()), nullptr); }

TEST(ErrorTest, EntriesAndTableAgree) {
  const PJRT_Api* api = GetPjrtApi();
  PJRT_Error* error = MakeError(absl::NotFoundError("no such thing"));
  ASSERT_NE(error, nullptr);
  ASSERT_NE(error->vtable, nullptr);
  EXPECT_EQ(error->vtable->get_code(error), PJRT_Error_Code_NOT_FOUND);

  PJRT_Error_GetCode_Args code{};
  code.struct_size = PJRT_Error_GetCode_Args_STRUCT_SIZE;
  code.error = error;
  EXPECT_EQ(api->PJRT_Error_GetCode(&code), nullptr);
  EXPECT_EQ(code.code, PJRT_Error_Code_NOT_FOUND);

  PJRT_Error_Message_Args message{};
  message.struct_size = PJRT_Error_Message_Args_STRUCT_SIZE;
  message.error = error;
  api->PJRT_Error_Message(&message);
  EXPECT_EQ(std::string(message.message, message.message_size), "no such thing");

  PJRT_Error_Destroy_Args destroy{};
  destroy.struct_size = PJRT_Error_Destroy_Args_STRUCT_SIZE;
  destroy.error = error;
  api->PJRT_Error_Destroy(&destroy);
  destroy.error = nullptr;
  api->PJRT_Error_Destroy(&destroy);  // null is accepted
}

TEST(ErrorTest, PayloadsAreVisited) {
  absl::Status status = absl::InternalError("with payload");
  status.SetPayload("key", absl::Cord("value"));
  PJRT_Error* error = MakeError(status);
  std::vector<std::pair<std::string, std::string>> seen;
  PJRT_Error_ForEachPayload_Args args{};
  args.struct_size = PJRT_Error_ForEachPayload_Args_STRUCT_SIZE;
  args.error = error;
  args.user_arg = &seen;
  args.visitor = [](const char* k, size_t ks, const char* v, size_t vs, void* user) {
    static_cast<decltype(seen)*>(user)->emplace_back(std::string(k, ks), std::string(v, vs));
  };
  EXPECT_EQ(GetPjrtApi()->PJRT_Error_ForEachPayload(&args), nullptr);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].first, "key");
  EXPECT_EQ(seen[0].second, "value");
  error->vtable->destroy(error);
}

TEST(ErrorTest, CodesMapBothWays) {
  for (int c = 1; c <= 16; ++c) {
    auto code = static_cast<absl::StatusCode>(c);
    EXPECT_EQ(FromPjrtErrorCode(ToPjrtErrorCode(code)), code);
  }
  EXPECT_EQ(ToPjrtErrorCode(absl::StatusCode::kUnimplemented), PJRT_Error_Code_UNIMPLEMENTED);
}

TEST(ErrorTest, CallbackErrorCopiesTheMessage) {
  std::string text = "kv store down";
  PJRT_Error* error = CallbackError(PJRT_Error_Code_UNAVAILABLE, text.data(), text.size());
  text = "overwritten!!";
  EXPECT_EQ(ErrorStatus(error).message(), "kv store down");
  EXPECT_EQ(ErrorStatus(error).code(), absl::StatusCode::kUnavailable);
  error->vtable->destroy(error);
}

}  // namespace
}  // namespace ember::pjrt
