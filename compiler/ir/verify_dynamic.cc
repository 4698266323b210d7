// Verifier checks of the shape-polymorphic ops (dynamic_broadcast_in_dim, dynamic_reshape,
// dynamic_iota, dynamic_pad, real_dynamic_slice, dynamic_gather, dynamic_conv), whose result
// sizes come from shape operands, and the relaxed rules for any op whose operands or results
// have dynamic (`?`) dims.
#include <string>
#include <vector>

#include "compiler/ir/verifier_internal.h"

namespace ember::ir::verifier {
namespace {

#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    if (absl::Status s_ = (expr); !s_.ok()) return s_; \
  } while (0)

bool Compatible(int64_t a, int64_t b) { return a == b || a == kDynamicDim || b == kDynamicDim; }

// Operand `i` is a 1-D integer tensor with `n` elements (n < 0: any length).
absl::Status ShapeOperand(const OpChecker& c, size_t i, const char* what, int64_t n) {
  RETURN_IF_ERROR(c.TensorOperand(i));
  const ValueType& t = c.operand(i);
  if (!IsInteger(t.element_type()) || t.dims().size() != 1) {
    return c.Error(what, " must be a 1-D integer tensor, got ", t.ToString());
  }
  if (n >= 0 && !Compatible(t.dims()[0], n)) {
    return c.Error(what, " has ", t.dims()[0], " elements, expected ", n);
  }
  return absl::OkStatus();
}

absl::Status SameElementType(const OpChecker& c, size_t operand) {
  if (c.result().element_type() != c.operand(operand).element_type()) {
    return c.Error("result element type ", std::string(ElementTypeName(c.result().element_type())),
                   " differs from the operand's ",
                   std::string(ElementTypeName(c.operand(operand).element_type())));
  }
  return absl::OkStatus();
}

int64_t Rank(const ValueType& t) { return static_cast<int64_t>(t.dims().size()); }

absl::Status DynamicBroadcastInDim(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(2));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.TensorOperand(0));
  RETURN_IF_ERROR(c.TensorResult(0));
  const int64_t rank = Rank(c.result());
  RETURN_IF_ERROR(ShapeOperand(c, 1, "output_dimensions", rank));
  absl::StatusOr<std::vector<int64_t>> dims = c.Ints("broadcast_dimensions");
  if (!dims.ok()) return dims.status();
  const std::vector<int64_t>& in = c.operand(0).dims();
  const std::vector<int64_t>& out = c.result().dims();
  RETURN_IF_ERROR(c.SizeIs("broadcast_dimensions", *dims, in.size(), "the operand's rank"));
  RETURN_IF_ERROR(c.DimsInRange("broadcast_dimensions", *dims, rank));
  RETURN_IF_ERROR(c.DimsUnique("broadcast_dimensions", *dims));
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != 1 && !Compatible(in[i], out[(*dims)[i]])) {
      return c.Error("operand dimension ", i, " of size ", in[i], " cannot broadcast to result ",
                     "dimension ", (*dims)[i], " of size ", out[(*dims)[i]]);
    }
  }
  for (const char* name : {"known_expanding_dimensions", "known_nonexpanding_dimensions"}) {
    std::vector<int64_t> known = c.IntsOr(name, {});
    RETURN_IF_ERROR(c.DimsInRange(name, known, static_cast<int64_t>(in.size())));
    RETURN_IF_ERROR(c.DimsUnique(name, known));
  }
  return SameElementType(c, 0);
}

absl::Status DynamicReshape(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(2));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.TensorOperand(0));
  RETURN_IF_ERROR(c.TensorResult(0));
  RETURN_IF_ERROR(ShapeOperand(c, 1, "output_shape", Rank(c.result())));
  if (c.operand(0).is_static() && c.result().is_static() &&
      c.operand(0).shape().element_count() != c.result().shape().element_count()) {
    return c.Error("result ", c.result().ToString(), " has another element count than operand ",
                   c.operand(0).ToString());
  }
  return SameElementType(c, 0);
}

absl::Status DynamicIota(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(1));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.TensorResult(0));
  const int64_t rank = Rank(c.result());
  RETURN_IF_ERROR(ShapeOperand(c, 0, "output_shape", rank));
  absl::StatusOr<int64_t> dim = c.Int("iota_dimension");
  if (!dim.ok()) return dim.status();
  return c.DimInRange("iota_dimension", 0, *dim, rank);
}

absl::Status DynamicPad(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(5));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.TensorOperand(0));
  RETURN_IF_ERROR(c.TensorOperand(1));
  RETURN_IF_ERROR(c.TensorResult(0));
  const int64_t rank = Rank(c.operand(0));
  if (Rank(c.result()) != rank) {
    return c.Error("result rank ", Rank(c.result()), " differs from the operand rank ", rank);
  }
  if (!c.operand(1).dims().empty()) return c.Error("padding_value must be a scalar");
  if (c.operand(1).element_type() != c.operand(0).element_type()) {
    return c.Error("padding_value element type differs from the operand's");
  }
  RETURN_IF_ERROR(ShapeOperand(c, 2, "edge_padding_low", rank));
  RETURN_IF_ERROR(ShapeOperand(c, 3, "edge_padding_high", rank));
  RETURN_IF_ERROR(ShapeOperand(c, 4, "interior_padding", rank));
  return SameElementType(c, 0);
}

