// A fake libcuda for tests on machines without a GPU: the Driver API functions Ember's CUDA
// platform resolves, implemented on host memory, with one worker thread per CUstream. It is strict
// where Ember could go wrong: calls that need a current context fail without one, device pointers
// must lie inside live allocations, and every handle is counted so tests can check for leaks.
// Built as a shared library and opened through CudaPlatformOptions::driver_library.
// With EMBER_FAKE_CUDA_OMIT_MEMSET it lacks cuMemsetD8Async (the missing-symbol test).
#include <cuda.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

struct CUctx_st {
  int device = 0;
  int retains = 0;
};

namespace {

constexpr int kDeviceCount = 2;
constexpr size_t kTotalMemory = size_t{1} << 30;

std::mutex g_mu;
std::atomic<bool> g_initialized{false};
CUctx_st g_contexts[kDeviceCount] = {{0, 0}, {1, 0}};
std::map<uintptr_t, size_t> g_allocations;  // base -> size
int g_live_streams = 0;
int g_live_events = 0;
int g_fail_allocations = 0;  // the next N cuMemAlloc calls fail with out of memory
thread_local std::vector<CUctx_st*> t_context_stack;

bool HasContext() { return !t_context_stack.empty(); }

// True when [ptr, ptr + size) lies inside one live allocation.
bool IsDeviceRange(CUdeviceptr ptr, size_t size) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_allocations.upper_bound(static_cast<uintptr_t>(ptr));
  if (it == g_allocations.begin()) return false;
  --it;
  return ptr >= it->first && ptr + size <= it->first + it->second;
}

void* Host(CUdeviceptr ptr) { return reinterpret_cast<void*>(static_cast<uintptr_t>(ptr)); }

struct EventData {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0;
  uint64_t completed = 0;
};

}  // namespace

struct CUevent_st {
  std::shared_ptr<EventData> data = std::make_shared<EventData>();
};

struct CUstream_st {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  bool busy = false;
  bool stop = false;
  std::thread worker;

  CUstream_st() : worker([this] { Run(); }) {}
  ~CUstream_st() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    cv.notify_all();
    worker.join();
  }
  void Enqueue(std::function<void()> op) {
    {
      std::lock_guard<std::mutex> lock(mu);
      queue.push_back(std::move(op));
    }
    cv.notify_all();
  }
  void Synchronize() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [this] { return queue.empty() && !busy; });
  }
  void Run() {
    std::unique_lock<std::mutex> lock(mu);
    while (true) {
      cv.wait(lock, [this] { return stop || !queue.empty(); });
      if (queue.empty()) return;
      std::function<void()> op = std::move(queue.front());
      queue.pop_front();
      busy = true;
      lock.unlock();
      op();
      op = nullptr;
      lock.lock();
      busy = false;
      cv.notify_all();
    }
  }
};

extern "C" {

// Test hooks, found with dlsym on the same library.
int ember_fake_cuda_live_handles() {
  std::lock_guard<std::mutex> lock(g_mu);
  int live = g_live_streams + g_live_events + static_cast<int>(g_allocations.size());
  for (const CUctx_st& context : g_contexts) live += context.retains;
  return live;
}
void ember_fake_cuda_fail_next_allocations(int count) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_fail_allocations = count;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char** str) {
  switch (error) {
    case CUDA_SUCCESS:
      *str = "CUDA_SUCCESS";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE:
      *str = "CUDA_ERROR_INVALID_VALUE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_OUT_OF_MEMORY:
      *str = "CUDA_ERROR_OUT_OF_MEMORY";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_INITIALIZED:
      *str = "CUDA_ERROR_NOT_INITIALIZED";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_DEVICE:
      *str = "CUDA_ERROR_INVALID_DEVICE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_CONTEXT:
      *str = "CUDA_ERROR_INVALID_CONTEXT";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_HANDLE:
      *str = "CUDA_ERROR_INVALID_HANDLE";
      return CUDA_SUCCESS;
    default:
      *str = nullptr;
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char** str) {
  switch (error) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      *str = "out of memory";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_CONTEXT:
      *str = "invalid device context";
      return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE:
      *str = "invalid argument";
      return CUDA_SUCCESS;
    default:
      *str = "fake driver error";
      return CUDA_SUCCESS;
  }
}

