#include "runtime/launch_admission.h"

namespace ember::runtime {

void LaunchAdmission::Acquire(bool wait) {
  absl::MutexLock lock(&mu_);
  if (wait) {
    mu_.Await(absl::Condition(
        +[](LaunchAdmission* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
          return self->in_flight_ < self->limit_;
        },
        this));
  }
  ++in_flight_;
}

void LaunchAdmission::Release() {
  absl::MutexLock lock(&mu_);
  if (in_flight_ > 0) --in_flight_;
}

int LaunchAdmission::in_flight() const {
  absl::MutexLock lock(&mu_);
  return in_flight_;
}

}  // namespace ember::runtime
