/* Ember's declaration of the XLA FFI C ABI: the call frame, argument, result and attribute
 * encodings, errors, type ids and the XLA_FFI_Api function table that custom-call handlers
 * (compiled against XLA's xla/ffi/api headers, as jax.ffi users and framework extensions do)
 * are called with. Written to the same layout as XLA FFI API 0.3 (jaxlib 0.10.2 ships that
 * header); the static_asserts at the end pin every size and offset Ember relies on. Only the
 * ffi/ folder includes it. */
#ifndef EMBER_FFI_XLA_FFI_API_H_
#define EMBER_FFI_XLA_FFI_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define EMBER_XLA_FFI_API_MAJOR 0
#define EMBER_XLA_FFI_API_MINOR 3

typedef struct XLA_FFI_Api XLA_FFI_Api;
typedef struct XLA_FFI_InternalApi XLA_FFI_InternalApi;           /* never provided by Ember */
typedef struct XLA_FFI_Error XLA_FFI_Error;                       /* Ember's: ffi_api.cc */
typedef struct XLA_FFI_ExecutionContext XLA_FFI_ExecutionContext; /* Ember's: ffi_api.h */
typedef struct XLA_FFI_Future XLA_FFI_Future;                     /* Ember's: ffi_api.cc */

typedef enum { XLA_FFI_Extension_Metadata = 1 } XLA_FFI_Extension_Type;

typedef struct XLA_FFI_Extension_Base {
  size_t struct_size;
  XLA_FFI_Extension_Type type;
  struct XLA_FFI_Extension_Base* next;
} XLA_FFI_Extension_Base;

typedef struct XLA_FFI_Api_Version {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int major_version;
  int minor_version;
} XLA_FFI_Api_Version;

/* absl::StatusCode values. */
typedef enum {
  XLA_FFI_Error_Code_OK = 0,
  XLA_FFI_Error_Code_CANCELLED = 1,
  XLA_FFI_Error_Code_UNKNOWN = 2,
  XLA_FFI_Error_Code_INVALID_ARGUMENT = 3,
  XLA_FFI_Error_Code_DEADLINE_EXCEEDED = 4,
  XLA_FFI_Error_Code_NOT_FOUND = 5,
  XLA_FFI_Error_Code_ALREADY_EXISTS = 6,
  XLA_FFI_Error_Code_PERMISSION_DENIED = 7,
  XLA_FFI_Error_Code_RESOURCE_EXHAUSTED = 8,
  XLA_FFI_Error_Code_FAILED_PRECONDITION = 9,
  XLA_FFI_Error_Code_ABORTED = 10,
  XLA_FFI_Error_Code_OUT_OF_RANGE = 11,
  XLA_FFI_Error_Code_UNIMPLEMENTED = 12,
  XLA_FFI_Error_Code_INTERNAL = 13,
  XLA_FFI_Error_Code_UNAVAILABLE = 14,
  XLA_FFI_Error_Code_DATA_LOSS = 15,
  XLA_FFI_Error_Code_UNAUTHENTICATED = 16
} XLA_FFI_Error_Code;

typedef struct XLA_FFI_Error_Create_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  const char* message;
  XLA_FFI_Error_Code errc;
} XLA_FFI_Error_Create_Args;

typedef struct XLA_FFI_Error_GetMessage_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Error* error;
  const char* message; /* out */
} XLA_FFI_Error_GetMessage_Args;

typedef struct XLA_FFI_Error_Destroy_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Error* error;
} XLA_FFI_Error_Destroy_Args;

