// A process-wide pool of worker threads (one per hardware thread) for splitting big host kernels.
// ParallelFor may be called from several threads at once (launches on several host devices);
// the caller works on its own range too, so a call never waits on an idle pool.
#ifndef EMBER_COMPILER_HOST_THREAD_POOL_H_
#define EMBER_COMPILER_HOST_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ember::host {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Sized to std::thread::hardware_concurrency(); created on first use.
  static ThreadPool& Default();
  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Runs fn(begin, end) over [0, n) split into contiguous parts of at least `min_per_part`
  // items, on at most size() threads; returns when all parts are done. With
  // `parts_per_thread` 1 there are at most size() parts, one per thread. With more, the parts are
  // smaller and each thread takes the next one left when it is done with one, so a thread that
  // starts late (a worker woken late, a core busy with another process) leaves its share to the
  // others instead of being waited for: for kernels whose calls cost nothing to start. If a part
  // throws, the first exception is rethrown here after every part finished.
  void ParallelFor(int64_t n, int64_t min_per_part, const std::function<void(int64_t, int64_t)>& fn,
                   int parts_per_thread = 1);

 private:
  void WorkerLoop();
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  std::atomic<int64_t> queued_{0};  // queue_.size(), read without the lock by spinning workers
  bool stop_ = false;
};

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_THREAD_POOL_H_
