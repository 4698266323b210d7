// PJRT_Event_*: handles over AsyncEvent. A registered callback runs exactly once even
// when the framework destroys the handle first, or destroys it from inside the callback.
#include <memory>

#include "absl/strings/str_cat.h"

#include "pjrt_plugin/bindings.h"
#include "pjrt_plugin/entry.h"
#include "pjrt_plugin/event_handle.h"
#include "pjrt_plugin/handles.h"

namespace ember::pjrt {

PJRT_Event* NewEventHandle(AsyncEventRef event) {
  return new PJRT_Event{std::move(event)};
}

namespace {

EMBER_PJRT_ENTRY(PJRT_Event_Destroy) {
  std::unique_ptr<PJRT_Event> owned(args->event);
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Event_IsReady) {
  EMBER_PJRT_REQUIRE(args->event);
  args->is_ready = args->event->event->IsReady();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY_PASSTHROUGH(PJRT_Event_Error) {
  EMBER_PJRT_REQUIRE(args->event);
  std::optional<absl::Status> status = args->event->event->status();
  if (!status.has_value()) {
    return absl::FailedPreconditionError(
        "PJRT_Event_Error: the event is not ready yet; call PJRT_Event_IsReady first");
  }
  return *status;  // the event's own error becomes the returned error
}

EMBER_PJRT_ENTRY_PASSTHROUGH(PJRT_Event_Await) {
  EMBER_PJRT_REQUIRE(args->event);
  return args->event->event->Await();
}

EMBER_PJRT_ENTRY(PJRT_Event_OnReady) {
  EMBER_PJRT_REQUIRE(args->event);
  EMBER_PJRT_REQUIRE(args->callback);
  PJRT_Event_OnReadyCallback callback = args->callback;
  void* user_arg = args->user_arg;
  // The callback holds only the shared state, never the handle, so the handle may go first.
  args->event->event->AndThen(
      [callback, user_arg](absl::Status status) { callback(MakeError(std::move(status)), user_arg); });
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Event_Create) {
  args->event = NewEventHandle(AsyncEvent::Create());
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Event_Set) {
  EMBER_PJRT_REQUIRE(args->event);
  if (args->event->event->IsReady()) {
    return absl::FailedPreconditionError("the event is already set");
  }
  absl::Status status;
  const int32_t code = RawEnumValue(args->error_code);
  if (code < 0 || code > 16) {
    return absl::InvalidArgumentError(absl::StrCat("unknown error_code ", code));
  }
  if (code != PJRT_Error_Code_OK) {
    status = absl::Status(static_cast<absl::StatusCode>(code),
                          absl::string_view(args->error_message ? args->error_message : "",
                                           args->error_message ? args->error_message_size : 0));
  }
  args->event->event->Set(std::move(status));
  return absl::OkStatus();
}

}  // namespace

void BindEventEntries(PJRT_Api& api) {
  api.PJRT_Event_Destroy = &PJRT_Event_Destroy_Entry;
  api.PJRT_Event_IsReady = &PJRT_Event_IsReady_Entry;
  api.PJRT_Event_Error = &PJRT_Event_Error_Entry;
  api.PJRT_Event_Await = &PJRT_Event_Await_Entry;
  api.PJRT_Event_OnReady = &PJRT_Event_OnReady_Entry;
  api.PJRT_Event_Create = &PJRT_Event_Create_Entry;
  api.PJRT_Event_Set = &PJRT_Event_Set_Entry;
}

}  // namespace ember::pjrt
