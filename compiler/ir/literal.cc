#include "compiler/ir/literal.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <complex>
#include <type_traits>
#include <utility>

#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "compiler/ir/byte_strides.h"

namespace ember::ir {
namespace {

// Element strides (not bytes) of the dense layout, per dimension.
std::vector<int64_t> ElementStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank(), 0);
  int64_t stride = 1;
  for (int64_t d : shape.layout().minor_to_major()) {
    strides[d] = stride;
    stride *= std::max<int64_t>(shape.dim(d), 1);
  }
  return strides;
}

template <typename F>
void AppendFloat(std::string* out, F value) {
  char buffer[64];
  std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, result.ptr);
}

// The shortest decimal that converts back to the same narrow bits ("0.1" for bf16 0x3DCD, not
// the float value's "0.100097656"), as numpy prints ml_dtypes scalars; the exact value when
// that is no longer ("448", not "4.5e+02").
template <typename N>
void AppendNarrowFloat(std::string* out, N value) {
  const float f = value.ToFloat();
  char exact[64];
  const char* exact_end = std::to_chars(exact, exact + sizeof(exact), f).ptr;
  if (std::isfinite(f)) {
    char buffer[64];
    for (int precision = 1; precision < exact_end - exact; ++precision) {
      const char* end =
          std::to_chars(buffer, buffer + sizeof(buffer), f, std::chars_format::general, precision)
              .ptr;
      if (end - buffer >= exact_end - exact) break;
      double parsed = 0;
      std::from_chars(buffer, end, parsed);
      if (N::FromDouble(parsed) == value) {
        out->append(buffer, static_cast<size_t>(end - buffer));
        return;
      }
    }
  }
  out->append(exact, static_cast<size_t>(exact_end - exact));
}

template <typename T>
void AppendValue(std::string* out, const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  if constexpr (std::is_same_v<T, bool>) {
    out->append(value ? "true" : "false");
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    absl::StrAppend(out, static_cast<int64_t>(value));
  } else if constexpr (std::is_integral_v<T>) {
    absl::StrAppend(out, static_cast<uint64_t>(value));
  } else if constexpr (std::is_floating_point_v<T>) {
    AppendFloat(out, value);
  } else if constexpr (std::is_same_v<T, std::complex<float>> ||
                       std::is_same_v<T, std::complex<double>>) {
    out->push_back('(');
    AppendFloat(out, value.real());
    out->append(", ");
    AppendFloat(out, value.imag());
    out->push_back(')');
  } else if constexpr (requires { value.value(); }) {  // SubByteInt
    absl::StrAppend(out, value.value());
  } else {  // NarrowFloat
    AppendNarrowFloat(out, value);
  }
}

}  // namespace

void Literal::Canonicalize(ElementType type, absl::Span<uint8_t> bytes) {
  if (type == ElementType::kPred) {
    for (uint8_t& b : bytes) b = b != 0 ? 1 : 0;
  } else if (IsSubByte(type)) {
    const uint8_t mask = static_cast<uint8_t>((1u << BitWidth(type)) - 1);
    for (uint8_t& b : bytes) b &= mask;
  }
}

absl::StatusOr<Literal> Literal::Create(const Shape& shape) {
  if (shape.element_type() == ElementType::kInvalid) {
    return absl::InvalidArgumentError("Literal::Create: shape has an invalid element type");
  }
  Literal literal;
  literal.shape_ = shape;
  const int64_t bytes = shape.ByteSize();
  if (bytes > 0) {
    MemoryAccount* account = MemoryAccount::Current();
    if (account != nullptr) {
      absl::Status charged = account->Charge(static_cast<uint64_t>(bytes));
      if (!charged.ok()) {
        return absl::Status(charged.code(), absl::StrCat(charged.message(), " (a value of ",
                                                         shape.ToString(), ")"));
      }
    }
    void* p =
        ::operator new[](static_cast<size_t>(bytes), std::align_val_t(kAlignment), std::nothrow);
    if (p == nullptr) {
      if (account != nullptr) account->Release(static_cast<uint64_t>(bytes));
      return absl::ResourceExhaustedError(absl::StrCat("Literal::Create: cannot allocate ", bytes,
                                                       " bytes for ", shape.ToString()));
    }
    literal.data_ = std::unique_ptr<uint8_t[], AlignedFree>(
        static_cast<uint8_t*>(p), AlignedFree{account, static_cast<uint64_t>(bytes)});
    std::memset(p, 0, static_cast<size_t>(bytes));
  }
  return literal;
}

