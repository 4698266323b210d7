// How every PJRT entry point is written: a named function that checks its args struct (non-null,
// struct_size at least the oldest layout's), runs its body, and turns a failed absl::Status into
// a PJRT_Error whose message starts with the function's name. Nothing thrown crosses the ABI.
#ifndef EMBER_PJRT_PLUGIN_ENTRY_H_
#define EMBER_PJRT_PLUGIN_ENTRY_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "pjrt_plugin/error.h"
#include "pjrt_plugin/include/pjrt_c_api.h"

namespace ember::pjrt {

absl::Status CheckArgsHeader(const void* args, size_t struct_size, const char* function,
                             size_t min_size);
absl::Status AnnotateWithFunction(absl::Status status, const char* function);
// A struct the caller passes inside the args (PJRT_Program, PJRT_ExecuteOptions): its
// struct_size must cover the fields Ember reads (`min_size`) and be plausible (a newer header may
// add fields, but no PJRT struct is 64 KiB); `what` names it in the error ("args->options").
absl::Status CheckNestedStructSize(const char* what, size_t struct_size, size_t min_size);
// Marks an error whose exact text is part of the conformance contract (XLA's pjrt_c_api_test
// compares these messages verbatim), so the entry does not prefix it with its name.
absl::Status Verbatim(absl::Status status);

template <typename Args>
PJRT_Error* RunEntry(const char* function, Args* args, size_t min_size,
                     absl::Status (*body)(Args*), bool annotate = true) {
  absl::Status status =
      CheckArgsHeader(args, args == nullptr ? 0 : args->struct_size, function, min_size);
  if (status.ok()) {
    try {
      status = body(args);
    } catch (const std::exception& e) {
      status = absl::InternalError(absl::StrCat("unexpected C++ exception: ", e.what()));
    } catch (...) {
      status = absl::InternalError("unexpected C++ exception");
    }
  }
  if (status.ok()) return nullptr;
  return MakeError(annotate ? AnnotateWithFunction(std::move(status), function) : std::move(status));
}

// Reads a C enum field as its raw integer: a C caller may store any int there, and loading an
// out-of-range value through the C++ enum type is undefined behaviour.
template <typename Enum>
int32_t RawEnumValue(const Enum& field) {
  static_assert(sizeof(Enum) == sizeof(int32_t));
  int32_t value;
  std::memcpy(&value, &field, sizeof(value));
  return value;
}

// True when the caller's args struct is large enough to hold `field` (newer fields may be absent).
#define EMBER_PJRT_HAS_FIELD(args, field) \
  ((args)->struct_size >= offsetof(std::remove_pointer_t<decltype(args)>, field) + sizeof((args)->field))

}  // namespace ember::pjrt

// Defines `<fn>_Entry(<fn>_Args*)`, the function placed in the PJRT_Api table, around the body
// that follows the macro (a function of `args` returning absl::Status).
#define EMBER_PJRT_ENTRY(fn)                                                                   \
  absl::Status fn##_Body(fn##_Args* args);                                                     \
  PJRT_Error* fn##_Entry(fn##_Args* args) {                                                    \
    return ::ember::pjrt::RunEntry<fn##_Args>(#fn, args, EMBER_MIN_SIZE_##fn##_Args, &fn##_Body); \
  }                                                                                            \
  absl::Status fn##_Body([[maybe_unused]] fn##_Args* args)

// Like EMBER_PJRT_ENTRY, for entries that return an event's own status: errors from the body are
// passed through without the function-name prefix (argument errors still carry it).
#define EMBER_PJRT_ENTRY_PASSTHROUGH(fn)                                                        \
  absl::Status fn##_Body(fn##_Args* args);                                                     \
  PJRT_Error* fn##_Entry(fn##_Args* args) {                                                    \
    if (args != nullptr && args->struct_size >= EMBER_MIN_SIZE_##fn##_Args && args->event != nullptr) \
      return ::ember::pjrt::RunEntry<fn##_Args>(#fn, args, EMBER_MIN_SIZE_##fn##_Args, &fn##_Body, \
                                                false);                                        \
    return ::ember::pjrt::RunEntry<fn##_Args>(#fn, args, EMBER_MIN_SIZE_##fn##_Args, &fn##_Body); \
  }                                                                                            \
  absl::Status fn##_Body([[maybe_unused]] fn##_Args* args)

// Fails the entry with InvalidArgument naming the args field when it is null.
#define EMBER_PJRT_REQUIRE(field)                                                   \
  do {                                                                              \
    if ((field) == nullptr) {                                                       \
      return absl::InvalidArgumentError("`" #field "` is null");                    \
    }                                                                               \
  } while (0)

#endif  // EMBER_PJRT_PLUGIN_ENTRY_H_
