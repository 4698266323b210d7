// PJRT_Event semantics the framework relies on (§10): IsReady / Await / Error on ready events,
// OnReady firing exactly once with a null error on success, also when the event is destroyed
// right after registering or from inside the callback, and caller-completed events (Create/Set).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/capi/capi_test_util.h"

namespace ember::capi_test {
namespace {

using namespace std::chrono_literals;

// What one or more OnReady callbacks saw. Outlives the events it watches.
struct CallbackLog {
  std::atomic<int> calls{0};
  std::mutex mu;
  std::condition_variable cv;
  std::vector<ErrorInfo> statuses;
  PJRT_Event* destroy_in_callback = nullptr;  // set: the callback destroys this event

  bool WaitForCalls(int n, std::chrono::milliseconds timeout = 20s) {
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_for(lock, timeout, [&] { return static_cast<int>(statuses.size()) >= n; });
  }
};

void RecordCallback(PJRT_Error* error, void* user_arg) {
  auto* log = static_cast<CallbackLog*>(user_arg);
  ErrorInfo status = TakeError(error);  // the callback owns the error
  if (log->destroy_in_callback != nullptr) {
    auto args = EMBER_ARGS(PJRT_Event_Destroy_Args);
    args.event = log->destroy_in_callback;
    log->destroy_in_callback = nullptr;
    EXPECT_TRUE(IsOk(Api()->PJRT_Event_Destroy(&args)));
  }
  log->calls.fetch_add(1);
  std::lock_guard<std::mutex> lock(log->mu);
  log->statuses.push_back(status);
  log->cv.notify_all();
}

ErrorInfo OnReady(PJRT_Event* event, CallbackLog* log) {
  auto args = EMBER_ARGS(PJRT_Event_OnReady_Args);
  args.event = event;
  args.callback = &RecordCallback;
  args.user_arg = log;
  return TakeError(Api()->PJRT_Event_OnReady(&args));
}

bool IsReady(PJRT_Event* event) {
  auto args = EMBER_ARGS(PJRT_Event_IsReady_Args);
  args.event = event;
  EXPECT_TRUE(IsOk(Api()->PJRT_Event_IsReady(&args)));
  return args.is_ready;
}

ErrorInfo EventError(PJRT_Event* event) {
  auto args = EMBER_ARGS(PJRT_Event_Error_Args);
  args.event = event;
  return TakeError(Api()->PJRT_Event_Error(&args));
}

class CapiEventTest : public CapiTest {
 protected:
  // The ready event of a fresh f32[n] buffer; the buffer stays alive in `buffers_`.
  EventPtr BufferReadyEvent(size_t n = 16) {
    std::vector<float> data(n);
    for (size_t i = 0; i < n; ++i) data[i] = 0.5f * static_cast<float>(i) - 3.0f;
    buffers_.push_back(UploadF32(client_.get(), FirstDevice(), data, {static_cast<int64_t>(n)}));
    auto args = EMBER_ARGS(PJRT_Buffer_ReadyEvent_Args);
    args.buffer = buffers_.back().get();
    EXPECT_TRUE(IsOk(api_->PJRT_Buffer_ReadyEvent(&args)));
    return EventPtr(args.event);
  }
  void TearDown() override {
    buffers_.clear();
    CapiTest::TearDown();
  }
  std::vector<BufferPtr> buffers_;
};

TEST_F(CapiEventTest, ReadyEventAnswersIsReadyAwaitAndError) {
  EventPtr event = BufferReadyEvent();
  ASSERT_NE(event, nullptr);
  EXPECT_TRUE(Await(event.get()).ok());
  EXPECT_TRUE(IsReady(event.get()));
  // Error may be called repeatedly once ready; success is a null error every time.
  EXPECT_TRUE(EventError(event.get()).ok());
  EXPECT_TRUE(EventError(event.get()).ok());
  EXPECT_TRUE(Await(event.get()).ok()) << "a second Await on the same event";
}

TEST_F(CapiEventTest, OnReadyFiresExactlyOnceWithANullError) {
  EventPtr event = BufferReadyEvent();
  CallbackLog log;
  ASSERT_TRUE(OnReady(event.get(), &log).ok());
  ASSERT_TRUE(log.WaitForCalls(1)) << "OnReady callback never ran";
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(log.calls.load(), 1);
  EXPECT_TRUE(log.statuses[0].ok()) << log.statuses[0];
}

TEST_F(CapiEventTest, SeveralCallbacksOnOneEventEachFireOnce) {
  EventPtr event = BufferReadyEvent();
  CallbackLog first, second, third;
  ASSERT_TRUE(OnReady(event.get(), &first).ok());
  ASSERT_TRUE(OnReady(event.get(), &second).ok());
  ASSERT_TRUE(OnReady(event.get(), &third).ok());
  for (CallbackLog* log : {&first, &second, &third}) ASSERT_TRUE(log->WaitForCalls(1));
  std::this_thread::sleep_for(50ms);
  for (CallbackLog* log : {&first, &second, &third}) EXPECT_EQ(log->calls.load(), 1);
}

// §10.2 pattern 2: jaxlib subscribes to done_with_host_buffer and destroys it at once.
TEST_F(CapiEventTest, CallbackRunsWhenTheEventIsDestroyedRightAfterRegistering) {
  std::vector<float> data(4096, 1.25f);
  UploadSpec spec;
  spec.dims = {64, 64};
  spec.data = data.data();
  spec.device = FirstDevice();
  spec.semantics = PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  Upload upload = FromHost(client_.get(), spec);
  ASSERT_TRUE(upload.status.ok()) << upload.status;
  ASSERT_NE(upload.done_with_host_buffer, nullptr);
  CallbackLog done_log;
  ASSERT_TRUE(OnReady(upload.done_with_host_buffer.get(), &done_log).ok());
  upload.done_with_host_buffer.reset();

  EventPtr ready = BufferReadyEvent(1 << 16);
  CallbackLog ready_log;
  ASSERT_TRUE(OnReady(ready.get(), &ready_log).ok());
  ready.reset();

  ASSERT_TRUE(done_log.WaitForCalls(1)) << "done_with_host_buffer callback lost on destroy";
  ASSERT_TRUE(ready_log.WaitForCalls(1)) << "ready-event callback lost on destroy";
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(done_log.calls.load(), 1);
  EXPECT_EQ(ready_log.calls.load(), 1);
  EXPECT_TRUE(done_log.statuses[0].ok()) << done_log.statuses[0];
  EXPECT_TRUE(ready_log.statuses[0].ok()) << ready_log.statuses[0];
}

// §10.2 pattern 1: the framework's event-to-future conversion destroys the event in the callback.
TEST_F(CapiEventTest, EventMayBeDestroyedFromInsideItsCallback) {
  EventPtr event = BufferReadyEvent();
  CallbackLog log;
  log.destroy_in_callback = event.get();
  PJRT_Event* raw = event.release();  // ownership passes to the callback
  ASSERT_TRUE(OnReady(raw, &log).ok());
  ASSERT_TRUE(log.WaitForCalls(1));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(log.calls.load(), 1);
  EXPECT_EQ(log.destroy_in_callback, nullptr);
}

// ---------------------------------------------------------------- caller-completed events

// PJRT_Event_Create / Set are only used for cross-host transfers (§10.1); skip if unbuilt.
EventPtr CreateEvent(bool* unimplemented) {
  auto args = EMBER_ARGS(PJRT_Event_Create_Args);
  ErrorInfo error = TakeError(Api()->PJRT_Event_Create(&args));
  *unimplemented = error.code == PJRT_Error_Code_UNIMPLEMENTED;
  if (!*unimplemented) {
    EXPECT_TRUE(error.ok()) << error;
  }
  return EventPtr(error.ok() ? args.event : nullptr);
}

ErrorInfo SetEvent(PJRT_Event* event, PJRT_Error_Code code, const std::string& message) {
  auto args = EMBER_ARGS(PJRT_Event_Set_Args);
  args.event = event;
  args.error_code = code;
  args.error_message = message.c_str();
  args.error_message_size = message.size();
  return TakeError(Api()->PJRT_Event_Set(&args));
}

TEST_F(CapiEventTest, CreatedEventFiresCallbacksWhenSetFromAnotherThread) {
  bool unimplemented = false;
  EventPtr event = CreateEvent(&unimplemented);
  if (unimplemented) GTEST_SKIP() << "PJRT_Event_Create is UNIMPLEMENTED";
  ASSERT_NE(event, nullptr);
  EXPECT_FALSE(IsReady(event.get()));
  CallbackLog log;
  ASSERT_TRUE(OnReady(event.get(), &log).ok());
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(log.calls.load(), 0) << "callback ran before the event was set";

  std::thread setter([&] {
    std::this_thread::sleep_for(30ms);
    EXPECT_TRUE(SetEvent(event.get(), PJRT_Error_Code_OK, "").ok());
  });
  EXPECT_TRUE(Await(event.get()).ok());  // blocks until the other thread sets it
  setter.join();
  ASSERT_TRUE(log.WaitForCalls(1));
  EXPECT_TRUE(IsReady(event.get()));
  EXPECT_TRUE(log.statuses[0].ok()) << log.statuses[0];
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(log.calls.load(), 1);
}

TEST_F(CapiEventTest, CreatedEventCarriesTheErrorItWasSetWith) {
  bool unimplemented = false;
  EventPtr event = CreateEvent(&unimplemented);
  if (unimplemented) GTEST_SKIP() << "PJRT_Event_Create is UNIMPLEMENTED";
  ASSERT_NE(event, nullptr);
  CallbackLog log;
  ASSERT_TRUE(OnReady(event.get(), &log).ok());
  ASSERT_TRUE(SetEvent(event.get(), PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of tokens").ok());
  ASSERT_TRUE(log.WaitForCalls(1));
  EXPECT_EQ(log.statuses[0].code, PJRT_Error_Code_RESOURCE_EXHAUSTED);
  EXPECT_EQ(log.statuses[0].message, "out of tokens");
  // Each Error call returns a fresh, independently owned error (§10.1).
  auto args = EMBER_ARGS(PJRT_Event_Error_Args);
  args.event = event.get();
  ErrorPtr first(Api()->PJRT_Event_Error(&args));
  ErrorPtr second(Api()->PJRT_Event_Error(&args));
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(first.get(), second.get());
  ErrorInfo a = TakeError(first.release());
  ErrorInfo b = TakeError(second.release());
  EXPECT_EQ(a.code, PJRT_Error_Code_RESOURCE_EXHAUSTED);
  EXPECT_EQ(a.message, "out of tokens");
  EXPECT_EQ(b.code, a.code);
  EXPECT_EQ(b.message, a.message);
  ErrorInfo awaited = Await(event.get());
  EXPECT_EQ(awaited.code, PJRT_Error_Code_RESOURCE_EXHAUSTED);
  // A second Set must not crash or re-fire callbacks.
  SetEvent(event.get(), PJRT_Error_Code_OK, "");
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(log.calls.load(), 1);
}

}  // namespace
}  // namespace ember::capi_test
