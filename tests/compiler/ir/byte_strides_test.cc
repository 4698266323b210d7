// Byte strides: dense strides per layout, bounds checks, layout detection, strided copies
// checked element by element against a naive reference on random data.
#include "compiler/ir/byte_strides.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace ember::ir {
namespace {

using Strides = std::vector<int64_t>;

TEST(ByteStridesTest, DenseStridesFollowTheLayout) {
  EXPECT_EQ(ByteStridesForLayout(*Shape::Make(ElementType::kF32, {3, 4})), (Strides{16, 4}));
  EXPECT_EQ(ByteStridesForLayout(*Shape::MakeWithLayout(ElementType::kF32, {3, 4}, {0, 1})),
            (Strides{4, 12}));
  EXPECT_EQ(ByteStridesForLayout(*Shape::MakeWithLayout(ElementType::kS16, {2, 3, 4}, {1, 2, 0})),
            (Strides{24, 2, 6}));
  EXPECT_EQ(ByteStridesForLayout(*Shape::Make(ElementType::kC128, {2, 1, 3})),
            (Strides{48, 48, 16}));
  EXPECT_EQ(ByteStridesForLayout(*Shape::Make(ElementType::kF32, {0, 3})), (Strides{12, 4}));
  EXPECT_EQ(ByteStridesForLayout(Shape::Scalar(ElementType::kBF16)), Strides{});
}

TEST(ByteStridesTest, CheckFitAcceptsBuffersLargeEnough) {
  Shape shape = *Shape::Make(ElementType::kF32, {3, 4});
  EXPECT_TRUE(CheckByteStridesFit(shape, {16, 4}, 48).ok());
  EXPECT_TRUE(CheckByteStridesFit(shape, {4, 12}, 48).ok());
  EXPECT_TRUE(CheckByteStridesFit(shape, {32, 4}, 80).ok());  // padded rows: last row ends at 80
  EXPECT_TRUE(CheckByteStridesFit(shape, {0, 4}, 16).ok());   // broadcast rows
  EXPECT_TRUE(CheckByteStridesFit(*Shape::Make(ElementType::kF32, {0, 4}), {-4, 999}, 0).ok());
  EXPECT_TRUE(CheckByteStridesFit(*Shape::Make(ElementType::kF32, {1, 4}), {-64, 4}, 16).ok());
}

TEST(ByteStridesTest, CheckFitRejectsWithReasons) {
  Shape shape = *Shape::Make(ElementType::kF32, {3, 4});
  absl::Status small = CheckByteStridesFit(shape, {16, 4}, 47);
  EXPECT_EQ(small.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(small.message().find("48 bytes but the buffer has 47"), absl::string_view::npos)
      << small;
  absl::Status negative = CheckByteStridesFit(shape, {-16, 4}, 1000);
  EXPECT_NE(negative.message().find("negative stride"), absl::string_view::npos) << negative;
  absl::Status rank = CheckByteStridesFit(shape, {4}, 1000);
  EXPECT_NE(rank.message().find("rank 2"), absl::string_view::npos) << rank;
  // Products past int64 are caught, not wrapped.
  absl::Status huge = CheckByteStridesFit(shape, {int64_t{1} << 62, int64_t{1} << 62}, 1000);
  EXPECT_FALSE(huge.ok());
}

TEST(ByteStridesTest, DenseDetection) {
  Shape row = *Shape::Make(ElementType::kF32, {3, 1, 4});
  EXPECT_TRUE(ByteStridesAreDense(row, {16, 16, 4}));
  EXPECT_TRUE(ByteStridesAreDense(row, {16, 12345, 4}));  // size-1 dims may have any stride
  EXPECT_FALSE(ByteStridesAreDense(row, {4, 16, 12}));
  EXPECT_FALSE(ByteStridesAreDense(row, {16, 4}));

  std::optional<Layout> col = DenseLayoutForByteStrides({3, 4}, {4, 12}, 4);
  ASSERT_TRUE(col.has_value());
  EXPECT_EQ(*col, Layout({0, 1}));
  EXPECT_EQ(*DenseLayoutForByteStrides({3, 4}, {16, 4}, 4), Layout::RowMajor(2));
  EXPECT_EQ(*DenseLayoutForByteStrides({2, 3, 4}, {2, 4, 12}, 2), Layout({0, 1, 2}));
  EXPECT_EQ(*DenseLayoutForByteStrides({2, 3, 4}, {12, 1, 3}, 1), Layout({1, 2, 0}));
  std::optional<Layout> with_unit = DenseLayoutForByteStrides({3, 1, 4}, {4, 7, 12}, 4);
  ASSERT_TRUE(with_unit.has_value());
  EXPECT_TRUE(with_unit->Validate(3).ok());
  EXPECT_EQ(*DenseLayoutForByteStrides({3, 1, 4}, {16, 999, 4}, 4), Layout::RowMajor(3));
  EXPECT_FALSE(DenseLayoutForByteStrides({3, 4}, {32, 4}, 4).has_value());  // padded
  EXPECT_FALSE(DenseLayoutForByteStrides({3, 4}, {0, 4}, 4).has_value());   // broadcast
  EXPECT_FALSE(DenseLayoutForByteStrides({3, 4}, {4, 4}, 4).has_value());   // overlapping
  EXPECT_FALSE(DenseLayoutForByteStrides({3, -4}, {16, 4}, 4).has_value());
  EXPECT_FALSE(DenseLayoutForByteStrides({3}, {4, 4}, 4).has_value());
}

TEST(CopyStridedTest, TransposesAMatrix) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-100, 100);
  const int64_t rows = 5, cols = 7;
  std::vector<float> src(rows * cols), dst(rows * cols, 0);
  for (float& v : src) v = dist(rng);
  // Row-major source, column-major destination.
  ASSERT_TRUE(
      CopyStrided(src.data(), {cols * 4, 4}, dst.data(), {4, rows * 4}, {rows, cols}, 4).ok());
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) EXPECT_EQ(dst[j * rows + i], src[i * cols + j]);
  }
}

