// libember_tf_helper.so: creates TensorFlow's PJRT client for the EMBER device. TensorFlow 2.21
// declares TF_CreateAndSetPjRtCApiClient but ships no implementation of it; the two C++ functions
// it would call are exported by libtensorflow_cc.so.2, so this small library, compiled against
// the installed wheel's headers (and its Abseil), calls them. libpjrt_ember.so opens it from
// TFNPD_InitPluginInternalDeviceStates, i.e. only inside a TensorFlow process.
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "tensorflow/core/common_runtime/next_pluggable_device/c/plugin_c_api.h"
#include "xla/pjrt/pjrt_common.h"
#include "xla/tsl/framework/device_type.h"

// The wheel lacks the MLIR headers that xla/pjrt/pjrt_client.h and pjrt_c_api_client.h include,
// so the two functions are declared here with the signatures of those headers (their mangled
// names must match the exports of libtensorflow_cc.so.2, which the link checks).
namespace xla {
class KeyValueStoreInterface;
// Only ever destroyed through its virtual destructor (the first virtual member, as in XLA), and
// in practice never here: the client is handed over to TensorFlow.
class PjRtClient {
 public:
  virtual ~PjRtClient();
};
absl::StatusOr<std::unique_ptr<PjRtClient>> GetCApiClient(
    absl::string_view device_type,
    const absl::flat_hash_map<std::string, PjRtValueType>& create_options,
    std::shared_ptr<KeyValueStoreInterface> kv_store);
}  // namespace xla

namespace tensorflow {
absl::Status SetPjRtClientInTFGlobalResourceManager(const tsl::DeviceType& device_type,
                                                    std::unique_ptr<xla::PjRtClient> client);
}  // namespace tensorflow

// The same layout facts as pjrt_plugin/include/tf_plugin_c_api.h, checked against TF's header.
static_assert(offsetof(TFNPD_PluginParams, priority) == 32);
static_assert(offsetof(TFNPD_PluginParams, is_pluggable_device) == 36);
static_assert(TFNPD_PLUGIN_PARAMS_STRUCT_SIZE == 37);
static_assert(offsetof(TFNPD_Api, TFNPD_SameDevicePjRtBufferCopy) == 144);
static_assert(offsetof(TFNPD_Api, TFNPD_XlaShapeToDeviceShapeRepresentation) == 152);
static_assert(offsetof(TFNPD_Api, TFNPD_GetDeviceCount) == 160);
static_assert(offsetof(TFNPD_Api, TFNPD_InitPluginInternalDeviceStates) == 168);
static_assert(TFNPD_Api_STRUCT_SIZE == 176);
static_assert(TPU_C_API_MAX_INLINED == 6);
static_assert(sizeof(Int64List) == 56 && sizeof(BoolList) == 16 && sizeof(TileList) == 344);
static_assert(offsetof(XLA_Layout, tail_padding_alignment_in_elements) == 432);
static_assert(sizeof(XLA_Layout) == 440);
static_assert(offsetof(XLA_Shape, tuple_shapes) == 80 && offsetof(XLA_Shape, layout) == 96);
static_assert(sizeof(XLA_Shape) == 536);

namespace {

int Fail(const absl::Status& status, char* message, size_t message_size) {
  if (message != nullptr && message_size > 0) {
    std::snprintf(message, message_size, "%.*s", static_cast<int>(status.message().size()),
                  status.message().data());
  }
  return static_cast<int>(status.code());
}

}  // namespace

// Returns an absl::StatusCode (0: the client is registered with TensorFlow) and, on failure, the
// reason in `message`. No exception leaves the function.
extern "C" __attribute__((visibility("default"))) int EmberTf_CreateAndSetPjRtClient(
    const char* device_type, char* message, size_t message_size) {
  if (device_type == nullptr) {
    return Fail(absl::InvalidArgumentError("device_type is null"), message, message_size);
  }
  try {
    absl::StatusOr<std::unique_ptr<xla::PjRtClient>> client =
        xla::GetCApiClient(device_type, {}, nullptr);
    if (!client.ok()) return Fail(client.status(), message, message_size);
    absl::Status status = tensorflow::SetPjRtClientInTFGlobalResourceManager(
        tsl::DeviceType(device_type), *std::move(client));
    if (!status.ok()) return Fail(status, message, message_size);
    return 0;
  } catch (const std::exception& e) {
    return Fail(absl::InternalError(std::string("C++ exception: ") + e.what()), message,
                message_size);
  } catch (...) {
    return Fail(absl::InternalError("unknown C++ exception"), message, message_size);
  }
}
