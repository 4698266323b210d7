// PJRT_Buffer_Type <-> ir::ElementType.
#include "pjrt_plugin/element_types.h"

#include "gtest/gtest.h"

namespace ember::pjrt {
namespace {

TEST(ElementTypesTest, EveryArrayTypeRoundTrips) {
  int mapped = 0;
  for (int t = 0; t <= PJRT_Buffer_Type_F6E3M2FN; ++t) {
    auto type = static_cast<PJRT_Buffer_Type>(t);
    auto ir = FromPjrtBufferType(type);
    if (type == PJRT_Buffer_Type_INVALID || type == PJRT_Buffer_Type_TOKEN) {
      EXPECT_FALSE(ir.ok()) << t;
      continue;
    }
    ASSERT_TRUE(ir.ok()) << t << ": " << ir.status();
    EXPECT_EQ(ToPjrtBufferType(*ir), type);
    ++mapped;
  }
  EXPECT_EQ(mapped, 32);
  EXPECT_FALSE(FromPjrtBufferType(static_cast<PJRT_Buffer_Type>(99)).ok());
  EXPECT_EQ(ToPjrtBufferType(ir::ElementType::kF32), PJRT_Buffer_Type_F32);
  // Token results (ordered effects) are reported as TOKEN buffers; nothing uploads one.
  EXPECT_EQ(ToPjrtBufferType(ir::ElementType::kToken), PJRT_Buffer_Type_TOKEN);
  EXPECT_FALSE(FromPjrtBufferType(PJRT_Buffer_Type_TOKEN).ok());
  EXPECT_EQ(ToPjrtBufferType(ir::ElementType::kInvalid), PJRT_Buffer_Type_INVALID);
}

}  // namespace
}  // namespace ember::pjrt
