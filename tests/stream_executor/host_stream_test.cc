// Host streams: ordering, copies, events, callbacks, errors, cross-stream and cross-device work,
// concurrency, and draining on destruction.
#include "stream_executor/host/host_stream.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/stream_executor/host_test_util.h"

namespace ember::se {
namespace {

using ::ember::se::testing::ExecutorOf;
using ::ember::se::testing::MakeHostPlatform;
using ::ember::se::testing::RandomBytes;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

class HostStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    platform_ = MakeHostPlatform(2);
    executor_ = ExecutorOf(*platform_, 0);
    auto stream = executor_->CreateStream();
    ASSERT_TRUE(stream.ok()) << stream.status();
    stream_ = std::move(stream).value();
  }

  std::unique_ptr<Stream> NewStream(Executor* executor) {
    auto stream = executor->CreateStream();
    EXPECT_TRUE(stream.ok()) << stream.status();
    return std::move(stream).value();
  }

  DeviceMemory Alloc(uint64_t size, Executor* executor = nullptr) {
    auto mem = (executor ? executor : executor_)->Allocate(size);
    EXPECT_TRUE(mem.ok()) << mem.status();
    return mem.value();
  }

  // Blocks `stream` until the returned notification is notified.
  static std::unique_ptr<absl::Notification> Block(Stream& stream) {
    auto gate = std::make_unique<absl::Notification>();
    EXPECT_TRUE(stream
                    .EnqueueHostCallback([gate = gate.get()] {
                      gate->WaitForNotification();
                      return absl::OkStatus();
                    })
                    .ok());
    return gate;
  }

  std::unique_ptr<Platform> platform_;
  Executor* executor_ = nullptr;
  std::unique_ptr<Stream> stream_;
};

TEST_F(HostStreamTest, CopiesRoundTripRandomData) {
  const std::vector<uint8_t> in = RandomBytes(100003, 1);
  DeviceMemory a = Alloc(in.size());
  DeviceMemory b = Alloc(in.size());
  std::vector<uint8_t> out(in.size(), 0);
  ASSERT_TRUE(stream_->MemcpyH2D(a, in.data(), in.size()).ok());
  ASSERT_TRUE(stream_->MemcpyD2D(b, a, in.size()).ok());
  ASSERT_TRUE(stream_->MemcpyD2H(out.data(), b, in.size()).ok());
  ASSERT_TRUE(stream_->BlockHostUntilDone().ok());
  EXPECT_EQ(in, out);
}

TEST_F(HostStreamTest, MemsetThenPartialCopy) {
  DeviceMemory mem = Alloc(256);
  std::vector<uint8_t> out(256, 0);
  const std::vector<uint8_t> head = RandomBytes(100, 2);
  ASSERT_TRUE(stream_->Memset(mem, 0xA5, 256).ok());
  ASSERT_TRUE(stream_->MemcpyH2D(mem, head.data(), head.size()).ok());
  ASSERT_TRUE(stream_->MemcpyD2H(out.data(), mem, 256).ok());
  ASSERT_TRUE(stream_->BlockHostUntilDone().ok());
  std::vector<uint8_t> expected(256, 0xA5);
  std::memcpy(expected.data(), head.data(), head.size());
  EXPECT_EQ(out, expected);
}

