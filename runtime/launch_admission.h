// Admission control for launches on one device: at most a fixed number queued or running at
// once. Execute returns before its launch runs, so a loop that dispatches faster than the device
// computes would otherwise queue without bound, each queued launch holding its results and
// temporaries: 300 dispatches of a 16 MiB elementwise program held 5 GB, and every launch paid
// page faults on fresh memory. Past the limit Execute waits for the oldest launches to finish,
// as XLA:CPU bounds its in-flight computations.
#ifndef EMBER_RUNTIME_LAUNCH_ADMISSION_H_
#define EMBER_RUNTIME_LAUNCH_ADMISSION_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace ember::runtime {

class LaunchAdmission {
 public:
  static constexpr int kDefaultLimit = 32;

  explicit LaunchAdmission(int limit = kDefaultLimit) : limit_(limit < 1 ? 1 : limit) {}
  LaunchAdmission(const LaunchAdmission&) = delete;
  LaunchAdmission& operator=(const LaunchAdmission&) = delete;

  // Waits until fewer than the limit are in flight, then counts one more. With `wait` false it
  // counts at once: a launch from work running on a stream (a host callback executing another
  // program) must not wait for launches queued behind that work, which cannot finish first.
  void Acquire(bool wait = true);
  // One launch finished (or never started).
  void Release();
  int in_flight() const;
  int limit() const { return limit_; }

 private:
  const int limit_;
  mutable absl::Mutex mu_;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ember::runtime

#endif  // EMBER_RUNTIME_LAUNCH_ADMISSION_H_
