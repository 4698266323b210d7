// Shape arithmetic used by transfers: sizes, strides, validation.
#include "runtime/host_layout.h"

#include "gtest/gtest.h"

namespace ember::runtime {
namespace {

using ir::ElementType;

TEST(HostLayoutTest, DenseByteSize) {
  EXPECT_EQ(*DenseByteSize(ElementType::kF32, {3, 4}), 48u);
  EXPECT_EQ(*DenseByteSize(ElementType::kS4, {5}), 5u);  // sub-byte types take a byte each
  EXPECT_EQ(*DenseByteSize(ElementType::kC128, {}), 16u);
  EXPECT_EQ(*DenseByteSize(ElementType::kF64, {2, 0, 7}), 0u);
  auto negative = DenseByteSize(ElementType::kF32, {3, -1});
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("dimension 1 is negative"), std::string::npos);
  EXPECT_FALSE(DenseByteSize(ElementType::kF32, {int64_t{1} << 40, int64_t{1} << 30}).ok());
  EXPECT_FALSE(DenseByteSize(ElementType::kF64, {int64_t{1} << 61}).ok());
}

TEST(HostLayoutTest, Strides) {
  EXPECT_EQ(RowMajorByteStrides(ElementType::kF32, {2, 3, 4}), (std::vector<int64_t>{48, 16, 4}));
  EXPECT_EQ(*ByteStridesForMinorToMajor(ElementType::kF32, {2, 3}, {0, 1}),
            (std::vector<int64_t>{4, 8}));
  EXPECT_FALSE(ByteStridesForMinorToMajor(ElementType::kF32, {2, 3}, {0, 0}).ok());
  EXPECT_FALSE(ByteStridesForMinorToMajor(ElementType::kF32, {2, 3}, {0}).ok());
}

TEST(HostLayoutTest, ValidateByteStrides) {
  EXPECT_TRUE(ValidateByteStrides(ElementType::kF32, {2, 3}, {4, 8}).ok());
  EXPECT_FALSE(ValidateByteStrides(ElementType::kF32, {2, 3}, {4}).ok());
  EXPECT_FALSE(ValidateByteStrides(ElementType::kF32, {2, 3}, {-4, 8}).ok());
  EXPECT_FALSE(ValidateByteStrides(ElementType::kF32, {4, 3}, {int64_t{1} << 62, 8}).ok());
  // A source may run backwards (numpy's a[::-1]); a destination may not.
  EXPECT_TRUE(ValidateByteStrides(ElementType::kF32, {2, 3}, {-4, 8}, StrideSigns::kAny).ok());
  EXPECT_TRUE(ValidateByteStrides(ElementType::kF64, {12}, {-8}, StrideSigns::kAny).ok());
  EXPECT_FALSE(
      ValidateByteStrides(ElementType::kF32, {4, 3}, {-(int64_t{1} << 62), 8}, StrideSigns::kAny)
          .ok());
  EXPECT_FALSE(ValidateByteStrides(ElementType::kF32, {2, 3}, {4}, StrideSigns::kAny).ok());
}

}  // namespace
}  // namespace ember::runtime
