#include "stream_executor/cuda/cuda_event.h"

#include <utility>

#include "base/status_macros.h"
#include "stream_executor/cuda/cuda_status.h"

namespace ember::se::cuda {

CudaEvent::CudaEvent(const CudaDriver& driver, const PrimaryContext& context, CUevent event,
                     AsyncEventRef state)
    : driver_(driver), context_(context), event_(event), state_(std::move(state)) {}

CudaEvent::~CudaEvent() {
  absl::StatusOr<ScopedContext> scope = context_.Activate();
  // The driver releases an event still pending on a stream once the device reaches it.
  if (scope.ok()) driver_.cuEventDestroy(event_);
}

absl::Status CudaEvent::Await() {
  {
    // A device fault surfaces here; the host function that would mark the state ready may then
    // never run, so do not wait for it.
    EMBER_ASSIGN_OR_RETURN(ScopedContext scope, context_.Activate());
    EMBER_RETURN_IF_ERROR(EMBER_CU(driver_, cuEventSynchronize, event_));
  }
  return state_->Await();
}

void CudaEvent::AndThen(absl::AnyInvocable<void(absl::Status) &&> cb) {
  state_->AndThen(std::move(cb));
}

}  // namespace ember::se::cuda
