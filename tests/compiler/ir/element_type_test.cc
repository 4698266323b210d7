// Element type table: names, proto numbers, sizes, predicates, native C++ types.
#include "compiler/ir/element_type.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <type_traits>

#include "compiler/ir/native_types.h"

namespace ember::ir {
namespace {

TEST(ElementTypeTest, AllTypesListsEveryEnumeratorButInvalid) {
  auto all = AllElementTypes();
  EXPECT_EQ(all.size(), 33u);
  EXPECT_EQ(all.front(), ElementType::kPred);
  EXPECT_EQ(all.back(), ElementType::kToken);
  std::set<ElementType> unique(all.begin(), all.end());
  EXPECT_EQ(unique.size(), all.size());
  EXPECT_EQ(unique.count(ElementType::kInvalid), 0u);
}

TEST(ElementTypeTest, NamesRoundTripForEveryType) {
  std::set<std::string_view> names;
  std::set<std::string_view> xla_names;
  for (ElementType type : AllElementTypes()) {
    std::string_view name = ElementTypeName(type);
    names.insert(name);
    xla_names.insert(ElementTypeXlaName(type));
    absl::StatusOr<ElementType> back = ElementTypeFromName(name);
    ASSERT_TRUE(back.ok()) << name << ": " << back.status();
    EXPECT_EQ(*back, type) << name;
  }
  EXPECT_EQ(names.size(), AllElementTypes().size()) << "names must be unique";
  EXPECT_EQ(xla_names.size(), AllElementTypes().size()) << "XLA names must be unique";
}

TEST(ElementTypeTest, StableHloSpellings) {
  EXPECT_EQ(ElementTypeName(ElementType::kPred), "i1");
  EXPECT_EQ(ElementTypeName(ElementType::kS1), "si1");
  EXPECT_EQ(ElementTypeName(ElementType::kS4), "i4");
  EXPECT_EQ(ElementTypeName(ElementType::kS32), "i32");
  EXPECT_EQ(ElementTypeName(ElementType::kU8), "ui8");
  EXPECT_EQ(ElementTypeName(ElementType::kU1), "ui1");
  EXPECT_EQ(ElementTypeName(ElementType::kF32), "f32");
  EXPECT_EQ(ElementTypeName(ElementType::kBF16), "bf16");
  EXPECT_EQ(ElementTypeName(ElementType::kC64), "complex<f32>");
  EXPECT_EQ(ElementTypeName(ElementType::kC128), "complex<f64>");
  EXPECT_EQ(ElementTypeName(ElementType::kF8E4M3FN), "f8E4M3FN");
  EXPECT_EQ(ElementTypeName(ElementType::kF8E4M3B11FNUZ), "f8E4M3B11FNUZ");
  EXPECT_EQ(ElementTypeName(ElementType::kF8E8M0FNU), "f8E8M0FNU");
  EXPECT_EQ(ElementTypeName(ElementType::kF4E2M1FN), "f4E2M1FN");
  EXPECT_EQ(ElementTypeName(ElementType::kF6E2M3FN), "f6E2M3FN");
  EXPECT_EQ(ElementTypeName(ElementType::kF6E3M2FN), "f6E3M2FN");
  EXPECT_EQ(ElementTypeName(ElementType::kToken), "token");
  EXPECT_EQ(ElementTypeXlaName(ElementType::kPred), "pred");
  EXPECT_EQ(ElementTypeXlaName(ElementType::kS32), "s32");
  EXPECT_EQ(ElementTypeXlaName(ElementType::kC64), "c64");
  EXPECT_EQ(ElementTypeXlaName(ElementType::kF8E5M2FNUZ), "f8e5m2fnuz");
}

TEST(ElementTypeTest, UnknownNamesAreRejectedWithTheName) {
  for (const char* bad : {"", "float", "f128", "I32", "invalid", "complex<f16>", "si8"}) {
    absl::StatusOr<ElementType> result = ElementTypeFromName(bad);
    ASSERT_FALSE(result.ok()) << bad;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find(std::string("\"") + bad + "\""),
              absl::string_view::npos)
        << result.status();
  }
}

// Numbers from openxla/xla xla/xla_data.proto (PrimitiveType).
TEST(ElementTypeTest, PrimitiveTypeNumbersMatchXlaDataProto) {
  const std::pair<ElementType, int32_t> expected[] = {
      {ElementType::kInvalid, 0},     {ElementType::kPred, 1},
      {ElementType::kS8, 2},          {ElementType::kS16, 3},
      {ElementType::kS32, 4},         {ElementType::kS64, 5},
      {ElementType::kU8, 6},          {ElementType::kU16, 7},
      {ElementType::kU32, 8},         {ElementType::kU64, 9},
      {ElementType::kF16, 10},        {ElementType::kF32, 11},
      {ElementType::kF64, 12},        {ElementType::kC64, 15},
      {ElementType::kBF16, 16},       {ElementType::kToken, 17},
      {ElementType::kC128, 18},       {ElementType::kF8E5M2, 19},
      {ElementType::kF8E4M3FN, 20},   {ElementType::kS4, 21},
      {ElementType::kU4, 22},         {ElementType::kF8E4M3B11FNUZ, 23},
      {ElementType::kF8E5M2FNUZ, 24}, {ElementType::kF8E4M3FNUZ, 25},
      {ElementType::kS2, 26},         {ElementType::kU2, 27},
      {ElementType::kF8E4M3, 28},     {ElementType::kF8E3M4, 29},
      {ElementType::kS1, 30},         {ElementType::kU1, 31},
      {ElementType::kF4E2M1FN, 32},   {ElementType::kF8E8M0FNU, 33},
      {ElementType::kF6E3M2FN, 35},   {ElementType::kF6E2M3FN, 36},
  };
  EXPECT_EQ(std::size(expected), AllElementTypes().size() + 1);
  for (const auto& [type, number] : expected) {
    EXPECT_EQ(ElementTypeToPrimitiveType(type), number) << ElementTypeName(type);
  }
}

TEST(ElementTypeTest, PrimitiveTypeNumbersRoundTrip) {
  std::set<int32_t> numbers;
  for (ElementType type : AllElementTypes()) {
    int32_t number = ElementTypeToPrimitiveType(type);
    numbers.insert(number);
    absl::StatusOr<ElementType> back = ElementTypeFromPrimitiveType(number);
    ASSERT_TRUE(back.ok()) << number << ": " << back.status();
    EXPECT_EQ(*back, type);
  }
  EXPECT_EQ(numbers.size(), AllElementTypes().size());
}

TEST(ElementTypeTest, NonElementPrimitiveTypesAreRejected) {
  for (int32_t number : {0, 13, 14, 34, 37, -1, 1000}) {
    absl::StatusOr<ElementType> result = ElementTypeFromPrimitiveType(number);
    ASSERT_FALSE(result.ok()) << number;
    EXPECT_NE(result.status().message().find(std::to_string(number)), absl::string_view::npos)
        << result.status();
  }
  EXPECT_NE(ElementTypeFromPrimitiveType(13).status().message().find("TUPLE"),
            absl::string_view::npos);
}

TEST(ElementTypeTest, BitWidthsAndStorageBytes) {
  struct Case {
    ElementType type;
    int bits;
    int bytes;
  };
  const Case cases[] = {
      {ElementType::kPred, 1, 1},     {ElementType::kS1, 1, 1},
      {ElementType::kS2, 2, 1},       {ElementType::kS4, 4, 1},
      {ElementType::kU4, 4, 1},       {ElementType::kS8, 8, 1},
      {ElementType::kS16, 16, 2},     {ElementType::kU32, 32, 4},
      {ElementType::kS64, 64, 8},     {ElementType::kF16, 16, 2},
      {ElementType::kBF16, 16, 2},    {ElementType::kF32, 32, 4},
      {ElementType::kF64, 64, 8},     {ElementType::kC64, 64, 8},
      {ElementType::kC128, 128, 16},  {ElementType::kF4E2M1FN, 4, 1},
      {ElementType::kF6E2M3FN, 6, 1}, {ElementType::kF6E3M2FN, 6, 1},
      {ElementType::kF8E4M3FN, 8, 1}, {ElementType::kF8E8M0FNU, 8, 1},
      {ElementType::kToken, 0, 0},    {ElementType::kInvalid, 0, 0},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(BitWidth(c.type), c.bits) << ElementTypeName(c.type);
    EXPECT_EQ(StorageBytes(c.type), c.bytes) << ElementTypeName(c.type);
  }
  for (ElementType type : AllElementTypes()) {
    EXPECT_EQ(IsSubByte(type), BitWidth(type) > 0 && BitWidth(type) < 8);
    if (BitWidth(type) >= 8) {
      EXPECT_EQ(StorageBytes(type) * 8, BitWidth(type));
    }
  }
}

TEST(ElementTypeTest, KindPredicates) {
  int integers = 0, floats = 0, complexes = 0;
  for (ElementType type : AllElementTypes()) {
    EXPECT_EQ(IsInteger(type), IsSignedInteger(type) || IsUnsignedInteger(type));
    EXPECT_FALSE(IsSignedInteger(type) && IsUnsignedInteger(type));
    EXPECT_LE(int{IsInteger(type)} + int{IsFloat(type)} + int{IsComplex(type)}, 1);
    integers += IsInteger(type);
    floats += IsFloat(type);
    complexes += IsComplex(type);
  }
  EXPECT_EQ(integers, 14);
  EXPECT_EQ(floats, 15);
  EXPECT_EQ(complexes, 2);
  EXPECT_FALSE(IsInteger(ElementType::kPred));
  EXPECT_TRUE(IsSignedInteger(ElementType::kS1));
  EXPECT_TRUE(IsUnsignedInteger(ElementType::kU2));
  EXPECT_TRUE(IsFloat(ElementType::kF8E8M0FNU));
  EXPECT_TRUE(IsFloat(ElementType::kBF16));
  EXPECT_FALSE(IsFloat(ElementType::kC64));
  EXPECT_TRUE(IsSubByte(ElementType::kPred));
  EXPECT_TRUE(IsSubByte(ElementType::kF6E3M2FN));
  EXPECT_FALSE(IsSubByte(ElementType::kF8E5M2));
  EXPECT_FALSE(IsSubByte(ElementType::kToken));
}

TEST(NativeTypesTest, EveryValueTypeHasANativeTypeOfItsStorageSize) {
  for (ElementType type : AllElementTypes()) {
    int size = VisitElementType(type, [](auto tag) -> int {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_void_v<T>) {
        return 0;
      } else {
        return static_cast<int>(sizeof(T));
      }
    });
    EXPECT_EQ(size, StorageBytes(type)) << ElementTypeName(type);
    bool maps_back = VisitElementType(type, [type](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_void_v<T>) {
        return type == ElementType::kToken;
      } else {
        return kElementTypeOf<T> == type && IsNativeTypeOf<T>(type);
      }
    });
    EXPECT_TRUE(maps_back) << ElementTypeName(type);
  }
  static_assert(std::is_same_v<NativeType<ElementType::kF32>, float>);
  static_assert(kElementTypeOf<const int64_t> == ElementType::kS64);
  static_assert(std::is_trivially_copyable_v<BF16> && sizeof(BF16) == 2);
  static_assert(std::is_trivially_copyable_v<S4> && sizeof(S4) == 1);
}

