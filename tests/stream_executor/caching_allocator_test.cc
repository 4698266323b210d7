// CachingAllocator over a fake raw allocator: size classes, reuse, statistics, the limit, and
// concurrent use.
#include "stream_executor/caching_allocator.h"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ember::se {
namespace {

using ::testing::HasSubstr;

// Counts what reaches the raw level; can be told to fail. Shared state outlives the allocator so
// tests can check what the allocator's destructor gave back.
struct FakeRawState {
  absl::Mutex mu;
  absl::flat_hash_map<void*, uint64_t> live;
  int64_t allocs = 0;
  int64_t frees = 0;
  bool fail = false;
};

class FakeRawAllocator final : public RawAllocator {
 public:
  explicit FakeRawAllocator(std::shared_ptr<FakeRawState> state) : state_(std::move(state)) {}
  absl::StatusOr<void*> Allocate(uint64_t size) override {
    absl::MutexLock lock(&state_->mu);
    if (state_->fail) return absl::ResourceExhaustedError("fake device is full");
    // Sizes are size classes, multiples of the allocator alignment (64 in these tests).
    void* ptr = std::aligned_alloc(64, size);
    state_->live.emplace(ptr, size);
    ++state_->allocs;
    return ptr;
  }
  void Free(void* ptr, uint64_t size) override {
    absl::MutexLock lock(&state_->mu);
    auto it = state_->live.find(ptr);
    ASSERT_NE(it, state_->live.end());
    EXPECT_EQ(it->second, size);
    state_->live.erase(it);
    ++state_->frees;
    std::free(ptr);
  }

