// Each object family's file binds its entry points into the PJRT_Api table.
#ifndef EMBER_PJRT_PLUGIN_BINDINGS_H_
#define EMBER_PJRT_PLUGIN_BINDINGS_H_

#include "pjrt_plugin/include/pjrt_c_api.h"

namespace ember::pjrt {

void BindPluginEntries(PJRT_Api& api);
void BindEventEntries(PJRT_Api& api);
void BindClientEntries(PJRT_Api& api);
void BindDeviceEntries(PJRT_Api& api);
void BindMemoryEntries(PJRT_Api& api);
void BindTopologyEntries(PJRT_Api& api);
void BindBufferEntries(PJRT_Api& api);
void BindExecutableEntries(PJRT_Api& api);
void BindFfiEntries(PJRT_Api& api);  // PJRT_ExecuteContext_*, with the FFI extension

}  // namespace ember::pjrt

#endif  // EMBER_PJRT_PLUGIN_BINDINGS_H_
