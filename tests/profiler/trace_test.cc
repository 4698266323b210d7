// The trace recorder (profiler/trace.h): nothing is recorded outside a session, events land on
// the current thread's plane, overlapping sessions each see their window, and the XSpace bytes
// hold the plane, line and event names.
#include "profiler/trace.h"

#include <gtest/gtest.h>

#include <string>

namespace ember::profiler {
namespace {

TEST(TraceTest, RecordsOnlyInsideSessionsOnTheCurrentPlane) {
  EXPECT_FALSE(Active());
  {
    ScopedEvent ignored("Lane", [] { return std::string("before"); });
  }
  Session outer;
  outer.Start();
  EXPECT_TRUE(Active());
  {
    ScopedPlane plane("/custom:test device 3");
    ScopedEvent event("Launches", [] { return std::string("launch"); });
    event.AddStat("run", "7");
  }
  Session inner;
  inner.Start();
  {
    ScopedEvent event("Compile", [] { return std::string("compile"); });
  }
  inner.Stop();
  outer.Stop();
  EXPECT_FALSE(Active());
  ASSERT_EQ(outer.events().size(), 2u);
  EXPECT_EQ(outer.events()[0].plane, "/custom:test device 3");
  EXPECT_EQ(outer.events()[0].stats.size(), 1u);
  EXPECT_EQ(outer.events()[1].plane, "/custom:Ember host");  // the default plane again
  EXPECT_LE(outer.events()[1].start_ns, outer.events()[1].end_ns);
  ASSERT_EQ(inner.events().size(), 1u);
  EXPECT_EQ(inner.events()[0].name, "compile");
  const std::string bytes = outer.CollectXSpace();
  for (const char* text : {"/custom:test device 3", "Launches", "launch", "Compile", "run", "7"}) {
    EXPECT_NE(bytes.find(text), std::string::npos) << text;
  }
  Session empty;
  empty.Start();
  empty.Stop();
  EXPECT_TRUE(empty.CollectXSpace().empty());
}

}  // namespace
}  // namespace ember::profiler
