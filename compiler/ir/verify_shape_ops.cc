// Verifier checks of the ops that move or reshape data without arithmetic: constant, iota,
// broadcast(_in_dim), reshape, transpose, slice, dynamic_(update_)slice, concatenate, pad,
// reverse, tuples, tokens, replica_id/partition_id, get_dimension_size.
#include <string>
#include <vector>

#include "compiler/ir/verifier_internal.h"

namespace ember::ir::verifier {
namespace {

#define RETURN_IF_ERROR(expr)                  \
  do {                                         \
    if (absl::Status s_ = (expr); !s_.ok()) return s_; \
  } while (0)

absl::Status OneToOne(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(1));
  RETURN_IF_ERROR(c.ResultCount(1));
  return c.AllTensors();
}

absl::Status SameElementType(const OpChecker& c) {
  if (c.result().element_type() != c.operand(0).element_type()) {
    return c.Error("result element type ", std::string(ElementTypeName(c.result().element_type())),
                   " differs from the operand's ", std::string(ElementTypeName(c.operand(0).element_type())));
  }
  return absl::OkStatus();
}

absl::Status BroadcastInDim(const OpChecker& c) {
  RETURN_IF_ERROR(OneToOne(c));
  absl::StatusOr<std::vector<int64_t>> dims = c.Ints("broadcast_dimensions");
  if (!dims.ok()) return dims.status();
  const std::vector<int64_t>& in = c.operand(0).dims();
  const std::vector<int64_t>& out = c.result().dims();
  RETURN_IF_ERROR(c.SizeIs("broadcast_dimensions", *dims, in.size(), "the operand's rank"));
  RETURN_IF_ERROR(c.DimsInRange("broadcast_dimensions", *dims, static_cast<int64_t>(out.size())));
  RETURN_IF_ERROR(c.DimsUnique("broadcast_dimensions", *dims));
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != 1 && in[i] != out[(*dims)[i]]) {
      return c.Error("operand dimension ", i, " of size ", in[i], " cannot broadcast to result ",
                     "dimension ", (*dims)[i], " of size ", out[(*dims)[i]]);
    }
  }
  return SameElementType(c);
}

absl::Status Transpose(const OpChecker& c) {
  RETURN_IF_ERROR(OneToOne(c));
  absl::StatusOr<std::vector<int64_t>> perm = c.Ints("permutation");
  if (!perm.ok()) return perm.status();
  const std::vector<int64_t>& in = c.operand(0).dims();
  RETURN_IF_ERROR(c.SizeIs("permutation", *perm, in.size(), "the operand's rank"));
  RETURN_IF_ERROR(c.DimsInRange("permutation", *perm, static_cast<int64_t>(in.size())));
  RETURN_IF_ERROR(c.DimsUnique("permutation", *perm));
  std::vector<int64_t> out;
  for (int64_t p : *perm) out.push_back(in[p]);
  return c.ResultIs(0, TensorOf(c.operand(0).element_type(), out));
}

absl::Status Slice(const OpChecker& c) {
  RETURN_IF_ERROR(OneToOne(c));
  absl::StatusOr<std::vector<int64_t>> start = c.Ints("start_indices");
  if (!start.ok()) return start.status();
  absl::StatusOr<std::vector<int64_t>> limit = c.Ints("limit_indices");
  if (!limit.ok()) return limit.status();
  absl::StatusOr<std::vector<int64_t>> strides = c.Ints("strides");
  if (!strides.ok()) return strides.status();
  const std::vector<int64_t>& in = c.operand(0).dims();
  RETURN_IF_ERROR(c.SizeIs("start_indices", *start, in.size(), "the operand's rank"));
  RETURN_IF_ERROR(c.SizeIs("limit_indices", *limit, in.size(), "the operand's rank"));
  RETURN_IF_ERROR(c.SizeIs("strides", *strides, in.size(), "the operand's rank"));
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    if ((*start)[i] < 0 || (*start)[i] > (*limit)[i] || (*limit)[i] > in[i]) {
      return c.Error("slice [", (*start)[i], ", ", (*limit)[i], ") of dimension ", i,
                     " is out of bounds for size ", in[i]);
    }
    if ((*strides)[i] <= 0) return c.Error("strides[", i, "] = ", (*strides)[i], " must be positive");
    // ceil((limit - start) / stride) without overflow for strides near INT64_MAX.
    const int64_t extent = (*limit)[i] - (*start)[i];
    out.push_back(extent == 0 ? 0 : (extent - 1) / (*strides)[i] + 1);
  }
  return c.ResultIs(0, TensorOf(c.operand(0).element_type(), out));
}

