// StableHLO's uniform quantized element type (`!quant.uniform<...>`): integers of a storage type
// that stand for values of a float expressed type, f = (q - zero_point) * scale, per tensor or
// per slice of one dimension (per-axis). A quantized Shape stores the storage type's elements;
// the legalize-quantized pass rewrites programs to storage integers and float math before any
// backend runs them.
#ifndef EMBER_COMPILER_IR_QUANTIZED_TYPE_H_
#define EMBER_COMPILER_IR_QUANTIZED_TYPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/element_type.h"
#include "compiler/ir/opcode.h"

namespace ember::ir {

struct QuantizedType {
  ElementType storage_type = ElementType::kS8;     // a signed or unsigned integer type
  ElementType expressed_type = ElementType::kF32;  // a float type
  int64_t storage_min = 0;
  int64_t storage_max = 0;
  std::vector<double> scales;        // one per tensor, or one per slice of quantized_dimension
  std::vector<int64_t> zero_points;  // same size as scales
  std::optional<int64_t> quantized_dimension;  // set for per-axis quantization

  bool is_per_axis() const { return quantized_dimension.has_value(); }
  // Per-tensor only.
  double scale() const { return scales[0]; }
  int64_t zero_point() const { return zero_points[0]; }

  // The storage type's full range: [-128, 127] for i8, [0, 255] for u8.
  static int64_t StorageTypeMin(ElementType storage_type);
  static int64_t StorageTypeMax(ElementType storage_type);

  // A per-tensor type with the storage type's full range.
  static absl::StatusOr<QuantizedType> PerTensor(ElementType storage, ElementType expressed,
                                                 double scale, int64_t zero_point);
  // Checks the spec's element-type constraints (C1-C12 of "Quantized element types"):
  // integer storage not wider than the float expressed type (i32:f32 is used upstream), storage_min < storage_max within
  // the storage range, finite positive scales, zero points within [storage_min, storage_max],
  // as many zero points as scales, one pair when per-tensor, quantized_dimension >= 0.
  absl::Status Validate() const;

  // MLIR spelling: "!quant.uniform<i8:f32, 0.5:3>", "!quant.uniform<i8<-127:127>:f32:1,
  // {2.0:1, 3.0}>" (zero points of 0 and the default storage range are omitted, scales are
  // printed with the fewest digits that read back to the same double).
  std::string ToString() const;

  friend bool operator==(const QuantizedType& a, const QuantizedType& b) {
    return a.storage_type == b.storage_type && a.expressed_type == b.expressed_type &&
           a.storage_min == b.storage_min && a.storage_max == b.storage_max &&
           a.scales == b.scales && a.zero_points == b.zero_points &&
           a.quantized_dimension == b.quantized_dimension;
  }
  friend bool operator!=(const QuantizedType& a, const QuantizedType& b) { return !(a == b); }
};

// How an op treats quantized operands, after the spec (shared by the verifier and the
// legalize-quantized pass).
enum class QuantizedOpKind {
  kQuantize,    // uniform_quantize (float -> quantized, or requantize)
  kDequantize,  // uniform_dequantize
  // Defined by dequantize_op_quantize (or its compare/select variants): the op computes on
  // the dequantized values and its quantized results are quantized again.
  kDequantizeOpQuantize,
  // Same, but the op has regions that would compute on quantized scalars (reduce, sort, ...).
  kDequantizeOpQuantizeWithRegions,
  kDotLike,       // dot_general, dot, convolution: quantized or hybrid (float lhs, quantized rhs)
  // Moves elements and keeps their quantization (reshape, transpose, gather, ...); also
  // constants, whose literal holds the storage integers.
  kDataMovement,
  kPassThrough,   // control flow, tuples, calls, custom calls, constants: types carried along
};
QuantizedOpKind ClassifyQuantizedOp(Opcode opcode);

}  // namespace ember::ir

#endif  // EMBER_COMPILER_IR_QUANTIZED_TYPE_H_
