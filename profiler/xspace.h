// Serializes trace events as a tensorflow.profiler.XSpace protobuf (the format the PJRT profiler
// extension's CollectData returns and jax.profiler.trace merges into its .xplane.pb): one XPlane
// per event plane, one XLine per line, event metadata (names) per plane, string stats. Written
// with a small wire-format encoder: the schema is a handful of messages, and Ember links no
// profiler library.
#ifndef EMBER_PROFILER_XSPACE_H_
#define EMBER_PROFILER_XSPACE_H_

#include <string>
#include <vector>

#include "profiler/trace.h"

namespace ember::profiler {

std::string SerializeXSpace(const std::vector<Event>& events);

}  // namespace ember::profiler

#endif  // EMBER_PROFILER_XSPACE_H_
