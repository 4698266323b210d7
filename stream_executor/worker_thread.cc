#include "stream_executor/worker_thread.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace ember::se {
namespace {

// Tasks of WorkerThreads the calling thread is inside (nested: an inline task may schedule).
thread_local int task_depth = 0;

struct InTask {
  InTask() { ++task_depth; }
  ~InTask() { --task_depth; }
};

}  // namespace

bool WorkerThread::InAnyTask() { return task_depth > 0; }

WorkerThread::WorkerThread(std::string name) : name_(std::move(name)), thread_([this] { Run(); }) {}

WorkerThread::~WorkerThread() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void WorkerThread::Schedule(Task task) {
  {
    absl::MutexLock lock(&mu_);
    const bool acting = (inline_running_ && inline_thread_ == std::this_thread::get_id()) ||
                        (nested_ > 0 && IsCurrentThread());
    if (!acting) {
      queue_.push_back(std::move(task));
      ++scheduled_;
      return;
    }
  }
  // Scheduled by the task running inline on this thread: it is the next task, and the worker
  // waits for the inline task anyway.
  std::move(task)();
}

absl::Status WorkerThread::WaitUntilIdle() {
  if (IsCurrentThread()) {
    return absl::FailedPreconditionError(absl::StrCat(
        name_, ": waiting for the stream from one of its own callbacks would never finish"));
  }
  absl::MutexLock lock(&mu_);
  const uint64_t target = scheduled_;
  auto done = [this, target]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return finished_ >= target; };
  mu_.Await(absl::Condition(&done));
  return absl::OkStatus();
}

bool WorkerThread::TryRunInline(absl::FunctionRef<void()> fn) {
  if (IsCurrentThread()) return false;
  {
    absl::MutexLock lock(&mu_);
    if (stop_ || inline_running_ || finished_ != scheduled_) return false;
    inline_running_ = true;
    inline_thread_ = std::this_thread::get_id();
    ++scheduled_;
  }
  {
    InTask in_task;
    fn();
  }
  absl::MutexLock lock(&mu_);
  inline_running_ = false;
  ++finished_;
  return true;
}

bool WorkerThread::RunNested(absl::FunctionRef<void()> fn) {
  if (!IsCurrentThread()) return false;
  {
    absl::MutexLock lock(&mu_);
    ++nested_;
  }
  fn();
  absl::MutexLock lock(&mu_);
  --nested_;
  return true;
}

bool WorkerThread::IsCurrentThread() const {
  return std::this_thread::get_id() == thread_.get_id();
}

void WorkerThread::Run() {
  while (true) {
    Task task;
    {
      absl::MutexLock lock(&mu_);
      // A task run inline by TryRunInline goes first: what was scheduled meanwhile follows it.
      auto has_work = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return !inline_running_ && (stop_ || !queue_.empty());
      };
      mu_.Await(absl::Condition(&has_work));
      if (queue_.empty()) return;  // stop_ and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    {
      InTask in_task;
      std::move(task)();
    }
    // Destroy the task (and what it captured) before counting it finished, so that a waiter sees
    // its side effects complete.
    task = nullptr;
    absl::MutexLock lock(&mu_);
    ++finished_;
  }
}

}  // namespace ember::se