absl::Status ScalarIndices(const OpChecker& c, size_t first, size_t rank) {
  if (c.num_operands() != first + rank) {
    return c.Error("expects ", rank, " start indices (the operand's rank), got ",
                   c.num_operands() < first ? 0 : c.num_operands() - first);
  }
  for (size_t i = first; i < c.num_operands(); ++i) {
    RETURN_IF_ERROR(c.TensorOperand(i));
    if (!c.operand(i).dims().empty() || !IsInteger(c.operand(i).element_type())) {
      return c.Error("start index ", i - first, " must be a 0-d integer tensor, got ",
                     c.operand(i).ToString());
    }
    if (c.operand(i).element_type() != c.operand(first).element_type()) {
      return c.Error("start indices have different element types");
    }
  }
  return absl::OkStatus();
}

absl::Status DynamicSlice(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCountAtLeast(1));
  RETURN_IF_ERROR(c.TensorOperand(0));
  RETURN_IF_ERROR(c.ResultCount(1));
  const std::vector<int64_t>& in = c.operand(0).dims();
  RETURN_IF_ERROR(ScalarIndices(c, 1, in.size()));
  absl::StatusOr<std::vector<int64_t>> sizes = c.Ints("slice_sizes");
  if (!sizes.ok()) return sizes.status();
  RETURN_IF_ERROR(c.SizeIs("slice_sizes", *sizes, in.size(), "the operand's rank"));
  for (size_t i = 0; i < in.size(); ++i) {
    if ((*sizes)[i] < 0 || (*sizes)[i] > in[i]) {
      return c.Error("slice_sizes[", i, "] = ", (*sizes)[i], " is out of range [0, ", in[i], "]");
    }
  }
  return c.ResultIs(0, TensorOf(c.operand(0).element_type(), *sizes));
}

absl::Status DynamicUpdateSlice(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCountAtLeast(2));
  RETURN_IF_ERROR(c.TensorOperand(0));
  RETURN_IF_ERROR(c.TensorOperand(1));
  RETURN_IF_ERROR(c.ResultCount(1));
  const std::vector<int64_t>& in = c.operand(0).dims();
  const std::vector<int64_t>& update = c.operand(1).dims();
  if (update.size() != in.size()) {
    return c.Error("update rank ", update.size(), " differs from the operand rank ", in.size());
  }
  for (size_t i = 0; i < in.size(); ++i) {
    if (update[i] > in[i]) {
      return c.Error("update dimension ", i, " of size ", update[i], " exceeds the operand's ",
                     in[i]);
    }
  }
  if (c.operand(1).element_type() != c.operand(0).element_type()) {
    return c.Error("update element type differs from the operand's");
  }
  RETURN_IF_ERROR(ScalarIndices(c, 2, in.size()));
  return c.ResultIs(0, c.operand(0));
}

absl::Status Concatenate(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCountAtLeast(1));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.AllTensors());
  absl::StatusOr<int64_t> dim = c.Int("dimension");
  if (!dim.ok()) return dim.status();
  std::vector<int64_t> out = c.operand(0).dims();
  RETURN_IF_ERROR(c.DimInRange("dimension", 0, *dim, static_cast<int64_t>(out.size())));
  for (size_t i = 1; i < c.num_operands(); ++i) {
    const std::vector<int64_t>& d = c.operand(i).dims();
    if (c.operand(i).element_type() != c.operand(0).element_type()) {
      return c.Error("operand ", i, " element type differs from operand 0's");
    }
    if (d.size() != out.size()) return c.Error("operand ", i, " has a different rank");
    for (size_t k = 0; k < d.size(); ++k) {
      if (static_cast<int64_t>(k) != *dim && d[k] != out[k]) {
        return c.Error("operand ", i, " dimension ", k, " is ", d[k], ", expected ", out[k]);
      }
    }
    out[*dim] += d[*dim];
  }
  return c.ResultIs(0, TensorOf(c.operand(0).element_type(), out));
}

