// Helpers shared by the object-family files: new buffer handles, the memory function table.
#ifndef EMBER_PJRT_PLUGIN_CLIENT_HANDLE_H_
#define EMBER_PJRT_PLUGIN_CLIENT_HANDLE_H_

#include <memory>

#include "pjrt_plugin/include/pjrt_c_api.h"
#include "runtime/buffer.h"

namespace ember::pjrt {

// A new handle the caller owns (freed with PJRT_Buffer_Destroy).
PJRT_Buffer* NewBufferHandle(PJRT_Client* client, std::unique_ptr<runtime::Buffer> buffer);
// The table every Ember PJRT_Memory starts with (user data for the framework's lookups).
const PJRT_Memory_FunctionTable* MemoryFunctionTable();

}  // namespace ember::pjrt

#endif  // EMBER_PJRT_PLUGIN_CLIENT_HANDLE_H_