/* xla::PrimitiveType numbers. */
typedef enum {
  XLA_FFI_DataType_INVALID = 0,
  XLA_FFI_DataType_PRED = 1,
  XLA_FFI_DataType_S1 = 30,
  XLA_FFI_DataType_S2 = 26,
  XLA_FFI_DataType_S4 = 21,
  XLA_FFI_DataType_S8 = 2,
  XLA_FFI_DataType_S16 = 3,
  XLA_FFI_DataType_S32 = 4,
  XLA_FFI_DataType_S64 = 5,
  XLA_FFI_DataType_U1 = 31,
  XLA_FFI_DataType_U2 = 27,
  XLA_FFI_DataType_U4 = 22,
  XLA_FFI_DataType_U8 = 6,
  XLA_FFI_DataType_U16 = 7,
  XLA_FFI_DataType_U32 = 8,
  XLA_FFI_DataType_U64 = 9,
  XLA_FFI_DataType_F16 = 10,
  XLA_FFI_DataType_F32 = 11,
  XLA_FFI_DataType_F64 = 12,
  XLA_FFI_DataType_BF16 = 16,
  XLA_FFI_DataType_C64 = 15,
  XLA_FFI_DataType_C128 = 18,
  XLA_FFI_DataType_TOKEN = 17,
  XLA_FFI_DataType_F8E5M2 = 19,
  XLA_FFI_DataType_F8E3M4 = 29,
  XLA_FFI_DataType_F8E4M3 = 28,
  XLA_FFI_DataType_F8E4M3FN = 20,
  XLA_FFI_DataType_F8E4M3B11FNUZ = 23,
  XLA_FFI_DataType_F8E5M2FNUZ = 24,
  XLA_FFI_DataType_F8E4M3FNUZ = 25,
  XLA_FFI_DataType_F4E2M1FN = 32,
  XLA_FFI_DataType_F8E8M0FNU = 33
} XLA_FFI_DataType;

typedef struct XLA_FFI_Buffer {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_DataType dtype;
  void* data;
  int64_t rank;
  int64_t* dims;
} XLA_FFI_Buffer;

typedef enum { XLA_FFI_ArgType_BUFFER = 1 } XLA_FFI_ArgType;
typedef enum { XLA_FFI_RetType_BUFFER = 1 } XLA_FFI_RetType;
typedef enum {
  XLA_FFI_AttrType_ARRAY = 1,
  XLA_FFI_AttrType_DICTIONARY = 2,
  XLA_FFI_AttrType_SCALAR = 3,
  XLA_FFI_AttrType_STRING = 4
} XLA_FFI_AttrType;

typedef struct XLA_FFI_ByteSpan {
  const char* ptr;
  size_t len;
} XLA_FFI_ByteSpan;

typedef struct XLA_FFI_Scalar {
  XLA_FFI_DataType dtype;
  void* value;
} XLA_FFI_Scalar;

typedef struct XLA_FFI_Array {
  XLA_FFI_DataType dtype;
  size_t size;
  void* data;
} XLA_FFI_Array;

typedef struct XLA_FFI_TypeId {
  int64_t type_id;
} XLA_FFI_TypeId;

typedef struct XLA_FFI_TypeInfo {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  void (*deleter)(void* object);
} XLA_FFI_TypeInfo;

typedef struct XLA_FFI_Future_Create_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Future* future; /* out */
} XLA_FFI_Future_Create_Args;

typedef struct XLA_FFI_Future_SetAvailable_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Future* future;
} XLA_FFI_Future_SetAvailable_Args;

typedef struct XLA_FFI_Future_SetError_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Future* future;
  XLA_FFI_Error* error; /* ownership moves to the runtime */
} XLA_FFI_Future_SetError_Args;

typedef enum {
  XLA_FFI_ExecutionStage_INSTANTIATE = 0,
  XLA_FFI_ExecutionStage_PREPARE = 1,
  XLA_FFI_ExecutionStage_INITIALIZE = 2,
  XLA_FFI_ExecutionStage_EXECUTE = 3
} XLA_FFI_ExecutionStage;

typedef struct XLA_FFI_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  XLA_FFI_ArgType* types;
  void** args;
} XLA_FFI_Args;

typedef struct XLA_FFI_Rets {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  XLA_FFI_RetType* types;
  void** rets;
} XLA_FFI_Rets;

/* The sizes XLA reports in struct_size (up to the last field a handler may read). */
#define EMBER_XLA_FFI_CALL_FRAME_STRUCT_SIZE 168 /* up to attrs; `future` follows */

/* Sorted by name: handlers look attributes up by binary search. */
typedef struct XLA_FFI_Attrs {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  XLA_FFI_AttrType* types;
  XLA_FFI_ByteSpan** names;
  void** attrs;
} XLA_FFI_Attrs;

