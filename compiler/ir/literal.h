// A typed host array: a Shape plus owned, 64-byte-aligned, dense storage in the shape's layout.
// Literals hold constants in the IR, the evaluator's values, and host copies of buffers.
// Storage is canonical: pred bytes are 0 or 1 and sub-byte types keep their high bits zero, so
// equal values have equal bytes.
#ifndef EMBER_COMPILER_IR_LITERAL_H_
#define EMBER_COMPILER_IR_LITERAL_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/memory_account.h"
#include "compiler/ir/element_type.h"
#include "compiler/ir/layout.h"
#include "compiler/ir/native_types.h"
#include "compiler/ir/shape.h"

namespace ember::ir {

class Literal {
 public:
  static constexpr size_t kAlignment = 64;

  Literal() = default;  // invalid shape, no storage
  Literal(Literal&&) noexcept = default;
  Literal& operator=(Literal&&) noexcept = default;
  // Copying allocates and can fail, so it is explicit: Clone().
  Literal(const Literal&) = delete;
  Literal& operator=(const Literal&) = delete;

  // Zero-filled (all bits 0: +0.0 for floats except f8E8M0FNU, where it is 2^-127). The bytes
  // are charged to the thread's current MemoryAccount, if any, until the storage is freed; past
  // its limit Create fails with ResourceExhausted.
  static absl::StatusOr<Literal> Create(const Shape& shape);
  // `bytes` is the dense array in the shape's layout; its size must be shape.ByteSize().
  // Pred bytes are normalized to 0/1 and sub-byte elements masked to their low bits.
  static absl::StatusOr<Literal> FromBytes(const Shape& shape, absl::Span<const uint8_t> bytes);
  // Gathers a strided host buffer (PJRT byte_strides, dimension order) of buffer_size bytes.
  static absl::StatusOr<Literal> FromStridedBytes(const Shape& shape, const void* data,
                                                  absl::Span<const int64_t> byte_strides,
                                                  uint64_t buffer_size);
  // A row-major literal of T's element type (see native_types.h) from values listed in
  // row-major order; values.size() must equal the element count of dims.
  template <typename T>
  static absl::StatusOr<Literal> FromValues(absl::Span<const int64_t> dims,
                                            absl::Span<const T> values);
  template <typename T>
  static absl::StatusOr<Literal> Scalar(T value) {
    return FromValues<T>({}, absl::Span<const T>(&value, 1));
  }

  absl::StatusOr<Literal> Clone() const;

  const Shape& shape() const { return shape_; }
  ElementType element_type() const { return shape_.element_type(); }
  int64_t size_bytes() const { return shape_.ByteSize(); }
  absl::Span<const uint8_t> bytes() const {
    return {data_.get(), static_cast<size_t>(size_bytes())};
  }
  absl::Span<uint8_t> mutable_bytes() { return {data_.get(), static_cast<size_t>(size_bytes())}; }

  // All elements in storage (layout) order. An error unless T is the native type of the
  // literal's element type. Writers through mutable_data keep storage canonical themselves
  // (S4::FromValue, NarrowFloat::FromDouble and friends do).
  template <typename T>
  absl::StatusOr<absl::Span<const T>> data() const;
  template <typename T>
  absl::StatusOr<absl::Span<T>> mutable_data();

  // Position in storage order of the element at a logical multi-index; errors name the index.
  absl::StatusOr<int64_t> LinearIndex(absl::Span<const int64_t> index) const;
  template <typename T>
  absl::StatusOr<T> Get(absl::Span<const int64_t> index) const;
  template <typename T>
  absl::Status Set(absl::Span<const int64_t> index, T value);

  // The same values in another dense layout.
  absl::StatusOr<Literal> Relayout(const Layout& layout) const;
  // Scatters into a strided host buffer (PJRT byte_strides, dimension order).
  absl::Status CopyToStrided(void* data, absl::Span<const int64_t> byte_strides,
                             uint64_t buffer_size) const;

  // "f32[2,2]{1,0} {{1, 2.5}, {-3, 4}}": values in logical (row-major index) order whatever
  // the layout; floats in the shortest form that reads back to the same bits ("0.1" for bf16).
  std::string ToString() const;

