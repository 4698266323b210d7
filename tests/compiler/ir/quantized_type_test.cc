// Quantized element types: the spec's constraints, MLIR spelling, equality of quantized shapes
// and value types.
#include "compiler/ir/quantized_type.h"

#include <gtest/gtest.h>

#include "compiler/ir/shape.h"
#include "compiler/ir/value_type.h"

namespace ember::ir {
namespace {

QuantizedType PerAxis() {
  QuantizedType q;
  q.storage_type = ElementType::kS8;
  q.expressed_type = ElementType::kF32;
  q.storage_min = -127;
  q.storage_max = 127;
  q.scales = {2.0, 0.1};
  q.zero_points = {1, 0};
  q.quantized_dimension = 1;
  return q;
}

TEST(QuantizedTypeTest, Spelling) {
  absl::StatusOr<QuantizedType> q =
      QuantizedType::PerTensor(ElementType::kS8, ElementType::kF32, 0.0039215482917486456, -128);
  ASSERT_TRUE(q.ok()) << q.status();
  // The fewest digits that read back to the same double.
  EXPECT_EQ(q->ToString(), "!quant.uniform<i8:f32, 0.003921548291748646:-128>");
  EXPECT_EQ(QuantizedType::PerTensor(ElementType::kU8, ElementType::kBF16, 34.0, 0)->ToString(),
            "!quant.uniform<u8:bf16, 34.0>");
  EXPECT_EQ(QuantizedType::PerTensor(ElementType::kS32, ElementType::kF32, 1.5e-5, 0)->ToString(),
            "!quant.uniform<i32:f32, 1.5e-05>");
  EXPECT_EQ(PerAxis().ToString(), "!quant.uniform<i8<-127:127>:f32:1, {2.0:1, 0.1}>");
}

TEST(QuantizedTypeTest, StorageRanges) {
  EXPECT_EQ(QuantizedType::StorageTypeMin(ElementType::kS8), -128);
  EXPECT_EQ(QuantizedType::StorageTypeMax(ElementType::kS8), 127);
  EXPECT_EQ(QuantizedType::StorageTypeMin(ElementType::kU4), 0);
  EXPECT_EQ(QuantizedType::StorageTypeMax(ElementType::kU4), 15);
  EXPECT_EQ(QuantizedType::StorageTypeMax(ElementType::kS32), 2147483647);
}

TEST(QuantizedTypeTest, ConstraintsAreChecked) {
  EXPECT_FALSE(QuantizedType::PerTensor(ElementType::kS8, ElementType::kF32, 0.0, 0).ok());
  EXPECT_FALSE(QuantizedType::PerTensor(ElementType::kS8, ElementType::kF32, -1.0, 0).ok());
  EXPECT_FALSE(QuantizedType::PerTensor(ElementType::kS8, ElementType::kF32, 1.0, 200).ok());
  EXPECT_FALSE(QuantizedType::PerTensor(ElementType::kS32, ElementType::kF16, 1.0, 0).ok());
  EXPECT_TRUE(QuantizedType::PerTensor(ElementType::kS32, ElementType::kF32, 1.0, 0).ok());
  EXPECT_FALSE(QuantizedType::PerTensor(ElementType::kF16, ElementType::kF32, 1.0, 0).ok());
  EXPECT_FALSE(QuantizedType::PerTensor(ElementType::kS8, ElementType::kS32, 1.0, 0).ok());
  QuantizedType q = PerAxis();
  EXPECT_TRUE(q.Validate().ok());
  q.storage_min = 127;
  EXPECT_FALSE(q.Validate().ok());
  q = PerAxis();
  q.zero_points.pop_back();
  EXPECT_FALSE(q.Validate().ok());
  q = PerAxis();
  q.quantized_dimension.reset();
  EXPECT_FALSE(q.Validate().ok());  // two scales on a per-tensor type
}

TEST(QuantizedTypeTest, QuantizedShapes) {
  absl::StatusOr<Shape> s = Shape::MakeQuantized(PerAxis(), {3, 2});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->is_quantized());
  EXPECT_EQ(s->element_type(), ElementType::kS8);
  EXPECT_EQ(s->ByteSize(), 6);
  EXPECT_EQ(s->ToString(), "!quant.uniform<i8<-127:127>:f32:1, {2.0:1, 0.1}>[3,2]{1,0}");
  EXPECT_FALSE(s->StorageShape().is_quantized());
  EXPECT_EQ(s->StorageShape(), *Shape::Make(ElementType::kS8, {3, 2}));
  // Per-axis: the dimension exists and has one scale per slice.
  EXPECT_FALSE(Shape::MakeQuantized(PerAxis(), {3, 3}).ok());
  EXPECT_FALSE(Shape::MakeQuantized(PerAxis(), {2}).ok());
  // Layout changes keep the quantization.
  absl::StatusOr<Shape> col = s->WithLayout(Layout({0, 1}));
  ASSERT_TRUE(col.ok());
  EXPECT_TRUE(col->is_quantized());
}

TEST(QuantizedTypeTest, ValueTypeEquality) {
  const ValueType a = ValueType::Tensor(*Shape::MakeQuantized(
      *QuantizedType::PerTensor(ElementType::kS8, ElementType::kF32, 0.5, 3), {2}));
  const ValueType b = ValueType::Tensor(*Shape::MakeQuantized(
      *QuantizedType::PerTensor(ElementType::kS8, ElementType::kF32, 0.5, 3), {2}));
  const ValueType c = ValueType::Tensor(*Shape::MakeQuantized(
      *QuantizedType::PerTensor(ElementType::kS8, ElementType::kF32, 0.25, 3), {2}));
  const ValueType plain = ValueType::Tensor(*Shape::Make(ElementType::kS8, {2}));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, plain);
  EXPECT_EQ(a.StorageType(), plain);
  EXPECT_TRUE(a.is_quantized());
  EXPECT_EQ(a.ToString(), "tensor<2x!quant.uniform<i8:f32, 0.5:3>>");
  const ValueType tuple = ValueType::Tuple({a, plain});
  EXPECT_EQ(tuple.StorageType(), ValueType::Tuple({plain, plain}));
}

}  // namespace
}  // namespace ember::ir
