// Three levels of assertion for programming errors (never for conditions that input or the
// environment can cause; those are absl::Status values):
//
//   VIGIL_CHECK(cond)   fatal in every build: the invariant protects memory safety or data.
//   VIGIL_DCHECK(cond)  debug builds only: an invariant too costly to test in release.
//   VIGIL_BUG(msg)      an "impossible" state that is survivable: crashes in debug builds,
//                       logs to stderr and counts in release (see BugCount()).
#ifndef VIGIL_COMMON_CHECK_H_
#define VIGIL_COMMON_CHECK_H_

#include <cstdint>

namespace vigil::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* condition);
void ReportBug(const char* file, int line, const char* message);
}  // namespace vigil::internal

namespace vigil {
// Number of VIGIL_BUG reports since the process started. Safe for concurrent use.
uint64_t BugCount();
}  // namespace vigil

#define VIGIL_CHECK(cond)                                                         \
  do {                                                                            \
    if (__builtin_expect(!(cond), 0)) ::vigil::internal::CheckFailed(__FILE__, __LINE__, #cond); \
  } while (false)

#ifdef NDEBUG
#define VIGIL_DCHECK(cond) \
  do {                     \
    (void)sizeof(cond);    \
  } while (false)
#else
#define VIGIL_DCHECK(cond) VIGIL_CHECK(cond)
#endif

#define VIGIL_BUG(message) ::vigil::internal::ReportBug(__FILE__, __LINE__, message)

#endif  // VIGIL_COMMON_CHECK_H_
