#include "profiler/trace.h"

#include <atomic>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "profiler/xspace.h"

namespace ember::profiler {
namespace {

struct Recorder {
  std::atomic<int> sessions{0};
  absl::Mutex mu;
  std::vector<Event> events ABSL_GUARDED_BY(mu);
};

Recorder& Global() {
  static Recorder* recorder = new Recorder();  // used from threads that outlive statics
  return *recorder;
}

const std::string& DefaultPlane() {
  static const std::string* plane = new std::string("/custom:Ember host");
  return *plane;
}

thread_local std::string current_plane;  // empty: the default plane

}  // namespace

bool Active() { return Global().sessions.load(std::memory_order_relaxed) > 0; }

int64_t NowNs() { return absl::GetCurrentTimeNanos(); }

void Record(Event event) {
  Recorder& r = Global();
  if (!Active()) return;
  absl::MutexLock lock(&r.mu);
  r.events.push_back(std::move(event));
}

ScopedPlane::ScopedPlane(std::string plane) : previous_(std::move(current_plane)) {
  current_plane = std::move(plane);
}

ScopedPlane::~ScopedPlane() { current_plane = std::move(previous_); }

const std::string& CurrentPlane() { return current_plane.empty() ? DefaultPlane() : current_plane; }

ScopedEvent::ScopedEvent(const char* line, absl::FunctionRef<std::string()> name) {
  if (!Active()) return;
  recording_ = true;
  event_.plane = CurrentPlane();
  event_.line = line;
  event_.name = name();
  event_.start_ns = NowNs();
}

ScopedEvent::~ScopedEvent() {
  if (!recording_) return;
  event_.end_ns = NowNs();
  Record(std::move(event_));
}

void ScopedEvent::AddStat(std::string key, std::string value) {
  if (recording_) event_.stats.emplace_back(std::move(key), std::move(value));
}

Session::~Session() {
  if (started_ && !stopped_) Stop();
}

void Session::Start() {
  if (started_) return;
  Recorder& r = Global();
  absl::MutexLock lock(&r.mu);
  first_ = r.events.size();
  r.sessions.fetch_add(1);
  started_ = true;
}

void Session::Stop() {
  if (!started_ || stopped_) return;
  Recorder& r = Global();
  absl::MutexLock lock(&r.mu);
  events_.assign(r.events.begin() + static_cast<std::ptrdiff_t>(first_), r.events.end());
  if (r.sessions.fetch_sub(1) == 1) r.events.clear();  // nobody else reads them
  stopped_ = true;
}

std::string Session::CollectXSpace() const { return SerializeXSpace(events_); }

}  // namespace ember::profiler
