// Data movement ops: constant, iota, broadcast(_in_dim), reshape, transpose, slice,
// dynamic_slice, dynamic_update_slice, concatenate, pad, reverse, tuple, get_tuple_element, and
// the static-shape readings of the dynamic-shape ops (dynamic_iota, dynamic_reshape,
// dynamic_broadcast_in_dim, real_dynamic_slice, dynamic_pad) and get_dimension_size.
// These only move elements, so they copy storage bytes and work for every element type.
//
// Attribute names are the spec's. Choices where the IR had to pick a spelling:
//   * stablehlo.broadcast (deprecated): `broadcast_sizes` (Ints), operand dims become the
//     trailing result dims;
//   * dynamic_slice: `slice_sizes` (Ints); when absent the result's dims are the sizes;
//   * constant: `value` (Literal); a one-element literal is splatted to the result's shape.
// dynamic_slice / dynamic_update_slice clamp start indices into range as the spec says.
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/evaluator/eval_util.h"

namespace ember::eval {
namespace {

using Results = absl::StatusOr<std::vector<EvalValue>>;

// result[i] = source[map(index_i)] for every row-major result position.
template <typename Map>
void Gather(const ir::Literal& source, ir::Literal& result, Map&& map) {
  ForEachIndex(result.shape().dims(), [&](absl::Span<const int64_t> index, int64_t linear) {
    CopyElements(source, map(index), result, linear);
  });
}

absl::Status CheckElementType(const ir::Instruction& instruction, const ir::Literal& operand,
                              const ir::Literal& result) {
  if (operand.element_type() != result.element_type()) {
    return OpError(instruction, "operand element type ", TypeName(operand.element_type()),
                   " differs from the result's ", TypeName(result.element_type()));
  }
  return absl::OkStatus();
}

Results EvalConstant(const ir::Instruction& instruction, std::vector<EvalValue>&, Evaluator&) {
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* value, LiteralAttr(instruction, "value"));
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  EMBER_RETURN_IF_ERROR(CheckElementType(instruction, *value, result));
  if (value->shape().dims() == result.shape().dims()) {
    if (value->shape().layout().IsRowMajor()) {
      EMBER_ASSIGN_OR_RETURN(result, value->Clone());
    } else {
      EMBER_ASSIGN_OR_RETURN(result, value->Relayout(ir::Layout::RowMajor(value->shape().rank())));
    }
  } else if (value->shape().element_count() == 1) {
    for (int64_t i = 0; i < result.shape().element_count(); ++i) CopyElements(*value, 0, result, i);
  } else {
    return OpError(instruction, "value ", DescribeArray(*value), " does not fit the result ",
                   DescribeArray(result));
  }
  return ArrayResult(std::move(result));
}

Results EvalIota(const ir::Instruction& instruction, std::vector<EvalValue>&, Evaluator&) {
  EMBER_ASSIGN_OR_RETURN(int64_t dimension, IntAttr(instruction, "iota_dimension"));
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  if (dimension < 0 || dimension >= result.shape().rank()) {
    return OpError(instruction, "iota_dimension ", dimension, " is out of range for ",
                   DescribeArray(result));
  }
  EMBER_RETURN_IF_ERROR(ir::VisitElementType(result.element_type(), [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_void_v<T>) {
      return OpError(instruction, "cannot make an iota of ", TypeName(result.element_type()));
    } else {
      absl::Span<T> out = MutableElements<T>(result);
      ForEachIndex(result.shape().dims(), [&](absl::Span<const int64_t> index, int64_t linear) {
        out[linear] = ConvertElement<T>(index[dimension]);
      });
      return absl::OkStatus();
    }
  }));
  return ArrayResult(std::move(result));
}

Results BroadcastWith(const ir::Instruction& instruction, const ir::Literal& operand,
                      absl::Span<const int64_t> broadcast_dimensions) {
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  EMBER_RETURN_IF_ERROR(CheckElementType(instruction, operand, result));
  absl::StatusOr<std::vector<int64_t>> strides =
      BroadcastStrides(operand.shape().dims(), result.shape().dims(), broadcast_dimensions);
  if (!strides.ok()) return AnnotateError(instruction, strides.status());
  Gather(operand, result,
         [&](absl::Span<const int64_t> index) { return Linearize(*strides, index); });
  return ArrayResult(std::move(result));
}

