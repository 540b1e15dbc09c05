// A key-management hook that is a command: a key-encryption key whose private half stays in a
// key service (an HSM, a KMS) that decrypts on request, reached through a command the operator
// supplies (docs/security.md, "Key-management hook").
//
// For each unwrap, `/bin/sh -c COMMAND` runs with:
//  - stdin: the wrapped data key, base64 (standard alphabet, padded), as one line;
//  - environment: this process's, plus VIGIL_KEK_ID (the key id, 16 hex digits) and
//    VIGIL_KEK_ALGORITHM ("rsa-oaep-sha256" or "sm2");
//  - its own session and process group, no controlling terminal, no file descriptors beyond 0,
//    1 and 2, default signal handling and an empty signal mask.
// It must print the data key, base64, as one line on stdout (a final newline and surrounding
// blanks are allowed; at most 4 KiB) and exit 0. Errors name the key id, the command's exit
// status and the first line of its stderr, never key bytes nor the command's stdout:
//   kUnavailable        the command could not be started, exited non-zero or was killed;
//   kDeadlineExceeded   it did not finish within the timeout: its process group is killed;
//   kDataLoss           it exited 0 but printed no data key, or not one line of base64.
// A data key of the wrong length is caught where it is used (crypto/envelope.h).
//
// Thread safety: the key may unwrap from several threads at once; each unwrap runs its own
// command.
#ifndef VIGIL_CRYPTO_KEK_COMMAND_H_
#define VIGIL_CRYPTO_KEK_COMMAND_H_

#include <chrono>
#include <string>

#include "absl/status/statusor.h"
#include "vigil/crypto/key_encryption_key.h"

namespace vigil::crypto {

struct KekCommandOptions {
  // How long one unwrap may take before the command is killed.
  std::chrono::milliseconds timeout{30'000};
};

// The public key of "public_key_file" (PEM; the private half is refused, as LoadPublicKeyFile
// does) that unwraps by running "command". kInvalidArgument for an empty command or a
// non-positive timeout; LoadPublicKeyFile's errors. The command is not run here.
absl::StatusOr<KeyEncryptionKey> KeyEncryptionKeyWithCommand(const std::string& public_key_file,
                                                             std::string command,
                                                             KekCommandOptions options = {});

}  // namespace vigil::crypto

#endif  // VIGIL_CRYPTO_KEK_COMMAND_H_