 private:
  std::shared_ptr<FakeRawState> state_;
};

std::unique_ptr<CachingAllocator> MakeAllocator(std::shared_ptr<FakeRawState> state,
                                                std::optional<int64_t> limit = std::nullopt,
                                                uint64_t alignment = 64) {
  CachingAllocatorOptions options;
  options.name = "fake device 3";
  options.alignment = alignment;
  options.limit = limit;
  auto allocator =
      CachingAllocator::Create(std::make_unique<FakeRawAllocator>(std::move(state)), options);
  EXPECT_TRUE(allocator.ok()) << allocator.status();
  return std::move(allocator).value();
}

TEST(CachingAllocatorTest, SizeClassesAreAlignedAndAtMostEighthLarger) {
  EXPECT_EQ(CachingAllocator::SizeClass(0, 64), 64u);
  EXPECT_EQ(CachingAllocator::SizeClass(1, 64), 64u);
  EXPECT_EQ(CachingAllocator::SizeClass(64, 64), 64u);
  EXPECT_EQ(CachingAllocator::SizeClass(65, 64), 128u);
  EXPECT_EQ(CachingAllocator::SizeClass(1, 256), 256u);
  EXPECT_EQ(CachingAllocator::SizeClass(1000, 256), 1024u);
  EXPECT_EQ(CachingAllocator::SizeClass(1 << 20, 256), uint64_t{1} << 20);
  EXPECT_EQ(CachingAllocator::SizeClass((1 << 20) + 1, 256), (uint64_t{1} << 20) + (1 << 17));
  for (uint64_t size : {1ull, 63ull, 100ull, 4097ull, 123457ull, 9999999ull, 1ull << 40}) {
    for (uint64_t alignment : {64ull, 256ull}) {
      const uint64_t size_class = CachingAllocator::SizeClass(size, alignment);
      EXPECT_GE(size_class, size);
      EXPECT_EQ(size_class % alignment, 0u);
      if (size > 8 * alignment) {
        EXPECT_LE(size_class, size + size / 8) << size;
      }
    }
  }
}

TEST(CachingAllocatorTest, CreateRejectsBadOptions) {
  CachingAllocatorOptions options;
  options.alignment = 48;
  auto state = std::make_shared<FakeRawState>();
  EXPECT_EQ(
      CachingAllocator::Create(std::make_unique<FakeRawAllocator>(state), options).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CachingAllocator::Create(nullptr, CachingAllocatorOptions()).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CachingAllocatorTest, FreedBlocksAreReusedForTheSameClass) {
  auto state = std::make_shared<FakeRawState>();
  auto allocator = MakeAllocator(state);
  auto a = allocator->Allocate(1000);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(allocator->Free(*a).ok());
  auto b = allocator->Allocate(1010);  // same class (1024)
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(state->allocs, 1);
  auto c = allocator->Allocate(5000);  // another class: a new raw block
  ASSERT_TRUE(c.ok());
  EXPECT_NE(*c, *b);
  EXPECT_EQ(state->allocs, 2);
}

TEST(CachingAllocatorTest, ZeroSizeAllocationsAreDistinctAndNonNull) {
  auto state = std::make_shared<FakeRawState>();
  auto allocator = MakeAllocator(state);
  std::set<void*> seen;
  for (int i = 0; i < 10; ++i) {
    auto ptr = allocator->Allocate(0);
    ASSERT_TRUE(ptr.ok());
    EXPECT_NE(*ptr, nullptr);
    EXPECT_TRUE(seen.insert(*ptr).second);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(*ptr) % 64, 0u);
  }
}

TEST(CachingAllocatorTest, StatisticsFollowAllocationsFreesAndClear) {
  auto state = std::make_shared<FakeRawState>();
  auto allocator = MakeAllocator(state, /*limit=*/int64_t{1} << 20);
  auto a = allocator->Allocate(1000);  // class 1024
  auto b = allocator->Allocate(3000);  // class 3072
  ASSERT_TRUE(a.ok() && b.ok());
  MemoryStats stats = allocator->GetStats();
  EXPECT_EQ(stats.bytes_in_use, 1024 + 3072);
  EXPECT_EQ(stats.peak_bytes_in_use, 1024 + 3072);
  EXPECT_EQ(stats.num_allocs, 2);
  EXPECT_EQ(stats.largest_alloc_size, 3000);
  EXPECT_EQ(stats.bytes_limit, int64_t{1} << 20);
  EXPECT_EQ(stats.bytes_reserved, 1024 + 3072);
  EXPECT_EQ(stats.pool_bytes, 0);
  EXPECT_EQ(stats.largest_free_block_bytes, 0);

  ASSERT_TRUE(allocator->Free(*b).ok());
  stats = allocator->GetStats();
  EXPECT_EQ(stats.bytes_in_use, 1024);
  EXPECT_EQ(stats.peak_bytes_in_use, 1024 + 3072);
  EXPECT_EQ(stats.bytes_reserved, 1024 + 3072);
  EXPECT_EQ(stats.peak_bytes_reserved, 1024 + 3072);
  EXPECT_EQ(stats.pool_bytes, 3072);
  EXPECT_EQ(stats.peak_pool_bytes, 3072);
  EXPECT_EQ(stats.largest_free_block_bytes, 3072);

  allocator->ClearStats();
  stats = allocator->GetStats();
  EXPECT_EQ(stats.peak_bytes_in_use, 1024);
  EXPECT_EQ(stats.num_allocs, 0);
  EXPECT_EQ(stats.largest_alloc_size, 0);
  EXPECT_EQ(stats.peak_bytes_reserved, 1024 + 3072);

  allocator->ReleaseCache();
  stats = allocator->GetStats();
  EXPECT_EQ(stats.pool_bytes, 0);
  EXPECT_EQ(stats.bytes_reserved, 1024);
  EXPECT_EQ(state->frees, 1);
}

TEST(CachingAllocatorTest, NoLimitLeavesBytesLimitUntracked) {
  auto allocator = MakeAllocator(std::make_shared<FakeRawState>());
  EXPECT_FALSE(allocator->GetStats().bytes_limit.has_value());
}

TEST(CachingAllocatorTest, PastTheLimitIsResourceExhaustedWithSizes) {
  auto state = std::make_shared<FakeRawState>();
  auto allocator = MakeAllocator(state, /*limit=*/4096);
  auto a = allocator->Allocate(3000);
  ASSERT_TRUE(a.ok());
  auto b = allocator->Allocate(2000);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(b.status().message(), HasSubstr("fake device 3"));
  EXPECT_THAT(b.status().message(), HasSubstr("2000 bytes"));
  EXPECT_THAT(b.status().message(), HasSubstr("3072 bytes in use"));
  EXPECT_THAT(b.status().message(), HasSubstr("limit of 4096 bytes"));
  // A failed allocation changes nothing.
  EXPECT_EQ(allocator->GetStats().bytes_in_use, 3072);
  EXPECT_EQ(allocator->GetStats().num_allocs, 1);
}

TEST(CachingAllocatorTest, HugeRequestsFailCleanly) {
  auto allocator = MakeAllocator(std::make_shared<FakeRawState>());
  auto huge = allocator->Allocate(~uint64_t{0});
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(CachingAllocatorTest, CacheIsReleasedToStayUnderTheLimit) {
  auto state = std::make_shared<FakeRawState>();
  auto allocator = MakeAllocator(state, /*limit=*/4096);
  auto a = allocator->Allocate(3000);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(allocator->Free(*a).ok());
  // 3072 cached + 2048 would pass the limit: the cache goes back first.
  auto b = allocator->Allocate(2000);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(state->frees, 1);
  EXPECT_EQ(allocator->GetStats().bytes_reserved, 2048);
}

TEST(CachingAllocatorTest, RawFailureReleasesCacheAndRetries) {
  auto state = std::make_shared<FakeRawState>();
  auto allocator = MakeAllocator(state);
  auto a = allocator->Allocate(100);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(allocator->Free(*a).ok());
  state->fail = true;
  auto b = allocator->Allocate(5000);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(b.status().message(), HasSubstr("fake device is full"));
  EXPECT_THAT(b.status().message(), HasSubstr("5000 bytes"));
  EXPECT_EQ(state->frees, 1);  // the cached block was given back before the retry
}

TEST(CachingAllocatorTest, FreeOfUnknownPointerIsAnError) {
  auto allocator = MakeAllocator(std::make_shared<FakeRawState>());
  int not_allocated = 0;
  absl::Status status = allocator->Free(&not_allocated);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  auto a = allocator->Allocate(10);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(allocator->Free(*a).ok());
  EXPECT_EQ(allocator->Free(*a).code(), absl::StatusCode::kInvalidArgument);  // double free
}

TEST(CachingAllocatorTest, DestructionReturnsEverything) {
  auto state = std::make_shared<FakeRawState>();
  {
    auto allocator = MakeAllocator(state);
    auto a = allocator->Allocate(100);
    auto b = allocator->Allocate(100000);
    ASSERT_TRUE(a.ok() && b.ok());
    ASSERT_TRUE(allocator->Free(*a).ok());
  }
  EXPECT_TRUE(state->live.empty());
  EXPECT_EQ(state->allocs, state->frees);
}

TEST(CachingAllocatorTest, ConcurrentAllocateAndFree) {
  auto state = std::make_shared<FakeRawState>();
  auto allocator = MakeAllocator(state);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&allocator, t] {
      std::vector<void*> held;
      for (int i = 0; i < 500; ++i) {
        auto ptr = allocator->Allocate(64 * (1 + (i * 7 + t) % 40));
        ASSERT_TRUE(ptr.ok());
        static_cast<char*>(*ptr)[0] = static_cast<char>(t);  // touch it
        held.push_back(*ptr);
        if (held.size() > 10) {
          ASSERT_TRUE(allocator->Free(held.front()).ok());
          held.erase(held.begin());
        }
      }
      for (void* ptr : held) ASSERT_TRUE(allocator->Free(ptr).ok());
    });
  }
  for (auto& thread : threads) thread.join();
  const MemoryStats stats = allocator->GetStats();
  EXPECT_EQ(stats.bytes_in_use, 0);
  EXPECT_EQ(stats.num_allocs, 8 * 500);
  EXPECT_EQ(*stats.pool_bytes, *stats.bytes_reserved);
  EXPECT_LT(state->allocs, 8 * 500);  // blocks were reused
}

