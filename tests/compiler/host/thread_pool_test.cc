// ThreadPool::ParallelFor's parts: every item in exactly one part, parts no smaller than asked
// (but the last), at most size() x parts_per_thread of them; with several parts per thread, a
// pool whose workers are all busy elsewhere leaves every part to the caller, which finishes
// alone instead of waiting for them.
#include "compiler/host/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace ember::host {
namespace {

// The parts one ParallelFor call ran, sorted.
std::vector<std::pair<int64_t, int64_t>> Parts(ThreadPool& pool, int64_t n, int64_t min_per_part,
                                               int parts_per_thread) {
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> parts;
  pool.ParallelFor(
      n, min_per_part,
      [&](int64_t begin, int64_t end) {
        std::lock_guard<std::mutex> lock(mu);
        parts.emplace_back(begin, end);
      },
      parts_per_thread);
  std::sort(parts.begin(), parts.end());
  return parts;
}

TEST(ThreadPoolTest, PartsCoverTheRangeOnce) {
  ThreadPool pool(3);
  for (int parts_per_thread : {1, 4}) {
    for (int64_t n : {1, 7, 100, 4096, 100003}) {
      for (int64_t min_per_part : {1, 10, 5000}) {
        SCOPED_TRACE(testing::Message() << "n " << n << " min " << min_per_part << " per thread "
                                        << parts_per_thread);
        const auto parts = Parts(pool, n, min_per_part, parts_per_thread);
        ASSERT_FALSE(parts.empty());
        EXPECT_EQ(parts.front().first, 0);
        EXPECT_EQ(parts.back().second, n);
        for (size_t k = 0; k + 1 < parts.size(); ++k) {
          EXPECT_EQ(parts[k].second, parts[k + 1].first);
          EXPECT_GE(parts[k].second - parts[k].first, std::min(n, min_per_part));
        }
        EXPECT_LE(static_cast<int64_t>(parts.size()), int64_t{3} * parts_per_thread);
        if (n / min_per_part >= 3 * parts_per_thread) {
          EXPECT_EQ(static_cast<int64_t>(parts.size()), 3 * parts_per_thread);
        }
      }
    }
  }
}

TEST(ThreadPoolTest, TheCallerTakesThePartsOfBusyWorkers) {
  ThreadPool pool(2);
  // The only worker is held by another caller's part until `release`.
  std::atomic<bool> release{false}, holding{false};
  std::thread other([&] {
    pool.ParallelFor(2, 1, [&](int64_t begin, int64_t) {
      if (begin == 0) return;
      holding = true;
      while (!release) std::this_thread::yield();
    });
  });
  while (!holding) std::this_thread::yield();
  std::atomic<int64_t> sum{0};
  std::atomic<int> calls{0};
  pool.ParallelFor(
      1000, 1,
      [&](int64_t begin, int64_t end) {
        ++calls;
        for (int64_t i = begin; i < end; ++i) sum += i;
      },
      /*parts_per_thread=*/4);
  EXPECT_EQ(sum.load(), 1000 * 999 / 2);
  EXPECT_EQ(calls.load(), 8);
  release = true;
  other.join();
}

TEST(ThreadPoolTest, AThrowingSmallPartReachesTheCaller) {
  ThreadPool pool(4);
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> ran{0};
    EXPECT_THROW(pool.ParallelFor(
                     4000, 1,
                     [&](int64_t begin, int64_t) {
                       ++ran;
                       if (begin == 1000) throw std::runtime_error("part");
                     },
                     /*parts_per_thread=*/4),
                 std::runtime_error);
    EXPECT_EQ(ran.load(), 16);  // the other parts still ran
  }
}

}  // namespace
}  // namespace ember::host
