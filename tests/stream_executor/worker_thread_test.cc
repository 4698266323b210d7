// WorkerThread, the platform-independent engine under every host Stream.
#include "stream_executor/worker_thread.h"

#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace ember::se {
namespace {

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
