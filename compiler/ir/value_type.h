// The type of an IR value: a tensor (static, or with dynamic dims before refine_shapes), a token,
// or a tuple of those.
#ifndef EMBER_COMPILER_IR_VALUE_TYPE_H_
#define EMBER_COMPILER_IR_VALUE_TYPE_H_

#include <string>
#include <vector>

#include "compiler/ir/shape.h"

namespace ember::ir {

class ValueType {
 public:
  // kFuture: a value an asynchronous op (stablehlo.async_start) makes available later; it
  // holds the tensors its async_done yields (StableHLO's !stablehlo.future<T...>).
  // kBuffer: an array in memory that only custom calls read and write (StableHLO's buffer type,
  // spelled memref<2x3xf32>); it has a shape like a tensor.
  enum class Kind { kTensor, kToken, kTuple, kFuture, kBuffer };

  static ValueType Tensor(Shape shape) { return ValueType(Kind::kTensor, std::move(shape), {}); }
  static ValueType Token() { return ValueType(Kind::kToken, Shape::Scalar(ElementType::kToken), {}); }
  static ValueType Tuple(std::vector<ValueType> elements) {
    return ValueType(Kind::kTuple, Shape::Scalar(ElementType::kInvalid), std::move(elements));
  }
  static ValueType Buffer(Shape shape) { return ValueType(Kind::kBuffer, std::move(shape), {}); }
  static ValueType Future(std::vector<ValueType> elements) {
    return ValueType(Kind::kFuture, Shape::Scalar(ElementType::kInvalid), std::move(elements));
  }

  Kind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == Kind::kTensor; }
  bool is_token() const { return kind_ == Kind::kToken; }
  bool is_tuple() const { return kind_ == Kind::kTuple; }
  bool is_future() const { return kind_ == Kind::kFuture; }
  bool is_buffer() const { return kind_ == Kind::kBuffer; }
  // Tensor and buffer only.
  const Shape& shape() const { return shape_; }
  ElementType element_type() const { return shape_.element_type(); }
  const std::vector<int64_t>& dims() const { return shape_.dims(); }
  // Tuple and future only.
  const std::vector<ValueType>& elements() const { return elements_; }
  // No tensor in this type (tuple elements included) has a dynamic dim.
  bool is_static() const;

  bool is_quantized() const { return is_tensor() && shape_.is_quantized(); }
  // This type with quantized tensors (also inside tuples) replaced by their storage integers.
  ValueType StorageType() const;

  // MLIR spelling: "tensor<2x3xf32>", "!stablehlo.token", "tuple<tensor<f32>, ...>",
  // "tensor<4x!quant.uniform<i8:f32, 0.5:-1>>", "!stablehlo.future<tensor<4xf32>>",
  // "memref<2xf32>".
  std::string ToString() const;
  bool operator==(const ValueType& other) const;
  bool operator!=(const ValueType& other) const { return !(*this == other); }
  // The StableHLO spec's "compatible" types: equal, except that a dynamic dim matches any size
  // (up to its bound, when it has one).
  bool IsCompatibleWith(const ValueType& other) const;

 private:
  ValueType(Kind kind, Shape shape, std::vector<ValueType> elements)
      : kind_(kind), shape_(std::move(shape)), elements_(std::move(elements)) {}
  Kind kind_;
  Shape shape_;
  std::vector<ValueType> elements_;
};

}  // namespace ember::ir

#endif  // EMBER_COMPILER_IR_VALUE_TYPE_H_
