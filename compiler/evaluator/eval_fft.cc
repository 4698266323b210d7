// Reference evaluation of fft: FFT, IFFT, RFFT and IRFFT over the last 1 to 3 dimensions.
//
// Everything is computed in complex<double> and rounded once into the result type, line by line
// by the plans of fft_lines.h (shared with the host backend's fft thunk). IFFT and IRFFT scale by
// 1/n per transformed dimension (numpy's and XLA's convention). IRFFT rebuilds the full Hermitian
// spectrum from the first n/2+1 entries of the last dimension; the imaginary parts of the DC (and,
// for even n, Nyquist) terms therefore do not affect the result, as in numpy.irfft.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include "compiler/evaluator/eval_family_support.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/evaluator/fft_lines.h"

namespace ember::eval {
namespace {

namespace fs = family_support;
using Complex = std::complex<double>;

absl::StatusOr<std::vector<EvalValue>> EvalFft(const ir::Instruction& inst,
                                               std::vector<EvalValue>& operands, Evaluator&) {
  EMBER_RETURN_IF_ERROR(fs::CheckOperandCount(inst, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, fs::ArrayOperand(inst, operands, 0));
  EMBER_ASSIGN_OR_RETURN(FftForm form, FftForm::Read(inst));
  EMBER_ASSIGN_OR_RETURN(ir::Shape result_shape, fs::ResultShape(inst, 0));
  EMBER_ASSIGN_OR_RETURN(std::vector<Complex> in, fs::LiteralTo<Complex>(*operand));
  const bool real_out = form.type == FftForm::Type::kIrfft;
  std::vector<Complex> work(real_out ? static_cast<size_t>(fs::Product(form.full_dims)) : 0);
  const FftPlan plan(form);
  std::vector<Complex> line, scratch(static_cast<size_t>(plan.scratch_size()));
  const Complex* out = plan.Run(
      in.data(), work.data(),
      [&](Complex* data, const FftAxisLines& lines, const FftLinePlan& p, bool inverse) {
        line.resize(static_cast<size_t>(lines.n));
        TransformFftLines(data, lines, p, inverse, 0, lines.count, line.data(), scratch.data());
      });
  const int64_t count = fs::Product(form.out_dims);
  ir::Literal result;
  if (real_out) {
    std::vector<double> re(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) re[i] = out[i].real();
    EMBER_ASSIGN_OR_RETURN(result, fs::LiteralFrom<double>(result_shape, absl::MakeConstSpan(re)));
  } else {
    EMBER_ASSIGN_OR_RETURN(result, fs::LiteralFrom<Complex>(
                                       result_shape, absl::MakeConstSpan(out, count)));
  }
  std::vector<EvalValue> results;
  results.push_back(EvalValue::Array(std::move(result)));
  return results;
}

}  // namespace

namespace family_support {
void RegisterFftOps(OpTable& table) { table.Register(ir::Opcode::kFft, EvalFft); }
}  // namespace family_support

}  // namespace ember::eval
