#include "compiler/ir/shape.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace ember::ir {
namespace {

// absl::string_view is not std::string_view in the Abseil we build against.
absl::string_view XlaName(ElementType type) {
  std::string_view name = ElementTypeXlaName(type);
  return absl::string_view(name.data(), name.size());
}

std::string DimsString(absl::Span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ",";
    if (dims[i] == kDynamicDim) {
      s += "?";
    } else {
      absl::StrAppend(&s, dims[i]);
    }
  }
  return s + "]";
}

}  // namespace

absl::StatusOr<int64_t> CheckedElementCount(absl::Span<const int64_t> dims) {
  int64_t count = 1;
  bool overflow = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("dimension ", i, " of ", DimsString(dims), " is negative (", dims[i], ")"));
    }
    // Keep scanning after an overflow: a later 0 makes the count 0, a later negative dim is
    // still the error to report.
    if (!overflow && __builtin_mul_overflow(count, dims[i], &count)) overflow = true;
  }
  for (int64_t d : dims) {
    if (d == 0) return 0;
  }
  if (overflow) {
    return absl::InvalidArgumentError(absl::StrCat(
        "array dims ", DimsString(dims), " have more than 2^63-1 elements (int64 overflow)"));
  }
  return count;
}

absl::StatusOr<int64_t> CheckedByteSize(ElementType type, absl::Span<const int64_t> dims) {
  EMBER_ASSIGN_OR_RETURN(int64_t count, CheckedElementCount(dims));
  int64_t bytes;
  if (__builtin_mul_overflow(count, static_cast<int64_t>(StorageBytes(type)), &bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("array ", XlaName(type), DimsString(dims),
                                                   " has ", count,
                                                   " elements: byte size overflows int64"));
  }
  return bytes;
}

absl::StatusOr<Shape> Shape::Make(ElementType type, absl::Span<const int64_t> dims) {
  return MakeWithLayout(type, dims,
                        Layout::RowMajor(static_cast<int64_t>(dims.size())).minor_to_major());
}

absl::StatusOr<Shape> Shape::MakeWithLayout(ElementType type, absl::Span<const int64_t> dims,
                                            absl::Span<const int64_t> minor_to_major) {
  if (type == ElementType::kInvalid) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape ", DimsString(dims), ": element type is invalid"));
  }
  if (type == ElementType::kToken && !dims.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("token shape must have no dims, got ", DimsString(dims)));
  }
  // CheckedByteSize also checks the element count; its messages name the dims.
  EMBER_RETURN_IF_ERROR(CheckedByteSize(type, dims).status());
  EMBER_ASSIGN_OR_RETURN(int64_t count, CheckedElementCount(dims));
  Layout layout(std::vector<int64_t>(minor_to_major.begin(), minor_to_major.end()));
  absl::Status layout_ok = layout.Validate(static_cast<int64_t>(dims.size()));
  if (!layout_ok.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape ", XlaName(type), DimsString(dims), ": ", layout_ok.message()));
  }
  return Shape(type, std::vector<int64_t>(dims.begin(), dims.end()), std::move(layout), count);
}

absl::StatusOr<Shape> Shape::MakeDynamic(ElementType type, absl::Span<const int64_t> dims) {
  std::vector<int64_t> bounded(dims.begin(), dims.end());
  bool dynamic = false;
  for (int64_t& d : bounded) {
    if (d == kDynamicDim) {
      dynamic = true;
      d = 0;
    }
  }
  if (!dynamic) return Make(type, dims);
  // Checks everything but the dynamic dims (taken as 0 here).
  EMBER_ASSIGN_OR_RETURN(Shape checked, Make(type, bounded));
  return Shape(type, std::vector<int64_t>(dims.begin(), dims.end()), checked.layout(), 0);
}

absl::StatusOr<Shape> Shape::MakeBounded(ElementType type, absl::Span<const int64_t> dims,
                                         absl::Span<const int64_t> bounds) {
  EMBER_ASSIGN_OR_RETURN(Shape shape, MakeDynamic(type, dims));
  if (bounds.empty()) return shape;
  if (bounds.size() != dims.size()) {
    return absl::InvalidArgumentError(absl::StrCat("shape ", DimsString(dims), " has ",
                                                   bounds.size(), " bounds for ", dims.size(),
                                                   " dimensions"));
  }
  bool any = false;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (bounds[i] == kDynamicDim) continue;
    if (dims[i] != kDynamicDim) {
      return absl::InvalidArgumentError(absl::StrCat("shape ", DimsString(dims), ": static dimension ",
                                                     i, " cannot have a bound"));
    }
    if (bounds[i] < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", DimsString(dims), ": dimension ", i, " has bound ", bounds[i]));
    }
    any = true;
  }
  if (any) shape.bounds_ = std::make_shared<const std::vector<int64_t>>(bounds.begin(), bounds.end());
  return shape;
}

bool Shape::is_static() const {
  for (int64_t d : dims_) {
    if (d == kDynamicDim) return false;
  }
  return true;
}

Shape Shape::Scalar(ElementType type) { return Shape(type, {}, Layout(), 1); }

absl::StatusOr<Shape> Shape::MakeQuantized(const QuantizedType& type,
                                           absl::Span<const int64_t> dims) {
  EMBER_RETURN_IF_ERROR(type.Validate());
  if (type.is_per_axis()) {
    const int64_t d = *type.quantized_dimension;
    if (d >= static_cast<int64_t>(dims.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "quantized type ", type.ToString(), ": quantized dimension ", d,
          " is out of range for shape ", DimsString(dims), " (C12)"));
    }
    if (static_cast<int64_t>(type.scales.size()) != dims[d]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "quantized type ", type.ToString(), " has ", type.scales.size(),
          " scales but dimension ", d, " of ", DimsString(dims), " has size ", dims[d], " (C13)"));
    }
  }
  EMBER_ASSIGN_OR_RETURN(Shape shape, Make(type.storage_type, dims));
  shape.quantized_ = std::make_shared<const QuantizedType>(type);
  return shape;
}

Shape Shape::StorageShape() const {
  Shape s = *this;
  s.quantized_.reset();
  return s;
}

absl::StatusOr<Shape> Shape::WithLayout(const Layout& layout) const {
  if (!is_static()) {
    return absl::InvalidArgumentError(
        absl::StrCat("shape ", ToString(), " has a dynamic dimension and cannot take a layout"));
  }
  EMBER_ASSIGN_OR_RETURN(Shape s, MakeWithLayout(element_type_, dims_, layout.minor_to_major()));
  s.quantized_ = quantized_;
  return s;
}

int64_t Shape::ByteSize() const {
  // Cannot overflow: Make checked it.
  return element_count_ * StorageBytes(element_type_);
}

std::string Shape::ToString() const {
  std::string dims = DimsString(dims_);
  if (bounds_ != nullptr) {
    dims = "[";
    for (size_t i = 0; i < dims_.size(); ++i) {
      if (i > 0) dims += ",";
      if ((*bounds_)[i] != kDynamicDim) {
        absl::StrAppend(&dims, "<=", (*bounds_)[i]);
      } else if (dims_[i] == kDynamicDim) {
        dims += "?";
      } else {
        absl::StrAppend(&dims, dims_[i]);
      }
    }
    dims += "]";
  }
  std::string s = quantized_ != nullptr ? absl::StrCat(quantized_->ToString(), dims)
                                        : absl::StrCat(XlaName(element_type_), dims);
  if (!dims_.empty()) absl::StrAppend(&s, layout_.ToString());
  return s;
}

}  // namespace ember::ir
