// Calls all 138 entries with hostile args (null args pointer, struct_size 0, struct_size one below
// the oldest layout, valid size with every handle null), each in a forked child so one crash is
// reported by name instead of ending the suite. No input may crash, hang or return OK for nothing.
// EMBER_CAPI_SWEEP_VERBOSE=1 prints every entry's answer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/capi/capi_test_util.h"

namespace ember::capi_test {
namespace {

struct Entry {
  const char* name;
  size_t offset;     // of the function pointer in PJRT_Api
  size_t full_size;  // <Args>_STRUCT_SIZE at 0.114
  size_t min_size;   // EMBER_MIN_SIZE_<Args>: the oldest layout the framework may send
};

const Entry kEntries[] = {
#define X(name) \
  {#name, offsetof(PJRT_Api, name), name##_Args_STRUCT_SIZE, EMBER_MIN_SIZE_##name##_Args},
#include "tests/capi/pjrt_api_entries.inc"
#undef X
};

bool ReturnsVoid(const std::string& name) {
  return name == "PJRT_Error_Destroy" || name == "PJRT_Error_Message";
}

// Entries for which all-null inputs may legitimately succeed: they create something from nothing,
// destroy nothing, or describe the null (success) error.
bool MaySucceedWithNullHandles(const std::string& name) {
  static const std::set<std::string> kCreators = {
      "PJRT_Plugin_Initialize", "PJRT_Plugin_Attributes",
      "PJRT_Client_Create",     "PJRT_TopologyDescription_Create",
      "PJRT_Event_Create",      "PJRT_ExecuteContext_Create",
      "PJRT_Error_GetCode",     "PJRT_Error_ForEachPayload"};
  const std::string suffix = "_Destroy";
  bool is_destroy = name.size() > suffix.size() &&
                    name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  return is_destroy || kCreators.count(name) > 0;
}

enum class Variant { kNullArgs, kSizeZero, kBelowMinimum, kNullHandles };

struct Outcome {
  enum Kind { kReturned, kCrashed, kHung } kind = kReturned;
  ErrorInfo error;
  std::string detail;
};

bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// The sweep calls every entry through one type, void* argument (as a C caller may: the ABI passes
// every args pointer alike), which clang's -fsanitize=function reports as a mismatched type.
#if defined(__clang__)
#define EMBER_ANY_ENTRY_TYPE __attribute__((no_sanitize("function")))
#else
#define EMBER_ANY_ENTRY_TYPE
#endif

// Runs in the child: one call, result written to `fd`, then _exit without any cleanup.
[[noreturn]] EMBER_ANY_ENTRY_TYPE void CallInChild(const Entry& entry, Variant variant, int fd) {
  alignas(16) unsigned char storage[1024] = {};
  void* args = storage;
  size_t struct_size = entry.full_size;
  if (variant == Variant::kNullArgs) args = nullptr;
  if (variant == Variant::kSizeZero) struct_size = 0;
  if (variant == Variant::kBelowMinimum) struct_size = entry.min_size - 1;
  if (args != nullptr) std::memcpy(storage, &struct_size, sizeof(struct_size));

  // Every entry takes one pointer; only the two void ones differ in return type (§5.1).
  void* slot = nullptr;
  std::memcpy(&slot, reinterpret_cast<const unsigned char*>(Api()) + entry.offset, sizeof(slot));
  ErrorInfo info;
  if (ReturnsVoid(entry.name)) {
    reinterpret_cast<void (*)(void*)>(slot)(args);
  } else {
    info = TakeError(reinterpret_cast<PJRT_Error* (*)(void*)>(slot)(args));
  }
  int32_t code = static_cast<int32_t>(info.code);
  uint64_t size = info.message.size();
  bool ok = WriteAll(fd, &code, sizeof(code)) && WriteAll(fd, &size, sizeof(size)) &&
            WriteAll(fd, info.message.data(), info.message.size());
  _exit(ok ? 0 : 3);
}

Outcome RunIsolated(const Entry& entry, Variant variant) {
  Outcome outcome;
  int fds[2];
  if (pipe(fds) != 0) {
    outcome.kind = Outcome::kCrashed;
    outcome.detail = "pipe() failed";
    return outcome;
  }
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    CallInChild(entry, variant, fds[1]);
  }
  close(fds[1]);
  std::string data;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool hung = false;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      hung = true;
      break;
    }
    pollfd pfd = {fds[0], POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(left.count())) <= 0) continue;
    char chunk[4096];
    ssize_t n = read(fds[0], chunk, sizeof(chunk));
    if (n <= 0) break;
    data.append(chunk, static_cast<size_t>(n));
  }
  close(fds[0]);
  if (hung) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (hung) {
    outcome.kind = Outcome::kHung;
    return outcome;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
      data.size() < sizeof(int32_t) + sizeof(uint64_t)) {
    outcome.kind = Outcome::kCrashed;
    outcome.detail = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                         : "exit status " + std::to_string(WEXITSTATUS(status));
    return outcome;
  }
  int32_t code = 0;
  uint64_t size = 0;
  std::memcpy(&code, data.data(), sizeof(code));
  std::memcpy(&size, data.data() + sizeof(code), sizeof(size));
  outcome.error.code = static_cast<PJRT_Error_Code>(code);
  outcome.error.message = data.substr(sizeof(code) + sizeof(size), size);
  return outcome;
}

