/* Ember's declaration of the PJRT FFI extension (PJRT_Extension_Type_FFI, version 2): how a
 * framework registers XLA FFI handlers and type ids with the plugin and attaches user data to an
 * execute context. Same layout as OpenXLA's pjrt_c_api_ffi_extension.h; the static_asserts pin
 * it. */
#ifndef EMBER_PJRT_PLUGIN_INCLUDE_PJRT_C_API_FFI_EXTENSION_H_
#define EMBER_PJRT_PLUGIN_INCLUDE_PJRT_C_API_FFI_EXTENSION_H_

#include <stddef.h>
#include <stdint.h>

#include "pjrt_plugin/include/pjrt_c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PJRT_API_FFI_EXTENSION_VERSION 2

typedef struct PJRT_FFI_TypeID_Register_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const char* type_name;
  size_t type_name_size;
  int64_t type_id; /* in-out: 0 asks for a fresh id */
} PJRT_FFI_TypeID_Register_Args;
#define PJRT_FFI_TypeID_Register_Args_STRUCT_SIZE ((size_t)40)
#define EMBER_MIN_SIZE_PJRT_FFI_TypeID_Register_Args ((size_t)40)
typedef PJRT_Error* PJRT_FFI_TypeID_Register(PJRT_FFI_TypeID_Register_Args* args);

typedef struct PJRT_FFI_UserData {
  int64_t type_id;
  void* data;
  void (*deleter)(void* data); /* optional; runs when the context is destroyed */
} PJRT_FFI_UserData;

typedef struct PJRT_FFI_UserData_Add_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_ExecuteContext* context;
  PJRT_FFI_UserData user_data;
} PJRT_FFI_UserData_Add_Args;
#define PJRT_FFI_UserData_Add_Args_STRUCT_SIZE ((size_t)48)
#define EMBER_MIN_SIZE_PJRT_FFI_UserData_Add_Args ((size_t)48)
typedef PJRT_Error* PJRT_FFI_UserData_Add(PJRT_FFI_UserData_Add_Args* args);

typedef enum PJRT_FFI_Handler_TraitsBits {
  PJRT_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE = 1u << 0,
} PJRT_FFI_Handler_TraitsBits;

/* No extension_start: the upstream layout starts the payload right after struct_size. */
typedef struct PJRT_FFI_Register_Handler_Args {
  size_t struct_size;
  const char* target_name;
  size_t target_name_size;
  int api_version; /* 0: untyped (legacy) custom call, 1: typed XLA FFI handler */
  void* handler;   /* api_version 1: an XLA_FFI_Handler* (the execute stage) */
  const char* platform_name;
  size_t platform_name_size;
  PJRT_FFI_Handler_TraitsBits traits;
} PJRT_FFI_Register_Handler_Args;
#define PJRT_FFI_Register_Handler_Args_STRUCT_SIZE ((size_t)60)
#define EMBER_MIN_SIZE_PJRT_FFI_Register_Handler_Args ((size_t)56)
typedef PJRT_Error* PJRT_FFI_Register_Handler(PJRT_FFI_Register_Handler_Args* args);

typedef struct PJRT_FFI_Extension {
  PJRT_Extension_Base base;
  PJRT_FFI_TypeID_Register* type_id_register;
  PJRT_FFI_UserData_Add* user_data_add;
  PJRT_FFI_Register_Handler* register_handler;
} PJRT_FFI_Extension;

#ifdef __cplusplus
}
static_assert(sizeof(PJRT_FFI_TypeID_Register_Args) == 40, "PJRT_FFI_TypeID_Register_Args");
static_assert(sizeof(PJRT_FFI_UserData_Add_Args) == 48, "PJRT_FFI_UserData_Add_Args");
static_assert(offsetof(PJRT_FFI_Register_Handler_Args, handler) == 32, "...handler");
static_assert(offsetof(PJRT_FFI_Register_Handler_Args, traits) == 56, "...traits");
static_assert(offsetof(PJRT_FFI_Extension, register_handler) == 40, "PJRT_FFI_Extension");
#endif

#endif /* EMBER_PJRT_PLUGIN_INCLUDE_PJRT_C_API_FFI_EXTENSION_H_ */