TEST(CopyStridedTest, ReversesWithANegativeStride) {
  std::vector<int32_t> src(9), dst(9);
  std::iota(src.begin(), src.end(), 100);
  ASSERT_TRUE(CopyStrided(src.data() + 8, {-4}, dst.data(), {4}, {9}, 4).ok());
  for (int i = 0; i < 9; ++i) EXPECT_EQ(dst[i], 108 - i);
}

// Element (multi-index) addresses for the naive reference.
int64_t Offset(const std::vector<int64_t>& index, const Strides& strides) {
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d) offset += index[d] * strides[d];
  return offset;
}

Strides RandomStrides(std::mt19937& rng, const std::vector<int64_t>& dims, int64_t element_bytes,
                      int64_t* extent) {
  std::vector<int64_t> order(dims.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  Strides strides(dims.size());
  int64_t stride = element_bytes + static_cast<int64_t>(rng() % 2) * element_bytes;  // gaps
  for (int64_t d : order) {
    strides[d] = stride;
    stride *= dims[d];
    stride += static_cast<int64_t>(rng() % 3) * element_bytes;  // padding between rows
  }
  *extent = stride;
  return strides;
}

TEST(CopyStridedTest, RandomLayoutsAndPaddingMatchTheNaiveCopy) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t element_bytes = std::vector<int64_t>{1, 2, 3, 4, 8, 16}[trial % 6];
    const int rank = static_cast<int>(rng() % 5);
    std::vector<int64_t> dims(rank);
    for (int64_t& d : dims) d = 1 + static_cast<int64_t>(rng() % 5);
    int64_t src_extent, dst_extent;
    Strides src_strides = RandomStrides(rng, dims, element_bytes, &src_extent);
    Strides dst_strides = RandomStrides(rng, dims, element_bytes, &dst_extent);
    std::vector<uint8_t> src(src_extent), dst(dst_extent, 0xAB), expected(dst_extent, 0xAB);
    for (uint8_t& b : src) b = static_cast<uint8_t>(rng());

    ASSERT_TRUE(
        CopyStrided(src.data(), src_strides, dst.data(), dst_strides, dims, element_bytes).ok());
    // Naive reference: odometer over every multi-index.
    std::vector<int64_t> index(rank, 0);
    while (true) {
      std::memcpy(expected.data() + Offset(index, dst_strides),
                  src.data() + Offset(index, src_strides), element_bytes);
      int d = rank - 1;
      for (; d >= 0; --d) {
        if (++index[d] < dims[d]) break;
        index[d] = 0;
      }
      if (d < 0) break;
    }
    ASSERT_EQ(dst, expected) << "trial " << trial;
  }
}

TEST(CopyStridedTest, RejectsBadArguments) {
  std::vector<float> a(8), b(8);
  absl::Status negative = CopyStrided(a.data(), {4, 4}, b.data(), {4, 4}, {2, -4}, 4);
  EXPECT_EQ(negative.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(negative.message().find("dimension 1"), absl::string_view::npos) << negative;
  EXPECT_NE(negative.message().find("negative"), absl::string_view::npos);
  absl::Status ranks = CopyStrided(a.data(), {4}, b.data(), {4, 4}, {2, 4}, 4);
  EXPECT_NE(ranks.message().find("ranks differ"), absl::string_view::npos) << ranks;
  EXPECT_FALSE(CopyStrided(a.data(), {4}, b.data(), {4}, {2}, -4).ok());
  EXPECT_FALSE(CopyStrided(nullptr, {4}, b.data(), {4}, {2}, 4).ok());
  // Nothing to copy: null pointers are fine.
  EXPECT_TRUE(CopyStrided(nullptr, {4, 4}, nullptr, {4, 4}, {0, 4}, 4).ok());
  EXPECT_TRUE(CopyStrided(nullptr, {}, nullptr, {}, {}, 0).ok());
}

TEST(CopyStridedTest, ScalarCopiesOneElement) {
  double src = 3.25, dst = 0;
  ASSERT_TRUE(CopyStrided(&src, {}, &dst, {}, {}, 8).ok());
  EXPECT_EQ(dst, 3.25);
}

}  // namespace
}  // namespace ember::ir
