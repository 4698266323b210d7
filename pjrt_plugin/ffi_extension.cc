// The PJRT FFI extension (handler and type-id registration, execute-context user data) and
// PJRT_ExecuteContext_Create / _Destroy. Registrations go to Ember's XLA FFI registry (ffi/),
// which the evaluator's custom-call path consults when a program runs.
#include "pjrt_plugin/ffi_extension.h"

#include <string_view>

#include "absl/strings/str_cat.h"
#include "ffi/registry.h"
#include "pjrt_plugin/bindings.h"
#include "pjrt_plugin/entry.h"
#include "pjrt_plugin/handles.h"

namespace ember::pjrt {
namespace {

std::string_view View(const char* data, size_t size) {
  return data == nullptr ? std::string_view() : std::string_view(data, size);
}

EMBER_PJRT_ENTRY(PJRT_ExecuteContext_Create) {
  args->context = new PJRT_ExecuteContext();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_ExecuteContext_Destroy) {
  std::unique_ptr<PJRT_ExecuteContext> owned(args->context);
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_FFI_TypeID_Register) {
  if (args->type_name == nullptr && args->type_name_size != 0) {
    return absl::InvalidArgumentError("`type_name` is null");
  }
  return ffi::Registry::Global().RegisterType(View(args->type_name, args->type_name_size),
                                              &args->type_id);
}

EMBER_PJRT_ENTRY(PJRT_FFI_UserData_Add) {
  EMBER_PJRT_REQUIRE(args->context);
  return args->context->context->Insert(args->user_data.type_id, args->user_data.data,
                                        args->user_data.deleter);
}

EMBER_PJRT_ENTRY(PJRT_FFI_Register_Handler) {
  if (args->target_name == nullptr) return absl::InvalidArgumentError("`target_name` is null");
  EMBER_PJRT_REQUIRE(args->handler);
  const std::string_view name = View(args->target_name, args->target_name_size);
  if (args->api_version != 1) {
    return absl::UnimplementedError(absl::StrCat(
        "custom call target '", std::string(name), "' has api_version ", args->api_version,
        "; Ember runs typed XLA FFI handlers (api_version 1) only"));
  }
  XLA_FFI_Handler_Bundle bundle{};
  bundle.execute = reinterpret_cast<XLA_FFI_Handler*>(args->handler);
  const std::string_view platform = args->platform_name == nullptr
                                        ? ffi::kPlatformName
                                        : View(args->platform_name, args->platform_name_size);
  return ffi::Registry::Global().RegisterHandler(
      name, platform, bundle, static_cast<XLA_FFI_Handler_Traits>(RawEnumValue(args->traits)));
}

}  // namespace

PJRT_Extension_Base* FfiExtension(PJRT_Extension_Base* next) {
  static PJRT_FFI_Extension extension = [] {
    PJRT_FFI_Extension e{};
    e.base.struct_size = sizeof(PJRT_FFI_Extension);
    e.base.type = PJRT_Extension_Type_FFI;
    e.type_id_register = &PJRT_FFI_TypeID_Register_Entry;
    e.user_data_add = &PJRT_FFI_UserData_Add_Entry;
    e.register_handler = &PJRT_FFI_Register_Handler_Entry;
    return e;
  }();
  extension.base.next = next;
  return &extension.base;
}

void BindFfiEntries(PJRT_Api& api) {
  api.PJRT_ExecuteContext_Create = &PJRT_ExecuteContext_Create_Entry;
  api.PJRT_ExecuteContext_Destroy = &PJRT_ExecuteContext_Destroy_Entry;
}

}  // namespace ember::pjrt