Results EvalBroadcastInDim(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                           Evaluator&) {
  // dynamic_broadcast_in_dim has the output dimensions as operand #1; shapes are static here.
  if (operands.size() != 1 && instruction.opcode() != ir::Opcode::kDynamicBroadcastInDim) {
    EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 1));
  }
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> dims, IntsAttr(instruction, "broadcast_dimensions"));
  return BroadcastWith(instruction, *operand, dims);
}

Results EvalBroadcast(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                      Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, ArrayOperand(instruction, operands, 0));
  const int64_t rank = operand->shape().rank();
  const int64_t result_rank = static_cast<int64_t>(instruction.result(0)->type().dims().size());
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i) dims.push_back(result_rank - rank + i);
  return BroadcastWith(instruction, *operand, dims);
}

Results EvalReshape(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                    Evaluator&) {
  // dynamic_reshape carries the output shape as operand #1; shapes are static here.
  EMBER_ASSIGN_OR_RETURN(ir::Literal * operand, MutableArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  EMBER_RETURN_IF_ERROR(CheckElementType(instruction, *operand, result));
  if (operand->shape().element_count() != result.shape().element_count()) {
    return OpError(instruction, "cannot reshape ", DescribeArray(*operand), " to ",
                   DescribeArray(result));
  }
  CopyElements(*operand, 0, result, 0, result.shape().element_count());
  return ArrayResult(std::move(result));
}

Results EvalTranspose(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                      Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> permutation, IntsAttr(instruction, "permutation"));
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  EMBER_RETURN_IF_ERROR(CheckElementType(instruction, *operand, result));
  const int64_t rank = operand->shape().rank();
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  bool ok = static_cast<int64_t>(permutation.size()) == rank && result.shape().rank() == rank;
  for (size_t i = 0; ok && i < permutation.size(); ++i) {
    const int64_t p = permutation[i];
    ok = p >= 0 && p < rank && !seen[p] && result.shape().dim(i) == operand->shape().dim(p);
    if (ok) seen[p] = true;
  }
  if (!ok) {
    return OpError(instruction, "permutation [", absl::StrJoin(permutation, ","),
                   "] does not transpose ", DescribeArray(*operand), " to ", DescribeArray(result));
  }
  const std::vector<int64_t> operand_strides = RowMajorStrides(operand->shape().dims());
  std::vector<int64_t> strides(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) strides[i] = operand_strides[permutation[i]];
  Gather(*operand, result,
         [&](absl::Span<const int64_t> index) { return Linearize(strides, index); });
  return ArrayResult(std::move(result));
}

// Shared by slice and real_dynamic_slice.
Results SliceWith(const ir::Instruction& instruction, const ir::Literal& operand,
                  const std::vector<int64_t>& start, const std::vector<int64_t>& limit,
                  const std::vector<int64_t>& strides) {
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  EMBER_RETURN_IF_ERROR(CheckElementType(instruction, operand, result));
  const int64_t rank = operand.shape().rank();
  bool ok = static_cast<int64_t>(start.size()) == rank &&
            static_cast<int64_t>(limit.size()) == rank &&
            static_cast<int64_t>(strides.size()) == rank && result.shape().rank() == rank;
  for (int64_t d = 0; ok && d < rank; ++d) {
    ok = start[d] >= 0 && start[d] <= limit[d] && limit[d] <= operand.shape().dim(d) &&
         strides[d] > 0 &&
         result.shape().dim(d) == (limit[d] - start[d] + strides[d] - 1) / strides[d];
  }
  if (!ok) {
    return OpError(instruction, "start_indices [", absl::StrJoin(start, ","), "], limit_indices [",
                   absl::StrJoin(limit, ","), "], strides [", absl::StrJoin(strides, ","),
                   "] do not slice ", DescribeArray(operand), " to ", DescribeArray(result));
  }
  const std::vector<int64_t> operand_strides = RowMajorStrides(operand.shape().dims());
  const int64_t base = Linearize(operand_strides, start);
  std::vector<int64_t> step(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) step[d] = operand_strides[d] * strides[d];
  Gather(operand, result,
         [&](absl::Span<const int64_t> index) { return base + Linearize(step, index); });
  return ArrayResult(std::move(result));
}

