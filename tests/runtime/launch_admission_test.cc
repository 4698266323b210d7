// LaunchAdmission: a device's bound on launches in flight.
#include "runtime/launch_admission.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "gtest/gtest.h"

namespace ember::runtime {
namespace {

TEST(LaunchAdmissionTest, WaitsAtTheLimitUntilALaunchFinishes) {
  LaunchAdmission admission(2);
  admission.Acquire();
  admission.Acquire();
  std::atomic<bool> admitted{false};
  std::thread third([&] {
    admission.Acquire();
    admitted = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(admitted.load());  // two in flight: the third waits
  EXPECT_EQ(admission.in_flight(), 2);
  admission.Release();
  third.join();
  EXPECT_TRUE(admitted.load());
  EXPECT_EQ(admission.in_flight(), 2);
  admission.Release();
  admission.Release();
  EXPECT_EQ(admission.in_flight(), 0);
  admission.Release();  // an extra release never goes below zero
  EXPECT_EQ(admission.in_flight(), 0);
}

TEST(LaunchAdmissionTest, WorkOnAStreamIsCountedWithoutWaiting) {
  LaunchAdmission admission(1);
  admission.Acquire();
  admission.Acquire(/*wait=*/false);  // would deadlock if it waited: nobody releases meanwhile
  EXPECT_EQ(admission.in_flight(), 2);
  EXPECT_EQ(LaunchAdmission(0).limit(), 1);
}

}  // namespace
}  // namespace ember::runtime
