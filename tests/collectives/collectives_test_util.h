// Helpers the transports' tests share: ranks of a clique as threads of this process, and the
// exit code of a peer process bounded in time.
#ifndef EMBER_TESTS_COLLECTIVES_COLLECTIVES_TEST_UTIL_H_
#define EMBER_TESTS_COLLECTIVES_COLLECTIVES_TEST_UTIL_H_

#include <signal.h>
#include <sys/wait.h>

#include <functional>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "collectives/collectives.h"
#include "gtest/gtest.h"

namespace ember::collectives::test_util {

// Runs fn(rank, communicator) on one thread per rank of `key`, each with its own communicator.
inline void RunRanks(Collectives& transport, const CliqueKey& key,
                     const std::function<void(int, Communicator&)>& fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < key.size(); ++r) {
    threads.emplace_back([&, r] {
      auto comm = transport.GetCommunicator(key, RankId(r));
      ASSERT_TRUE(comm.ok()) << comm.status();
      EXPECT_EQ((*comm)->rank(), RankId(r));
      EXPECT_EQ((*comm)->size(), key.size());
      fn(r, **comm);
    });
  }
  for (auto& t : threads) t.join();
}

// The child's exit code (128 + signal when a signal ended it); -1 when it did not end within
// `timeout` (it is killed).
inline int WaitChild(pid_t pid, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  int wstatus = 0;
  while (waitpid(pid, &wstatus, WNOHANG) == 0) {
    if (absl::Now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &wstatus, 0);
      return -1;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
}

}  // namespace ember::collectives::test_util

#endif  // EMBER_TESTS_COLLECTIVES_COLLECTIVES_TEST_UTIL_H_