Results EvalSlice(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                  Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> start, IntsAttr(instruction, "start_indices"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> limit, IntsAttr(instruction, "limit_indices"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                         IntsAttrOr(instruction, "strides", std::vector<int64_t>(start.size(), 1)));
  return SliceWith(instruction, *operand, start, limit, strides);
}

// All elements of a rank-1 integer operand.
absl::StatusOr<std::vector<int64_t>> IntegerVector(const ir::Instruction& instruction,
                                                   const std::vector<EvalValue>& operands,
                                                   size_t i) {
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* array, ArrayOperand(instruction, operands, i));
  std::vector<int64_t> values;
  for (int64_t k = 0; k < array->shape().element_count(); ++k) {
    absl::StatusOr<int64_t> v = IntegerElement(*array, k);
    if (!v.ok())
      return OpError(instruction, "operand #", i, ": ", std::string(v.status().message()));
    values.push_back(*v);
  }
  return values;
}

Results EvalRealDynamicSlice(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                             Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 4));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> start, IntegerVector(instruction, operands, 1));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> limit, IntegerVector(instruction, operands, 2));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> strides, IntegerVector(instruction, operands, 3));
  return SliceWith(instruction, *operand, start, limit, strides);
}

// Start indices of dynamic_slice / dynamic_update_slice: scalar operands from `first`, clamped
// so that a window of `sizes` fits in `dims`.
absl::StatusOr<std::vector<int64_t>> ClampedStarts(const ir::Instruction& instruction,
                                                   const std::vector<EvalValue>& operands,
                                                   size_t first, absl::Span<const int64_t> dims,
                                                   absl::Span<const int64_t> sizes) {
  if (operands.size() != first + dims.size()) {
    return OpError(instruction, "expects ", dims.size(), " start indices but has ",
                   static_cast<int64_t>(operands.size()) - static_cast<int64_t>(first));
  }
  std::vector<int64_t> starts(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) {
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* index,
                           ArrayOperand(instruction, operands, first + d));
    if (index->shape().element_count() != 1) {
      return OpError(instruction, "start index #", d, " is ", DescribeArray(*index),
                     ", expected a scalar");
    }
    absl::StatusOr<int64_t> v = IntegerElement(*index, 0);
    if (!v.ok())
      return OpError(instruction, "start index #", d, ": ", std::string(v.status().message()));
    if (sizes[d] < 0 || sizes[d] > dims[d]) {
      return OpError(instruction, "size ", sizes[d], " does not fit dimension ", d, " of size ",
                     dims[d]);
    }
    starts[d] = std::clamp<int64_t>(*v, 0, dims[d] - sizes[d]);
  }
  return starts;
}

Results EvalDynamicSlice(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                         Evaluator&) {
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  EMBER_RETURN_IF_ERROR(CheckElementType(instruction, *operand, result));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                         IntsAttrOr(instruction, "slice_sizes", result.shape().dims()));
  if (sizes != result.shape().dims() || result.shape().rank() != operand->shape().rank()) {
    return OpError(instruction, "slice_sizes [", absl::StrJoin(sizes, ","),
                   "] do not match the result ", DescribeArray(result));
  }
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                         ClampedStarts(instruction, operands, 1, operand->shape().dims(), sizes));
  const std::vector<int64_t> strides = RowMajorStrides(operand->shape().dims());
  const int64_t base = Linearize(strides, starts);
  Gather(*operand, result,
         [&](absl::Span<const int64_t> index) { return base + Linearize(strides, index); });
  return ArrayResult(std::move(result));
}

Results EvalDynamicUpdateSlice(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                               Evaluator&) {
  EMBER_ASSIGN_OR_RETURN(ir::Literal * operand, MutableArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* update, ArrayOperand(instruction, operands, 1));
  const ir::ValueType& type = instruction.result(0)->type();
  if (!type.is_tensor() || operand->shape().dims() != type.dims() ||
      operand->element_type() != type.element_type() ||
      update->element_type() != type.element_type() ||
      update->shape().rank() != operand->shape().rank()) {
    return OpError(instruction, "operand ", DescribeArray(*operand), " and update ",
                   DescribeArray(*update), " do not fit the result ", type.ToString());
  }
  EMBER_ASSIGN_OR_RETURN(
      std::vector<int64_t> starts,
      ClampedStarts(instruction, operands, 2, operand->shape().dims(), update->shape().dims()));
  // The operand is ours (moved or copied into `operands`): update it in place.
  ir::Literal result = std::move(*operand);
  const std::vector<int64_t> strides = RowMajorStrides(result.shape().dims());
  const int64_t base = Linearize(strides, starts);
  ForEachIndex(update->shape().dims(), [&](absl::Span<const int64_t> index, int64_t linear) {
    CopyElements(*update, linear, result, base + Linearize(strides, index));
  });
  return ArrayResult(std::move(result));
}