CUresult CUDAAPI cuInit(unsigned int flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  g_initialized = true;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int* count) {
  if (!g_initialized) return CUDA_ERROR_NOT_INITIALIZED;
  *count = kDeviceCount;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  if (!g_initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (ordinal < 0 || ordinal >= kDeviceCount) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice device) {
  if (device < 0 || device >= kDeviceCount || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::strncpy(name, "Ember fake GPU", static_cast<size_t>(len));
  name[len - 1] = '\0';
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t* bytes, CUdevice device) {
  if (device < 0 || device >= kDeviceCount) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = kTotalMemory;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  if (device < 0 || device >= kDeviceCount) return CUDA_ERROR_INVALID_DEVICE;
  std::lock_guard<std::mutex> lock(g_mu);
  ++g_contexts[device].retains;
  *context = &g_contexts[device];
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice device) {
  if (device < 0 || device >= kDeviceCount) return CUDA_ERROR_INVALID_DEVICE;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_contexts[device].retains == 0) return CUDA_ERROR_INVALID_CONTEXT;
  --g_contexts[device].retains;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext context) {
  if (context == nullptr) return CUDA_ERROR_INVALID_CONTEXT;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (context->retains == 0) return CUDA_ERROR_INVALID_CONTEXT;  // released, or never retained
  }
  t_context_stack.push_back(context);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext* context) {
  if (t_context_stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (context != nullptr) *context = t_context_stack.back();
  t_context_stack.pop_back();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreate(CUstream* stream, unsigned int flags) {
  if (!HasContext()) return CUDA_ERROR_INVALID_CONTEXT;
  if (flags != CU_STREAM_NON_BLOCKING && flags != CU_STREAM_DEFAULT)
    return CUDA_ERROR_INVALID_VALUE;
  auto owned = std::make_unique<CUstream_st>();
  *stream = owned.release();  // the C API hands out a raw handle; cuStreamDestroy takes it back
  std::lock_guard<std::mutex> lock(g_mu);
  ++g_live_streams;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream stream) {
  if (!HasContext()) return CUDA_ERROR_INVALID_CONTEXT;
  if (stream == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::unique_ptr<CUstream_st> owned(stream);
  owned.reset();  // drains its queue
  std::lock_guard<std::mutex> lock(g_mu);
  --g_live_streams;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream stream) {
  if (!HasContext()) return CUDA_ERROR_INVALID_CONTEXT;
  if (stream == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  stream->Synchronize();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent* event, unsigned int flags) {
  if (!HasContext()) return CUDA_ERROR_INVALID_CONTEXT;
  if ((flags & ~(CU_EVENT_DISABLE_TIMING | CU_EVENT_BLOCKING_SYNC)) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  auto owned = std::make_unique<CUevent_st>();
  *event = owned.release();
  std::lock_guard<std::mutex> lock(g_mu);
  ++g_live_events;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent event) {
  if (!HasContext()) return CUDA_ERROR_INVALID_CONTEXT;
  if (event == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::unique_ptr<CUevent_st> owned(event);  // pending records keep EventData alive
  std::lock_guard<std::mutex> lock(g_mu);
  --g_live_events;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventRecord(CUevent event, CUstream stream) {
  if (!HasContext()) return CUDA_ERROR_INVALID_CONTEXT;
  if (event == nullptr || stream == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::shared_ptr<EventData> data = event->data;
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(data->mu);
    target = ++data->recorded;
  }
  stream->Enqueue([data, target] {
    std::lock_guard<std::mutex> lock(data->mu);
    if (data->completed < target) data->completed = target;
    data->cv.notify_all();
  });
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventSynchronize(CUevent event) {
  if (!HasContext()) return CUDA_ERROR_INVALID_CONTEXT;
  if (event == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  EventData& data = *event->data;
  std::unique_lock<std::mutex> lock(data.mu);
  data.cv.wait(lock, [&data] { return data.completed >= data.recorded; });
  return CUDA_SUCCESS;
}

// Cross-context waits are allowed, as in the real driver.
CUresult CUDAAPI cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags) {
  if (!HasContext()) return CUDA_ERROR_INVALID_CONTEXT;
  if (event == nullptr || stream == nullptr || flags != 0) return CUDA_ERROR_INVALID_HANDLE;
  std::shared_ptr<EventData> data = event->data;
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(data->mu);
    target = data->recorded;
  }
  stream->Enqueue([data, target] {
    std::unique_lock<std::mutex> lock(data->mu);
    data->cv.wait(lock, [&] { return data->completed >= target; });
  });
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream stream, CUhostFn fn, void* user_data) {
  if (!HasContext()) return CUDA_ERROR_INVALID_CONTEXT;
  if (stream == nullptr || fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  stream->Enqueue([fn, user_data] { fn(user_data); });
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemAlloc(CUdeviceptr* ptr, size_t size) {
  if (!HasContext()) return CUDA_ERROR_INVALID_CONTEXT;
  if (size == 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_fail_allocations > 0) {
    --g_fail_allocations;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  void* memory = std::aligned_alloc(256, (size + 255) / 256 * 256);
  if (memory == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  g_allocations.emplace(reinterpret_cast<uintptr_t>(memory), size);
  *ptr = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(memory));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree(CUdeviceptr ptr) {
  if (!HasContext()) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = g_allocations.find(static_cast<uintptr_t>(ptr));
  if (it == g_allocations.end()) return CUDA_ERROR_INVALID_VALUE;
  g_allocations.erase(it);
  std::free(Host(ptr));
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t size) {
  if (!HasContext()) return CUDA_ERROR_INVALID_CONTEXT;
  if (!IsDeviceRange(dst, size)) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(Host(dst), src, size);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t size) {
  if (!HasContext()) return CUDA_ERROR_INVALID_CONTEXT;
  if (!IsDeviceRange(src, size)) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(dst, Host(src), size);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t size, CUstream stream) {
  if (!HasContext()) return CUDA_ERROR_INVALID_CONTEXT;
  if (stream == nullptr || !IsDeviceRange(dst, size)) return CUDA_ERROR_INVALID_VALUE;
  stream->Enqueue([dst, src, size] { std::memcpy(Host(dst), src, size); });
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t size, CUstream stream) {
  if (!HasContext()) return CUDA_ERROR_INVALID_CONTEXT;
  if (stream == nullptr || !IsDeviceRange(src, size)) return CUDA_ERROR_INVALID_VALUE;
  stream->Enqueue([dst, src, size] { std::memcpy(dst, Host(src), size); });
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t size, CUstream stream) {
  if (!HasContext()) return CUDA_ERROR_INVALID_CONTEXT;
  if (stream == nullptr || !IsDeviceRange(dst, size) || !IsDeviceRange(src, size)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  stream->Enqueue([dst, src, size] { std::memmove(Host(dst), Host(src), size); });
  return CUDA_SUCCESS;
}

#ifndef EMBER_FAKE_CUDA_OMIT_MEMSET
CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t size,
                                 CUstream stream) {
  if (!HasContext()) return CUDA_ERROR_INVALID_CONTEXT;
  if (stream == nullptr || !IsDeviceRange(dst, size)) return CUDA_ERROR_INVALID_VALUE;
  stream->Enqueue([dst, value, size] { std::memset(Host(dst), value, size); });
  return CUDA_SUCCESS;
}
#endif

}  // extern "C"
