// Literals: creation, canonical storage, typed access, layouts, strided transfers, printing.
#include "compiler/ir/literal.h"

#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "compiler/ir/byte_strides.h"

namespace ember::ir {
namespace {

std::vector<float> RandomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-50, 50);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(LiteralTest, CreateIsZeroFilledAndAligned) {
  Shape shape = *Shape::Make(ElementType::kF32, {3, 5});
  absl::StatusOr<Literal> literal = Literal::Create(shape);
  ASSERT_TRUE(literal.ok()) << literal.status();
  EXPECT_EQ(literal->shape(), shape);
  EXPECT_EQ(literal->size_bytes(), 60);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(literal->bytes().data()) % Literal::kAlignment, 0u);
  for (uint8_t b : literal->bytes()) EXPECT_EQ(b, 0);
  EXPECT_FALSE(Literal::Create(Shape()).ok());
  // Empty arrays and tokens have no storage but are valid.
  EXPECT_EQ(Literal::Create(*Shape::Make(ElementType::kF32, {0, 4}))->size_bytes(), 0);
  EXPECT_EQ(Literal::Create(Shape::Scalar(ElementType::kToken))->size_bytes(), 0);
}

TEST(LiteralTest, FromValuesAndTypedAccess) {
  std::vector<float> values = RandomFloats(6, 3);
  absl::StatusOr<Literal> literal = Literal::FromValues<float>({2, 3}, values);
  ASSERT_TRUE(literal.ok()) << literal.status();
  EXPECT_EQ(literal->shape().ToString(), "f32[2,3]{1,0}");
  absl::StatusOr<absl::Span<const float>> data = literal->data<float>();
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(std::vector<float>(data->begin(), data->end()), values);
  EXPECT_EQ(*literal->Get<float>({1, 2}), values[5]);
  EXPECT_EQ(*literal->Get<float>({0, 1}), values[1]);

  ASSERT_TRUE(literal->Set<float>({1, 0}, -7.5f).ok());
  EXPECT_EQ((*literal->data<float>())[3], -7.5f);
  absl::StatusOr<absl::Span<float>> mutable_data = literal->mutable_data<float>();
  ASSERT_TRUE(mutable_data.ok());
  (*mutable_data)[0] = 11.0f;
  EXPECT_EQ(*literal->Get<float>({0, 0}), 11.0f);

  absl::StatusOr<Literal> wrong_count = Literal::FromValues<float>({2, 2}, values);
  EXPECT_FALSE(wrong_count.ok());
  EXPECT_NE(wrong_count.status().message().find("6 values given for f32[2,2]{1,0}"),
            absl::string_view::npos)
      << wrong_count.status();
}

TEST(LiteralTest, TypedAccessChecksTheType) {
  Literal literal = *Literal::FromValues<int32_t>({3}, std::vector<int32_t>{4, -9, 27});
  absl::StatusOr<absl::Span<const float>> as_float = literal.data<float>();
  ASSERT_FALSE(as_float.ok());
  EXPECT_NE(as_float.status().message().find("holds i32"), absl::string_view::npos)
      << as_float.status();
  EXPECT_FALSE(literal.data<uint32_t>().ok());
  EXPECT_FALSE(literal.Get<int64_t>({0}).ok());
  EXPECT_FALSE(literal.Set<uint32_t>({0}, 1u).ok());
  EXPECT_EQ(*literal.Get<int32_t>({1}), -9);
  // Same storage size, different element type: still rejected.
  Literal bf16 = *Literal::Create(*Shape::Make(ElementType::kBF16, {2}));
  EXPECT_FALSE(bf16.data<F16>().ok());
  EXPECT_FALSE(bf16.data<uint16_t>().ok());
  EXPECT_TRUE(bf16.data<BF16>().ok());
}