typedef struct XLA_FFI_CallFrame {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  const XLA_FFI_Api* api;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_ExecutionStage stage;
  XLA_FFI_Args args;
  XLA_FFI_Rets rets;
  XLA_FFI_Attrs attrs;
  XLA_FFI_Future* future; /* out: set by asynchronous handlers */
} XLA_FFI_CallFrame;

typedef XLA_FFI_Error* XLA_FFI_Handler(XLA_FFI_CallFrame* call_frame);

typedef struct XLA_FFI_Handler_Bundle {
  XLA_FFI_Handler* instantiate;
  XLA_FFI_Handler* prepare;
  XLA_FFI_Handler* initialize;
  XLA_FFI_Handler* execute;
} XLA_FFI_Handler_Bundle;

typedef uint32_t XLA_FFI_Handler_Traits;

typedef struct XLA_FFI_Handler_Register_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ByteSpan name;
  XLA_FFI_ByteSpan platform;
  XLA_FFI_Handler_Bundle bundle;
  XLA_FFI_Handler_Traits traits;
} XLA_FFI_Handler_Register_Args;

typedef struct XLA_FFI_Type_Register_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ByteSpan name;
  XLA_FFI_TypeId* type_id; /* in-out */
  const XLA_FFI_TypeInfo* type_info;
} XLA_FFI_Type_Register_Args;

typedef struct XLA_FFI_ExecutionContext_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_TypeId* type_id;
  void* data; /* out */
} XLA_FFI_ExecutionContext_Get_Args;

typedef struct XLA_FFI_State_Set_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_ExecutionStage stage;
  XLA_FFI_TypeId* type_id;
  void* state;
} XLA_FFI_State_Set_Args;

typedef struct XLA_FFI_State_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_ExecutionStage stage;
  XLA_FFI_TypeId* type_id;
  void* state; /* out */
} XLA_FFI_State_Get_Args;

typedef struct XLA_FFI_Stream_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  void* stream; /* out */
} XLA_FFI_Stream_Get_Args;

typedef struct XLA_FFI_DeviceMemory_Allocate_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  size_t size;
  size_t alignment;
  void* data; /* out */
} XLA_FFI_DeviceMemory_Allocate_Args;

typedef struct XLA_FFI_DeviceMemory_Free_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  size_t size;
  void* data;
} XLA_FFI_DeviceMemory_Free_Args;

typedef void XLA_FFI_Task(void* data);

typedef struct XLA_FFI_ThreadPool_Schedule_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_Task* task;
  void* data;
} XLA_FFI_ThreadPool_Schedule_Args;

typedef struct XLA_FFI_ThreadPool_NumThreads_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  int64_t* num_threads; /* out */
} XLA_FFI_ThreadPool_NumThreads_Args;

typedef struct XLA_FFI_RunId_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  int64_t run_id; /* out */
} XLA_FFI_RunId_Get_Args;

typedef struct XLA_FFI_DeviceOrdinal_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_ExecutionContext* ctx;
  int32_t device_ordinal; /* out */
} XLA_FFI_DeviceOrdinal_Get_Args;

/* Handlers describe themselves when called with this extension (the metadata query). */
typedef struct XLA_FFI_Metadata {
  size_t struct_size;
  XLA_FFI_Api_Version api_version;
  XLA_FFI_Handler_Traits traits;
  XLA_FFI_TypeId state_type_id;
} XLA_FFI_Metadata;

typedef struct XLA_FFI_Metadata_Extension {
  XLA_FFI_Extension_Base extension_base;
  XLA_FFI_Metadata* metadata;
} XLA_FFI_Metadata_Extension;