TEST_F(HostStreamTest, EnqueueChecksArguments) {
  DeviceMemory mem = Alloc(64);
  char host[128] = {};
  EXPECT_EQ(stream_->MemcpyH2D(mem, host, 128).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(stream_->MemcpyD2H(host, mem, 65).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(stream_->MemcpyH2D(mem, nullptr, 8).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(stream_->MemcpyD2D(DeviceMemory{}, mem, 8).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(stream_->Memset(mem, 0, 1000).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(stream_->EnqueueHostCallback(nullptr).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(stream_->WaitFor(nullptr).code(), absl::StatusCode::kInvalidArgument);
  // Rejected calls leave the stream healthy.
  EXPECT_TRUE(stream_->BlockHostUntilDone().ok());
}

TEST_F(HostStreamTest, CallbacksRunInOrder) {
  constexpr int kCount = 2000;
  std::vector<int> order;  // touched only by the stream's worker
  for (int i = 0; i < kCount; ++i) {
    ASSERT_TRUE(stream_
                    ->EnqueueHostCallback([&order, i] {
                      order.push_back(i);
                      return absl::OkStatus();
                    })
                    .ok());
  }
  ASSERT_TRUE(stream_->BlockHostUntilDone().ok());
  ASSERT_EQ(order.size(), static_cast<size_t>(kCount));
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(order[i], i);
}

TEST_F(HostStreamTest, EventIsNotReadyBeforeTheStreamReachesIt) {
  auto gate = Block(*stream_);
  auto event = stream_->RecordEvent();
  ASSERT_TRUE(event.ok());
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_FALSE((*event)->IsReady());
  std::atomic<int> calls{0};
  (*event)->AndThen([&calls](absl::Status status) {
    EXPECT_TRUE(status.ok());
    ++calls;
  });
  EXPECT_EQ(calls.load(), 0);
  gate->Notify();
  EXPECT_TRUE((*event)->Await().ok());
  EXPECT_TRUE((*event)->IsReady());
  ASSERT_TRUE(stream_->BlockHostUntilDone().ok());
  EXPECT_EQ(calls.load(), 1);
  // Once ready, AndThen runs synchronously.
  bool ran_inline = false;
  (*event)->AndThen([&ran_inline](absl::Status) { ran_inline = true; });
  EXPECT_TRUE(ran_inline);
}

TEST_F(HostStreamTest, AndThenFiresExactlyOnceAfterTheEventIsDropped) {
  auto gate = Block(*stream_);
  std::atomic<int> calls{0};
  absl::Notification fired;
  {
    auto event = stream_->RecordEvent();
    ASSERT_TRUE(event.ok());
    (*event)->AndThen([&](absl::Status status) {
      EXPECT_TRUE(status.ok());
      ++calls;
      fired.Notify();
    });
  }  // the only user reference is gone before the stream gets there
  EXPECT_EQ(calls.load(), 0);
  gate->Notify();
  fired.WaitForNotification();
  ASSERT_TRUE(stream_->BlockHostUntilDone().ok());
  EXPECT_EQ(calls.load(), 1);
}

TEST_F(HostStreamTest, ManyAndThenCallbacksEachRunOnce) {
  auto gate = Block(*stream_);
  auto event = stream_->RecordEvent();
  ASSERT_TRUE(event.ok());
  std::vector<std::atomic<int>> calls(50);
  for (auto& count : calls) {
    (*event)->AndThen([&count](absl::Status) { ++count; });
  }
  gate->Notify();
  ASSERT_TRUE(stream_->BlockHostUntilDone().ok());
  for (auto& count : calls) EXPECT_EQ(count.load(), 1);
}

TEST_F(HostStreamTest, FailedCallbackPoisonsLaterEventsOnly) {
  auto before = stream_->RecordEvent();
  ASSERT_TRUE(before.ok());
  ASSERT_TRUE(
      stream_->EnqueueHostCallback([] { return absl::DataLossError("kernel 7 failed"); }).ok());
  bool later_work_ran = false;
  ASSERT_TRUE(stream_
                  ->EnqueueHostCallback([&later_work_ran] {
                    later_work_ran = true;
                    return absl::AbortedError("second failure is not the first");
                  })
                  .ok());
  auto after = stream_->RecordEvent();
  ASSERT_TRUE(after.ok());

  EXPECT_TRUE((*before)->Await().ok());
  absl::Status after_status = (*after)->Await();
  EXPECT_EQ(after_status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(after_status.message(), HasSubstr("kernel 7 failed"));
  absl::Status then_status;
  (*after)->AndThen([&then_status](absl::Status status) { then_status = status; });
  EXPECT_EQ(then_status.code(), absl::StatusCode::kDataLoss);

  absl::Status done = stream_->BlockHostUntilDone();
  EXPECT_EQ(done.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(stream_->status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(later_work_ran);  // work after an error still runs
  // Other streams are unaffected.
  auto other = NewStream(executor_);
  EXPECT_TRUE(other->BlockHostUntilDone().ok());
}

TEST_F(HostStreamTest, BlockHostUntilDoneFromOwnCallbackIsAnError) {
  absl::Status inner;
  Stream* stream = stream_.get();
  ASSERT_TRUE(stream_
                  ->EnqueueHostCallback([stream, &inner] {
                    inner = stream->BlockHostUntilDone();
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_TRUE(stream_->BlockHostUntilDone().ok());
  EXPECT_EQ(inner.code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(HostStreamTest, WaitForOrdersAcrossStreams) {
  auto producer = NewStream(executor_);
  auto gate = Block(*producer);
  const std::vector<uint8_t> in = RandomBytes(4096, 3);
  DeviceMemory mem = Alloc(in.size());
  ASSERT_TRUE(producer->MemcpyH2D(mem, in.data(), in.size()).ok());
  auto produced = producer->RecordEvent();
  ASSERT_TRUE(produced.ok());

  std::vector<uint8_t> out(in.size(), 0);
  ASSERT_TRUE(stream_->WaitFor(*produced).ok());
  ASSERT_TRUE(stream_->MemcpyD2H(out.data(), mem, out.size()).ok());
  auto consumed = stream_->RecordEvent();
  ASSERT_TRUE(consumed.ok());
  absl::SleepFor(absl::Milliseconds(20));
  EXPECT_FALSE((*consumed)->IsReady());  // held back by the producer
  gate->Notify();
  ASSERT_TRUE((*consumed)->Await().ok());
  EXPECT_EQ(in, out);
}

TEST_F(HostStreamTest, WaitForDoesNotImportTheOtherStreamsError) {
  auto producer = NewStream(executor_);
  ASSERT_TRUE(producer->EnqueueHostCallback([] { return absl::InternalError("boom"); }).ok());
  auto failed = producer->RecordEvent();
  ASSERT_TRUE(failed.ok());
  ASSERT_TRUE(stream_->WaitFor(*failed).ok());
  auto mine = stream_->RecordEvent();
  ASSERT_TRUE(mine.ok());
  EXPECT_TRUE((*mine)->Await().ok());
  EXPECT_EQ((*failed)->Await().code(), absl::StatusCode::kInternal);
}

TEST_F(HostStreamTest, CrossDeviceCopy) {
  Executor* other = ExecutorOf(*platform_, 1);
  const std::vector<uint8_t> in = RandomBytes(77777, 4);
  DeviceMemory src = Alloc(in.size());
  DeviceMemory dst = Alloc(in.size(), other);
  ASSERT_TRUE(stream_->MemcpyH2D(src, in.data(), in.size()).ok());
  ASSERT_TRUE(stream_->MemcpyD2D(dst, src, in.size()).ok());
  auto copied = stream_->RecordEvent();
  ASSERT_TRUE(copied.ok());
  auto other_stream = NewStream(other);
  std::vector<uint8_t> out(in.size(), 0);
  ASSERT_TRUE(other_stream->WaitFor(*copied).ok());
  ASSERT_TRUE(other_stream->MemcpyD2H(out.data(), dst, out.size()).ok());
  ASSERT_TRUE(other_stream->BlockHostUntilDone().ok());
  EXPECT_EQ(in, out);
}

TEST_F(HostStreamTest, SeveralThreadsEnqueueAtOnce) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 300;
  absl::Mutex mu;
  std::vector<std::vector<int>> seen(kThreads);  // per producer, in execution order
  std::vector<std::thread> threads;
  std::atomic<int> events_fired{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        ASSERT_TRUE(stream_
                        ->EnqueueHostCallback([&, t, i] {
                          absl::MutexLock lock(&mu);
                          seen[t].push_back(i);
                          return absl::OkStatus();
                        })
                        .ok());
        if (i % 50 == 0) {
          auto event = stream_->RecordEvent();
          ASSERT_TRUE(event.ok());
          (*event)->AndThen([&events_fired](absl::Status) { ++events_fired; });
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  ASSERT_TRUE(stream_->BlockHostUntilDone().ok());
  EXPECT_EQ(events_fired.load(), kThreads * (kPerThread / 50));
  for (int t = 0; t < kThreads; ++t) {
    std::vector<int> expected(kPerThread);
    for (int i = 0; i < kPerThread; ++i) expected[i] = i;
    EXPECT_THAT(seen[t], ElementsAreArray(expected)) << "producer " << t;
  }
}

TEST_F(HostStreamTest, DestroyingAStreamDrainsItsQueue) {
  auto stream = NewStream(executor_);
  auto gate = Block(*stream);
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(stream
                    ->EnqueueHostCallback([&ran] {
                      ++ran;
                      return absl::OkStatus();
                    })
                    .ok());
  }
  auto event = stream->RecordEvent();
  ASSERT_TRUE(event.ok());
  std::thread releaser([&gate] {
    absl::SleepFor(absl::Milliseconds(20));
    gate->Notify();
  });
  stream.reset();  // blocks until the gate opens and the queue is empty
  releaser.join();
  EXPECT_EQ(ran.load(), 100);
  EXPECT_TRUE((*event)->IsReady());
  EXPECT_TRUE((*event)->Await().ok());  // the event outlives its stream
}

TEST_F(HostStreamTest, CallbackMayEnqueueOnItsOwnStream) {
  Stream* stream = stream_.get();
  absl::Notification second_ran;
  ASSERT_TRUE(stream_
                  ->EnqueueHostCallback([stream, &second_ran] {
                    return stream->EnqueueHostCallback([&second_ran] {
                      second_ran.Notify();
                      return absl::OkStatus();
                    });
                  })
                  .ok());
  EXPECT_TRUE(second_ran.WaitForNotificationWithTimeout(absl::Seconds(10)));
}

TEST_F(HostStreamTest, IdleStreamRunsACallbackInlineOnTheCallingThread) {
  std::thread::id ran_on;
  absl::AnyInvocable<absl::Status() &&> fn = [&ran_on] {
    ran_on = std::this_thread::get_id();
    return absl::OkStatus();
  };
  ASSERT_TRUE(stream_->BlockHostUntilDone().ok());
  EXPECT_TRUE(stream_->TryRunHostCallbackInline(fn));
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST_F(HostStreamTest, BusyStreamDoesNotRunACallbackInline) {
  std::unique_ptr<absl::Notification> gate = Block(*stream_);
  bool ran = false;
  absl::AnyInvocable<absl::Status() &&> fn = [&ran] {
    ran = true;
    return absl::OkStatus();
  };
  EXPECT_FALSE(stream_->TryRunHostCallbackInline(fn));
  EXPECT_FALSE(ran);
  // The callback is left to the caller, who enqueues it behind the blocking work.
  ASSERT_NE(fn, nullptr);
  ASSERT_TRUE(stream_->EnqueueHostCallback(std::move(fn)).ok());
  gate->Notify();
  ASSERT_TRUE(stream_->BlockHostUntilDone().ok());
  EXPECT_TRUE(ran);
}

TEST_F(HostStreamTest, WorkEnqueuedDuringAnInlineCallbackRunsAfterIt) {
  absl::Mutex mu;
  std::vector<std::string> order;
  Stream* stream = stream_.get();
  absl::AnyInvocable<absl::Status() &&> fn = [&] {
    // Another thread enqueues while the inline callback runs; the stream's worker must wait.
    std::thread other([&] {
      EXPECT_TRUE(stream
                      ->EnqueueHostCallback([&] {
                        absl::MutexLock lock(&mu);
                        order.push_back("enqueued");
                        return absl::OkStatus();
                      })
                      .ok());
    });
    other.join();
    absl::SleepFor(absl::Milliseconds(50));
    absl::MutexLock lock(&mu);
    order.push_back("inline");
    return absl::OkStatus();
  };
  ASSERT_TRUE(stream_->TryRunHostCallbackInline(fn));
  ASSERT_TRUE(stream_->BlockHostUntilDone().ok());
  absl::MutexLock lock(&mu);
  EXPECT_THAT(order, ElementsAreArray({"inline", "enqueued"}));
}

TEST_F(HostStreamTest, FailedInlineCallbackPoisonsTheStream) {
  absl::AnyInvocable<absl::Status() &&> fn = [] { return absl::InternalError("inline failed"); };
  ASSERT_TRUE(stream_->TryRunHostCallbackInline(fn));
  EXPECT_THAT(stream_->status().message(), HasSubstr("inline failed"));
}

TEST_F(HostStreamTest, ACallbackOfTheStreamCannotRunAnotherInline) {
  Stream* stream = stream_.get();
  std::atomic<int> inline_result{-1};
  ASSERT_TRUE(stream_
                  ->EnqueueHostCallback([stream, &inline_result] {
                    absl::AnyInvocable<absl::Status() &&> fn = [] { return absl::OkStatus(); };
                    inline_result = stream->TryRunHostCallbackInline(fn) ? 1 : 0;
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_TRUE(stream_->BlockHostUntilDone().ok());
  EXPECT_EQ(inline_result.load(), 0);
}

TEST_F(HostStreamTest, ACallbackOfTheStreamRunsNestedWorkAtOnce) {
  // A callback launching work on its own stream (a host callback executing a program on its
  // device): the nested work and what it enqueues run inside the callback, in order, before the
  // work queued behind the callback; from another thread nothing runs nested.
  Stream* stream = stream_.get();
  std::vector<std::string> order;
  absl::AnyInvocable<absl::Status() &&> outside = [] { return absl::OkStatus(); };
  EXPECT_FALSE(stream_->TryRunNestedHostCallback(outside));
  ASSERT_TRUE(stream_
                  ->EnqueueHostCallback([stream, &order] {
                    absl::AnyInvocable<absl::Status() &&> fn = [stream, &order] {
                      order.push_back("nested");
                      return stream->EnqueueHostCallback([&order] {
                        order.push_back("enqueued by nested");
                        return absl::OkStatus();
                      });
                    };
                    EXPECT_TRUE(stream->TryRunNestedHostCallback(fn));
                    order.push_back("callback after nested");
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_TRUE(stream_
                  ->EnqueueHostCallback([&order] {
                    order.push_back("queued behind");
                    return absl::OkStatus();
                  })
                  .ok());
  ASSERT_TRUE(stream_->BlockHostUntilDone().ok());
  EXPECT_THAT(order, ElementsAreArray({"nested", "enqueued by nested", "callback after nested",
                                       "queued behind"}));
}

TEST_F(HostStreamTest, AndThenCallbackMayRecordAnotherEvent) {
  auto first = stream_->RecordEvent();
  ASSERT_TRUE(first.ok());
  Stream* stream = stream_.get();
  absl::Notification chained;
  std::shared_ptr<Event> second;
  (*first)->AndThen([stream, &second, &chained](absl::Status) {
    auto event = stream->RecordEvent();
    ASSERT_TRUE(event.ok());
    second = *event;
    second->AndThen([&chained](absl::Status) { chained.Notify(); });
  });
  EXPECT_TRUE(chained.WaitForNotificationWithTimeout(absl::Seconds(10)));
}

}  // namespace
}  // namespace ember::se
