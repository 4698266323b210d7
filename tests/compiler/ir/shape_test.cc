// Shapes: construction checks, overflow rejection, sizes, printing, equality.
#include "compiler/ir/shape.h"
#include "compiler/ir/value_type.h"

#include <gtest/gtest.h>

#include <limits>

namespace ember::ir {
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

TEST(ShapeTest, MakeRowMajor) {
  absl::StatusOr<Shape> shape = Shape::Make(ElementType::kF32, {3, 4});
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ(shape->element_type(), ElementType::kF32);
  EXPECT_EQ(shape->rank(), 2);
  EXPECT_EQ(shape->dim(0), 3);
  EXPECT_EQ(shape->dim(1), 4);
  EXPECT_EQ(shape->element_count(), 12);
  EXPECT_EQ(shape->ByteSize(), 48);
  EXPECT_EQ(shape->layout(), Layout::RowMajor(2));
  EXPECT_EQ(shape->ToString(), "f32[3,4]{1,0}");
}

TEST(ShapeTest, ByteSizesUseStorageBytes) {
  EXPECT_EQ(Shape::Make(ElementType::kS4, {7})->ByteSize(), 7);  // one element per byte
  EXPECT_EQ(Shape::Make(ElementType::kPred, {2, 5})->ByteSize(), 10);
  EXPECT_EQ(Shape::Make(ElementType::kBF16, {3, 3})->ByteSize(), 18);
  EXPECT_EQ(Shape::Make(ElementType::kC128, {2})->ByteSize(), 32);
  EXPECT_EQ(Shape::Make(ElementType::kF6E3M2FN, {9})->ByteSize(), 9);
  EXPECT_EQ(Shape::Make(ElementType::kToken, {})->ByteSize(), 0);
  EXPECT_EQ(Shape::Make(ElementType::kF64, {0, 100})->ByteSize(), 0);
  EXPECT_EQ(Shape::Scalar(ElementType::kS64).ByteSize(), 8);
}

TEST(ShapeTest, ToStringUsesXlaSyntax) {
  EXPECT_EQ(Shape::Scalar(ElementType::kPred).ToString(), "pred[]");
  EXPECT_EQ(Shape::Make(ElementType::kS4, {8})->ToString(), "s4[8]{0}");
  EXPECT_EQ(Shape::MakeWithLayout(ElementType::kBF16, {2, 3, 4}, {0, 2, 1})->ToString(),
            "bf16[2,3,4]{0,2,1}");
  EXPECT_EQ(Shape::Make(ElementType::kC64, {0})->ToString(), "c64[0]{0}");
  EXPECT_EQ(Shape::Scalar(ElementType::kToken).ToString(), "token[]");
}

TEST(ShapeTest, RejectsNegativeDims) {
  absl::StatusOr<Shape> shape = Shape::Make(ElementType::kF32, {3, -2});
  ASSERT_FALSE(shape.ok());
  EXPECT_EQ(shape.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(shape.status().message().find("dimension 1"), absl::string_view::npos)
      << shape.status();
  EXPECT_NE(shape.status().message().find("-2"), absl::string_view::npos);
}

TEST(ShapeTest, RejectsElementCountOverflow) {
  const int64_t big = int64_t{1} << 32;
  absl::StatusOr<Shape> shape = Shape::Make(ElementType::kS8, {big, big});
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.status().message().find("overflow"), absl::string_view::npos) << shape.status();
  EXPECT_FALSE(Shape::Make(ElementType::kU8, {kInt64Max, 2}).ok());
  // A zero dim anywhere makes the count 0, even after an overflowing prefix.
  absl::StatusOr<Shape> empty = Shape::Make(ElementType::kU8, {big, big, 0});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->element_count(), 0);
  // A negative dim is reported even after an overflow.
  absl::StatusOr<Shape> negative = Shape::Make(ElementType::kU8, {big, big, -1});
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("negative"), absl::string_view::npos);
}

TEST(ShapeTest, RejectsByteSizeOverflow) {
  // 2^62 elements fit in int64, 2^62 * 4 bytes do not.
  const int64_t elements = int64_t{1} << 62;
  EXPECT_TRUE(Shape::Make(ElementType::kU8, {elements}).ok());
  absl::StatusOr<Shape> shape = Shape::Make(ElementType::kF32, {elements});
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.status().message().find("byte size"), absl::string_view::npos) << shape.status();
  EXPECT_EQ(*CheckedByteSize(ElementType::kF32, {1 << 20, 3}), int64_t{12} << 20);
  EXPECT_FALSE(CheckedByteSize(ElementType::kC128, {int64_t{1} << 60}).ok());
  EXPECT_EQ(*CheckedElementCount({kInt64Max}), kInt64Max);
  EXPECT_EQ(*CheckedElementCount({}), 1);
}