absl::Status Pad(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(2));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.AllTensors());
  if (c.operand(1) != TensorOf(c.operand(0).element_type(), {})) {
    return c.Error("padding_value must be a 0-d tensor of the operand's element type, got ",
                   c.operand(1).ToString());
  }
  const std::vector<int64_t>& in = c.operand(0).dims();
  std::vector<int64_t> low, high, interior;
  for (auto [name, v] : {std::pair{"edge_padding_low", &low}, std::pair{"edge_padding_high", &high},
                         std::pair{"interior_padding", &interior}}) {
    absl::StatusOr<std::vector<int64_t>> a = c.Ints(name);
    if (!a.ok()) return a.status();
    RETURN_IF_ERROR(c.SizeIs(name, *a, in.size(), "the operand's rank"));
    *v = *a;
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (interior[i] < 0) return c.Error("interior_padding[", i, "] = ", interior[i], " is negative");
    int64_t size = 0;
    if ((in[i] > 0 && __builtin_mul_overflow(in[i] - 1, interior[i], &size)) ||
        __builtin_add_overflow(size, in[i], &size) ||
        __builtin_add_overflow(size, low[i], &size) ||
        __builtin_add_overflow(size, high[i], &size)) {
      return c.Error("dimension ", i, ": the padded size overflows int64 (size ", in[i],
                     ", padding (", low[i], ", ", high[i], "), interior ", interior[i], ")");
    }
    if (size < 0) return c.Error("dimension ", i, " would have negative size ", size);
    out.push_back(size);
  }
  return c.ResultIs(0, TensorOf(c.operand(0).element_type(), out));
}

absl::Status Iota(const OpChecker& c) {
  RETURN_IF_ERROR(c.OperandCount(0));
  RETURN_IF_ERROR(c.ResultCount(1));
  RETURN_IF_ERROR(c.TensorResult(0));
  absl::StatusOr<int64_t> dim = c.Int("iota_dimension");
  if (!dim.ok()) return dim.status();
  return c.DimInRange("iota_dimension", 0, *dim, static_cast<int64_t>(c.result().dims().size()));
}

}  // namespace

