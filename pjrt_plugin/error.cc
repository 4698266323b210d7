#include "pjrt_plugin/error.h"

#include <memory>
#include <string>

#include "pjrt_plugin/entry.h"

namespace ember::pjrt {
namespace {

struct EmberError {
  PJRT_Error base;  // must stay first: the framework reads the function table from it
  absl::Status status;
};

const EmberError* AsEmber(const PJRT_Error* error) {
  return reinterpret_cast<const EmberError*>(error);
}

void TableDestroy(PJRT_Error* error) {
  std::unique_ptr<EmberError> owned(reinterpret_cast<EmberError*>(error));
}

void TableMessage(const PJRT_Error* error, const char** message, size_t* size) {
  const absl::Status& status = AsEmber(error)->status;
  *message = status.message().data();
  *size = status.message().size();
}

PJRT_Error_Code TableGetCode(const PJRT_Error* error) {
  return ToPjrtErrorCode(AsEmber(error)->status.code());
}

void TableForEachPayload(const PJRT_Error* error, PJRT_Error_PayloadVisitor visitor, void* user) {
  AsEmber(error)->status.ForEachPayload([&](absl::string_view key, const absl::Cord& value) {
    std::string flat(value);
    visitor(key.data(), key.size(), flat.data(), flat.size(), user);
  });
}

const PJRT_Error_FunctionTable kErrorTable = {
    .struct_size = PJRT_Error_FunctionTable_STRUCT_SIZE,
    .instance_size = sizeof(EmberError),
    .extension_start = nullptr,
    .destroy = &TableDestroy,
    .message = &TableMessage,
    .get_code = &TableGetCode,
    .for_each_payload = &TableForEachPayload,
};

void Error_Destroy(PJRT_Error_Destroy_Args* args) {
  // Must accept null (the framework destroys whatever it got back) and cannot report failure.
  if (args == nullptr || args->error == nullptr) return;
  args->error->vtable->destroy(args->error);
}

void Error_Message(PJRT_Error_Message_Args* args) {
  if (args == nullptr) return;
  if (args->error == nullptr) {
    args->message = "";
    args->message_size = 0;
    return;
  }
  args->error->vtable->message(args->error, &args->message, &args->message_size);
}

EMBER_PJRT_ENTRY(PJRT_Error_GetCode) {
  EMBER_PJRT_REQUIRE(args->error);
  args->code = args->error->vtable->get_code(args->error);
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Error_ForEachPayload) {
  EMBER_PJRT_REQUIRE(args->error);
  EMBER_PJRT_REQUIRE(args->visitor);
  args->error->vtable->for_each_payload(args->error, args->visitor, args->user_arg);
  return absl::OkStatus();
}

}  // namespace

PJRT_Error* MakeError(absl::Status status) {
  if (status.ok()) return nullptr;
  auto* error = new EmberError{{&kErrorTable}, std::move(status)};
  return &error->base;
}

const absl::Status& ErrorStatus(const PJRT_Error* error) { return AsEmber(error)->status; }

PJRT_Error_Code ToPjrtErrorCode(absl::StatusCode code) {
  // Both enumerations follow the canonical gRPC/absl numbering.
  return static_cast<PJRT_Error_Code>(static_cast<int>(code));
}

absl::StatusCode FromPjrtErrorCode(PJRT_Error_Code code) {
  return static_cast<absl::StatusCode>(static_cast<int>(code));
}

PJRT_Error* CallbackError(PJRT_Error_Code code, const char* message, size_t message_size) {
  absl::StatusCode status_code = FromPjrtErrorCode(code);
  if (status_code == absl::StatusCode::kOk) status_code = absl::StatusCode::kUnknown;
  return MakeError(absl::Status(status_code, absl::string_view(message ? message : "",
                                                               message ? message_size : 0)));
}

absl::Status TakeCallbackError(PJRT_Error* error) {
  if (error == nullptr) return absl::OkStatus();
  std::unique_ptr<EmberError> owned(reinterpret_cast<EmberError*>(error));
  return owned->status;
}

void BindErrorEntries(PJRT_Api& api) {
  api.PJRT_Error_Destroy = &Error_Destroy;
  api.PJRT_Error_Message = &Error_Message;
  api.PJRT_Error_GetCode = &PJRT_Error_GetCode_Entry;
  api.PJRT_Error_ForEachPayload = &PJRT_Error_ForEachPayload_Entry;
}

}  // namespace ember::pjrt
