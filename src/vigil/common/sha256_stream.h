// Sha256Stream: SHA-256 of bytes that arrive in pieces (a file read or written in chunks), so
// that hashing a large file does not hold it in memory. Same digest as Sha256Hex of the
// concatenation.
//
//   Sha256Stream h;
//   h.Update(chunk1);
//   h.Update(chunk2);
//   std::string hex = h.FinishHex();
//
// Thread safety: externally synchronized.
#ifndef VIGIL_COMMON_SHA256_STREAM_H_
#define VIGIL_COMMON_SHA256_STREAM_H_

#include <string>
#include <string_view>

namespace vigil {

class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;

  void Update(std::string_view bytes);
  // The digest of everything given to Update, as lower-case hex. REQUIRES: called once, last.
  std::string FinishHex();

 private:
  void* context_;  // OpenSSL's EVP_MD_CTX, kept out of this header
};

}  // namespace vigil

#endif  // VIGIL_COMMON_SHA256_STREAM_H_