TEST(CachingAllocatorTest, ChargedBytesCountInUseAndAgainstTheLimit) {
  // As the device's MemoryAccount: bytes held outside its blocks (the evaluator's values) show as
  // in use and share the limit with the blocks; a refused charge counts nothing.
  auto state = std::make_shared<FakeRawState>();
  std::unique_ptr<CachingAllocator> allocator = MakeAllocator(state, /*limit=*/4096);
  absl::StatusOr<void*> block = allocator->Allocate(1024);
  ASSERT_TRUE(block.ok());
  ASSERT_TRUE(allocator->Charge(2048).ok());
  EXPECT_EQ(allocator->GetStats().bytes_in_use, 1024 + 2048);
  EXPECT_EQ(allocator->GetStats().num_allocs, 1);  // a charge is not an allocation
  absl::Status refused = allocator->Charge(2048);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.message().find("fake device 3"), std::string::npos) << refused;
  EXPECT_EQ(allocator->Allocate(2048).status().code(), absl::StatusCode::kResourceExhausted);
  allocator->Release(2048);
  EXPECT_EQ(allocator->GetStats().bytes_in_use, 1024);
  EXPECT_EQ(allocator->GetStats().peak_bytes_in_use, 1024 + 2048);
  // Cached blocks are given back to make room for a charge.
  ASSERT_TRUE(allocator->Free(*block).ok());
  EXPECT_TRUE(allocator->Charge(4096).ok());
  EXPECT_EQ(allocator->GetStats().pool_bytes, 0);
  allocator->Release(4096);
  EXPECT_EQ(allocator->GetStats().bytes_in_use, 0);
}

}  // namespace
}  // namespace ember::se
