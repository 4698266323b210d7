// Layouts: defaults, permutation checks, printing.
#include "compiler/ir/layout.h"

#include <gtest/gtest.h>

namespace ember::ir {
namespace {

TEST(LayoutTest, RowAndColumnMajor) {
  EXPECT_EQ(Layout::RowMajor(3).minor_to_major(), (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(Layout::ColumnMajor(3).minor_to_major(), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_TRUE(Layout::RowMajor(4).IsRowMajor());
  EXPECT_FALSE(Layout::ColumnMajor(2).IsRowMajor());
  EXPECT_TRUE(Layout::ColumnMajor(1).IsRowMajor());  // rank 1: the two agree
  EXPECT_TRUE(Layout().IsRowMajor());
  EXPECT_EQ(Layout::RowMajor(0).rank(), 0);
  EXPECT_EQ(Layout::RowMajor(2).ToString(), "{1,0}");
  EXPECT_EQ(Layout({0, 2, 1}).ToString(), "{0,2,1}");
  EXPECT_EQ(Layout().ToString(), "{}");
}

TEST(LayoutTest, ValidateAcceptsPermutations) {
  EXPECT_TRUE(Layout({1, 0, 2}).Validate(3).ok());
  EXPECT_TRUE(Layout::RowMajor(5).Validate(5).ok());
  EXPECT_TRUE(Layout().Validate(0).ok());
}

TEST(LayoutTest, ValidateRejectsNonPermutationsWithReasons) {
  absl::Status wrong_rank = Layout({1, 0}).Validate(3);
  EXPECT_EQ(wrong_rank.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong_rank.message().find("rank 3"), absl::string_view::npos) << wrong_rank;

  absl::Status duplicate = Layout({0, 0}).Validate(2);
  EXPECT_FALSE(duplicate.ok());
  EXPECT_NE(duplicate.message().find("appears twice"), absl::string_view::npos) << duplicate;

  absl::Status out_of_range = Layout({2, 0}).Validate(2);
  EXPECT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.message().find("outside [0, 2)"), absl::string_view::npos) << out_of_range;

  EXPECT_FALSE(Layout({-1, 0}).Validate(2).ok());
}

TEST(LayoutTest, Equality) {
  EXPECT_EQ(Layout({1, 0}), Layout::RowMajor(2));
  EXPECT_FALSE(Layout({0, 1}) == Layout::RowMajor(2));
}

}  // namespace
}  // namespace ember::ir
