// FUZZ_CHECK: the invariant assertion of the fuzz targets.
//
// Unlike VIGIL_CHECK it reports what a fuzz target expected of a parser, not a bug in the
// caller; unlike VIGIL_DCHECK it is never compiled out, since checking is what a fuzz target is
// for. A failure prints the condition and calls abort(), which libFuzzer reports as a crash and
// saves the input.
#ifndef VIGIL_FUZZ_FUZZ_CHECK_H_
#define VIGIL_FUZZ_FUZZ_CHECK_H_

namespace vigil::fuzz::internal {
[[noreturn]] void InvariantFailed(const char* file, int line, const char* condition);
}  // namespace vigil::fuzz::internal

#define FUZZ_CHECK(cond)                                                              \
  do {                                                                                \
    if (!(cond)) ::vigil::fuzz::internal::InvariantFailed(__FILE__, __LINE__, #cond); \
  } while (false)

#endif  // VIGIL_FUZZ_FUZZ_CHECK_H_