  // Same shape (layout included) and the same bytes: NaNs with equal bits are equal, and
  // +0 differs from -0. That is what tests of bit-exact results need.
  friend bool operator==(const Literal& a, const Literal& b);

 private:
  // Frees the storage and gives its bytes back to the account that Create charged (if any).
  struct AlignedFree {
    // Constructors, not member initializers: a nested class's initializers are unusable until
    // Literal is complete, and unique_ptr asks for the default constructor before that.
    AlignedFree() noexcept : account(nullptr), charged(0) {}
    AlignedFree(MemoryAccount* a, uint64_t bytes) noexcept : account(a), charged(bytes) {}
    MemoryAccount* account;
    uint64_t charged;
    void operator()(uint8_t* p) const {
      ::operator delete[](p, std::align_val_t(kAlignment));
      if (account != nullptr) account->Release(charged);
    }
  };

  template <typename T>
  absl::Status CheckType(const char* what) const;
  // Makes equal values have equal bytes: pred is 0/1, sub-byte elements keep only their low
  // bits.
  static void Canonicalize(ElementType type, absl::Span<uint8_t> bytes);

  Shape shape_;
  std::unique_ptr<uint8_t[], AlignedFree> data_;
};

// ---- Template definitions --------------------------------------------------------------------

template <typename T>
absl::Status Literal::CheckType(const char* what) const {
  if (!IsNativeTypeOf<T>(element_type())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Literal::", what, ": literal ", shape_.ToString(), " holds ",
        std::string(ElementTypeName(element_type())), " but the C++ type asked for stores ",
        std::string(ElementTypeName(kElementTypeOf<T>))));
  }
  return absl::OkStatus();
}

template <typename T>
absl::StatusOr<absl::Span<const T>> Literal::data() const {
  absl::Status ok = CheckType<T>("data");
  if (!ok.ok()) return ok;
  return absl::Span<const T>(reinterpret_cast<const T*>(data_.get()),
                             static_cast<size_t>(shape_.element_count()));
}

template <typename T>
absl::StatusOr<absl::Span<T>> Literal::mutable_data() {
  absl::Status ok = CheckType<T>("mutable_data");
  if (!ok.ok()) return ok;
  return absl::Span<T>(reinterpret_cast<T*>(data_.get()),
                       static_cast<size_t>(shape_.element_count()));
}

template <typename T>
absl::StatusOr<T> Literal::Get(absl::Span<const int64_t> index) const {
  absl::Status ok = CheckType<T>("Get");
  if (!ok.ok()) return ok;
  absl::StatusOr<int64_t> linear = LinearIndex(index);
  if (!linear.ok()) return linear.status();
  T value;
  std::memcpy(&value, data_.get() + *linear * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return value;
}

template <typename T>
absl::Status Literal::Set(absl::Span<const int64_t> index, T value) {
  absl::Status ok = CheckType<T>("Set");
  if (!ok.ok()) return ok;
  absl::StatusOr<int64_t> linear = LinearIndex(index);
  if (!linear.ok()) return linear.status();
  uint8_t* element = data_.get() + *linear * static_cast<int64_t>(sizeof(T));
  std::memcpy(element, &value, sizeof(T));
  if constexpr (sizeof(T) == 1) Canonicalize(element_type(), absl::Span<uint8_t>(element, 1));
  return absl::OkStatus();
}

template <typename T>
absl::StatusOr<Literal> Literal::FromValues(absl::Span<const int64_t> dims,
                                            absl::Span<const T> values) {
  absl::StatusOr<Shape> shape = Shape::Make(kElementTypeOf<T>, dims);
  if (!shape.ok()) return shape.status();
  if (static_cast<int64_t>(values.size()) != shape->element_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Literal::FromValues: ", values.size(), " values given for ",
                     shape->ToString(), ", which has ", shape->element_count(), " elements"));
  }
  // Row-major shape, so storage order is the values' order; FromBytes canonicalizes.
  return FromBytes(*shape,
                   absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(values.data()),
                                             values.size() * sizeof(T)));
}

}  // namespace ember::ir

#endif  // EMBER_COMPILER_IR_LITERAL_H_