TEST(LiteralTest, IndexErrorsNameTheIndex) {
  Literal literal = *Literal::Create(*Shape::Make(ElementType::kS8, {2, 3}));
  absl::StatusOr<int8_t> out = literal.Get<int8_t>({1, 3});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_NE(out.status().message().find("[1,3]"), absl::string_view::npos) << out.status();
  EXPECT_NE(out.status().message().find("dimension 1"), absl::string_view::npos);
  EXPECT_FALSE(literal.Get<int8_t>({-1, 0}).ok());
  absl::Status rank = literal.Set<int8_t>({1}, 5);
  EXPECT_NE(rank.message().find("rank 2"), absl::string_view::npos) << rank;
}

TEST(LiteralTest, FromBytesValidatesSize) {
  Shape shape = *Shape::Make(ElementType::kS16, {4});
  std::vector<uint8_t> bytes(7, 1);
  absl::StatusOr<Literal> short_input = Literal::FromBytes(shape, bytes);
  ASSERT_FALSE(short_input.ok());
  EXPECT_NE(short_input.status().message().find("7 bytes given for s16[4]{0}, which needs 8"),
            absl::string_view::npos)
      << short_input.status();
  bytes.push_back(2);
  absl::StatusOr<Literal> literal = Literal::FromBytes(shape, bytes);
  ASSERT_TRUE(literal.ok());
  EXPECT_EQ(*literal->Get<int16_t>({3}), 0x0201);
}

TEST(LiteralTest, FromBytesCanonicalizesPredAndSubByteTypes) {
  Literal pred = *Literal::FromBytes(*Shape::Make(ElementType::kPred, {4}),
                                     std::vector<uint8_t>{0, 1, 7, 255});
  EXPECT_EQ(std::vector<uint8_t>(pred.bytes().begin(), pred.bytes().end()),
            (std::vector<uint8_t>{0, 1, 1, 1}));
  EXPECT_EQ(*pred.Get<bool>({2}), true);

  // Sign-extended int4 bytes (0xFF) become ml_dtypes' form (0x0F); values are unchanged.
  Literal s4 = *Literal::FromBytes(*Shape::Make(ElementType::kS4, {3}),
                                   std::vector<uint8_t>{0xFF, 0x07, 0xF8});
  EXPECT_EQ(s4.bytes()[0], 0x0F);
  EXPECT_EQ(s4.Get<S4>({0})->value(), -1);
  EXPECT_EQ(s4.Get<S4>({1})->value(), 7);
  EXPECT_EQ(s4.Get<S4>({2})->value(), -8);
  // Set keeps storage canonical even for a wrapper built with stray high bits.
  ASSERT_TRUE(s4.Set<S4>({1}, S4{0xF9}).ok());
  EXPECT_EQ(s4.bytes()[1], 0x09);
  EXPECT_EQ(s4.Get<S4>({1})->value(), -7);
  Literal f4 =
      *Literal::FromBytes(*Shape::Make(ElementType::kF4E2M1FN, {1}), std::vector<uint8_t>{0xF7});
  EXPECT_EQ(f4.bytes()[0], 0x07);
  EXPECT_EQ(f4.Get<F4E2M1FN>({0})->ToFloat(), 6.0f);
}

TEST(LiteralTest, RelayoutKeepsLogicalValues) {
  std::vector<float> values = RandomFloats(24, 9);
  Literal row = *Literal::FromValues<float>({2, 3, 4}, values);
  absl::StatusOr<Literal> other = row.Relayout(Layout({1, 0, 2}));
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_EQ(other->shape().layout(), Layout({1, 0, 2}));
  EXPECT_FALSE(*other == row);  // different layout, so different literal
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      for (int64_t k = 0; k < 4; ++k) {
        EXPECT_EQ(*other->Get<float>({i, j, k}), values[(i * 3 + j) * 4 + k]);
      }
    }
  }
  // Storage order of {1,0,2}: dim 1 fastest, then dim 0, then dim 2.
  EXPECT_EQ((*other->data<float>())[1], values[1 * 4]);   // index (0,1,0)
  EXPECT_EQ((*other->data<float>())[3], values[1 * 12]);  // index (1,0,0)
  EXPECT_EQ((*other->data<float>())[6], values[1]);       // index (0,0,1)
  absl::StatusOr<Literal> back = other->Relayout(Layout::RowMajor(3));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(*back == row);
  EXPECT_FALSE(row.Relayout(Layout({0, 0, 1})).ok());
}

