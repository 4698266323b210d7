// EventState and WorkerThread, the platform-independent pieces under every Event and host Stream.
#include "stream_executor/event_state.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "stream_executor/worker_thread.h"

namespace ember::se {
namespace {

TEST(EventStateTest, CallbacksRunOnceWithTheStatus) {
  EventState state;
  EXPECT_FALSE(state.IsReady());
  int calls = 0;
  absl::Status seen;
  state.AndThen([&](absl::Status status) {
    ++calls;
    seen = status;
  });
  state.SetReady(absl::UnavailableError("device lost"));
  state.SetReady(absl::OkStatus());  // ignored
  EXPECT_TRUE(state.IsReady());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(state.Await().code(), absl::StatusCode::kUnavailable);
}

TEST(EventStateTest, AbandonedStateRunsPendingCallbacksWithAnError) {
  int calls = 0;
  absl::Status seen;
  {
    EventState state;
    state.AndThen([&](absl::Status status) {
      ++calls;
      seen = status;
    });
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen.code(), absl::StatusCode::kInternal);
}

TEST(EventStateTest, RacingAndThenAndSetReadyRunEachCallbackOnce) {
  for (int round = 0; round < 50; ++round) {
    auto state = std::make_shared<EventState>();
    std::atomic<int> calls{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 25; ++i) state->AndThen([&calls](absl::Status) { ++calls; });
      });
    }
    threads.emplace_back([&] { state->SetReady(absl::OkStatus()); });
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(calls.load(), 100);
  }
}

TEST(EventStateTest, AwaitBlocksUntilReady) {
  auto state = std::make_shared<EventState>();
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    EXPECT_TRUE(state->Await().ok());
    returned = true;
  });
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_FALSE(returned.load());
  state->SetReady(absl::OkStatus());
  waiter.join();
  EXPECT_TRUE(returned.load());
}

TEST(WorkerThreadTest, RunsInOrderAndDrainsOnDestruction) {
  std::vector<int> order;
  {
    WorkerThread worker("test worker");
    absl::Notification gate;
    worker.Schedule([&gate] { gate.WaitForNotification(); });
    for (int i = 0; i < 100; ++i) worker.Schedule([&order, i] { order.push_back(i); });
    gate.Notify();
  }
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
}

TEST(WorkerThreadTest, WaitUntilIdleFromItsOwnTaskFails) {
  WorkerThread worker("test worker");
  absl::Status inner;
  worker.Schedule([&] { inner = worker.WaitUntilIdle(); });
  ASSERT_TRUE(worker.WaitUntilIdle().ok());
  EXPECT_EQ(inner.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(worker.IsCurrentThread());
}

}  // namespace
}  // namespace ember::se
