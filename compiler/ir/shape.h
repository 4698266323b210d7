// The shape of an array value: element type, dimension sizes and memory layout.
// Shapes are valid by construction (Make checks dims, layout and that the element count and
// byte size fit in int64_t), so the accessors below cannot fail. A dimension may be dynamic
// (kDynamicDim, printed `?`) only in shapes built with MakeDynamic or MakeBounded:
// shape-polymorphic programs import with them, and refine_shapes makes them static before
// anything runs. A dynamic dim may carry an upper bound (StableHLO's
// #stablehlo.type_extensions<bounds = [...]>, XLA's bounded dynamic dimensions).
#ifndef EMBER_COMPILER_IR_SHAPE_H_
#define EMBER_COMPILER_IR_SHAPE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/ir/element_type.h"
#include "compiler/ir/layout.h"
#include "compiler/ir/quantized_type.h"

namespace ember::ir {

// A dimension whose size is only known at run time (MLIR's `?`, ShapedType::kDynamic).
inline constexpr int64_t kDynamicDim = INT64_MIN;

// Product of dims; an error when a dim is negative or the product exceeds int64_t.
absl::StatusOr<int64_t> CheckedElementCount(absl::Span<const int64_t> dims);
// Element count times StorageBytes(type); an error on negative dims or int64_t overflow.
absl::StatusOr<int64_t> CheckedByteSize(ElementType type, absl::Span<const int64_t> dims);

// An array shape. Tuples are not shapes here: a tuple result is a list of array shapes
// (tuple_shapes would go beside element_type_ if nested tuples are ever needed).
class Shape {
 public:
  Shape() = default;  // element type kInvalid, rank 0; only useful as a placeholder

  // Dense row-major shape. Rejects kInvalid, negative dims, dims on a token, and element counts
  // or byte sizes past int64_t.
  static absl::StatusOr<Shape> Make(ElementType type, absl::Span<const int64_t> dims);
  // As Make, with an explicit minor_to_major that must be a permutation of 0..rank-1.
  static absl::StatusOr<Shape> MakeWithLayout(ElementType type, absl::Span<const int64_t> dims,
                                              absl::Span<const int64_t> minor_to_major);
  // As Make, but dims may also be kDynamicDim. A shape with a dynamic dim has element_count()
  // and ByteSize() 0 and a row-major layout; nothing may allocate or run it.
  static absl::StatusOr<Shape> MakeDynamic(ElementType type, absl::Span<const int64_t> dims);
  // As MakeDynamic, with one bound per dim: kDynamicDim (no bound) or, for a dynamic dim only,
  // the largest size it may take (>= 0). With no bounds (empty, or all kDynamicDim) this is
  // MakeDynamic.
  static absl::StatusOr<Shape> MakeBounded(ElementType type, absl::Span<const int64_t> dims,
                                           absl::Span<const int64_t> bounds);
  // A rank-0 shape; cannot fail (a scalar always fits).
  static Shape Scalar(ElementType type);

  // A tensor of quantized elements, stored as `type.storage_type`. Checks the type's own
  // constraints and, per-axis, that quantized_dimension < rank and that there is one scale per
  // slice of it.
  static absl::StatusOr<Shape> MakeQuantized(const QuantizedType& type,
                                             absl::Span<const int64_t> dims);

  // This shape with another layout (checked against the rank).
  absl::StatusOr<Shape> WithLayout(const Layout& layout) const;

  // The element type in memory: for a quantized shape, its storage type.
  ElementType element_type() const { return element_type_; }
  bool is_quantized() const { return quantized_ != nullptr; }
  // Null unless quantized.
  const QuantizedType* quantized() const { return quantized_.get(); }
  // The same shape without the quantization (its storage integers).
  Shape StorageShape() const;
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t dim(int64_t i) const { return dims_[i]; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const Layout& layout() const { return layout_; }

  // No dim is kDynamicDim.
  bool is_static() const;
  bool is_dynamic_dim(int64_t i) const { return dims_[i] == kDynamicDim; }
  // The bounds of the dims (kDynamicDim where none), or null when no dim has one.
  const std::vector<int64_t>* bounds() const { return bounds_.get(); }

  int64_t element_count() const { return element_count_; }
  // Bytes of a dense buffer of this shape: element_count() * StorageBytes(element_type()).
  int64_t ByteSize() const;

  // "f32[3,4]{1,0}", "pred[]", "s4[8]{0}": XLA's shape syntax, with XLA's type names (a dynamic
  // dim prints as `?`, a bounded one as `<=16`); a quantized shape prints its MLIR element
  // spelling:
  // "!quant.uniform<i8:f32, 0.5>[2]{0}".
  std::string ToString() const;

  // Same element type (quantization included), dims and bounds, any layout.
  bool EqualsIgnoringLayout(const Shape& other) const {
    if (element_type_ != other.element_type_ || dims_ != other.dims_) return false;
    if ((bounds_ == nullptr) != (other.bounds_ == nullptr) ||
        (bounds_ != nullptr && *bounds_ != *other.bounds_)) {
      return false;
    }
    if (quantized_ == nullptr || other.quantized_ == nullptr) return quantized_ == other.quantized_;
    return *quantized_ == *other.quantized_;
  }
  friend bool operator==(const Shape& a, const Shape& b) {
    return a.EqualsIgnoringLayout(b) && a.layout_ == b.layout_;
  }

 private:
  Shape(ElementType type, std::vector<int64_t> dims, Layout layout, int64_t element_count)
      : element_type_(type),
        dims_(std::move(dims)),
        layout_(std::move(layout)),
        element_count_(element_count) {}

  ElementType element_type_ = ElementType::kInvalid;
  std::vector<int64_t> dims_;
  Layout layout_;
  int64_t element_count_ = 1;
  // Immutable and shared between copies (shapes are copied freely).
  std::shared_ptr<const QuantizedType> quantized_;
  std::shared_ptr<const std::vector<int64_t>> bounds_;
};

}  // namespace ember::ir

#endif  // EMBER_COMPILER_IR_SHAPE_H_
