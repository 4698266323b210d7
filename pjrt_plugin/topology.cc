// PJRT_TopologyDescription_* for the topology each client owns (AOT topologies are not built yet).
#include "pjrt_plugin/bindings.h"
#include "pjrt_plugin/entry.h"
#include "pjrt_plugin/handles.h"

namespace ember::pjrt {
namespace {

EMBER_PJRT_ENTRY(PJRT_TopologyDescription_Destroy) {
  // The only topologies that exist belong to their client, which frees them.
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_TopologyDescription_PlatformName) {
  EMBER_PJRT_REQUIRE(args->topology);
  std::string_view name = args->topology->client->client->platform_name();
  args->platform_name = name.data();
  args->platform_name_size = name.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_TopologyDescription_PlatformVersion) {
  EMBER_PJRT_REQUIRE(args->topology);
  const std::string& version = args->topology->client->platform_version;
  args->platform_version = version.data();
  args->platform_version_size = version.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_TopologyDescription_GetDeviceDescriptions) {
  EMBER_PJRT_REQUIRE(args->topology);
  args->descriptions = args->topology->descriptions.data();
  args->num_descriptions = args->topology->descriptions.size();
  return absl::OkStatus();
}

EMBER_PJRT_ENTRY(PJRT_TopologyDescription_Attributes) {
  EMBER_PJRT_REQUIRE(args->topology);
  args->attributes = args->topology->attributes.data();
  args->num_attributes = args->topology->attributes.size();
  return absl::OkStatus();
}

}  // namespace

void BindTopologyEntries(PJRT_Api& api) {
  api.PJRT_TopologyDescription_Destroy = &PJRT_TopologyDescription_Destroy_Entry;
  api.PJRT_TopologyDescription_PlatformName = &PJRT_TopologyDescription_PlatformName_Entry;
  api.PJRT_TopologyDescription_PlatformVersion = &PJRT_TopologyDescription_PlatformVersion_Entry;
  api.PJRT_TopologyDescription_GetDeviceDescriptions =
      &PJRT_TopologyDescription_GetDeviceDescriptions_Entry;
  api.PJRT_TopologyDescription_Attributes = &PJRT_TopologyDescription_Attributes_Entry;
}

}  // namespace ember::pjrt
