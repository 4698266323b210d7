#include "tests/virtual_gpu/driver/stream_queue.h"

#include <utility>

namespace ember::vgpu {

StreamQueue::StreamQueue(std::string name) : name_(std::move(name)), worker_([this] { Run(); }) {}

StreamQueue::~StreamQueue() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  worker_.join();
}

uint64_t StreamQueue::Enqueue(std::function<void()> op) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(op));
  return ++enqueued_;
}

uint64_t StreamQueue::enqueued() const {
  absl::MutexLock lock(&mu_);
  return enqueued_;
}

uint64_t StreamQueue::completed() const {
  absl::MutexLock lock(&mu_);
  return completed_;
}

void StreamQueue::WaitFor(uint64_t ticket) const {
  struct Target {
    const uint64_t* completed;
    uint64_t ticket;
  } target{&completed_, ticket};
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(+[](Target* t) { return *t->completed >= t->ticket; }, &target));
}

void StreamQueue::Run() {
  while (true) {
    std::function<void()> op;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](StreamQueue* q) ABSL_NO_THREAD_SAFETY_ANALYSIS { return q->stop_ || !q->queue_.empty(); },
          this));
      if (queue_.empty()) return;
      op = std::move(queue_.front());
      queue_.pop_front();
    }
    op();
    op = nullptr;
    absl::MutexLock lock(&mu_);
    ++completed_;
  }
}

}  // namespace ember::vgpu
