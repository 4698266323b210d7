// AsyncEvent: exactly-once callbacks, first status wins, abandoned events, joins, races.
#include "base/async_event.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace ember {
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



TEST(AsyncEventTest, CallbacksRunOnceWithTheStatus) {
  auto state = AsyncEvent::Create();
  EXPECT_FALSE(state->IsReady());
  int calls = 0;
  absl::Status seen;
  state->AndThen([&](absl::Status status) {
    ++calls;
    seen = status;
  });
  state->Set(absl::UnavailableError("device lost"));
  state->Set(absl::OkStatus());  // ignored
  EXPECT_TRUE(state->IsReady());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(state->Await().code(), absl::StatusCode::kUnavailable);
}

TEST(AsyncEventTest, AbandonedEventRunsPendingCallbacksWithAnError) {
  int calls = 0;
  absl::Status seen;
  {
    auto state = AsyncEvent::Create();
    state->AndThen([&](absl::Status status) {
      ++calls;
      seen = status;
    });
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen.code(), absl::StatusCode::kInternal);
}

TEST(AsyncEventTest, RacingAndThenAndSetRunEachCallbackOnce) {
  for (int round = 0; round < 50; ++round) {
    auto state = AsyncEvent::Create();
    std::atomic<int> calls{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 25; ++i) state->AndThen([&calls](absl::Status) { ++calls; });
      });
    }
    threads.emplace_back([&] { state->Set(absl::OkStatus()); });
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(calls.load(), 100);
  }
}

TEST(AsyncEventTest, AwaitBlocksUntilReady) {
  auto state = AsyncEvent::Create();
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    EXPECT_TRUE(state->Await().ok());
    returned = true;
  });
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_FALSE(returned.load());
  state->Set(absl::OkStatus());
  waiter.join();
  EXPECT_TRUE(returned.load());
}

}  // namespace
}  // namespace ember
