// The project's one pair of error-propagation macros (absl::Status / absl::StatusOr).
#ifndef EMBER_BASE_STATUS_MACROS_H_
#define EMBER_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define EMBER_STATUS_CONCAT_INNER_(a, b) a##b
#define EMBER_STATUS_CONCAT_(a, b) EMBER_STATUS_CONCAT_INNER_(a, b)

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define EMBER_RETURN_IF_ERROR(expr)                 \
  do {                                              \
    ::absl::Status ember_status_ = (expr);          \
    if (!ember_status_.ok()) return ember_status_;  \
  } while (0)

// EMBER_ASSIGN_OR_RETURN(lhs, expr): evaluates `expr` (an absl::StatusOr<T>); on error returns its
// status, otherwise moves the value into `lhs` (which may be a declaration: `auto x`).
#define EMBER_ASSIGN_OR_RETURN(lhs, expr) \
  EMBER_ASSIGN_OR_RETURN_IMPL_(EMBER_STATUS_CONCAT_(ember_statusor_, __LINE__), lhs, expr)
#define EMBER_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return std::move(tmp).status();     \
  lhs = std::move(tmp).value()

#endif  // EMBER_BASE_STATUS_MACROS_H_
