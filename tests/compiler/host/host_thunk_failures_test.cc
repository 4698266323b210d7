// Failures inside host work stay inside their launch: an exception a thunk throws (std::bad_alloc
// from a container it sizes) fails the launch with an error naming the thunk, the stream's
// worker thread lives on and runs the next launch; a part of a ParallelFor that throws reaches
// its caller instead of ending a pool thread; parts charge what they allocate to the caller's
// memory account, on whatever thread they run.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <new>
#include <stdexcept>
#include <vector>

#include "base/memory_account.h"
#include "compiler/host/host_thunks.h"
#include "compiler/host/thread_pool.h"
#include "stream_executor/host/host_executor.h"

namespace ember::host {
namespace {

class ThrowingThunk final : public HostThunk {
 public:
  ThrowingThunk(std::string name, bool bad_alloc)
      : HostThunk(Kind::kEvaluator, std::move(name)), bad_alloc_(bad_alloc) {}
  absl::Status Run(HostRunContext&) const override {
    if (bad_alloc_) throw std::bad_alloc();
    throw std::runtime_error("boom");
  }

 private:
  bool bad_alloc_;
};

class CountingThunk final : public HostThunk {
 public:
  explicit CountingThunk(std::atomic<int>* runs) : HostThunk(Kind::kKernel, "count"), runs_(runs) {}
  absl::Status Run(HostRunContext&) const override {
    ++*runs_;
    return absl::OkStatus();
  }

 private:
  std::atomic<int>* runs_;
};

absl::Status Launch(const HostThunk& program, se::Stream* stream) {
  backend::ExecuteParams params;
  params.stream = stream;
  params.buffers = std::make_shared<backend::BufferAllocations>(std::vector<se::DeviceMemory>{});
  params.status = std::make_shared<backend::LaunchStatus>();
  absl::Status enqueued = program.ExecuteOnStream(params);
  if (!enqueued.ok()) return enqueued;
  absl::Status done = stream->BlockHostUntilDone();
  if (!done.ok()) return done;
  return params.status->status();
}

TEST(HostThunkFailures, ExceptionsFailTheirLaunchAndTheStreamRunsTheNext) {
  auto executor = se::host::HostExecutor::Create(0, std::nullopt);
  ASSERT_TRUE(executor.ok()) << executor.status();
  auto stream = (*executor)->CreateStream();
  ASSERT_TRUE(stream.ok()) << stream.status();
  std::atomic<int> runs{0};

  for (bool bad_alloc : {true, false}) {
    std::vector<std::unique_ptr<HostThunk>> thunks;
    thunks.push_back(std::make_unique<ThrowingThunk>("evaluator.1 (stablehlo.sort at f.py:3)",
                                                     bad_alloc));
    thunks.push_back(std::make_unique<CountingThunk>(&runs));
    HostThunkSequence failing("jit_f", std::move(thunks), 0);
    absl::Status status = Launch(failing, stream->get());
    EXPECT_EQ(status.code(), bad_alloc ? absl::StatusCode::kResourceExhausted
                                       : absl::StatusCode::kInternal)
        << status;
    EXPECT_NE(status.message().find("evaluator.1 (stablehlo.sort at f.py:3)"), std::string::npos)
        << status;
    EXPECT_EQ(runs.load(), 0);  // the rest of the failed launch is skipped
  }

  std::vector<std::unique_ptr<HostThunk>> thunks;
  thunks.push_back(std::make_unique<CountingThunk>(&runs));
  HostThunkSequence next("jit_g", std::move(thunks), 0);
  EXPECT_TRUE(Launch(next, stream->get()).ok());
  EXPECT_EQ(runs.load(), 1);
  EXPECT_TRUE((*stream)->status().ok()) << (*stream)->status();
}

TEST(HostThunkFailures, AThrowingParallelForPartReachesTheCaller) {
  ThreadPool pool(4);
  for (int round = 0; round < 20; ++round) {
    EXPECT_THROW(pool.ParallelFor(4000, 1,
                                  [&](int64_t begin, int64_t) {
                                    if (begin > 0) throw std::bad_alloc();
                                  }),
                 std::bad_alloc);
  }
  // Every worker is still there and every part runs.
  std::atomic<int64_t> sum{0};
  pool.ParallelFor(4000, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 4000 * 3999 / 2);
}

// Counts charges (thread-safe: parts run on several threads).
class CountingAccount final : public MemoryAccount {
 public:
  absl::Status Charge(uint64_t bytes) override {
    charged_ += bytes;
    return absl::OkStatus();
  }
  void Release(uint64_t bytes) override { released_ += bytes; }
  uint64_t charged() const { return charged_.load(); }
  uint64_t released() const { return released_.load(); }

 private:
  std::atomic<uint64_t> charged_{0}, released_{0};
};

TEST(HostThunkFailures, ParallelForPartsChargeTheCallersAccount) {
  ThreadPool pool(4);
  CountingAccount account;
  ScopedMemoryAccount scope(&account);
  const ir::Shape shape = ir::Shape::Make(ir::ElementType::kF32, {16}).value();
  pool.ParallelFor(64, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      absl::StatusOr<ir::Literal> value = ir::Literal::Create(shape);  // 64 bytes, freed at once
      ASSERT_TRUE(value.ok());
    }
  });
  EXPECT_EQ(account.charged(), 64u * 64u);
  EXPECT_EQ(account.released(), 64u * 64u);
}

}  // namespace
}  // namespace ember::host
