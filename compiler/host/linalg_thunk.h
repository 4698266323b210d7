// The linear-algebra ops run as library calls on the launch's buffers (dense_solvers.h): cholesky,
// triangular_solve, custom_call @ember_lu (JAX's lu on Ember, LAPACK getrf's outputs), and the
// Householder QR pair JAX's generic lowerings emit (custom_call @Qr: geqrf's packed a and taus;
// @ProductOfElementaryHouseholderReflectors: orgqr's q), in f32, f64, c64 and c128, and
// @ember_eigh and @ember_svd (Eigen's self-adjoint eigensolver and divide-and-conquer SVD; c64
// through c128 copies; eigenvector signs and phases are the solver's, NaN or infinite input
// gives NaN), the matrices
// of a batch split across the thread pool. Each result matrix starts as a copy of its operand and
// is factored or solved in place, in the element type, as XLA:CPU's LAPACK computes them (the
// evaluator, which stays the oracle, works in double and rounds once). The outputs' semantics
// are the evaluator's: a cholesky that meets a pivot that is not positive (or NaN) gives NaN for
// all of that matrix, the triangle not read is zero; ember_lu's pivots and permutation are
// 0-based int32; the QR conventions are LAPACK's. bf16, f16 and the f8 types are computed on f32
// copies and rounded back once (the way XLA:CPU computes their dots); integer types stay on the
// evaluator's op table: Refusal says so, and the cost report shows it.
#ifndef EMBER_COMPILER_HOST_LINALG_THUNK_H_
#define EMBER_COMPILER_HOST_LINALG_THUNK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/host/dense_solvers.h"
#include "compiler/host/host_thunks.h"

namespace ember::host {

class LinalgThunk final : public HostThunk {
 public:
  // Whether `instruction` is one of the ops above with operands and results this thunk takes:
  // "" if so, else why not ("not a linear-algebra op" for every other op).
  static std::string Refusal(const ir::Instruction& instruction);
  static bool IsLinalgOp(const ir::Instruction& instruction);
  // The attributes an op's kernel reads (Refusal checks them).
  struct Options {
    bool lower = false;          // cholesky, ember_eigh
    fast::TriangularForm form;   // triangular_solve
    bool full_matrices = false;  // ember_svd
    bool compute_uv = true;      // ember_svd
  };
  // `operands` and `results` in the op's order (a result nothing reads has kind kOther). Null
  // when Refusal(instruction) is not empty.
  static std::unique_ptr<LinalgThunk> Create(std::string name, const ir::Instruction& instruction,
                                             std::vector<ValueRef> operands,
                                             std::vector<ValueRef> results);
  absl::Status Run(HostRunContext& context) const override;

 private:
  enum class Op { kCholesky, kTriangularSolve, kLu, kQr, kHouseholderProduct, kEigh, kSvd };
  LinalgThunk(std::string name, std::vector<ValueRef> operands, std::vector<ValueRef> results)
      : HostThunk(Kind::kLibraryCall, std::move(name)),
        operands_(std::move(operands)),
        results_(std::move(results)) {}
  // The arrays of one run: the operands', and the results' (scratch for a result nothing reads).
  struct Arrays {
    std::vector<const uint8_t*> operands;
    std::vector<uint8_t*> results;
  };
  template <typename S>
  absl::Status RunTyped(HostRunContext& context, const Arrays& arrays) const;
  template <typename S>
  absl::Status RunSpectral(HostRunContext& context, const Arrays& arrays) const;  // eigh, svd
  // bf16, f16 and the f8 types: RunTyped<float> on f32 copies, results rounded back once.
  absl::Status RunNarrow(HostRunContext& context, const Arrays& arrays) const;

  // An operand's or result's element type and size.
  struct Array {
    ir::ElementType type = ir::ElementType::kInvalid;
    int64_t elements = 0;
    int64_t bytes = 0;
  };

  std::vector<ValueRef> operands_;
  std::vector<ValueRef> results_;
  std::vector<Array> operand_arrays_, result_arrays_;
  Op op_ = Op::kCholesky;
  ir::ElementType type_ = ir::ElementType::kInvalid;
  int64_t batch_ = 1;
  int64_t rows_ = 0, cols_ = 0;  // of each result matrix (the first result's)
  int64_t n_ = 0;                // of the square operand (cholesky, triangular_solve's a)
  int64_t reflectors_ = 0;       // ProductOfElementaryHouseholderReflectors: taus per matrix
  Options options_;
};

}  // namespace ember::host

#endif  // EMBER_COMPILER_HOST_LINALG_THUNK_H_
