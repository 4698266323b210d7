// The custom calls Ember's JAX lowerings emit for general matrices and for the reductions of
// LAPACK's eigensolvers (python/jax_plugins/ember/linalg.py): @ember_eig (xGEEV: eigenvalues and
// left/right eigenvectors), @ember_schur (xGEES), @ember_hessenberg (xGEHRD's packed form) and
// @ember_tridiagonal (xSYTRD / xHETRD's packed form), run as library calls on the launch's
// buffers. Each matrix is read into double (complex<double>), decomposed by the evaluator's own
// cores (compiler/evaluator/dense_linalg.h) and rounded once into the results' types, exactly as
// the evaluator's custom calls do, so the results are the evaluator's bits, for every float and
// complex element type; the matrices of a batch run across the thread pool, without the
// evaluator's literal copies. A matrix whose iteration does not converge gets NaN in all its
// results. An op whose shapes, types or attributes do not fit stays on the evaluator's op table,
// which reports the error (Refusal says why; the cost report shows it).
#ifndef EMBER_COMPILER_HOST_DECOMPOSITION_THUNK_H_
#define EMBER_COMPILER_HOST_DECOMPOSITION_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/host/host_thunks.h"

namespace ember::host {

class DecompositionThunk final : public HostThunk {
 public:
  // Whether `instruction` is one of the four custom calls above.
  static bool IsDecomposition(const ir::Instruction& instruction);
  // "" when this thunk runs `instruction`, else why not.
  static std::string Refusal(const ir::Instruction& instruction);
  // `operands` and `results` in the op's order (a result nothing reads has kind kOther and is not
  // written). Null when Refusal(instruction) is not empty.
  static std::unique_ptr<DecompositionThunk> Create(std::string name,
                                                    const ir::Instruction& instruction,
                                                    std::vector<ValueRef> operands,
                                                    std::vector<ValueRef> results);
  absl::Status Run(HostRunContext& context) const override;

 private:
  enum class Op { kEig, kSchur, kHessenberg, kTridiagonal };
  DecompositionThunk(std::string name, ValueRef operand, std::vector<ValueRef> results)
      : HostThunk(Kind::kLibraryCall, std::move(name)),
        operand_(operand),
        results_(std::move(results)) {}
  // Decomposes matrix `b` of the operand at `in` with the cores' scalar S (double or
  // complex<double>) into the results at `out` (null: not written).
  template <typename S>
  void RunMatrix(const uint8_t* in, uint8_t* const* out, int64_t b) const;

  ValueRef operand_;
  std::vector<ValueRef> results_;
  std::vector<ir::ElementType> result_types_;
  ir::ElementType type_ = ir::ElementType::kInvalid;  // the operand's
  Op op_ = Op::kEig;
  bool lower_ = true;          // ember_tridiagonal
  bool left_ = false;          // ember_eig: compute_left
  bool right_ = true;          // ember_eig: compute_right
  int64_t batch_ = 1, n_ = 0;  // matrices of n x n
};

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_DECOMPOSITION_THUNK_H_
