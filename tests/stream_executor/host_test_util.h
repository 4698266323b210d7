// Helpers for the host platform tests: a platform with N devices and random byte vectors.
#ifndef EMBER_TESTS_STREAM_EXECUTOR_HOST_TEST_UTIL_H_
#define EMBER_TESTS_STREAM_EXECUTOR_HOST_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "stream_executor/host/host_platform.h"

namespace ember::se::testing {

inline std::vector<uint8_t> RandomBytes(size_t size, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> data(size);
  for (uint8_t& b : data) b = static_cast<uint8_t>(byte(rng));
  return data;
}

inline std::unique_ptr<Platform> MakeHostPlatform(int devices = 1,
                                                  std::optional<int64_t> limit = std::nullopt) {
  auto platform = CreateHostPlatform(devices, limit);
  EXPECT_TRUE(platform.ok()) << platform.status();
  return std::move(platform).value();
}

inline Executor* ExecutorOf(Platform& platform, int ordinal) {
  auto executor = platform.ExecutorForDevice(ordinal);
  EXPECT_TRUE(executor.ok()) << executor.status();
  return executor.value();
}

}  // namespace ember::se::testing

#endif  // EMBER_TESTS_STREAM_EXECUTOR_HOST_TEST_UTIL_H_
