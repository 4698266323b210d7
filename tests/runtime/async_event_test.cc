// AsyncEvent: exactly-once callbacks, first status wins, joins.
#include "runtime/async_event.h"

#include <atomic>
#include <thread>

#include "gtest/gtest.h"

namespace ember::runtime {
namespace {

TEST(AsyncEventTest, CallbacksRunOnceAfterSet) {
  auto event = AsyncEvent::Create();
  std::atomic<int> calls{0};
  absl::Status seen;
  event->AndThen([&](absl::Status s) { ++calls; seen = s; });
  EXPECT_FALSE(event->IsReady());
  EXPECT_EQ(calls, 0);
  event->Set(absl::InternalError("boom"));
  event->Set(absl::OkStatus());  // ignored: the first status wins
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(event->Await().message(), "boom");
}

TEST(AsyncEventTest, CallbackOnReadyEventRunsSynchronously) {
  auto event = AsyncEvent::CreateReady();
  bool ran = false;
  event->AndThen([&](absl::Status s) { ran = s.ok(); });
  EXPECT_TRUE(ran);
}

TEST(AsyncEventTest, CallbackSurvivesDroppingTheLastReference) {
  std::atomic<int> calls{0};
  std::weak_ptr<AsyncEvent> weak;
  std::thread setter;
  {
    auto event = AsyncEvent::Create();
    weak = event;
    event->AndThen([&](absl::Status) { ++calls; });
    setter = std::thread([event] { event->Set(absl::OkStatus()); });
  }
  setter.join();
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(weak.expired());
}

TEST(AsyncEventTest, AwaitBlocksUntilSetFromAnotherThread) {
  auto event = AsyncEvent::Create();
  std::thread t([event] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    event->Set(absl::OkStatus());
  });
  EXPECT_TRUE(event->Await().ok());
  t.join();
}

TEST(AsyncEventTest, AfterAllCarriesTheFirstErrorAndWaitsForAll) {
  auto a = AsyncEvent::Create(), b = AsyncEvent::Create(), c = AsyncEvent::Create();
  auto all = AsyncEvent::AfterAll({a, b, c});
  a->Set(absl::OkStatus());
  b->Set(absl::NotFoundError("b failed"));
  EXPECT_FALSE(all->IsReady());
  c->Set(absl::InternalError("c failed"));
  ASSERT_TRUE(all->IsReady());
  EXPECT_EQ(all->Await().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(AsyncEvent::AfterAll({})->IsReady());
}

}  // namespace
}  // namespace ember::runtime
