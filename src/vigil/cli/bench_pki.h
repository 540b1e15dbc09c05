// BenchPki: a throwaway certificate authority, server certificate and client certificate for
// `vigil bench http --tls`, made in-process with OpenSSL (no openssl command line needed on
// the measuring host). Keys are EC P-256 (what a bank's PKI typically issues for TLS today);
// the server certificate names 127.0.0.1 and localhost; everything is valid for one day and
// written with mode 0600 under "dir".
#ifndef VIGIL_CLI_BENCH_PKI_H_
#define VIGIL_CLI_BENCH_PKI_H_

#include <string>

#include "absl/status/statusor.h"

namespace vigil::cli {

struct BenchPki {
  std::string ca_cert;
  std::string server_cert, server_key;
  std::string client_cert, client_key;
  std::string client_subject;  // RFC 2253, as the server sees it
};

// Errors name the file that could not be written or the OpenSSL step that failed.
absl::StatusOr<BenchPki> MakeBenchPki(const std::string& dir);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_BENCH_PKI_H_
