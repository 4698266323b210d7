#include "compiler/ir/value_type.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ember::ir {

std::string ValueType::ToString() const {
  switch (kind_) {
    case Kind::kToken:
      return "!stablehlo.token";
    case Kind::kTuple: {
      std::vector<std::string> parts;
      for (const ValueType& e : elements_) parts.push_back(e.ToString());
      return absl::StrCat("tuple<", absl::StrJoin(parts, ", "), ">");
    }
    case Kind::kFuture: {
      std::vector<std::string> parts;
      for (const ValueType& e : elements_) parts.push_back(e.ToString());
      return absl::StrCat("!stablehlo.future<", absl::StrJoin(parts, ", "), ">");
    }
    case Kind::kTensor:
    case Kind::kBuffer:
      break;
  }
  std::string text = kind_ == Kind::kBuffer ? "memref<" : "tensor<";
  for (int64_t d : shape_.dims()) {
    if (d == kDynamicDim) {
      text += "?x";
    } else {
      absl::StrAppend(&text, d, "x");
    }
  }
  if (shape_.is_quantized()) {
    absl::StrAppend(&text, shape_.quantized()->ToString());
  } else {
    absl::StrAppend(&text, std::string(ElementTypeName(shape_.element_type())));
  }
  if (const std::vector<int64_t>* bounds = shape_.bounds()) {
    std::vector<std::string> parts;
    for (int64_t b : *bounds) parts.push_back(b == kDynamicDim ? "?" : absl::StrCat(b));
    absl::StrAppend(&text, ", #stablehlo.bounds<", absl::StrJoin(parts, ", "), ">");
  }
  return text + ">";
}

ValueType ValueType::StorageType() const {
  switch (kind_) {
    case Kind::kToken: return *this;
    case Kind::kTuple:
    case Kind::kFuture: {
      std::vector<ValueType> elements;
      for (const ValueType& e : elements_) elements.push_back(e.StorageType());
      return is_tuple() ? Tuple(std::move(elements)) : Future(std::move(elements));
    }
    case Kind::kTensor: break;
    case Kind::kBuffer: break;
  }
  if (!shape_.is_quantized()) return *this;
  return is_buffer() ? Buffer(shape_.StorageShape()) : Tensor(shape_.StorageShape());
}

bool ValueType::operator==(const ValueType& other) const {
  if (kind_ != other.kind_) return false;
  switch (kind_) {
    case Kind::kToken:
      return true;
    case Kind::kTuple:
    case Kind::kFuture:
      return elements_ == other.elements_;
    case Kind::kTensor:
    case Kind::kBuffer:
      return shape_.EqualsIgnoringLayout(other.shape_);
  }
  return false;
}

bool ValueType::is_static() const {
  switch (kind_) {
    case Kind::kToken:
      return true;
    case Kind::kTuple:
    case Kind::kFuture:
      for (const ValueType& e : elements_) {
        if (!e.is_static()) return false;
      }
      return true;
    case Kind::kTensor:
    case Kind::kBuffer:
      return shape_.is_static();
  }
  return true;
}

bool ValueType::IsCompatibleWith(const ValueType& other) const {
  if (kind_ != other.kind_) return false;
  switch (kind_) {
    case Kind::kToken:
      return true;
    case Kind::kTuple:
    case Kind::kFuture:
      if (elements_.size() != other.elements_.size()) return false;
      for (size_t i = 0; i < elements_.size(); ++i) {
        if (!elements_[i].IsCompatibleWith(other.elements_[i])) return false;
      }
      return true;
    case Kind::kTensor:
    case Kind::kBuffer:
      break;
  }
  if (element_type() != other.element_type() || dims().size() != other.dims().size()) {
    return false;
  }
  const std::vector<int64_t>* bounds = shape_.bounds();
  const std::vector<int64_t>* other_bounds = other.shape_.bounds();
  for (size_t i = 0; i < dims().size(); ++i) {
    const int64_t a = dims()[i], b = other.dims()[i];
    if (a != b && a != kDynamicDim && b != kDynamicDim) return false;
    // A bounded dynamic dim takes no size beyond its bound.
    if (bounds != nullptr && (*bounds)[i] != kDynamicDim && b != kDynamicDim && b > (*bounds)[i]) {
      return false;
    }
    if (other_bounds != nullptr && (*other_bounds)[i] != kDynamicDim && a != kDynamicDim &&
        a > (*other_bounds)[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace ember::ir
