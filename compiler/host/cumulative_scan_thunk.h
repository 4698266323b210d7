// Cumulative reduce_windows (cumsum, cumprod, cummax, cummin, cumlogsumexp and their suffix
// forms) run natively in the evaluator's order, which is XLA's (compiler/evaluator/tree_scan.h):
// blocks of 16 scanned on their own, their totals scanned the same way, and each element combined
// with the total of the blocks before it. A body of one op is folded here; any other body the
// code generator takes (logaddexp, say) is its compiled combiner (codegen/scan_emitter.h), called
// once per combination in the order the evaluator runs the region (suffixes folded from each
// block's end). Float results therefore equal the evaluator's bit for bit where the body's ops
// do (every op but the polynomial transcendentals, a few ulp apart). Independent lines run in
// parallel; several lines advance together so that their dependency chains overlap.
#ifndef EMBER_COMPILER_HOST_CUMULATIVE_SCAN_THUNK_H_
#define EMBER_COMPILER_HOST_CUMULATIVE_SCAN_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "compiler/codegen/host_kernel_compiler.h"
#include "compiler/host/host_thunks.h"

namespace ember::host {

class CumulativeScanThunk final : public HostThunk {
 public:
  // "" when `instruction` is a reduce_window this thunk runs exactly as the evaluator does (one
  // operand, a cumulative window along one axis, a body of one add, multiply, maximum, minimum,
  // and, or or xor on a supported type, and a constant init value that the body leaves
  // unchanged when combined with itself); else why not.
  static std::string Refusal(const ir::Instruction& instruction);
  // "" when `instruction` is a cumulative reduce_window whose body is not one op, with a
  // constant init value: the scan runs it with a compiled combiner (if that leaves the init value
  // unchanged when combining it with itself); else why not.
  static std::string CombinerRefusal(const ir::Instruction& instruction);
  // Null where neither the native fold nor `combiner` (the body compiled by
  // codegen::EmitScanCombiner, or none) takes `instruction`.
  static std::unique_ptr<CumulativeScanThunk> Create(std::string name,
                                                     const ir::Instruction& instruction,
                                                     ValueRef operand, ValueRef result,
                                                     codegen::HostLoopKernel combiner = {});
  absl::Status Run(HostRunContext& context) const override;

  // Scans `lanes` lines of `n` elements: element i of lane l at in[i * stride + l * lane_stride]
  // (and the same in out); `scratch` holds ScratchElements(n, lanes) elements.
  using LinesScanner = void (*)(const uint8_t* in, uint8_t* out, int64_t n, int64_t stride,
                                int64_t lanes, int64_t lane_stride, const uint8_t* init,
                                bool accumulator_first, bool reverse, uint8_t* scratch);

 private:
  CumulativeScanThunk(std::string name, ValueRef operand, ValueRef result)
      : HostThunk(Kind::kKernel, std::move(name)), operand_(operand), result_(result) {}

  // The scan with the compiled combiner, line by line.
  absl::Status RunCombiner(HostRunContext& context) const;

  ValueRef operand_, result_;
  LinesScanner scan_ = nullptr;     // the native fold, or
  codegen::HostLoopKernel combiner_;  // the compiled body
  uint64_t init_ = 0;  // the init value's bits
  int element_bytes_ = 0;
  bool accumulator_first_ = true;
  bool reverse_ = false;
  int64_t outer_ = 0, n_ = 0, inner_ = 0;  // the operand as [outer, n, inner], n scanned
};

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_CUMULATIVE_SCAN_THUNK_H_
