// The C handle structs behind the opaque PJRT_* types. Each holds the runtime object it stands
// for and, where the ABI returns pointers into it, the C-layout data cached for its lifetime.
#ifndef EMBER_PJRT_PLUGIN_HANDLES_H_
#define EMBER_PJRT_PLUGIN_HANDLES_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ffi/execution_context.h"
#include "pjrt_plugin/include/pjrt_c_api.h"
#include "pjrt_plugin/named_values.h"
#include "base/async_event.h"
#include "runtime/buffer.h"
#include "compiler/backend/backend.h"
#include "runtime/client.h"

// Owned by its PJRT_Device; the framework gets it from PJRT_Device_GetDescription.
struct PJRT_DeviceDescription {
  ember::runtime::Device* device = nullptr;
  std::string kind;
  std::string to_string;
  std::string debug_string;
  ember::pjrt::NamedValueList attributes;
};

// Owned by its PJRT_Client; one per runtime device, the same pointer for the client's lifetime.
struct PJRT_Device {
  PJRT_Client* client = nullptr;
  ember::runtime::Device* device = nullptr;
  PJRT_DeviceDescription description;
  std::vector<PJRT_Memory*> memories;
  PJRT_Memory* default_memory = nullptr;
};

namespace ember::pjrt {

// PJRT_Memory is a real struct in the ABI (a function-table pointer first); Ember's memory
// object extends it. Owned by its PJRT_Client.
struct EmberMemory {
  PJRT_Memory base;  // must stay first
  PJRT_Client* client = nullptr;
  ember::runtime::MemorySpace* memory = nullptr;
  std::vector<PJRT_Device*> devices;
  std::string debug_string;
  std::string to_string;
  std::mutex user_data_mu;
  std::map<const void*, std::pair<void*, void (*)(void*)>> user_data;
  ~EmberMemory();
};

inline EmberMemory* AsEmber(PJRT_Memory* memory) { return reinterpret_cast<EmberMemory*>(memory); }

}  // namespace ember::pjrt

// Owned by the framework (PJRT_ExecuteContext_Destroy): user data for the FFI handlers of the
// executions it is passed to. Shared, so a launch still running keeps it alive.
struct PJRT_ExecuteContext {
  std::shared_ptr<ember::ffi::ExecutionContext> context =
      std::make_shared<ember::ffi::ExecutionContext>();
};

// Owned by its PJRT_Client.
struct PJRT_TopologyDescription {
  PJRT_Client* client = nullptr;
  std::vector<PJRT_DeviceDescription*> descriptions;
  ember::pjrt::NamedValueList attributes;
};

// Owned by the framework (PJRT_Client_Destroy).
struct PJRT_Client {
  std::shared_ptr<ember::runtime::Client> client;
  // The backends that compile this client's programs (registered when the client is created).
  std::shared_ptr<const ember::backend::BackendRegistry> backends;
  std::string platform_version;
  std::vector<std::unique_ptr<PJRT_Device>> devices;
  std::vector<std::unique_ptr<ember::pjrt::EmberMemory>> memories;
  std::vector<PJRT_Device*> device_ptrs;  // every device of the job
  std::vector<PJRT_Device*> addressable_device_ptrs;  // this process's
  std::vector<PJRT_Memory*> memory_ptrs;
  std::map<const ember::runtime::Device*, PJRT_Device*> device_map;
  std::map<const ember::runtime::MemorySpace*, PJRT_Memory*> memory_map;
  PJRT_TopologyDescription topology;
  // Lives exactly as long as this handle: buffers watch it (PJRT_Buffer::client_alive) to
  // refuse work that needs a destroyed client's devices, rather than read freed memory.
  std::shared_ptr<const bool> alive = std::make_shared<const bool>(true);
};

// Owned by the framework (PJRT_Buffer_Destroy).
struct PJRT_Buffer {
  // Valid while client_alive has not expired: PJRT lets a framework destroy a client before its
  // buffers (the data stays readable, runtime::Buffer keeps the runtime client alive), but the
  // client's device and memory handles go with it.
  PJRT_Client* client = nullptr;
  std::weak_ptr<const bool> client_alive;
  bool client_destroyed() const { return client_alive.expired(); }
  std::unique_ptr<ember::runtime::Buffer> buffer;
  // Returned by PJRT_Buffer_GetMemoryLayout; filled on first request.
  std::mutex layout_mu;
  std::vector<int64_t> minor_to_major;
  std::unique_ptr<PJRT_Buffer_MemoryLayout> layout;
};

// Owned by the framework (PJRT_Event_Destroy). Destroying it never cancels registered callbacks.
struct PJRT_Event {
  ember::AsyncEventRef event;
};

#endif  // EMBER_PJRT_PLUGIN_HANDLES_H_
