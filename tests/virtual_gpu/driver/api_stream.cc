// Driver API: streams (blocking and non-blocking, the legacy default stream's implicit
// synchronization), host functions (which may not call the driver), and events (record, query,
// synchronize, cross-stream and cross-device waits, elapsed time).
#include <cuda.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "tests/virtual_gpu/driver/driver_state.h"
#include "tests/virtual_gpu/driver/errors.h"

using ember::vgpu::CurrentContext;
using ember::vgpu::Driver;
using ember::vgpu::EnqueueWork;
using ember::vgpu::EventState;
using ember::vgpu::Fail;
using ember::vgpu::StreamQueue;

namespace {

CUresult CheckEvent(CUevent event, const char* call) {
  if (event == nullptr || !ember::vgpu::ValidEvent(event)) {
    return Fail(CUDA_ERROR_INVALID_HANDLE, absl::StrCat(call, ": not a live event"));
  }
  return CUDA_SUCCESS;
}

CUresult CreateStream(CUstream* stream, unsigned int flags, int priority) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (stream == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "cuStreamCreate: null output");
  if (flags != CU_STREAM_DEFAULT && flags != CU_STREAM_NON_BLOCKING) {
    return Fail(CUDA_ERROR_INVALID_VALUE, absl::StrCat("cuStreamCreate: unknown flags ", flags));
  }
  Driver& d = Driver::Get();
  auto s = std::make_unique<CUstream_st>();
  s->ctx = ctx;
  s->flags = flags;
  s->priority = priority;
  absl::MutexLock lock(&d.mu);
  s->queue = std::make_shared<StreamQueue>(
      absl::StrCat("device ", ctx->device, " stream ", d.streams.size()));
  CUstream_st* raw = s.release();  // the C API hands out the handle; cuStreamDestroy takes it back
  d.streams.insert(raw);
  ctx->streams.insert(raw);
  *stream = raw;
  return CUDA_SUCCESS;
}

// Blocks until the event's record number `target` has completed.
void WaitForRecord(EventState& state, uint64_t target) {
  struct Arg {
    EventState* state;
    uint64_t target;
  } arg{&state, target};
  absl::MutexLock lock(&state.mu);
  state.mu.Await(absl::Condition(
      +[](Arg* a) ABSL_NO_THREAD_SAFETY_ANALYSIS { return a->state->completed >= a->target; },
      &arg));
}

}  // namespace

extern "C" {

CUresult CUDAAPI cuStreamCreate(CUstream* stream, unsigned int flags) {
  return CreateStream(stream, flags, 0);
}

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream* stream, unsigned int flags, int priority) {
  return CreateStream(stream, flags, priority);
}

