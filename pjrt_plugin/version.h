// Versions Ember publishes as plugin attributes.
#ifndef EMBER_PJRT_PLUGIN_VERSION_H_
#define EMBER_PJRT_PLUGIN_VERSION_H_

#include <cstdint>

namespace ember::pjrt {

// Same meaning as XLA's own plugins' `xla_version` attribute.
inline constexpr int64_t kXlaVersion = 2;
// The StableHLO versions the frontend reads. The framework serializes programs at
// min(its own current version, this), so this must never exceed what the reader supports.
// 1.18.1: the newest 1.18 release (1.17 custom_call may take futures, 1.18 custom_call_v2 with
// result_tilings). Not 1.19 until collective_reduce (vhlo.collective_reduce_v1) has an Ember
// opcode; tests/compiler/frontend/import/import_suite_test.cc checks the advertised version.
inline constexpr int64_t kStableHloCurrent[3] = {1, 18, 1};
inline constexpr int64_t kStableHloMinimum[3] = {0, 9, 0};

}  // namespace ember::pjrt

#endif  // EMBER_PJRT_PLUGIN_VERSION_H_
