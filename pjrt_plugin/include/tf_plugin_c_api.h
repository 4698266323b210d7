/* Ember's declarations of TensorFlow's NextPluggableDevice C ABI (TFNPD_*), as the
 * tensorflow-cpu 2.21 wheel lays it out: the plugin parameters and function table TF reads from
 * TFNPD_InitPlugin, and the XLA_Shape tree its shape function copies. Written from the layout
 * facts in shared/reference/tensorflow.md (section 0, checked on the wheel); every offset below is
 * checked by a static_assert, and tf_helper/ checks the same numbers against TF's own headers. */
#ifndef EMBER_PJRT_PLUGIN_INCLUDE_TF_PLUGIN_C_API_H_
#define EMBER_PJRT_PLUGIN_INCLUDE_TF_PLUGIN_C_API_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pjrt_plugin/include/pjrt_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* TF's status object; only TF_SetStatus (resolved at run time) touches it. */
typedef struct TF_Status TF_Status;

typedef struct TF_StringView {
  const char* data;
  size_t len;
} TF_StringView;

/* ---- xla/stream_executor/tpu/c_api_decl.h: the shape tree of the shape function. ---- */
/* Lists keep up to this many elements inline; longer ones live on the heap, allocated with
 * C++ array new: TF frees them with delete[]. */
#define EMBER_XLA_SHAPE_MAX_INLINED 6

typedef struct Int64List {
  union {
    int64_t* heap;
    int64_t inlined[EMBER_XLA_SHAPE_MAX_INLINED];
  };
  int64_t size;
} Int64List;

typedef struct BoolList {
  union {
    bool* heap;
    bool inlined[EMBER_XLA_SHAPE_MAX_INLINED];
  };
  int64_t size;
} BoolList;

typedef struct XLA_Tile {
  Int64List dimensions;
} XLA_Tile;

typedef struct TileList {
  union {
    XLA_Tile* heap;
    XLA_Tile inlined[EMBER_XLA_SHAPE_MAX_INLINED];
  };
  int64_t size;
} TileList;

typedef struct XLA_Layout {
  Int64List minor_to_major;
  TileList tiles;
  int index_primitive_type;
  int pointer_primitive_type;
  int64_t element_size_in_bits;
  int64_t memory_space;
  int64_t dynamic_shape_metadata_prefix_bytes;
  int64_t tail_padding_alignment_in_elements;
} XLA_Layout;

typedef struct XLA_Shape {
  int element_type;
  Int64List dimensions;
  BoolList dynamic_dimensions;
  struct XLA_Shape* tuple_shapes; /* owned; array new */
  int ntuple_shapes;
  bool has_layout;
  XLA_Layout layout;
} XLA_Shape;

typedef enum XLA_LayoutPreference {
  XLA_LayoutPreference_kNoPreference = 0,
  XLA_LayoutPreference_kTpuPreferCompactChunkPaddedLayout = 1,
  XLA_LayoutPreference_kTpuPreferLinearLayout = 2,
} XLA_LayoutPreference;

/* ---- tensorflow/core/common_runtime/next_pluggable_device/c/plugin_c_api.h ---- */
typedef struct TFNPD_PluginParams {
  size_t struct_size; /* TF passes 37: the end of is_pluggable_device */
  void* ext;
  const char* device_type;             /* set by the plugin */
  const char* compilation_device_name; /* set by the plugin: an XLA backend TF knows */
  int32_t priority;                    /* set by the plugin */
  bool is_pluggable_device;            /* set by the plugin */
  bool use_pjrt_on_demand_compile;     /* set by the plugin; only when struct_size covers it */
} TFNPD_PluginParams;
#define EMBER_TFNPD_PLUGIN_PARAMS_MIN_SIZE ((size_t)37)

/* Entries Ember leaves null (TF does not call them with its default flags) are typed as plain
 * function pointers: Ember never calls them either. */
typedef void (*TFNPD_UnusedEntry)(void);

typedef PJRT_Buffer* TFNPD_SameDevicePjRtBufferCopy(PJRT_Buffer* src_buffer, PJRT_Client* c_client,
                                                    TF_Status* status);
typedef void TFNPD_XlaShapeToDeviceShapeRepresentation(XLA_Shape* serialized_xla_shape,
                                                       int data_type, bool use_fast_memory,
                                                       XLA_LayoutPreference layout_preference,
                                                       XLA_Shape* serialized_device_shape,
                                                       TF_Status* tf_status);
typedef int32_t TFNPD_GetDeviceCount(TF_Status* status);
typedef void TFNPD_InitPluginInternalDeviceStates(TF_Status* status);

