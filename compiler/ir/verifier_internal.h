// Shared helpers of the verifier files: an OpChecker that reads an instruction's operands,
// results and attributes and words errors as "<op> at <loc>: <constraint>", plus the per-family
// entry points (verify_elementwise.cc, verify_shape_ops.cc, verify_linalg.cc, verify_control.cc).
#ifndef EMBER_COMPILER_IR_VERIFIER_INTERNAL_H_
#define EMBER_COMPILER_IR_VERIFIER_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/ir/module.h"

namespace ember::ir::verifier {

class OpChecker {
 public:
  explicit OpChecker(const Instruction& inst) : inst_(inst) {}
  // Checks `inst` as if its operands and results had these types (the quantized checks verify
  // an op's shapes and attributes on its storage or expressed types).
  OpChecker(const Instruction& inst, std::vector<ValueType> operands, std::vector<ValueType> results)
      : inst_(inst), has_view_(true), operands_(std::move(operands)), results_(std::move(results)) {}
  const Instruction& inst() const { return inst_; }
  Opcode opcode() const { return inst_.opcode(); }

  template <typename... Args>
  absl::Status Error(const Args&... args) const {
    return absl::InvalidArgumentError(absl::StrCat(inst_.Describe(), ": ", args...));
  }

  size_t num_operands() const { return inst_.operands().size(); }
  size_t num_results() const { return inst_.num_results(); }
  const ValueType& operand(size_t i) const {
    return has_view_ ? operands_[i] : inst_.operand(i)->type();
  }
  const ValueType& result(size_t i = 0) const {
    return has_view_ ? results_[i] : inst_.result(i)->type();
  }

  absl::Status OperandCount(size_t n) const;
  absl::Status OperandCountAtLeast(size_t n) const;
  absl::Status ResultCount(size_t n) const;
  absl::Status RegionCount(size_t n) const;
  // Operand i is a tensor (not a token or tuple).
  absl::Status TensorOperand(size_t i) const;
  absl::Status TensorResult(size_t i) const;
  absl::Status AllTensors() const;
  // "result type tensor<2xf32> does not match the inferred tensor<3xf32>".
  absl::Status ResultIs(size_t i, const ValueType& inferred) const;
  absl::Status ResultDims(size_t i, const std::vector<int64_t>& dims) const;

  // Attributes; required ones are errors when absent or of the wrong kind.
  absl::StatusOr<int64_t> Int(const char* name) const;
  absl::StatusOr<std::vector<int64_t>> Ints(const char* name) const;
  absl::StatusOr<std::string> String(const char* name) const;
  int64_t IntOr(const char* name, int64_t def) const;
  bool BoolOr(const char* name, bool def) const;
  std::vector<int64_t> IntsOr(const char* name, std::vector<int64_t> def) const;

  // name[i] = v is in [0, rank) (or [-rank, rank) when negative_ok).
  absl::Status DimInRange(const char* name, size_t i, int64_t v, int64_t rank) const;
  absl::Status DimsInRange(const char* name, const std::vector<int64_t>& dims,
                           int64_t rank) const;
  absl::Status DimsUnique(const char* name, const std::vector<int64_t>& dims) const;
  absl::Status DimsSorted(const char* name, const std::vector<int64_t>& dims) const;
  absl::Status SizeIs(const char* name, const std::vector<int64_t>& v, size_t n,
                      const char* what) const;
  // How many windows fit along dimension `dim`: an input of `size` elements dilated by
  // `base_dilation`, padded by `low` and `high` (either may be negative), under a window of
  // `window` elements dilated by `window_dilation`, moved by `stride` (the three positive). An
  // error when a dilated or padded size does not fit int64 (no program means such sizes).
  absl::StatusOr<int64_t> WindowCount(size_t dim, int64_t size, int64_t base_dilation,
                                      int64_t low, int64_t high, int64_t window,
                                      int64_t window_dilation, int64_t stride) const;
  // The region's parameter types and returned types.
  absl::Status RegionSignature(size_t region, const std::vector<ValueType>& params,
                               const std::vector<ValueType>& results, const char* what) const;

 private:
  const Instruction& inst_;
  bool has_view_ = false;
  std::vector<ValueType> operands_;
  std::vector<ValueType> results_;
};

std::string Dims(const std::vector<int64_t>& dims);
ValueType TensorOf(ElementType type, const std::vector<int64_t>& dims);
std::vector<ValueType> ResultTypesOf(const Computation& c);

// Per-family checks; each returns OkStatus for opcodes outside its family.
absl::Status VerifyElementwise(const OpChecker& c);
absl::Status VerifyShapeOp(const OpChecker& c);
absl::Status VerifyLinalg(const OpChecker& c);
absl::Status VerifyControl(const OpChecker& c);
absl::Status VerifyGatherScatter(const OpChecker& c);
// Every family (these and VerifyDynamicShapeOp below), with VerifyDynamicFallback for ops
// with `?` dims.
absl::Status VerifyFamilies(const OpChecker& c);

// Ops with a quantized operand or result (verify_quantized.cc): the spec's quantization
// constraints, then the family checks on the storage or expressed types.
bool UsesQuantizedTypes(const Instruction& inst);
absl::Status VerifyQuantized(const Instruction& inst);
// dynamic_broadcast_in_dim, dynamic_reshape, dynamic_iota, dynamic_pad, real_dynamic_slice,
// dynamic_gather, dynamic_conv (verify_dynamic.cc).
absl::Status VerifyDynamicShapeOp(const OpChecker& c);
// For an op with dynamically shaped operands or results whose static rules failed with
// `static_error`: accepts it when the rules that hold for every refinement do (see
// verify_dynamic.cc), else returns `static_error`. `elementwise`: the op's operands and result
// share one shape.
absl::Status VerifyDynamicFallback(const OpChecker& c, const absl::Status& static_error,
                                   bool elementwise);

}  // namespace ember::ir::verifier

#endif  // EMBER_COMPILER_IR_VERIFIER_INTERNAL_H_
