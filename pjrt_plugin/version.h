// Versions Ember publishes as plugin attributes.
#ifndef EMBER_PJRT_PLUGIN_VERSION_H_
#define EMBER_PJRT_PLUGIN_VERSION_H_

#include <cstdint>

namespace ember::pjrt {

// Same meaning as XLA's own plugins' `xla_version` attribute.
inline constexpr int64_t kXlaVersion = 2;
// The StableHLO versions the frontend reads. The framework serializes programs at
// min(its own current version, this), so this must never exceed what the reader supports.
inline constexpr int64_t kStableHloCurrent[3] = {1, 16, 3};
inline constexpr int64_t kStableHloMinimum[3] = {0, 9, 0};

}  // namespace ember::pjrt

#endif  // EMBER_PJRT_PLUGIN_VERSION_H_
