// libFuzzer entry point of a fuzz target (fuzz_targets.h); built only with VIGIL_FUZZ.

#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return vigil::fuzz::FuzzIso20022(data, size);
}