TEST(LiteralTest, StridedHostBuffersRoundTrip) {
  // A column-major f64 host buffer with padding between columns (leading dimension 5 for 3 rows).
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> dist(-1e3, 1e3);
  const int64_t rows = 3, cols = 4, ld = 5;
  std::vector<double> host(ld * cols);
  for (double& v : host) v = dist(rng);
  Shape shape = *Shape::Make(ElementType::kF64, {rows, cols});
  const std::vector<int64_t> strides = {8, ld * 8};
  absl::StatusOr<Literal> literal =
      Literal::FromStridedBytes(shape, host.data(), strides, host.size() * sizeof(double));
  ASSERT_TRUE(literal.ok()) << literal.status();
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) EXPECT_EQ(*literal->Get<double>({i, j}), host[j * ld + i]);
  }
  std::vector<double> out(ld * cols, -1);
  ASSERT_TRUE(literal->CopyToStrided(out.data(), strides, out.size() * sizeof(double)).ok());
  for (int64_t j = 0; j < cols; ++j) {
    for (int64_t i = 0; i < ld; ++i) EXPECT_EQ(out[j * ld + i], i < rows ? host[j * ld + i] : -1);
  }
  // Too small a buffer is refused before anything is read or written.
  EXPECT_FALSE(Literal::FromStridedBytes(shape, host.data(), strides, 100).ok());
  EXPECT_FALSE(literal->CopyToStrided(out.data(), strides, 100).ok());
  EXPECT_FALSE(literal->CopyToStrided(out.data(), {8}, out.size() * 8).ok());
}

