#include "pjrt_plugin/named_values.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace ember::pjrt {

PJRT_NamedValue& NamedValueList::Add(std::string name, PJRT_NamedValue_Type type) {
  const std::string& stored = strings_.emplace_back(std::move(name));
  PJRT_NamedValue& value = values_.emplace_back();
  value.struct_size = PJRT_NamedValue_STRUCT_SIZE;
  value.extension_start = nullptr;
  value.name = stored.data();
  value.name_size = stored.size();
  value.type = type;
  value.value_size = 1;
  return value;
}

void NamedValueList::AddString(std::string name, std::string value) {
  PJRT_NamedValue& v = Add(std::move(name), PJRT_NamedValue_kString);
  const std::string& stored = strings_.emplace_back(std::move(value));
  v.string_value = stored.data();
  v.value_size = stored.size();
}

void NamedValueList::AddInt64(std::string name, int64_t value) {
  Add(std::move(name), PJRT_NamedValue_kInt64).int64_value = value;
}

void NamedValueList::AddInt64List(std::string name, std::vector<int64_t> value) {
  PJRT_NamedValue& v = Add(std::move(name), PJRT_NamedValue_kInt64List);
  const std::vector<int64_t>& stored = lists_.emplace_back(std::move(value));
  v.int64_array_value = stored.data();
  v.value_size = stored.size();
}

void NamedValueList::AddBool(std::string name, bool value) {
  Add(std::move(name), PJRT_NamedValue_kBool).bool_value = value;
}

void NamedValueList::AddFloat(std::string name, float value) {
  Add(std::move(name), PJRT_NamedValue_kFloat).float_value = value;
}

absl::StatusOr<std::map<std::string, OptionValue>> ReadNamedValues(const PJRT_NamedValue* values,
                                                                   size_t count) {
  std::map<std::string, OptionValue> result;
  if (count > 0 && values == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(count, " named values but the array is null"));
  }
  for (size_t i = 0; i < count; ++i) {
    const PJRT_NamedValue& v = values[i];
    if (v.name == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("named value ", i, " has a null name"));
    }
    std::string name(v.name, v.name_size);
    OptionValue value;
    int32_t type;  // raw: a caller may store any int in the enum field
    std::memcpy(&type, &v.type, sizeof(type));
    switch (type) {
      case PJRT_NamedValue_kString:
        if (v.string_value == nullptr && v.value_size != 0) {
          return absl::InvalidArgumentError(absl::StrCat("option '", name, "' has a null string"));
        }
        value = std::string(v.string_value ? v.string_value : "", v.value_size);
        break;
      case PJRT_NamedValue_kInt64:
        value = v.int64_value;
        break;
      case PJRT_NamedValue_kInt64List:
        if (v.int64_array_value == nullptr && v.value_size != 0) {
          return absl::InvalidArgumentError(absl::StrCat("option '", name, "' has a null list"));
        }
        value = std::vector<int64_t>(v.int64_array_value, v.int64_array_value + v.value_size);
        break;
      case PJRT_NamedValue_kFloat:
        value = v.float_value;
        break;
      case PJRT_NamedValue_kBool:
        value = v.bool_value;
        break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("option '", name, "' has unknown type ", type));
    }
    if (!result.emplace(name, std::move(value)).second) {
      return absl::InvalidArgumentError(absl::StrCat("option '", name, "' is given twice"));
    }
  }
  return result;
}

}  // namespace ember::pjrt