Results EvalConcatenate(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                        Evaluator&) {
  EMBER_ASSIGN_OR_RETURN(int64_t dimension, IntAttr(instruction, "dimension"));
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  const std::vector<int64_t>& dims = result.shape().dims();
  if (dimension < 0 || dimension >= result.shape().rank()) {
    return OpError(instruction, "dimension ", dimension, " is out of range for ",
                   DescribeArray(result));
  }
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  int64_t offset = 0;
  for (size_t i = 0; i < operands.size(); ++i) {
    EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, ArrayOperand(instruction, operands, i));
    EMBER_RETURN_IF_ERROR(CheckElementType(instruction, *operand, result));
    bool ok = operand->shape().rank() == result.shape().rank();
    for (int64_t d = 0; ok && d < result.shape().rank(); ++d) {
      ok = d == dimension ? offset + operand->shape().dim(d) <= dims[d]
                          : operand->shape().dim(d) == dims[d];
    }
    if (!ok) {
      return OpError(instruction, "operand #", i, " ", DescribeArray(*operand),
                     " does not fit the result ", DescribeArray(result), " along dimension ",
                     dimension);
    }
    const int64_t base = offset * strides[dimension];
    ForEachIndex(operand->shape().dims(), [&](absl::Span<const int64_t> index, int64_t linear) {
      CopyElements(*operand, linear, result, base + Linearize(strides, index));
    });
    offset += operand->shape().dim(dimension);
  }
  if (offset != dims[dimension]) {
    return OpError(instruction, "operands cover ", offset, " of ", dims[dimension],
                   " along dimension ", dimension);
  }
  return ArrayResult(std::move(result));
}

Results PadWith(const ir::Instruction& instruction, const ir::Literal& operand,
                const ir::Literal& padding_value, const std::vector<int64_t>& low,
                const std::vector<int64_t>& high, const std::vector<int64_t>& interior) {
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  EMBER_RETURN_IF_ERROR(CheckElementType(instruction, operand, result));
  EMBER_RETURN_IF_ERROR(CheckElementType(instruction, padding_value, result));
  const int64_t rank = operand.shape().rank();
  bool ok = padding_value.shape().rank() == 0 && static_cast<int64_t>(low.size()) == rank &&
            static_cast<int64_t>(high.size()) == rank &&
            static_cast<int64_t>(interior.size()) == rank && result.shape().rank() == rank;
  for (int64_t d = 0; ok && d < rank; ++d) {
    const int64_t n = operand.shape().dim(d);
    ok = interior[d] >= 0 &&
         result.shape().dim(d) == low[d] + high[d] + n + std::max<int64_t>(n - 1, 0) * interior[d];
  }
  if (!ok) {
    return OpError(instruction, "edge_padding_low [", absl::StrJoin(low, ","),
                   "], edge_padding_high [", absl::StrJoin(high, ","), "], interior_padding [",
                   absl::StrJoin(interior, ","), "] do not pad ", DescribeArray(operand), " to ",
                   DescribeArray(result));
  }
  for (int64_t i = 0; i < result.shape().element_count(); ++i)
    CopyElements(padding_value, 0, result, i);
  const std::vector<int64_t> strides = RowMajorStrides(result.shape().dims());
  ForEachIndex(operand.shape().dims(), [&](absl::Span<const int64_t> index, int64_t linear) {
    int64_t target = 0;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t r = low[d] + index[d] * (interior[d] + 1);
      if (r < 0 || r >= result.shape().dim(d)) return;  // cut off by negative edge padding
      target += r * strides[d];
    }
    CopyElements(operand, linear, result, target);
  });
  return ArrayResult(std::move(result));
}

Results EvalPad(const ir::Instruction& instruction, std::vector<EvalValue>& operands, Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 2));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* padding_value, ArrayOperand(instruction, operands, 1));
  const std::vector<int64_t> zeros(static_cast<size_t>(operand->shape().rank()), 0);
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> low, IntsAttr(instruction, "edge_padding_low"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> high, IntsAttr(instruction, "edge_padding_high"));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> interior,
                         IntsAttrOr(instruction, "interior_padding", zeros));
  return PadWith(instruction, *operand, *padding_value, low, high, interior);
}

Results EvalDynamicPad(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                       Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 5));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* padding_value, ArrayOperand(instruction, operands, 1));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> low, IntegerVector(instruction, operands, 2));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> high, IntegerVector(instruction, operands, 3));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> interior, IntegerVector(instruction, operands, 4));
  return PadWith(instruction, *operand, *padding_value, low, high, interior);
}

