// FileKeyValueStore (tests only): a KeyValueStore in a directory that several processes share,
// standing in for the job's coordination service when a test forks peers. A key is a file
// (its name hex-encoded); Set writes a temporary file and renames it into place, so a reader
// sees either nothing or the whole value; Get polls until the file appears or the time is up.
#ifndef EMBER_TESTS_COLLECTIVES_FILE_KEY_VALUE_STORE_H_
#define EMBER_TESTS_COLLECTIVES_FILE_KEY_VALUE_STORE_H_

#include <string>
#include <string_view>

#include "collectives/key_value_store.h"

namespace ember::collectives {

class FileKeyValueStore final : public KeyValueStore {
 public:
  explicit FileKeyValueStore(std::string directory) : directory_(std::move(directory)) {}

  absl::Status Set(std::string_view key, std::string_view value) override;
  absl::StatusOr<std::string> Get(std::string_view key, absl::Duration timeout) override;

 private:
  std::string PathOf(std::string_view key) const;

  const std::string directory_;
};

}  // namespace ember::collectives

#endif  // EMBER_TESTS_COLLECTIVES_FILE_KEY_VALUE_STORE_H_
