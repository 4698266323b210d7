// The PJRT profiler extension record (one per process) for the PJRT_Api extension chain.
#ifndef EMBER_PJRT_PLUGIN_PROFILER_EXTENSION_H_
#define EMBER_PJRT_PLUGIN_PROFILER_EXTENSION_H_

#include "pjrt_plugin/include/pjrt_c_api_profiler_extension.h"

namespace ember::pjrt {

// The extension, linked in front of `next` (the rest of the chain, may be null).
PJRT_Extension_Base* ProfilerExtension(PJRT_Extension_Base* next);

}  // namespace ember::pjrt

#endif  // EMBER_PJRT_PLUGIN_PROFILER_EXTENSION_H_