struct XLA_FFI_Api {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Api_Version api_version;
  const XLA_FFI_InternalApi* internal_api;
  XLA_FFI_Error* (*XLA_FFI_Error_Create)(XLA_FFI_Error_Create_Args* args);
  void (*XLA_FFI_Error_GetMessage)(XLA_FFI_Error_GetMessage_Args* args);
  void (*XLA_FFI_Error_Destroy)(XLA_FFI_Error_Destroy_Args* args);
  XLA_FFI_Error* (*XLA_FFI_Handler_Register)(XLA_FFI_Handler_Register_Args* args);
  XLA_FFI_Error* (*XLA_FFI_Stream_Get)(XLA_FFI_Stream_Get_Args* args);
  XLA_FFI_Error* (*XLA_FFI_Type_Register)(XLA_FFI_Type_Register_Args* args);
  XLA_FFI_Error* (*XLA_FFI_ExecutionContext_Get)(XLA_FFI_ExecutionContext_Get_Args* args);
  XLA_FFI_Error* (*XLA_FFI_State_Set)(XLA_FFI_State_Set_Args* args);
  XLA_FFI_Error* (*XLA_FFI_State_Get)(XLA_FFI_State_Get_Args* args);
  XLA_FFI_Error* (*XLA_FFI_DeviceMemory_Allocate)(XLA_FFI_DeviceMemory_Allocate_Args* args);
  XLA_FFI_Error* (*XLA_FFI_DeviceMemory_Free)(XLA_FFI_DeviceMemory_Free_Args* args);
  XLA_FFI_Error* (*XLA_FFI_ThreadPool_Schedule)(XLA_FFI_ThreadPool_Schedule_Args* args);
  XLA_FFI_Error* (*XLA_FFI_ThreadPool_NumThreads)(XLA_FFI_ThreadPool_NumThreads_Args* args);
  XLA_FFI_Error* (*XLA_FFI_Future_Create)(XLA_FFI_Future_Create_Args* args);
  XLA_FFI_Error* (*XLA_FFI_Future_SetAvailable)(XLA_FFI_Future_SetAvailable_Args* args);
  XLA_FFI_Error* (*XLA_FFI_Future_SetError)(XLA_FFI_Future_SetError_Args* args);
  XLA_FFI_Error* (*XLA_FFI_RunId_Get)(XLA_FFI_RunId_Get_Args* args);
  XLA_FFI_Error* (*XLA_FFI_DeviceOrdinal_Get)(XLA_FFI_DeviceOrdinal_Get_Args* args);
};

#ifdef __cplusplus
}

/* The layout every compiled handler assumes (x86-64). */
static_assert(sizeof(XLA_FFI_Extension_Base) == 24, "XLA_FFI_Extension_Base");
static_assert(sizeof(XLA_FFI_Api_Version) == 24, "XLA_FFI_Api_Version");
static_assert(sizeof(XLA_FFI_Buffer) == 48, "XLA_FFI_Buffer");
static_assert(offsetof(XLA_FFI_Buffer, dims) == 40, "XLA_FFI_Buffer.dims");
static_assert(sizeof(XLA_FFI_Scalar) == 16 && sizeof(XLA_FFI_Array) == 24, "attribute encodings");
static_assert(sizeof(XLA_FFI_Args) == 40 && sizeof(XLA_FFI_Rets) == 40, "XLA_FFI_Args/Rets");
static_assert(sizeof(XLA_FFI_Attrs) == 48, "XLA_FFI_Attrs");
static_assert(offsetof(XLA_FFI_CallFrame, stage) == 32, "XLA_FFI_CallFrame.stage");
static_assert(offsetof(XLA_FFI_CallFrame, args) == 40, "XLA_FFI_CallFrame.args");
static_assert(offsetof(XLA_FFI_CallFrame, rets) == 80, "XLA_FFI_CallFrame.rets");
static_assert(offsetof(XLA_FFI_CallFrame, attrs) == 120, "XLA_FFI_CallFrame.attrs");
static_assert(offsetof(XLA_FFI_CallFrame, future) == 168, "XLA_FFI_CallFrame.future");
static_assert(sizeof(XLA_FFI_CallFrame) == 176, "XLA_FFI_CallFrame");
static_assert(offsetof(XLA_FFI_Api, internal_api) == 40, "XLA_FFI_Api.internal_api");
static_assert(offsetof(XLA_FFI_Api, XLA_FFI_Error_Create) == 48, "XLA_FFI_Api functions");
static_assert(sizeof(XLA_FFI_Api) == 48 + 18 * 8, "XLA_FFI_Api");
static_assert(sizeof(XLA_FFI_Handler_Register_Args) == 88, "XLA_FFI_Handler_Register_Args");
#endif

#endif /* EMBER_FFI_XLA_FFI_API_H_ */
