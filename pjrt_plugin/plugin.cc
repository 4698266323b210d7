// PJRT_Plugin_Initialize and PJRT_Plugin_Attributes.
#include "pjrt_plugin/bindings.h"
#include "pjrt_plugin/entry.h"
#include "pjrt_plugin/named_values.h"
#include "pjrt_plugin/version.h"

namespace ember::pjrt {
namespace {

const NamedValueList& PluginAttributes() {
  static const NamedValueList* attributes = [] {
    auto* list = new NamedValueList();  // lives for the process, as the ABI requires
    list->AddInt64("xla_version", kXlaVersion);
    list->AddInt64List("stablehlo_current_version",
                       {kStableHloCurrent[0], kStableHloCurrent[1], kStableHloCurrent[2]});
    list->AddInt64List("stablehlo_minimum_version",
                       {kStableHloMinimum[0], kStableHloMinimum[1], kStableHloMinimum[2]});
    return list;
  }();
  return *attributes;
}

EMBER_PJRT_ENTRY(PJRT_Plugin_Initialize) {
  // Nothing process-wide to set up: every client owns its own platform. Idempotent, so two
  // frameworks in one process can both call it.
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_Plugin_Attributes) {
  const NamedValueList& attributes = PluginAttributes();
  args->attributes = attributes.data();
  args->num_attributes = attributes.size();
  return absl::OkStatus();
}

}  // namespace

void BindPluginEntries(PJRT_Api& api) {
  api.PJRT_Plugin_Initialize = &PJRT_Plugin_Initialize_Entry;
  api.PJRT_Plugin_Attributes = &PJRT_Plugin_Attributes_Entry;
}

}  // namespace ember::pjrt
