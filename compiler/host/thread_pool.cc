#include "compiler/host/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>

#include "base/memory_account.h"

namespace ember::host {

ThreadPool::ThreadPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

ThreadPool& ThreadPool::Default() {
  // Leaked on purpose: worker threads must not be joined during static destruction.
  static ThreadPool* pool =
      new ThreadPool(std::max(1, static_cast<int>(std::thread::hardware_concurrency())));
  return *pool;
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    // A worker that just finished watches the queue for a while before sleeping: the next
    // launch's parts usually come within microseconds, and a sleeping worker takes tens of them
    // to wake (a futex round trip, longer on a busy machine).
    const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
    while (queued_.load(std::memory_order_relaxed) == 0 &&
           std::chrono::steady_clock::now() < spin_until) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#else
      std::this_thread::yield();
#endif
    }
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (stop_ && queue_.empty()) return;
      task = std::move(queue_.front());
      queue_.pop_front();
      queued_.fetch_sub(1, std::memory_order_relaxed);
    }
    task();
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t min_per_part,
                             const std::function<void(int64_t, int64_t)>& fn,
                             int parts_per_thread) {
  if (n <= 0) return;
  const int64_t most_parts = std::max<int64_t>(1, n / std::max<int64_t>(1, min_per_part));
  const int64_t threads = std::min<int64_t>(size(), most_parts);
  if (threads <= 1) {
    fn(0, n);
    return;
  }
  const int64_t parts =
      std::min<int64_t>(most_parts, threads * std::max<int64_t>(1, parts_per_thread));
  const int64_t per = (n + parts - 1) / parts;
  // A part that throws (std::bad_alloc from a container it sizes) must not end a worker thread
  // or leave the other parts running on `shared` after this call: the first exception is kept
  // and rethrown here once every part is done.
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    int64_t remaining;  // helper tasks not yet finished
    std::exception_ptr error;
    std::atomic<int64_t> next{0};  // the next part to take
  } shared;
  shared.remaining = threads - 1;
  // Parts charge what they allocate to the caller's memory account, wherever they run.
  MemoryAccount* account = MemoryAccount::Current();
  // Takes parts until none is left.
  auto run_parts = [&fn, &shared, account, parts, per, n] {
    ScopedMemoryAccount scope(account);
    for (;;) {
      const int64_t p = shared.next.fetch_add(1, std::memory_order_relaxed);
      if (p >= parts) return;
      const int64_t begin = p * per, end = std::min(n, begin + per);
      try {
        if (begin < end) fn(begin, end);
      } catch (...) {
        std::lock_guard<std::mutex> l(shared.mu);
        if (shared.error == nullptr) shared.error = std::current_exception();
      }
    }
  };
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int64_t t = 1; t < threads; ++t) {
      queue_.push_back([&run_parts, &shared] {
        run_parts();
        std::lock_guard<std::mutex> l(shared.mu);
        if (--shared.remaining == 0) shared.cv.notify_one();
      });
      queued_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  cv_.notify_all();
  run_parts();
  auto finish = [&shared] {
    if (shared.error != nullptr) std::rethrow_exception(shared.error);
  };
  // Help with queued work (ours or another caller's) instead of sleeping: a helper task of ours
  // still queued finds no part left and ends at once.
  for (;;) {
    {
      std::lock_guard<std::mutex> l(shared.mu);
      if (shared.remaining == 0) break;
    }
    std::function<void()> task;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!queue_.empty()) {
        task = std::move(queue_.front());
        queue_.pop_front();
        queued_.fetch_sub(1, std::memory_order_relaxed);
      }
    }
    if (task) {
      task();  // ParallelFor tasks never throw: run_parts catches
      continue;
    }
    std::unique_lock<std::mutex> l(shared.mu);
    shared.cv.wait(l, [&] { return shared.remaining == 0; });
    break;
  }
  finish();
}

}  // namespace ember::host