TEST(NativeTypesTest, SubByteIntegersWrapAndSignExtend) {
  EXPECT_EQ(S4::FromValue(-1).bits, 0x0F);  // ml_dtypes' int4 byte for -1
  EXPECT_EQ(S4::FromValue(-1).value(), -1);
  EXPECT_EQ(S4::FromValue(7).value(), 7);
  EXPECT_EQ(S4::FromValue(8).value(), -8);  // wraps modulo 16
  EXPECT_EQ(S4::FromValue(-9).value(), 7);
  EXPECT_EQ(U4::FromValue(15).value(), 15);
  EXPECT_EQ(U4::FromValue(16).value(), 0);
  EXPECT_EQ(S2::FromValue(-2).value(), -2);
  EXPECT_EQ(S2::FromValue(2).value(), -2);
  EXPECT_EQ(S1::FromValue(1).value(), -1);
  EXPECT_EQ(U1::FromValue(3).value(), 1);
  EXPECT_EQ(U2::FromValue(-1).value(), 3);
  EXPECT_EQ(S4::kMin, -8);
  EXPECT_EQ(S4::kMax, 7);
  EXPECT_EQ(U2::kMax, 3);
  for (int v = S4::kMin; v <= S4::kMax; ++v) EXPECT_EQ(S4::FromValue(v).value(), v);
}

}  // namespace
}  // namespace ember::ir
