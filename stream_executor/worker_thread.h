// WorkerThread: one thread running scheduled tasks in order. It is the host platform's stream
// engine and the CUDA platform's thread for event callbacks (which must not run on the driver's
// own callback thread, because they may call the driver).
#ifndef EMBER_STREAM_EXECUTOR_WORKER_THREAD_H_
#define EMBER_STREAM_EXECUTOR_WORKER_THREAD_H_

#include <cstdint>
#include <deque>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace ember::se {

class WorkerThread {
 public:
  using Task = absl::AnyInvocable<void() &&>;

  // `name` shows up in error messages (e.g. "host device 0 stream").
  explicit WorkerThread(std::string name);
  WorkerThread(const WorkerThread&) = delete;
  WorkerThread& operator=(const WorkerThread&) = delete;
  // Runs every task already scheduled, then joins the thread.
  ~WorkerThread();

  // Thread-safe; may be called from a task (it never waits for the worker). Called from the
  // thread running a TryRunInline task, it runs `task` at once: that thread is acting as the
  // worker, and the task is next in its order.
  void Schedule(Task task);

  // Blocks until every task scheduled before the call has finished. FailedPrecondition when
  // called from a task of this worker, which would wait for itself forever.
  absl::Status WaitUntilIdle();

  // Runs `fn` now, on the calling thread, as if it were the next task, when the worker is idle
  // (nothing queued or running, not stopping); tasks other threads schedule meanwhile wait for it,
  // and tasks `fn` itself schedules run at once, in order. Returns false, without running `fn`,
  // otherwise, and on the worker's own thread.
  bool TryRunInline(absl::FunctionRef<void()> fn);

  // Runs `fn` now, inside the task this worker is running, when called from that task (a host
  // callback that launches work on its own stream: queued, the work would wait for the task that
  // waits for it); tasks `fn` schedules run at once, in order. Returns false, without running
  // `fn`, on any other thread.
  bool RunNested(absl::FunctionRef<void()> fn);

  bool IsCurrentThread() const;

  // Whether the calling thread is running a task of any WorkerThread (as its worker, or inline):
  // work on a stream, e.g. a host callback that executes another program. Such a caller must not
  // wait for work queued behind its own task.
  static bool InAnyTask();

 private:
  void Run();

  const std::string name_;
  mutable absl::Mutex mu_;
  std::deque<Task> queue_ ABSL_GUARDED_BY(mu_);
  uint64_t scheduled_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t finished_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool inline_running_ ABSL_GUARDED_BY(mu_) = false;  // TryRunInline is running a task
  std::thread::id inline_thread_ ABSL_GUARDED_BY(mu_);  // the thread running it
  int nested_ ABSL_GUARDED_BY(mu_) = 0;  // RunNested calls running on the worker thread
  std::thread thread_;  // last: starts after, and is joined before, the members it uses
};

}  // namespace ember::se

#endif  // EMBER_STREAM_EXECUTOR_WORKER_THREAD_H_
