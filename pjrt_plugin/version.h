// Versions Ember publishes as plugin attributes.
#ifndef EMBER_PJRT_PLUGIN_VERSION_H_
#define EMBER_PJRT_PLUGIN_VERSION_H_

#include <cstdint>

namespace ember::pjrt {

// Same meaning as XLA's own plugins' `xla_version` attribute.
inline constexpr int64_t kXlaVersion = 2;
// The StableHLO versions the frontend reads. The framework serializes programs at
// min(its own current version, this), so this must never exceed what the reader supports.
// 1.20.0: upstream's current version (1.19 adds collective_reduce, 1.20 has_dynamic_root on
// collective_broadcast; earlier: 1.17 custom_call may take futures, 1.18 custom_call_v2 with
// result_tilings). tests/compiler/frontend/import/import_suite_test.cc checks that upstream's
// artifact for the advertised version imports.
inline constexpr int64_t kStableHloCurrent[3] = {1, 20, 0};
inline constexpr int64_t kStableHloMinimum[3] = {0, 9, 0};

}  // namespace ember::pjrt

#endif  // EMBER_PJRT_PLUGIN_VERSION_H_
