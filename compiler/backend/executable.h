// Executable: what a backend makes of one program entry, and all the runtime needs to run it on
// a device of the backend's platform: the thunks to enqueue, the buffers one launch binds (the
// per-device argument and result types, one arena of temporaries, the results that may take a
// donated argument's memory), and the reports the framework and the dumps read. It knows no
// platform; the runtime knows nothing else of the backend.
#ifndef EMBER_COMPILER_BACKEND_EXECUTABLE_H_
#define EMBER_COMPILER_BACKEND_EXECUTABLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/backend/thunk.h"
#include "compiler/passes/cost_analysis.h"
#include "compiler/ir/value_type.h"

namespace ember::backend {

// The buffers of one launch on one device.
struct BufferLayout {
  std::vector<ir::ValueType> parameter_types;
  std::vector<ir::ValueType> result_types;
  // Bytes of the arena of temporaries (0: none). It is the last allocation of a launch.
  int64_t temp_bytes = 0;
  // Per result: the parameter whose memory the result may be written into when the caller
  // donates that parameter, or -1.
  std::vector<int> result_aliases;

  size_t num_allocations() const {
    return parameter_types.size() + result_types.size() + (temp_bytes > 0 ? 1 : 0);
  }
  int parameter_allocation(size_t i) const { return static_cast<int>(i); }
  int result_allocation(size_t r) const { return static_cast<int>(parameter_types.size() + r); }
  int temp_allocation() const {
    return temp_bytes > 0 ? static_cast<int>(parameter_types.size() + result_types.size()) : -1;
  }
};

// What a backend reports about its work, for dumps and the framework's queries.
struct ExecutableReports {
  std::string fusion_plan_dot;     // the kernels and their inputs (Graphviz), may be empty
  std::string cost_report;         // kernels, bytes moved, where each op runs
  std::string buffer_report;       // the schedule and buffer assignment
  int64_t kernel_count = 0;
  int64_t generated_code_bytes = 0;
  passes::ProgramCost cost;        // what one launch costs (PJRT_Executable_GetCostAnalysis)
};

class Executable {
 public:
  Executable(std::string backend, std::string platform, std::unique_ptr<Thunk> thunks,
             BufferLayout layout, ExecutableReports reports, bool dispatch_inline)
      : backend_(std::move(backend)),
        platform_(std::move(platform)),
        thunks_(std::move(thunks)),
        layout_(std::move(layout)),
        reports_(std::move(reports)),
        dispatch_inline_(dispatch_inline) {}

  // The backend that made it ("host", "evaluator") and the stream-executor platform whose
  // devices run it ("host").
  const std::string& backend() const { return backend_; }
  const std::string& platform() const { return platform_; }
  const Thunk& thunks() const { return *thunks_; }
  const BufferLayout& layout() const { return layout_; }
  const ExecutableReports& reports() const { return reports_; }
  // The launch is so small that handing it to the device's stream thread would cost more than
  // running it: the runtime may run a single-device launch on the calling thread when the stream
  // is idle (Stream::TryRunHostCallbackInline), as XLA:CPU runs cheap computations inline.
  bool dispatch_inline() const { return dispatch_inline_; }

  // Enqueues one launch on params.stream.
  absl::Status ExecuteOnStream(const ExecuteParams& params) const {
    return thunks_->ExecuteOnStream(params);
  }

 private:
  std::string backend_;
  std::string platform_;
  std::unique_ptr<Thunk> thunks_;
  BufferLayout layout_;
  ExecutableReports reports_;
  bool dispatch_inline_;
};

}  // namespace ember::backend

#endif  // EMBER_COMPILER_BACKEND_EXECUTABLE_H_
