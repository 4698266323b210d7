// The process-wide queue of background compiles (tiered compilation, host_kernel_compiler.h):
// tasks run one after another on a few worker threads, beside the programs they will speed up.
// At process exit the queue stops: tasks not yet started are dropped, and exit waits for the
// running ones, which use LLVM, before LLVM's own static objects are destroyed.
#ifndef EMBER_COMPILER_CODEGEN_BACKGROUND_COMPILER_H_
#define EMBER_COMPILER_CODEGEN_BACKGROUND_COMPILER_H_

#include "absl/functional/any_invocable.h"

namespace ember::codegen {

class BackgroundCompiler {
 public:
  // The process's queue (created on first use, never destroyed).
  static BackgroundCompiler& Get();

  // Runs `task` on a worker thread, after the tasks queued before it. A task must not throw, and
  // must not wait for another task.
  virtual void Submit(absl::AnyInvocable<void() &&> task) = 0;
  // Blocks until every task submitted so far has run (tests, and callers that want the
  // optimized code before they measure).
  virtual void WaitIdle() = 0;

 protected:
  virtual ~BackgroundCompiler() = default;
};

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_BACKGROUND_COMPILER_H_