Results EvalReverse(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                    Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> dimensions, IntsAttr(instruction, "dimensions"));
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  EMBER_RETURN_IF_ERROR(CheckElementType(instruction, *operand, result));
  const std::vector<int64_t>& dims = operand->shape().dims();
  if (result.shape().dims() != dims) {
    return OpError(instruction, "result ", DescribeArray(result), " differs from the operand ",
                   DescribeArray(*operand));
  }
  std::vector<bool> reversed(dims.size(), false);
  for (int64_t d : dimensions) {
    if (d < 0 || d >= static_cast<int64_t>(dims.size()) || reversed[d]) {
      return OpError(instruction, "dimensions [", absl::StrJoin(dimensions, ","),
                     "] are not distinct dimensions of ", DescribeArray(*operand));
    }
    reversed[d] = true;
  }
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  Gather(*operand, result, [&](absl::Span<const int64_t> index) {
    int64_t linear = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      linear += (reversed[d] ? dims[d] - 1 - index[d] : index[d]) * strides[d];
    }
    return linear;
  });
  return ArrayResult(std::move(result));
}

Results EvalTuple(const ir::Instruction&, std::vector<EvalValue>& operands, Evaluator&) {
  std::vector<EvalValue> results;
  results.push_back(EvalValue::Tuple(std::move(operands)));
  return results;
}

Results EvalGetTupleElement(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                            Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 1));
  EMBER_ASSIGN_OR_RETURN(int64_t index, IntAttr(instruction, "index"));
  EvalValue& tuple = operands[0];
  if (tuple.kind != EvalValue::Kind::kTuple || index < 0 ||
      index >= static_cast<int64_t>(tuple.elements.size())) {
    return OpError(instruction, "index ", index, " is out of range for ", tuple.Type().ToString());
  }
  std::vector<EvalValue> results;
  results.push_back(std::move(tuple.elements[index]));
  return results;
}

Results EvalGetDimensionSize(const ir::Instruction& instruction, std::vector<EvalValue>& operands,
                             Evaluator&) {
  EMBER_RETURN_IF_ERROR(CheckOperandCount(instruction, operands, 1));
  EMBER_ASSIGN_OR_RETURN(const ir::Literal* operand, ArrayOperand(instruction, operands, 0));
  EMBER_ASSIGN_OR_RETURN(int64_t dimension, IntAttr(instruction, "dimension"));
  if (dimension < 0 || dimension >= operand->shape().rank()) {
    return OpError(instruction, "dimension ", dimension, " is out of range for ",
                   DescribeArray(*operand));
  }
  EMBER_ASSIGN_OR_RETURN(ir::Literal result, NewResultArray(instruction));
  if (result.element_type() != ir::ElementType::kS32 || result.shape().rank() != 0) {
    return OpError(instruction, "result should be tensor<i32>");
  }
  MutableElements<int32_t>(result)[0] = static_cast<int32_t>(operand->shape().dim(dimension));
  return ArrayResult(std::move(result));
}

}  // namespace

void RegisterDataMovementOps(OpTable& table) {
  using ir::Opcode;
  table.Register(Opcode::kConstant, EvalConstant);
  table.Register(Opcode::kIota, EvalIota);
  table.Register(Opcode::kDynamicIota, EvalIota);
  table.Register(Opcode::kBroadcastInDim, EvalBroadcastInDim);
  table.Register(Opcode::kDynamicBroadcastInDim, EvalBroadcastInDim);
  table.Register(Opcode::kBroadcast, EvalBroadcast);
  table.Register(Opcode::kReshape, EvalReshape);
  table.Register(Opcode::kDynamicReshape, EvalReshape);
  table.Register(Opcode::kTranspose, EvalTranspose);
  table.Register(Opcode::kSlice, EvalSlice);
  table.Register(Opcode::kRealDynamicSlice, EvalRealDynamicSlice);
  table.Register(Opcode::kDynamicSlice, EvalDynamicSlice);
  table.Register(Opcode::kDynamicUpdateSlice, EvalDynamicUpdateSlice);
  table.Register(Opcode::kConcatenate, EvalConcatenate);
  table.Register(Opcode::kPad, EvalPad);
  table.Register(Opcode::kDynamicPad, EvalDynamicPad);
  table.Register(Opcode::kReverse, EvalReverse);
  table.Register(Opcode::kTuple, EvalTuple);
  table.Register(Opcode::kGetTupleElement, EvalGetTupleElement);
  table.Register(Opcode::kGetDimensionSize, EvalGetDimensionSize);
}

}  // namespace ember::eval
