// ThreadScratch: slots kept between launches on the calling thread, given back after a launch
// that held more than 64 MiB, and separate storage for each owner and thread.
#include "compiler/host/thread_scratch.h"

#include <gtest/gtest.h>

#include <thread>

namespace ember::host::fast {
namespace {

struct OwnerA;
struct OwnerB;
using ScratchA = ThreadScratch<float, OwnerA>;
using ScratchB = ThreadScratch<float, OwnerB>;

TEST(ThreadScratchTest, KeepsItsRoomBetweenLaunches) {
  float* first;
  {
    ScratchA scratch;
    first = scratch.Get(0, 1000);
    first[999] = 1;
  }
  EXPECT_GE(ScratchA::HeldBytes(), 1000 * sizeof(float));
  ScratchA scratch;
  EXPECT_EQ(scratch.Get(0, 500), first);  // warm: no new allocation
  EXPECT_EQ(scratch.Get(0, 1000)[999], 1);
}

TEST(ThreadScratchTest, GivesBackWhatALaunchPastTheLimitHeld) {
  {
    ThreadScratch<char, OwnerA> scratch;
    scratch.Get(0, 40 << 20);
    scratch.Get(1, 30 << 20);  // 70 MiB in all
    EXPECT_GE((ThreadScratch<char, OwnerA>::HeldBytes()), size_t{70} << 20);
  }
  EXPECT_EQ((ThreadScratch<char, OwnerA>::HeldBytes()), 0u);
  {
    ThreadScratch<char, OwnerA> scratch;
    scratch.Get(2, 60 << 20);  // under the limit: kept
  }
  EXPECT_GE((ThreadScratch<char, OwnerA>::HeldBytes()), size_t{60} << 20);
}

TEST(ThreadScratchTest, OwnersAndThreadsDoNotShareSlots) {
  ScratchA a;
  ScratchB b;
  float* pa = a.Get(1, 64);
  float* pb = b.Get(1, 64);
  EXPECT_NE(pa, pb);
  pa[0] = 1;
  pb[0] = 2;
  EXPECT_EQ(pa[0], 1);
  float* other = nullptr;
  std::thread([&] {
    ScratchA mine;
    other = mine.Get(1, 64);
    other[0] = 3;
  }).join();
  EXPECT_NE(other, pa);
  EXPECT_EQ(pa[0], 1);
}

}  // namespace
}  // namespace ember::host::fast