typedef struct TFNPD_Api {
  size_t struct_size;
  void* priv;
  TFNPD_UnusedEntry TFNPD_NewDeviceEvent;
  TFNPD_UnusedEntry TFNPD_DeviceEventAwait;
  TFNPD_UnusedEntry TFNPD_DeviceEventIsReady;
  TFNPD_UnusedEntry TFNPD_DeviceEventAndThen;
  TFNPD_UnusedEntry TFNPD_DeviceEventDelete;
  TFNPD_UnusedEntry TFNPD_DeviceAllocatorCreate;
  TFNPD_UnusedEntry TFNPD_DeviceAllocateRaw;
  TFNPD_UnusedEntry TFNPD_DeviceDeallocateRaw;
  TFNPD_UnusedEntry TFNPD_DeviceAllocatorName;
  TFNPD_UnusedEntry TFNPD_DeviceAllocatorAllocatesOpaqueHandle;
  TFNPD_UnusedEntry TFNPD_DeviceAllocatorDelete;
  TFNPD_UnusedEntry TFNPD_DeviceContextCreate;
  TFNPD_UnusedEntry TFNPD_DeviceContextDelete;
  TFNPD_UnusedEntry TFNPD_DeviceTensorToHostTensor;
  TFNPD_UnusedEntry TFNPD_HostTensorToDeviceTensor;
  TFNPD_UnusedEntry TFNPD_SameDeviceTensorCopy;
  TFNPD_SameDevicePjRtBufferCopy* TFNPD_SameDevicePjRtBufferCopy;
  TFNPD_XlaShapeToDeviceShapeRepresentation* TFNPD_XlaShapeToDeviceShapeRepresentation;
  TFNPD_GetDeviceCount* TFNPD_GetDeviceCount;
  TFNPD_InitPluginInternalDeviceStates* TFNPD_InitPluginInternalDeviceStates;
} TFNPD_Api;
#define EMBER_TFNPD_API_STRUCT_SIZE ((size_t)176)

#ifdef __cplusplus
}  // extern "C"

static_assert(sizeof(Int64List) == 56 && offsetof(Int64List, size) == 48);
static_assert(sizeof(BoolList) == 16 && offsetof(BoolList, size) == 8);
static_assert(sizeof(TileList) == 344 && offsetof(TileList, size) == 336);
static_assert(offsetof(XLA_Layout, minor_to_major) == 0 && offsetof(XLA_Layout, tiles) == 56);
static_assert(offsetof(XLA_Layout, index_primitive_type) == 400);
static_assert(offsetof(XLA_Layout, pointer_primitive_type) == 404);
static_assert(offsetof(XLA_Layout, element_size_in_bits) == 408);
static_assert(offsetof(XLA_Layout, memory_space) == 416);
static_assert(offsetof(XLA_Layout, dynamic_shape_metadata_prefix_bytes) == 424);
static_assert(offsetof(XLA_Layout, tail_padding_alignment_in_elements) == 432);
static_assert(sizeof(XLA_Layout) == 440);
static_assert(offsetof(XLA_Shape, element_type) == 0 && offsetof(XLA_Shape, dimensions) == 8);
static_assert(offsetof(XLA_Shape, dynamic_dimensions) == 64);
static_assert(offsetof(XLA_Shape, tuple_shapes) == 80 && offsetof(XLA_Shape, ntuple_shapes) == 88);
static_assert(offsetof(XLA_Shape, has_layout) == 92 && offsetof(XLA_Shape, layout) == 96);
static_assert(sizeof(XLA_Shape) == 536);
static_assert(sizeof(XLA_LayoutPreference) == sizeof(int));
static_assert(offsetof(TFNPD_PluginParams, device_type) == 16);
static_assert(offsetof(TFNPD_PluginParams, compilation_device_name) == 24);
static_assert(offsetof(TFNPD_PluginParams, priority) == 32);
static_assert(offsetof(TFNPD_PluginParams, is_pluggable_device) == 36);
static_assert(offsetof(TFNPD_PluginParams, use_pjrt_on_demand_compile) == 37);
static_assert(offsetof(TFNPD_Api, TFNPD_NewDeviceEvent) == 16);
static_assert(offsetof(TFNPD_Api, TFNPD_SameDevicePjRtBufferCopy) == 144);
static_assert(offsetof(TFNPD_Api, TFNPD_XlaShapeToDeviceShapeRepresentation) == 152);
static_assert(offsetof(TFNPD_Api, TFNPD_GetDeviceCount) == 160);
static_assert(offsetof(TFNPD_Api, TFNPD_InitPluginInternalDeviceStates) == 168);
static_assert(sizeof(TFNPD_Api) == EMBER_TFNPD_API_STRUCT_SIZE);
#endif

#endif /* EMBER_PJRT_PLUGIN_INCLUDE_TF_PLUGIN_C_API_H_ */
