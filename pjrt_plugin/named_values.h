// PJRT_NamedValue arrays whose strings and lists live as long as the list: for plugin, device
// and topology attributes. Also the reader for the named values the framework passes in.
#ifndef EMBER_PJRT_PLUGIN_NAMED_VALUES_H_
#define EMBER_PJRT_PLUGIN_NAMED_VALUES_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "pjrt_plugin/include/pjrt_c_api.h"

namespace ember::pjrt {

class NamedValueList {
 public:
  NamedValueList() = default;
  NamedValueList(const NamedValueList&) = delete;
  NamedValueList& operator=(const NamedValueList&) = delete;

  void AddString(std::string name, std::string value);
  void AddInt64(std::string name, int64_t value);
  void AddInt64List(std::string name, std::vector<int64_t> value);
  void AddBool(std::string name, bool value);
  void AddFloat(std::string name, float value);

  const PJRT_NamedValue* data() const { return values_.data(); }
  size_t size() const { return values_.size(); }

 private:
  PJRT_NamedValue& Add(std::string name, PJRT_NamedValue_Type type);
  // Deques keep element addresses stable as entries are added.
  std::deque<std::string> strings_;
  std::deque<std::vector<int64_t>> lists_;
  std::vector<PJRT_NamedValue> values_;
};

using OptionValue = std::variant<std::string, int64_t, std::vector<int64_t>, float, bool>;

// Copies caller-owned named values into a map; errors on null pointers, unknown types, or
// duplicate names, naming the option.
absl::StatusOr<std::map<std::string, OptionValue>> ReadNamedValues(const PJRT_NamedValue* values,
                                                                   size_t count);

}  // namespace ember::pjrt

#endif  // EMBER_PJRT_PLUGIN_NAMED_VALUES_H_