absl::Status RealDynamicSlice(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(4));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.TensorOperand(0));
  RETURN_IF_ERROR(c.TensorResult(0));
  const int64_t rank = Rank(c.operand(0));
  if (Rank(c.result()) != rank) {
    return c.Error("result rank ", Rank(c.result()), " differs from the operand rank ", rank);
  }
  RETURN_IF_ERROR(ShapeOperand(c, 1, "start_indices", rank));
  RETURN_IF_ERROR(ShapeOperand(c, 2, "limit_indices", rank));
  RETURN_IF_ERROR(ShapeOperand(c, 3, "strides", rank));
  return SameElementType(c, 0);
}

absl::Status DynamicGather(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(3));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.AllTensors());
  RETURN_IF_ERROR(ShapeOperand(c, 2, "slice_sizes", Rank(c.operand(0))));
  if (!IsInteger(c.operand(1).element_type())) return c.Error("start_indices must be integers");
  return SameElementType(c, 0);
}

absl::Status DynamicConv(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(3));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.AllTensors());
  const int64_t rank = Rank(c.operand(0));
  if (Rank(c.operand(1)) != rank || Rank(c.result()) != rank) {
    return c.Error("lhs, rhs and result must have the same rank");
  }
  const ValueType& padding = c.operand(2);
  if (!IsInteger(padding.element_type()) || padding.dims().size() != 2 ||
      !Compatible(padding.dims()[0], rank - 2) || !Compatible(padding.dims()[1], 2)) {
    return c.Error("d_padding must be an integer tensor of shape [", rank - 2, ", 2], got ",
                   padding.ToString());
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyDynamicShapeOp(const OpChecker& c) {
  switch (c.opcode()) {
    case Opcode::kDynamicBroadcastInDim:
      return DynamicBroadcastInDim(c);
    case Opcode::kDynamicReshape:
      return DynamicReshape(c);
    case Opcode::kDynamicIota:
      return DynamicIota(c);
    case Opcode::kDynamicPad:
      return DynamicPad(c);
    case Opcode::kRealDynamicSlice:
      return RealDynamicSlice(c);
    case Opcode::kDynamicGather:
      return DynamicGather(c);
    case Opcode::kDynamicConv:
      return DynamicConv(c);
    default:
      return absl::OkStatus();
  }
}

absl::Status VerifyDynamicFallback(const OpChecker& c, const absl::Status& static_error,
                                   bool elementwise) {
  // Rules that hold for every refinement of the `?` dims: results are tensors or tokens as the
  // static rule would have them, and ops whose operands and result share one shape
  // (elementwise ops) have equal ranks and compatible sizes. The full static rules run again
  // after refine_shapes.
  switch (c.opcode()) {
    case Opcode::kDynamicBroadcastInDim:
    case Opcode::kDynamicReshape:
    case Opcode::kDynamicIota:
    case Opcode::kDynamicPad:
    case Opcode::kRealDynamicSlice:
    case Opcode::kDynamicGather:
    case Opcode::kDynamicConv:
      return static_error;  // their own rules already allow `?`
    default:
      break;
  }
  for (size_t i = 0; i < c.num_operands(); ++i) {
    if (c.operand(i).is_tuple() && c.opcode() != Opcode::kGetTupleElement) return static_error;
  }
  // Failures that no size can explain stay failures: operand/result/region counts, kinds,
  // element types and missing attributes.
  const std::string message(static_error.message());
  for (const char* independent : {"operands, got", "results, got", "regions, got",
                                  "must be a tensor", "element type", "missing "}) {
    if (message.find(independent) != std::string::npos) return static_error;
  }
  if (!elementwise) return absl::OkStatus();
  bool same_shape = c.num_results() == 1 && c.result().is_tensor();
  for (size_t i = 0; same_shape && i < c.num_operands(); ++i) {
    const ValueType& t = c.operand(i);
    if (!t.is_tensor()) return static_error;
    // Scalars may broadcast (select's predicate, clamp's bounds).
    if (!t.dims().empty() && Rank(t) != Rank(c.result())) same_shape = false;
  }
  if (!same_shape) return static_error;
  for (size_t i = 0; i < c.num_operands(); ++i) {
    const ValueType& t = c.operand(i);
    if (t.dims().empty()) continue;
    for (size_t d = 0; d < t.dims().size(); ++d) {
      if (!Compatible(t.dims()[d], c.result().dims()[d])) return static_error;
    }
  }
  return absl::OkStatus();
}

}  // namespace ember::ir::verifier