CUresult CUDAAPI cuStreamDestroy(CUstream stream) {
  if (CUresult r = ember::vgpu::Enter(); r != CUDA_SUCCESS) return r;
  Driver& d = Driver::Get();
  std::unique_ptr<CUstream_st> owned;
  {
    absl::MutexLock lock(&d.mu);
    if (stream == nullptr || d.streams.erase(stream) == 0) {
      return Fail(CUDA_ERROR_INVALID_HANDLE, "cuStreamDestroy: not a live stream");
    }
    stream->ctx->streams.erase(stream);
    owned.reset(stream);
  }
  // Work already queued still runs (as on a GPU); the handle is gone at once.
  owned->queue->Synchronize();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream stream) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (CUresult r = ember::vgpu::StreamContext(stream, ctx, "cuStreamSynchronize"); r != CUDA_SUCCESS) return r;
  ember::vgpu::QueueOf(ctx, stream)->Synchronize();
  if (CUresult sticky = ctx->sticky(); sticky != CUDA_SUCCESS) return Fail(sticky, ctx->sticky_message());
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamQuery(CUstream stream) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (CUresult r = ember::vgpu::StreamContext(stream, ctx, "cuStreamQuery"); r != CUDA_SUCCESS) return r;
  return ember::vgpu::QueueOf(ctx, stream)->Idle() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI cuStreamGetFlags(CUstream stream, unsigned int* flags) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (flags == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null flags");
  if (CUresult r = ember::vgpu::StreamContext(stream, ctx, "cuStreamGetFlags"); r != CUDA_SUCCESS) return r;
  *flags = stream == nullptr || stream == CU_STREAM_LEGACY ? 0 : stream->flags;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream stream, CUhostFn fn, void* user_data) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (CUresult r = ember::vgpu::StreamContext(stream, ctx, "cuLaunchHostFunc"); r != CUDA_SUCCESS) return r;
  if (fn == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "cuLaunchHostFunc: null function");
  // As documented for cuLaunchHostFunc, the function is not called once the context has an error.
  EnqueueWork(ctx, stream, [fn, user_data] {
    ember::vgpu::InHostFunction() = true;
    fn(user_data);
    ember::vgpu::InHostFunction() = false;
  });
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (CUresult r = ember::vgpu::StreamContext(stream, ctx, "cuStreamWaitEvent"); r != CUDA_SUCCESS) return r;
  if (CUresult r = CheckEvent(event, "cuStreamWaitEvent"); r != CUDA_SUCCESS) return r;
  if (flags != 0 && flags != CU_EVENT_WAIT_EXTERNAL) {
    return Fail(CUDA_ERROR_INVALID_VALUE, "cuStreamWaitEvent: flags must be 0");
  }
  // Waits for the event's most recent record, which may be on another device (allowed).
  std::shared_ptr<EventState> state = event->state;
  uint64_t target;
  {
    absl::MutexLock lock(&state->mu);
    target = state->recorded;
  }
  if (target == 0) return CUDA_SUCCESS;  // never recorded: nothing to wait for
  EnqueueWork(ctx, stream, [state, target] { WaitForRecord(*state, target); }, /*always=*/true);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent* event, unsigned int flags) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (event == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "cuEventCreate: null output");
  if ((flags & ~(CU_EVENT_DISABLE_TIMING | CU_EVENT_BLOCKING_SYNC | CU_EVENT_INTERPROCESS)) != 0) {
    return Fail(CUDA_ERROR_INVALID_VALUE, absl::StrCat("cuEventCreate: unknown flags ", flags));
  }
  auto e = std::make_unique<CUevent_st>();
  e->ctx = ctx;
  e->flags = flags;
  Driver& d = Driver::Get();
  absl::MutexLock lock(&d.mu);
  CUevent_st* raw = e.release();  // owned by the handle until cuEventDestroy
  d.events.insert(raw);
  *event = raw;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent event) {
  if (CUresult r = ember::vgpu::Enter(); r != CUDA_SUCCESS) return r;
  Driver& d = Driver::Get();
  absl::MutexLock lock(&d.mu);
  if (event == nullptr || d.events.erase(event) == 0) {
    return Fail(CUDA_ERROR_INVALID_HANDLE, "cuEventDestroy: not a live event");
  }
  std::unique_ptr<CUevent_st> owned(event);  // pending records hold the state
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent event, CUstream stream) {
  CUctx_st* ctx = nullptr;
  if (CUresult r = CurrentContext(&ctx); r != CUDA_SUCCESS) return r;
  if (CUresult r = CheckEvent(event, "cuEventRecord"); r != CUDA_SUCCESS) return r;
  if (CUresult r = ember::vgpu::StreamContext(stream, ctx, "cuEventRecord"); r != CUDA_SUCCESS) return r;
  if (event->ctx != ctx) {
    return Fail(CUDA_ERROR_INVALID_HANDLE,
                absl::StrCat("cuEventRecord: the event belongs to device ", event->ctx->device,
                             " but the stream to device ", ctx->device));
  }
  std::shared_ptr<EventState> state = event->state;
  uint64_t target;
  {
    absl::MutexLock lock(&state->mu);
    target = ++state->recorded;
  }
  EnqueueWork(ctx, stream, [state, target] {
    absl::MutexLock lock(&state->mu);
    if (state->completed < target) {
      state->completed = target;
      state->time = std::chrono::steady_clock::now();
    }
  }, /*always=*/true);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventQuery(CUevent event) {
  if (CUresult r = ember::vgpu::Enter(); r != CUDA_SUCCESS) return r;
  if (CUresult r = CheckEvent(event, "cuEventQuery"); r != CUDA_SUCCESS) return r;
  absl::MutexLock lock(&event->state->mu);
  return event->state->completed >= event->state->recorded ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI cuEventSynchronize(CUevent event) {
  if (CUresult r = ember::vgpu::Enter(); r != CUDA_SUCCESS) return r;
  if (CUresult r = CheckEvent(event, "cuEventSynchronize"); r != CUDA_SUCCESS) return r;
  std::shared_ptr<EventState> state = event->state;
  CUctx_st* ctx = event->ctx;
  uint64_t target;
  {
    absl::MutexLock lock(&state->mu);
    target = state->recorded;
  }
  WaitForRecord(*state, target);
  if (CUresult sticky = ctx->sticky(); sticky != CUDA_SUCCESS) return Fail(sticky, ctx->sticky_message());
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
  if (CUresult r = ember::vgpu::Enter(); r != CUDA_SUCCESS) return r;
  if (ms == nullptr) return Fail(CUDA_ERROR_INVALID_VALUE, "null output");
  if (CUresult r = CheckEvent(start, "cuEventElapsedTime"); r != CUDA_SUCCESS) return r;
  if (CUresult r = CheckEvent(end, "cuEventElapsedTime"); r != CUDA_SUCCESS) return r;
  if ((start->flags | end->flags) & CU_EVENT_DISABLE_TIMING) {
    return Fail(CUDA_ERROR_INVALID_HANDLE, "cuEventElapsedTime: an event was created with CU_EVENT_DISABLE_TIMING");
  }
  std::chrono::steady_clock::time_point t0, t1;
  for (CUevent e : {start, end}) {
    absl::MutexLock lock(&e->state->mu);
    if (e->state->recorded == 0) return Fail(CUDA_ERROR_INVALID_HANDLE, "cuEventElapsedTime: event never recorded");
    if (e->state->completed < e->state->recorded) return CUDA_ERROR_NOT_READY;
    (e == start ? t0 : t1) = e->state->time;
  }
  *ms = std::chrono::duration<float, std::milli>(t1 - t0).count();
  return CUDA_SUCCESS;
}

}  // extern "C"
