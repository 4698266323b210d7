#include "tests/virtual_gpu/driver/driver_state.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "tests/virtual_gpu/driver/errors.h"

void CUctx_st::SetSticky(CUresult code, const std::string& message) {
  absl::MutexLock lock(&sticky_mu_);
  if (sticky_ != CUDA_SUCCESS) return;
  sticky_ = code;
  sticky_message_ = message;
}

CUresult CUctx_st::sticky() const {
  absl::MutexLock lock(&sticky_mu_);
  return sticky_;
}

std::string CUctx_st::sticky_message() const {
  absl::MutexLock lock(&sticky_mu_);
  return sticky_message_;
}

void CUctx_st::ClearSticky() {
  absl::MutexLock lock(&sticky_mu_);
  sticky_ = CUDA_SUCCESS;
  sticky_message_.clear();
}

namespace ember::vgpu {

Driver& Driver::Get() {
  static Driver driver;
  return driver;
}

std::vector<CUctx_st*>& ContextStack() {
  thread_local std::vector<CUctx_st*> stack;
  return stack;
}

bool& InHostFunction() {
  thread_local bool in_host_function = false;
  return in_host_function;
}

CUresult Enter() {
  ClearDetail();
  if (InHostFunction()) {
    return Fail(CUDA_ERROR_NOT_PERMITTED,
                "CUDA calls are not allowed inside a host function (cuLaunchHostFunc)");
  }
  if (!Driver::Get().IsInitialized()) {
    return Fail(CUDA_ERROR_NOT_INITIALIZED, "cuInit has not been called");
  }
  return CUDA_SUCCESS;
}

CUresult CurrentContext(CUctx_st** ctx) {
  if (CUresult r = Enter(); r != CUDA_SUCCESS) return r;
  std::vector<CUctx_st*>& stack = ContextStack();
  if (stack.empty() || stack.back() == nullptr) {
    return Fail(CUDA_ERROR_INVALID_CONTEXT, "no context is current on this thread");
  }
  CUctx_st* current = stack.back();
  {
    Driver& d = Driver::Get();
    absl::MutexLock lock(&d.mu);
    if (current->retains == 0) {
      return Fail(CUDA_ERROR_CONTEXT_IS_DESTROYED,
                  absl::StrCat("the current context (device ", current->device,
                               ") was released"));
    }
  }
  if (CUresult sticky = current->sticky(); sticky != CUDA_SUCCESS) {
    return Fail(sticky, current->sticky_message());
  }
  *ctx = current;
  return CUDA_SUCCESS;
}

bool ValidStream(CUstream stream) {
  Driver& d = Driver::Get();
  absl::MutexLock lock(&d.mu);
  return d.streams.count(stream) != 0;
}

bool ValidEvent(CUevent event) {
  Driver& d = Driver::Get();
  absl::MutexLock lock(&d.mu);
  return d.events.count(event) != 0;
}

bool ValidModule(CUmodule module) {
  Driver& d = Driver::Get();
  absl::MutexLock lock(&d.mu);
  return d.modules.count(module) != 0;
}

bool ValidDevice(CUdevice device) {
  return device >= 0 && device < Driver::Get().device_count();
}

CUresult StreamContext(CUstream stream, CUctx_st* current, const char* call) {
  if (stream == nullptr || stream == CU_STREAM_LEGACY) return CUDA_SUCCESS;
  if (stream == CU_STREAM_PER_THREAD) {
    return Fail(CUDA_ERROR_NOT_SUPPORTED,
                absl::StrCat(call, ": the per-thread default stream is not modelled by the "
                                   "virtual GPU"));
  }
  if (!ValidStream(stream)) {
    return Fail(CUDA_ERROR_INVALID_HANDLE, absl::StrCat(call, ": not a live stream"));
  }
  if (stream->ctx != current) {
    return Fail(CUDA_ERROR_INVALID_HANDLE,
                absl::StrCat(call, ": the stream belongs to device ", stream->ctx->device,
                             "'s context, but device ", current->device,
                             "'s context is current"));
  }
  return CUDA_SUCCESS;
}

std::shared_ptr<StreamQueue> QueueOf(CUctx_st* ctx, CUstream stream) {
  if (stream == nullptr || stream == CU_STREAM_LEGACY) return ctx->legacy;
  return stream->queue;
}

uint64_t EnqueueWork(CUctx_st* ctx, CUstream stream, std::function<void()> op, bool always) {
  Driver& d = Driver::Get();
  std::shared_ptr<StreamQueue> target = QueueOf(ctx, stream);
  const bool legacy = target == ctx->legacy;
  // The legacy stream waits for earlier work of every blocking stream of its context, and every
  // blocking stream waits for earlier work of the legacy stream.
  std::vector<std::pair<std::shared_ptr<StreamQueue>, uint64_t>> waits;
  {
    absl::MutexLock lock(&d.mu);
    if (legacy) {
      for (CUstream_st* s : ctx->streams) {
        if (s->blocking() && !s->queue->Idle()) waits.emplace_back(s->queue, s->queue->enqueued());
      }
    } else if (stream->blocking() && !ctx->legacy->Idle()) {
      waits.emplace_back(ctx->legacy, ctx->legacy->enqueued());
    }
  }
  for (auto& [queue, ticket] : waits) {
    target->Enqueue([queue = queue, ticket = ticket] { queue->WaitFor(ticket); });
  }
  if (always) return target->Enqueue(std::move(op));
  return target->Enqueue([ctx, op = std::move(op)] {
    if (ctx->sticky() != CUDA_SUCCESS) return;  // a faulted context runs nothing more
    op();
  });
}

void ActivateContext(CUctx_st* ctx) {
  ctx->legacy = std::make_shared<StreamQueue>(absl::StrCat("device ", ctx->device, " legacy stream"));
  ctx->ClearSticky();
  ctx->peers.clear();
  ctx->limits.clear();
}

void DestroyContextResources(CUctx_st* ctx, bool count_leaks) {
  Driver& d = Driver::Get();
  std::vector<std::unique_ptr<CUstream_st>> streams;
  std::vector<std::unique_ptr<CUevent_st>> events;
  std::vector<std::unique_ptr<CUmod_st>> modules;
  std::shared_ptr<StreamQueue> legacy;
  int leaked = 0;
  {
    absl::MutexLock lock(&d.mu);
    for (CUstream_st* s : ctx->streams) {
      d.streams.erase(s);
      streams.emplace_back(s);
    }
    ctx->streams.clear();
    for (auto it = d.events.begin(); it != d.events.end();) {
      if ((*it)->ctx == ctx) {
        events.emplace_back(*it);
        it = d.events.erase(it);
      } else {
        ++it;
      }
    }
    for (auto it = d.modules.begin(); it != d.modules.end();) {
      if ((*it)->ctx == ctx) {
        modules.emplace_back(*it);
        it = d.modules.erase(it);
      } else {
        ++it;
      }
    }
    legacy = std::move(ctx->legacy);
    leaked = static_cast<int>(streams.size() + events.size() + modules.size());
  }
  for (auto& s : streams) s->queue->Synchronize();
  if (legacy) legacy->Synchronize();
  streams.clear();
  legacy.reset();
  for (auto& m : modules) {
    for (auto& [name, global] : m->globals) {
      d.memory.Remove(global->base, global->kind).IgnoreError();
    }
  }
  for (const std::shared_ptr<Allocation>& a : d.memory.DeviceAllocations(ctx->device)) {
    if (a->kind == Allocation::Kind::kDevice) {
      d.memory.Remove(a->base, a->kind).IgnoreError();
      ++leaked;
    }
  }
  if (count_leaks) {
    absl::MutexLock lock(&d.mu);
    d.leaked_at_release += leaked;
  }
}

}  // namespace ember::vgpu
