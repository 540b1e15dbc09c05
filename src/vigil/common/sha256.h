// SHA-256 of bytes, as lower-case hex (what `sha256sum` prints): names exactly what was loaded
// (a policy's text, a model file).
#ifndef VIGIL_COMMON_SHA256_H_
#define VIGIL_COMMON_SHA256_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace vigil {

std::string Sha256Hex(std::string_view bytes);
// The same digest as 32 bytes.
std::array<uint8_t, 32> Sha256(std::string_view bytes);
// A digest as lower-case hex.
std::string DigestHex(const std::array<uint8_t, 32>& digest);

}  // namespace vigil

#endif  // VIGIL_COMMON_SHA256_H_
