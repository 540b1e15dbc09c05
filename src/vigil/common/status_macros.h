// Status propagation macros.
//
// Abseil 20220623 (Debian 12) has absl::Status and absl::StatusOr but not the propagation macros
// of later releases, so vigil defines its own:
//
//   VIGIL_RETURN_IF_ERROR(WriteHeader(out));
//   VIGIL_ASSIGN_OR_RETURN(Transaction tx, ParseJson(line));
//
// Both evaluate their argument exactly once.
#ifndef VIGIL_COMMON_STATUS_MACROS_H_
#define VIGIL_COMMON_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define VIGIL_STATUS_CONCAT_INNER_(a, b) a##b
#define VIGIL_STATUS_CONCAT_(a, b) VIGIL_STATUS_CONCAT_INNER_(a, b)

#define VIGIL_RETURN_IF_ERROR(expr) \
  VIGIL_RETURN_IF_ERROR_IMPL_(VIGIL_STATUS_CONCAT_(vigil_status_, __LINE__), expr)

#define VIGIL_RETURN_IF_ERROR_IMPL_(status, expr) \
  do {                                            \
    ::absl::Status status = (expr);               \
    if (!status.ok()) return status;              \
  } while (false)

#define VIGIL_ASSIGN_OR_RETURN(lhs, rexpr) \
  VIGIL_ASSIGN_OR_RETURN_IMPL_(VIGIL_STATUS_CONCAT_(vigil_statusor_, __LINE__), lhs, rexpr)

#define VIGIL_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                 \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = std::move(statusor).value()

#endif  // VIGIL_COMMON_STATUS_MACROS_H_
