// NamedValueList (attributes out) and ReadNamedValues (options in).
#include "pjrt_plugin/named_values.h"

#include "gtest/gtest.h"

namespace ember::pjrt {
namespace {

TEST(NamedValuesTest, ListKeepsStableStorage) {
  NamedValueList list;
  list.AddString("s", "text");
  list.AddInt64List("l", {1, 2, 3});
  for (int i = 0; i < 50; ++i) list.AddInt64("i" + std::to_string(i), i);
  ASSERT_EQ(list.size(), 52u);
  const PJRT_NamedValue& s = list.data()[0];
  EXPECT_EQ(std::string(s.name, s.name_size), "s");
  EXPECT_EQ(std::string(s.string_value, s.value_size), "text");
  const PJRT_NamedValue& l = list.data()[1];
  ASSERT_EQ(l.value_size, 3u);
  EXPECT_EQ(l.int64_array_value[2], 3);
  EXPECT_EQ(list.data()[51].int64_value, 49);
}

TEST(NamedValuesTest, ReadsEveryTypeAndRejectsBadInput) {
  NamedValueList list;
  list.AddString("a", "x");
  list.AddInt64("b", -5);
  list.AddInt64List("c", {4, 5});
  list.AddFloat("d", 0.5f);
  list.AddBool("e", true);
  auto values = ReadNamedValues(list.data(), list.size());
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(std::get<std::string>(values->at("a")), "x");
  EXPECT_EQ(std::get<int64_t>(values->at("b")), -5);
  EXPECT_EQ(std::get<std::vector<int64_t>>(values->at("c")), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(std::get<float>(values->at("d")), 0.5f);
  EXPECT_TRUE(std::get<bool>(values->at("e")));

  EXPECT_FALSE(ReadNamedValues(nullptr, 2).ok());
  PJRT_NamedValue bad = list.data()[1];
  bad.type = static_cast<PJRT_NamedValue_Type>(42);
  EXPECT_FALSE(ReadNamedValues(&bad, 1).ok());
  PJRT_NamedValue twice[2] = {list.data()[1], list.data()[1]};
  auto dup = ReadNamedValues(twice, 2);
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.status().message().find("'b' is given twice"), std::string::npos);
}

}  // namespace
}  // namespace ember::pjrt