absl::Status VerifyShapeOp(const OpChecker& c) {
  switch (c.opcode()) {
    case Opcode::kConstant: {
      RETURN_IF_ERROR(c.OperandCount(0));
      RETURN_IF_ERROR(c.ResultCount(1));
      const Attribute* v = c.inst().attribute("value");
      if (v == nullptr || v->kind != Attribute::Kind::kLiteral || !v->literal) {
        return c.Error("missing literal attribute value");
      }
      return c.ResultIs(0, ValueType::Tensor(v->literal->shape()));
    }
    case Opcode::kIota: return Iota(c);
    case Opcode::kBroadcastInDim: return BroadcastInDim(c);
    case Opcode::kBroadcast: {
      RETURN_IF_ERROR(OneToOne(c));
      absl::StatusOr<std::vector<int64_t>> sizes = c.Ints("broadcast_sizes");
      if (!sizes.ok()) return sizes.status();
      for (size_t i = 0; i < sizes->size(); ++i) {
        if ((*sizes)[i] < 0) return c.Error("broadcast_sizes[", i, "] = ", (*sizes)[i], " is negative");
      }
      std::vector<int64_t> out = *sizes;
      for (int64_t d : c.operand(0).dims()) out.push_back(d);
      return c.ResultIs(0, TensorOf(c.operand(0).element_type(), out));
    }
    case Opcode::kReshape: {
      RETURN_IF_ERROR(OneToOne(c));
      if (c.operand(0).shape().element_count() != c.result().shape().element_count()) {
        return c.Error("operand ", c.operand(0).ToString(), " and result ", c.result().ToString(),
                       " have different element counts");
      }
      return SameElementType(c);
    }
    case Opcode::kTranspose: return Transpose(c);
    case Opcode::kSlice: return Slice(c);
    case Opcode::kDynamicSlice: return DynamicSlice(c);
    case Opcode::kDynamicUpdateSlice: return DynamicUpdateSlice(c);
    case Opcode::kConcatenate: return Concatenate(c);
    case Opcode::kPad: return Pad(c);
    case Opcode::kReverse: {
      RETURN_IF_ERROR(OneToOne(c));
      absl::StatusOr<std::vector<int64_t>> dims = c.Ints("dimensions");
      if (!dims.ok()) return dims.status();
      RETURN_IF_ERROR(
          c.DimsInRange("dimensions", *dims, static_cast<int64_t>(c.operand(0).dims().size())));
      RETURN_IF_ERROR(c.DimsUnique("dimensions", *dims));
      return c.ResultIs(0, c.operand(0));
    }
    case Opcode::kTuple: {
      RETURN_IF_ERROR(c.ResultCount(1));
      std::vector<ValueType> elements;
      for (size_t i = 0; i < c.num_operands(); ++i) elements.push_back(c.operand(i));
      return c.ResultIs(0, ValueType::Tuple(std::move(elements)));
    }
    case Opcode::kGetTupleElement: {
      RETURN_IF_ERROR(c.OperandCount(1));
      RETURN_IF_ERROR(c.ResultCount(1));
      if (!c.operand(0).is_tuple()) return c.Error("operand must be a tuple, got ", c.operand(0).ToString());
      absl::StatusOr<int64_t> index = c.Int("index");
      if (!index.ok()) return index.status();
      const auto& elements = c.operand(0).elements();
      if (*index < 0 || *index >= static_cast<int64_t>(elements.size())) {
        return c.Error("index = ", *index, " is out of range for a tuple of ", elements.size());
      }
      return c.ResultIs(0, elements[*index]);
    }
    case Opcode::kOptimizationBarrier: {
      RETURN_IF_ERROR(c.ResultCount(c.num_operands()));
      for (size_t i = 0; i < c.num_operands(); ++i) RETURN_IF_ERROR(c.ResultIs(i, c.operand(i)));
      return absl::OkStatus();
    }
    case Opcode::kAfterAll: {
      for (size_t i = 0; i < c.num_operands(); ++i) {
        if (!c.operand(i).is_token()) return c.Error("operand ", i, " must be a token");
      }
      RETURN_IF_ERROR(c.ResultCount(1));
      return c.ResultIs(0, ValueType::Token());
    }
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
      RETURN_IF_ERROR(c.OperandCount(0));
      RETURN_IF_ERROR(c.ResultCount(1));
      return c.ResultIs(0, TensorOf(ElementType::kU32, {}));
    case Opcode::kGetDimensionSize: {
      RETURN_IF_ERROR(OneToOne(c));
      absl::StatusOr<int64_t> dim = c.Int("dimension");
      if (!dim.ok()) return dim.status();
      RETURN_IF_ERROR(
          c.DimInRange("dimension", 0, *dim, static_cast<int64_t>(c.operand(0).dims().size())));
      return c.ResultIs(0, TensorOf(ElementType::kS32, {}));
    }
    case Opcode::kSetDimensionSize: {
      // XLA's SetDimensionSize: dimension `dimension` of the operand becomes dynamic, bounded by
      // its size; `size` (a tensor<i32>) is its size at run time.
      RETURN_IF_ERROR(c.OperandCount(2));
      RETURN_IF_ERROR(c.ResultCount(1));
      RETURN_IF_ERROR(c.AllTensors());
      absl::StatusOr<int64_t> dim = c.Int("dimension");
      if (!dim.ok()) return dim.status();
      const ValueType& in = c.operand(0);
      const int64_t rank = static_cast<int64_t>(in.dims().size());
      RETURN_IF_ERROR(c.DimInRange("dimension", 0, *dim, rank));
      if (c.operand(1) != TensorOf(ElementType::kS32, {})) {
        return c.Error("size must be tensor<i32>, got ", c.operand(1).ToString());
      }
      const ValueType& out = c.result(0);
      if (out.element_type() != in.element_type() || out.dims().size() != in.dims().size()) {
        return c.Error("result ", out.ToString(), " must have the operand's element type and rank");
      }
      for (int64_t k = 0; k < rank; ++k) {
        if (k != *dim && out.dims()[k] != in.dims()[k] && out.dims()[k] != kDynamicDim &&
            in.dims()[k] != kDynamicDim) {
          return c.Error("result dimension ", k, " must be the operand's");
        }
      }
      return absl::OkStatus();
    }
    default: return absl::OkStatus();
  }
}

}  // namespace ember::ir::verifier
