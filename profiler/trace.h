// Ember's trace recorder: while a profiling session is on (the PJRT profiler extension, which
// jax.profiler.trace drives), compile stages and launches record timed events on named planes
// and lines (an XPlane per device, as XLA's tracers lay theirs out). Off, recording costs one
// relaxed atomic load. Events are kept in memory until the session collects them.
#ifndef EMBER_PROFILER_TRACE_H_
#define EMBER_PROFILER_TRACE_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"

namespace ember::profiler {

struct Event {
  std::string plane;  // "/custom:Ember device 0", "/custom:Ember host"
  std::string line;   // "Launches", "Kernels", "Compile"
  std::string name;
  int64_t start_ns = 0;  // wall clock, nanoseconds since the Unix epoch
  int64_t end_ns = 0;
  std::vector<std::pair<std::string, std::string>> stats;  // shown with the event
};

// True while at least one session records.
bool Active();
int64_t NowNs();
void Record(Event event);

// The plane events of this thread go to (default "/custom:Ember host"); the runtime sets a device's
// plane around the launches it runs.
class ScopedPlane {
 public:
  explicit ScopedPlane(std::string plane);
  ~ScopedPlane();
  ScopedPlane(const ScopedPlane&) = delete;
  ScopedPlane& operator=(const ScopedPlane&) = delete;

 private:
  std::string previous_;
};
const std::string& CurrentPlane();

// Records one event on the current plane from construction to destruction, when a session is
// on at construction; `name` runs only then.
class ScopedEvent {
 public:
  ScopedEvent(const char* line, absl::FunctionRef<std::string()> name);
  ~ScopedEvent();
  ScopedEvent(const ScopedEvent&) = delete;
  ScopedEvent& operator=(const ScopedEvent&) = delete;
  bool recording() const { return recording_; }
  void AddStat(std::string key, std::string value);

 private:
  bool recording_ = false;
  Event event_;
};

// A profiling session: records from Start to Stop; Collect returns the session's events as a
// serialized tensorflow.profiler.XSpace (xspace.h). Sessions may overlap; each sees the events
// recorded while it was on.
class Session {
 public:
  Session() = default;
  ~Session();
  void Start();
  void Stop();
  std::string CollectXSpace() const;
  const std::vector<Event>& events() const { return events_; }

 private:
  bool started_ = false;
  bool stopped_ = false;
  size_t first_ = 0;  // index of the session's first event in the recorder
  std::vector<Event> events_;
};

}  // namespace ember::profiler

#endif  // EMBER_PROFILER_TRACE_H_