// Runs `variant` against every entry and returns one line per entry that broke the rule.
std::vector<std::string> Sweep(Variant variant) {
  std::vector<std::string> problems;
  for (const Entry& entry : kEntries) {
    const std::string name = entry.name;
    Outcome outcome = RunIsolated(entry, variant);
    if (outcome.kind == Outcome::kCrashed) {
      problems.push_back(name + ": crashed (" + outcome.detail + ")");
      continue;
    }
    if (outcome.kind == Outcome::kHung) {
      problems.push_back(name + ": did not return within 20 s");
      continue;
    }
    if (std::getenv("EMBER_CAPI_SWEEP_VERBOSE") != nullptr) {
      std::printf("  %-60s %s: \"%s\"\n", entry.name, CodeName(outcome.error.code).c_str(),
                  outcome.error.message.c_str());
    }
    if (ReturnsVoid(name)) continue;  // Nothing to report through; not crashing is the test.
    const ErrorInfo& error = outcome.error;
    std::ostringstream line;
    line << name << ": " << error;
    if (error.ok()) {
      if (variant == Variant::kNullHandles && MaySucceedWithNullHandles(name)) continue;
      problems.push_back(line.str() + " (returned success)");
      continue;
    }
    bool names_it = error.message.find(name) != std::string::npos;
    if (variant == Variant::kNullHandles) {
      // A rejected null handle may name the argument instead of the function.
      names_it = names_it || error.message.find("null") != std::string::npos;
    } else if (error.code != PJRT_Error_Code_INVALID_ARGUMENT &&
               error.code != PJRT_Error_Code_UNIMPLEMENTED) {
      problems.push_back(line.str() + " (want INVALID_ARGUMENT, or UNIMPLEMENTED for a stub)");
      continue;
    }
    if (!names_it) problems.push_back(line.str() + " (message does not name the function)");
  }
  return problems;
}

std::string Report(const std::vector<std::string>& problems) {
  std::string out = std::to_string(problems.size()) + " of 138 entries:";
  for (const std::string& problem : problems) out += "\n  " + problem;
  return out;
}

class CapiEntrySweepTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_NE(Api(), nullptr) << LoadError(); }
};

TEST_F(CapiEntrySweepTest, NullArgsPointerIsRejectedByName) {
  std::vector<std::string> problems = Sweep(Variant::kNullArgs);
  EXPECT_TRUE(problems.empty()) << Report(problems);
}

TEST_F(CapiEntrySweepTest, StructSizeZeroIsRejectedByName) {
  std::vector<std::string> problems = Sweep(Variant::kSizeZero);
  EXPECT_TRUE(problems.empty()) << Report(problems);
}

TEST_F(CapiEntrySweepTest, StructSizeBelowOldestLayoutIsRejectedByName) {
  std::vector<std::string> problems = Sweep(Variant::kBelowMinimum);
  EXPECT_TRUE(problems.empty()) << Report(problems);
}

TEST_F(CapiEntrySweepTest, NullHandlesGiveACleanError) {
  std::vector<std::string> problems = Sweep(Variant::kNullHandles);
  EXPECT_TRUE(problems.empty()) << Report(problems);
}

}  // namespace
}  // namespace ember::capi_test