absl::StatusOr<Literal> Literal::FromBytes(const Shape& shape, absl::Span<const uint8_t> bytes) {
  if (static_cast<int64_t>(bytes.size()) != shape.ByteSize()) {
    return absl::InvalidArgumentError(absl::StrCat("Literal::FromBytes: ", bytes.size(),
                                                   " bytes given for ", shape.ToString(),
                                                   ", which needs ", shape.ByteSize()));
  }
  EMBER_ASSIGN_OR_RETURN(Literal literal, Create(shape));
  if (!bytes.empty()) std::memcpy(literal.data_.get(), bytes.data(), bytes.size());
  Canonicalize(shape.element_type(), literal.mutable_bytes());
  return literal;
}

absl::StatusOr<Literal> Literal::FromStridedBytes(const Shape& shape, const void* data,
                                                  absl::Span<const int64_t> byte_strides,
                                                  uint64_t buffer_size) {
  EMBER_RETURN_IF_ERROR(CheckByteStridesFit(shape, byte_strides, buffer_size));
  EMBER_ASSIGN_OR_RETURN(Literal literal, Create(shape));
  std::vector<int64_t> dense = ByteStridesForLayout(shape);
  EMBER_RETURN_IF_ERROR(CopyStrided(data, byte_strides, literal.data_.get(), dense, shape.dims(),
                                    StorageBytes(shape.element_type())));
  Canonicalize(shape.element_type(), literal.mutable_bytes());
  return literal;
}

absl::StatusOr<Literal> Literal::Clone() const {
  if (shape_.element_type() == ElementType::kInvalid) return Literal();
  EMBER_ASSIGN_OR_RETURN(Literal copy, Create(shape_));
  if (size_bytes() > 0) std::memcpy(copy.data_.get(), data_.get(), size_bytes());
  return copy;
}

absl::StatusOr<int64_t> Literal::LinearIndex(absl::Span<const int64_t> index) const {
  if (static_cast<int64_t>(index.size()) != shape_.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("index [", absl::StrJoin(index, ","), "] has ",
                                                   index.size(), " entries but literal ",
                                                   shape_.ToString(), " has rank ", shape_.rank()));
  }
  for (int64_t d = 0; d < shape_.rank(); ++d) {
    if (index[d] < 0 || index[d] >= shape_.dim(d)) {
      return absl::OutOfRangeError(absl::StrCat("index [", absl::StrJoin(index, ","),
                                                "] is out of bounds in dimension ", d, " of ",
                                                shape_.ToString()));
    }
  }
  // Walk the layout minor to major; no allocation, since Get/Set call this per element.
  int64_t linear = 0;
  int64_t stride = 1;
  for (int64_t d : shape_.layout().minor_to_major()) {
    linear += index[d] * stride;
    stride *= shape_.dim(d);
  }
  return linear;
}

absl::StatusOr<Literal> Literal::Relayout(const Layout& layout) const {
  EMBER_ASSIGN_OR_RETURN(Shape target, shape_.WithLayout(layout));
  EMBER_ASSIGN_OR_RETURN(Literal result, Create(target));
  EMBER_RETURN_IF_ERROR(CopyStrided(data_.get(), ByteStridesForLayout(shape_), result.data_.get(),
                                    ByteStridesForLayout(target), shape_.dims(),
                                    StorageBytes(shape_.element_type())));
  return result;
}

absl::Status Literal::CopyToStrided(void* data, absl::Span<const int64_t> byte_strides,
                                    uint64_t buffer_size) const {
  EMBER_RETURN_IF_ERROR(CheckByteStridesFit(shape_, byte_strides, buffer_size));
  return CopyStrided(data_.get(), ByteStridesForLayout(shape_), data, byte_strides, shape_.dims(),
                     StorageBytes(shape_.element_type()));
}

std::string Literal::ToString() const {
  std::string out = shape_.ToString();
  const ElementType type = shape_.element_type();
  if (type == ElementType::kInvalid || type == ElementType::kToken) return out;
  out.push_back(' ');
  const std::vector<int64_t> strides = ElementStrides(shape_);
  const int64_t element_bytes = StorageBytes(type);
  VisitElementType(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_void_v<T>) {
      // Recursion depth is the rank; values come out in logical order.
      auto print = [&](auto& self, int64_t dim, int64_t offset) -> void {
        if (dim == shape_.rank()) {
          AppendValue<T>(&out, data_.get() + offset * element_bytes);
          return;
        }
        out.push_back('{');
        for (int64_t i = 0; i < shape_.dim(dim); ++i) {
          if (i > 0) out.append(", ");
          self(self, dim + 1, offset + i * strides[dim]);
        }
        out.push_back('}');
      };
      print(print, 0, 0);
    }
  });
  return out;
}

bool operator==(const Literal& a, const Literal& b) {
  if (!(a.shape_ == b.shape_)) return false;
  const int64_t n = a.size_bytes();
  return n == 0 || std::memcmp(a.data_.get(), b.data_.get(), static_cast<size_t>(n)) == 0;
}

}  // namespace ember::ir
