// CudaEvent: a CUevent (for device-side waits by other streams, cuStreamWaitEvent) plus the
// shared AsyncEvent that a host function enqueued right after cuEventRecord makes ready (for
// IsReady / AndThen on the host, with the stream's status at that point).
#ifndef EMBER_STREAM_EXECUTOR_CUDA_CUDA_EVENT_H_
#define EMBER_STREAM_EXECUTOR_CUDA_CUDA_EVENT_H_

#include <cuda.h>

#include <memory>

#include "stream_executor/cuda/cuda_context.h"
#include "stream_executor/event.h"
#include "base/async_event.h"

namespace ember::se::cuda {

// Must not outlive the platform that created it.
class CudaEvent final : public Event {
 public:
  // Takes ownership of `event`.
  CudaEvent(const CudaDriver& driver, const PrimaryContext& context, CUevent event,
            AsyncEventRef state);
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  ~CudaEvent() override;

  bool IsReady() const override { return state_->IsReady(); }
  absl::Status Await() override;
  void AndThen(absl::AnyInvocable<void(absl::Status) &&> cb) override;

  CUevent handle() const { return event_; }

 private:
  const CudaDriver& driver_;
  const PrimaryContext& context_;
  const CUevent event_;
  const AsyncEventRef state_;
};

}  // namespace ember::se::cuda

#endif  // EMBER_STREAM_EXECUTOR_CUDA_CUDA_EVENT_H_
