// BackgroundCompiler: a deque of tasks, workers started as tasks come (one per core, eight at
// most), and exit and fork handlers registered with the first task.
#include "compiler/codegen/background_compiler.h"

#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"

namespace ember::codegen {
namespace {

// The workers' nice value (Linux: per thread).
constexpr int kNice = 10;

class Queue final : public BackgroundCompiler {
 public:
  void Submit(absl::AnyInvocable<void() &&> task) override {
    // Registered after LLVM's static objects were constructed (a task was compiled with them), so
    // the handler runs before they are destroyed.
    static std::once_flag registered;
    std::call_once(registered, [] {
      std::atexit([] { static_cast<Queue&>(Get()).Stop(); });
      // A forked child has none of the workers: it starts its own, or exits without waiting.
      pthread_atfork([] { static_cast<Queue&>(Get()).mu_.Lock(); },
                     [] { static_cast<Queue&>(Get()).mu_.Unlock(); },
                     [] { static_cast<Queue&>(Get()).AfterFork(); });
    });
    absl::MutexLock lock(&mu_);
    if (stopping_) return;  // the process is exiting: the task is dropped
    tasks_.push_back(std::move(task));
    ++unfinished_;
    if (workers_ < MaxWorkers() && idle_workers_ == 0) {
      ++workers_;
      std::thread([this] { Work(); }).detach();
    }
  }

  void WaitIdle() override {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](int* unfinished) { return *unfinished == 0; }, &unfinished_));
  }

 private:
  // As many as the parallel compile's shards (host_kernel_compiler_llvm.cc): a program's
  // optimized code compiles as fast as it would have in the foreground.
  static int MaxWorkers() {
    static const int n = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 8);
    return n;
  }

  void Work() {
    // Below the threads that compile and run programs: the optimized code comes from cores they
    // leave idle (a launch that waits for it leaves its own).
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), kNice);
    absl::MutexLock lock(&mu_);
    while (true) {
      ++idle_workers_;
      mu_.Await(absl::Condition(
          +[](Queue* q) { return q->stopping_ || !q->tasks_.empty(); }, this));
      --idle_workers_;
      if (stopping_) break;
      absl::AnyInvocable<void() &&> task = std::move(tasks_.front());
      tasks_.pop_front();
      mu_.Unlock();
      std::move(task)();
      task = nullptr;  // what it held goes before it counts as done
      mu_.Lock();
      --unfinished_;
    }
    --workers_;
  }

  // In a forked child (the lock held since before the fork): no workers, and what they ran is
  // lost (its code stays quick); queued tasks wait for a worker the next Submit starts.
  void AfterFork() ABSL_NO_THREAD_SAFETY_ANALYSIS {
    unfinished_ = static_cast<int>(tasks_.size());
    workers_ = 0;
    idle_workers_ = 0;
    mu_.Unlock();
  }

  // Drops the tasks not started and waits for the running ones; the workers end.
  void Stop() {
    std::deque<absl::AnyInvocable<void() &&>> dropped;
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
      dropped.swap(tasks_);
      unfinished_ -= static_cast<int>(dropped.size());
      mu_.Await(absl::Condition(+[](int* workers) { return *workers == 0; }, &workers_));
    }
  }

  absl::Mutex mu_;
  std::deque<absl::AnyInvocable<void() &&>> tasks_ ABSL_GUARDED_BY(mu_);
  int unfinished_ ABSL_GUARDED_BY(mu_) = 0;  // queued or running
  int workers_ ABSL_GUARDED_BY(mu_) = 0;
  int idle_workers_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

BackgroundCompiler& BackgroundCompiler::Get() {
  static Queue* const queue = new Queue();  // never destroyed: workers may outlive statics
  return *queue;
}

}  // namespace ember::codegen
