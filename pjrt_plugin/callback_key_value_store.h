// The key-value store a framework hands to PJRT_Client_Create (JAX's distributed runtime: its
// coordination service), behind Ember's collectives::KeyValueStore. The callbacks and their
// user arguments stay valid while the client lives (the framework's promise).
#ifndef EMBER_PJRT_PLUGIN_CALLBACK_KEY_VALUE_STORE_H_
#define EMBER_PJRT_PLUGIN_CALLBACK_KEY_VALUE_STORE_H_

#include <string>
#include <string_view>

#include "collectives/key_value_store.h"
#include "pjrt_plugin/include/pjrt_c_api.h"

namespace ember::pjrt {

class CallbackKeyValueStore final : public collectives::KeyValueStore {
 public:
  CallbackKeyValueStore(PJRT_KeyValueGetCallback get, void* get_arg, PJRT_KeyValuePutCallback put,
                        void* put_arg)
      : get_(get), get_arg_(get_arg), put_(put), put_arg_(put_arg) {}

  absl::Status Set(std::string_view key, std::string_view value) override;
  absl::StatusOr<std::string> Get(std::string_view key, absl::Duration timeout) override;

 private:
  PJRT_KeyValueGetCallback get_;
  void* get_arg_;
  PJRT_KeyValuePutCallback put_;
  void* put_arg_;
};

}  // namespace ember::pjrt

#endif  // EMBER_PJRT_PLUGIN_CALLBACK_KEY_VALUE_STORE_H_