TEST(LiteralTest, CloneAndEquality) {
  Literal a = *Literal::FromValues<int64_t>({2, 2}, std::vector<int64_t>{5, -6, 7, 1 << 30});
  Literal b = *a.Clone();
  EXPECT_TRUE(a == b);
  EXPECT_NE(a.bytes().data(), b.bytes().data());
  ASSERT_TRUE(b.Set<int64_t>({1, 1}, 8).ok());
  EXPECT_FALSE(a == b);
  // Equality is bitwise: -0 differs from +0, a NaN equals itself.
  Literal plus_zero = *Literal::Scalar(0.0f);
  Literal minus_zero = *Literal::Scalar(-0.0f);
  EXPECT_FALSE(plus_zero == minus_zero);
  Literal nan = *Literal::Scalar(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(nan == *nan.Clone());
  EXPECT_FALSE(*Literal::Scalar(1.0f) == *Literal::Scalar(1.0));
}

TEST(LiteralTest, ToStringPrintsValuesInLogicalOrder) {
  Literal f32 = *Literal::FromValues<float>({2, 2}, std::vector<float>{1, 2.5f, -3, 0.1f});
  EXPECT_EQ(f32.ToString(), "f32[2,2]{1,0} {{1, 2.5}, {-3, 0.1}}");
  EXPECT_EQ(f32.Relayout(Layout({0, 1}))->ToString(), "f32[2,2]{0,1} {{1, 2.5}, {-3, 0.1}}");
  EXPECT_EQ(Literal::Scalar(true)->ToString(), "pred[] true");
  EXPECT_EQ(Literal::Scalar<int8_t>(-5)->ToString(), "s8[] -5");
  EXPECT_EQ(Literal::Scalar<uint8_t>(200)->ToString(), "u8[] 200");
  EXPECT_EQ(Literal::Scalar(std::complex<float>(1.5f, -2))->ToString(), "c64[] (1.5, -2)");
  // Narrow floats print the shortest decimal that converts back to the same bits.
  EXPECT_EQ(Literal::Scalar(BF16::FromFloat(0.1f))->ToString(), "bf16[] 0.1");
  EXPECT_EQ(Literal::Scalar(BF16::FromBits(0x3DCE))->ToString(), "bf16[] 0.1006");
  EXPECT_EQ(Literal::Scalar(F16::FromFloat(-1.0f / 3))->ToString(), "f16[] -0.3333");
  EXPECT_EQ(Literal::Scalar(F8E4M3FN::FromBits(0x01))->ToString(), "f8e4m3fn[] 0.002");
  EXPECT_EQ(Literal::Scalar(F8E4M3FN::FromBits(0x7E))->ToString(), "f8e4m3fn[] 448");
  EXPECT_EQ(Literal::Scalar(F8E5M2::FromBits(0xFC))->ToString(), "f8e5m2[] -inf");
  EXPECT_EQ(Literal::Scalar(S4::FromValue(-3))->ToString(), "s4[] -3");
  EXPECT_EQ(Literal::FromValues<U2>(
                {3}, std::vector<U2>{U2::FromValue(0), U2::FromValue(3), U2::FromValue(1)})
                ->ToString(),
            "u2[3]{0} {0, 3, 1}");
  EXPECT_EQ(Literal::Create(*Shape::Make(ElementType::kF32, {2, 0}))->ToString(),
            "f32[2,0]{1,0} {{}, {}}");
  EXPECT_EQ(Literal::Create(Shape::Scalar(ElementType::kToken))->ToString(), "token[]");
  EXPECT_EQ(Literal::Scalar(1e-7)->ToString(), "f64[] 1e-07");
}

TEST(LiteralTest, NarrowFloatLiteralsHoldConvertedBits) {
  std::vector<float> values = RandomFloats(8, 17);
  std::vector<F8E4M3FN> narrow;
  for (float v : values) narrow.push_back(F8E4M3FN::FromFloat(v));
  Literal literal = *Literal::FromValues<F8E4M3FN>({8}, narrow);
  EXPECT_EQ(literal.size_bytes(), 8);
  for (int64_t i = 0; i < 8; ++i) {
    const float back = literal.Get<F8E4M3FN>({i})->ToFloat();
    // f8E4M3FN keeps 3 mantissa bits: relative error at most 2^-4 for normal values.
    EXPECT_NEAR(back, values[i], std::abs(values[i]) / 16 + 1e-6) << i;
    EXPECT_EQ(literal.bytes()[i], narrow[i].bits);
  }
}

// Counts like a device allocator's account, with a limit.
class CountingAccount final : public MemoryAccount {
 public:
  explicit CountingAccount(uint64_t limit) : limit_(limit) {}
  absl::Status Charge(uint64_t bytes) override {
    if (in_use_ + bytes > limit_) return absl::ResourceExhaustedError("over the test limit");
    in_use_ += bytes;
    return absl::OkStatus();
  }
  void Release(uint64_t bytes) override { in_use_ -= bytes; }
  uint64_t in_use() const { return in_use_; }

 private:
  uint64_t limit_;
  uint64_t in_use_ = 0;
};

TEST(LiteralTest, StorageIsChargedToTheCurrentAccountUntilFreed) {
  CountingAccount account(1000);
  const Shape f32x100 = Shape::Make(ElementType::kF32, {100}).value();
  Literal outside = Literal::Create(f32x100).value();  // no account current: not counted
  {
    ScopedMemoryAccount scope(&account);
    absl::StatusOr<Literal> a = Literal::Create(f32x100);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(account.in_use(), 400u);
    absl::StatusOr<Literal> b = a->Clone();
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(account.in_use(), 800u);
    absl::StatusOr<Literal> c = Literal::Create(f32x100);
    EXPECT_EQ(c.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_NE(c.status().message().find("f32[100]"), std::string::npos) << c.status();
    EXPECT_EQ(account.in_use(), 800u);
    Literal moved = *std::move(a);  // the charge moves with the storage
    EXPECT_EQ(account.in_use(), 800u);
  }
  // Everything was given back as it was freed.
  EXPECT_EQ(account.in_use(), 0u);
  EXPECT_EQ(MemoryAccount::Current(), nullptr);
}

}  // namespace
}  // namespace ember::ir
