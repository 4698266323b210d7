// The process-wide ORC JIT of the host code generator: one LLJIT, created on first use and never
// destroyed, shared by every executable, with one JITDylib per compiled module that is removed
// when the last kernel using it goes away. Creating an LLJIT per executable cost milliseconds on
// every compile; a JITDylib costs microseconds. Thread-safe: JAX compiles from several threads.
#ifndef EMBER_COMPILER_CODEGEN_HOST_JIT_H_
#define EMBER_COMPILER_CODEGEN_HOST_JIT_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace llvm {
class DataLayout;
class TargetMachine;
}  // namespace llvm

namespace ember::codegen {

class HostJit {
 public:
  // The JIT, created once; an error when LLVM cannot target this host (returned to every caller).
  static absl::StatusOr<HostJit*> Get();

  // The host's target triple, CPU name and features, and the LLVM version: what object code
  // compiled here depends on besides the IR (part of the persistent cache's key).
  const std::string& target_id() const { return target_id_; }
  const llvm::DataLayout& data_layout() const;
  const std::string& triple() const { return triple_; }

  // A target machine for the host CPU for one compilation at a time (LLVM's target machines are
  // not safe to share between concurrent code generations); it goes back to a pool when freed.
  using TargetMachinePtr = std::unique_ptr<llvm::TargetMachine, void (*)(llvm::TargetMachine*)>;
  absl::StatusOr<TargetMachinePtr> AcquireTargetMachine();

  // Links `object` (an ELF relocatable file) into a new JITDylib and resolves `names` into
  // `addresses` (same order). The returned owner keeps the code alive; the last copy's release
  // removes the JITDylib and frees its memory.
  absl::StatusOr<std::shared_ptr<const void>> Load(std::string_view object,
                                                   const std::vector<std::string>& names,
                                                   std::vector<void*>& addresses);

 private:
  struct State;
  explicit HostJit(std::unique_ptr<State> state);

  std::unique_ptr<State> state_;
  std::string target_id_;
  std::string triple_;
};

}  // namespace ember::codegen

#endif  // EMBER_COMPILER_CODEGEN_HOST_JIT_H_
