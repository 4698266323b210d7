// fft (FFT, IFFT, RFFT, IRFFT over the last 1 to 3 axes) as a library call on the launch's
// buffers: the evaluator's line transforms (compiler/evaluator/fft_lines.h: complex<double>,
// radix-2, direct DFT up to 128, Bluestein past it), so the results are the evaluator's bits,
// with the plans (twiddles, chirps) built once when the program compiles instead of on every
// run, no literal copies, and the lines of each axis split across the thread pool. Every float
// and complex type: narrow floats (a bf16/f16 RFFT's operand) are read through f32, as the
// evaluator reads them. An fft of other shapes or layouts
// stays on the evaluator's op table (Refusal says why, the cost report shows it).
#ifndef EMBER_COMPILER_HOST_FFT_THUNK_H_
#define EMBER_COMPILER_HOST_FFT_THUNK_H_

#include <memory>
#include <string>

#include "compiler/evaluator/fft_lines.h"
#include "compiler/host/host_thunks.h"

namespace ember::host {

class FftThunk final : public HostThunk {
 public:
  // "" when `instruction` is an fft this thunk runs, else why not.
  static std::string Refusal(const ir::Instruction& instruction);
  // Null when Refusal(instruction) is not empty.
  static std::unique_ptr<FftThunk> Create(std::string name, const ir::Instruction& instruction,
                                          ValueRef operand, ValueRef result);
  absl::Status Run(HostRunContext& context) const override;

 private:
  FftThunk(std::string name, eval::FftForm form, ValueRef operand, ValueRef result)
      : HostThunk(Kind::kLibraryCall, std::move(name)),
        plan_(std::move(form)),
        operand_(operand),
        result_(result) {}

  eval::FftPlan plan_;
  ValueRef operand_, result_;
  ir::ElementType in_type_ = ir::ElementType::kInvalid;
  ir::ElementType out_type_ = ir::ElementType::kInvalid;
};

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_FFT_THUNK_H_
