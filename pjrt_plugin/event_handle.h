// Creating PJRT_Event handles for events the runtime returns (transfers, executions).
#ifndef EMBER_PJRT_PLUGIN_EVENT_HANDLE_H_
#define EMBER_PJRT_PLUGIN_EVENT_HANDLE_H_

#include "pjrt_plugin/include/pjrt_c_api.h"
#include "base/async_event.h"

namespace ember::pjrt {

// A new handle the caller owns (freed with PJRT_Event_Destroy).
PJRT_Event* NewEventHandle(AsyncEventRef event);

}  // namespace ember::pjrt

#endif  // EMBER_PJRT_PLUGIN_EVENT_HANDLE_H_
