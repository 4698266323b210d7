/* Ember's declaration of the PJRT profiler extension (PJRT_Extension_Type_Profiler, version 1)
 * and the plugin profiler API it points to: how jax.profiler.trace creates, starts, stops and
 * collects a plugin's profiler (CollectData returns a serialized tensorflow.profiler.XSpace).
 * Same layout as OpenXLA's pjrt_c_api_profiler_extension.h and profiler_c_api.h. */
#ifndef EMBER_PJRT_PLUGIN_INCLUDE_PJRT_C_API_PROFILER_EXTENSION_H_
#define EMBER_PJRT_PLUGIN_INCLUDE_PJRT_C_API_PROFILER_EXTENSION_H_

#include <stddef.h>
#include <stdint.h>

#include "pjrt_plugin/include/pjrt_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PJRT_API_PROFILER_EXTENSION_VERSION 1
#define PLUGIN_PROFILER_VERSION 1

typedef struct PLUGIN_Profiler PLUGIN_Profiler;
typedef struct PLUGIN_Profiler_Error PLUGIN_Profiler_Error;

typedef struct PLUGIN_Profiler_Error_Destroy_Args {
  size_t struct_size;
  void* priv;
  PLUGIN_Profiler_Error* error;
} PLUGIN_Profiler_Error_Destroy_Args;
typedef void PLUGIN_Profiler_Error_Destroy(PLUGIN_Profiler_Error_Destroy_Args* args);

typedef struct PLUGIN_Profiler_Error_Message_Args {
  size_t struct_size;
  void* priv;
  const PLUGIN_Profiler_Error* error;
  const char* message; /* out, lives as long as `error` */
  size_t message_size; /* out */
} PLUGIN_Profiler_Error_Message_Args;
typedef void PLUGIN_Profiler_Error_Message(PLUGIN_Profiler_Error_Message_Args* args);

typedef struct PLUGIN_Profiler_Error_GetCode_Args {
  size_t struct_size;
  void* priv;
  const PLUGIN_Profiler_Error* error;
  int code; /* out */
} PLUGIN_Profiler_Error_GetCode_Args;
typedef PLUGIN_Profiler_Error* PLUGIN_Profiler_Error_GetCode(PLUGIN_Profiler_Error_GetCode_Args* args);

typedef struct PLUGIN_Profiler_Create_Args {
  size_t struct_size;
  const char* options; /* serialized tensorflow.ProfileOptions */
  size_t options_size;
  PLUGIN_Profiler* profiler; /* out */
} PLUGIN_Profiler_Create_Args;
typedef PLUGIN_Profiler_Error* PLUGIN_Profiler_Create(PLUGIN_Profiler_Create_Args* args);

typedef struct PLUGIN_Profiler_Destroy_Args {
  size_t struct_size;
  PLUGIN_Profiler* profiler;
} PLUGIN_Profiler_Destroy_Args;
typedef PLUGIN_Profiler_Error* PLUGIN_Profiler_Destroy(PLUGIN_Profiler_Destroy_Args* args);

typedef struct PLUGIN_Profiler_Start_Args {
  size_t struct_size;
  PLUGIN_Profiler* profiler;
} PLUGIN_Profiler_Start_Args;
typedef PLUGIN_Profiler_Error* PLUGIN_Profiler_Start(PLUGIN_Profiler_Start_Args* args);

typedef struct PLUGIN_Profiler_Stop_Args {
  size_t struct_size;
  PLUGIN_Profiler* profiler;
} PLUGIN_Profiler_Stop_Args;
typedef PLUGIN_Profiler_Error* PLUGIN_Profiler_Stop(PLUGIN_Profiler_Stop_Args* args);

/* Called with a null buffer, the plugin points `buffer` at its own bytes (borrowed until the
 * profiler is destroyed) and sets the size, which is what XLA's plugin tracer reads; a caller
 * may instead call again with a buffer of that size to get a copy. */
typedef struct PLUGIN_Profiler_CollectData_Args {
  size_t struct_size;
  PLUGIN_Profiler* profiler;
  uint8_t* buffer;             /* in/out */
  size_t buffer_size_in_bytes; /* out */
} PLUGIN_Profiler_CollectData_Args;
typedef PLUGIN_Profiler_Error* PLUGIN_Profiler_CollectData(PLUGIN_Profiler_CollectData_Args* args);

typedef struct PLUGIN_Profiler_Api {
  size_t struct_size;
  void* priv;
  PLUGIN_Profiler_Error_Destroy* error_destroy;
  PLUGIN_Profiler_Error_Message* error_message;
  PLUGIN_Profiler_Error_GetCode* error_get_code;
  PLUGIN_Profiler_Create* create;
  PLUGIN_Profiler_Destroy* destroy;
  PLUGIN_Profiler_Start* start;
  PLUGIN_Profiler_Stop* stop;
  PLUGIN_Profiler_CollectData* collect_data;
} PLUGIN_Profiler_Api;

typedef struct PJRT_Profiler_Extension {
  size_t struct_size;
  PJRT_Extension_Type type;
  PJRT_Extension_Base* next;
  PLUGIN_Profiler_Api* profiler_api; /* null when used as an args extension */
  int64_t traceme_context_id;        /* args extensions only */
} PJRT_Profiler_Extension;

#ifdef __cplusplus
}
static_assert(sizeof(PLUGIN_Profiler_Api) == 80, "PLUGIN_Profiler_Api");
static_assert(sizeof(PLUGIN_Profiler_CollectData_Args) == 32, "PLUGIN_Profiler_CollectData_Args");
static_assert(offsetof(PJRT_Profiler_Extension, profiler_api) == 24, "PJRT_Profiler_Extension");
static_assert(sizeof(PJRT_Profiler_Extension) == 40, "PJRT_Profiler_Extension");
#endif

#endif /* EMBER_PJRT_PLUGIN_INCLUDE_PJRT_C_API_PROFILER_EXTENSION_H_ */