TEST(ShapeTest, RejectsBadTypesAndLayouts) {
  EXPECT_FALSE(Shape::Make(ElementType::kInvalid, {2}).ok());
  absl::StatusOr<Shape> token = Shape::Make(ElementType::kToken, {2});
  ASSERT_FALSE(token.ok());
  EXPECT_NE(token.status().message().find("token"), absl::string_view::npos);
  absl::StatusOr<Shape> bad_layout = Shape::MakeWithLayout(ElementType::kF32, {2, 3}, {1, 1});
  ASSERT_FALSE(bad_layout.ok());
  EXPECT_NE(bad_layout.status().message().find("f32[2,3]"), absl::string_view::npos)
      << bad_layout.status();
  EXPECT_FALSE(Shape::MakeWithLayout(ElementType::kF32, {2, 3}, {0}).ok());
}

TEST(ShapeTest, WithLayoutAndEquality) {
  Shape row = *Shape::Make(ElementType::kS32, {2, 5});
  Shape col = *row.WithLayout(Layout::ColumnMajor(2));
  EXPECT_EQ(col.layout(), Layout({0, 1}));
  EXPECT_FALSE(row == col);
  EXPECT_TRUE(row.EqualsIgnoringLayout(col));
  EXPECT_EQ(row, *Shape::Make(ElementType::kS32, {2, 5}));
  EXPECT_FALSE(row == *Shape::Make(ElementType::kU32, {2, 5}));
  EXPECT_FALSE(row == *Shape::Make(ElementType::kS32, {5, 2}));
  EXPECT_FALSE(row.WithLayout(Layout::RowMajor(3)).ok());
}

// Bounded dynamic dims (#stablehlo.type_extensions): a bound only on a dynamic dim; bounds are
// part of the type (equality, printing) and limit what a dim is compatible with.
TEST(ShapeTest, BoundedDynamicDims) {
  const int64_t kDyn = kDynamicDim;
  absl::StatusOr<Shape> bounded = Shape::MakeBounded(ElementType::kF32, {kDyn, kDyn, 3}, {16, kDyn, kDyn});
  ASSERT_TRUE(bounded.ok()) << bounded.status();
  ASSERT_NE(bounded->bounds(), nullptr);
  EXPECT_EQ(*bounded->bounds(), (std::vector<int64_t>{16, kDyn, kDyn}));
  EXPECT_FALSE(bounded->is_static());
  EXPECT_EQ(bounded->ToString(), "f32[<=16,?,3]{2,1,0}");
  EXPECT_EQ(ValueType::Tensor(*bounded).ToString(), "tensor<?x?x3xf32, #stablehlo.bounds<16, ?, ?>>");
  const Shape unbounded = *Shape::MakeDynamic(ElementType::kF32, {kDyn, kDyn, 3});
  EXPECT_FALSE(*bounded == unbounded);
  EXPECT_EQ(*Shape::MakeBounded(ElementType::kF32, {kDyn, kDyn, 3}, {kDyn, kDyn, kDyn}), unbounded);
  // Errors: a bound on a static dim, a negative bound, a wrong count.
  EXPECT_EQ(Shape::MakeBounded(ElementType::kF32, {kDyn, 3}, {4, 4}).status().message(),
            "shape [?,3]: static dimension 1 cannot have a bound");
  EXPECT_FALSE(Shape::MakeBounded(ElementType::kF32, {kDyn}, {-2}).ok());
  EXPECT_FALSE(Shape::MakeBounded(ElementType::kF32, {kDyn}, {4, 4}).ok());
  // Compatibility stops at the bound.
  const ValueType t = ValueType::Tensor(*bounded);
  EXPECT_TRUE(t.IsCompatibleWith(ValueType::Tensor(*Shape::Make(ElementType::kF32, {16, 100, 3}))));
  EXPECT_FALSE(t.IsCompatibleWith(ValueType::Tensor(*Shape::Make(ElementType::kF32, {17, 1, 3}))));
  EXPECT_FALSE(ValueType::Tensor(*Shape::Make(ElementType::kF32, {17, 1, 3})).IsCompatibleWith(t));
}

}  // namespace
}  // namespace ember::ir
