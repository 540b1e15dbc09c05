#include "vigil/cli/bench_pki.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "vigil/common/private_file.h"
#include "vigil/common/string_view.h"

namespace vigil::cli {
namespace {

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
  void operator()(X509* c) const { X509_free(c); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;

absl::Status Failed(std::string_view step) {
  return absl::InternalError(absl::StrCat("bench certificates: ", ToAbsl(step), " failed"));
}

bool AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A certificate for "cn" with "key", signed by issuer_key (self-signed when issuer is null).
absl::StatusOr<Cert> Issue(const std::string& cn, EVP_PKEY* key, X509* issuer,
                           EVP_PKEY* issuer_key, long serial,
                           const std::vector<std::pair<int, const char*>>& extensions) {
  Cert cert(X509_new());
  if (cert == nullptr) return Failed("X509_new");
  X509* c = cert.get();
  X509_NAME* name = X509_get_subject_name(c);
  bool ok = X509_set_version(c, 2) == 1 && ASN1_INTEGER_set(X509_get_serialNumber(c), serial) == 1 &&
            X509_gmtime_adj(X509_getm_notBefore(c), -300) != nullptr &&
            X509_gmtime_adj(X509_getm_notAfter(c), 24 * 3600) != nullptr &&
            X509_set_pubkey(c, key) == 1 &&
            X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                                       reinterpret_cast<const unsigned char*>("vigil bench"), -1,
                                       -1, 0) == 1 &&
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                                       reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1,
                                       0) == 1;
  ok = ok && X509_set_issuer_name(c, issuer != nullptr ? X509_get_subject_name(issuer) : name) == 1;
  for (const auto& [nid, value] : extensions) {
    ok = ok && AddExtension(c, issuer != nullptr ? issuer : c, nid, value);
  }
  ok = ok && X509_sign(c, issuer_key, EVP_sha256()) > 0;
  if (!ok) return Failed(absl::StrCat("issuing the certificate of ", cn));
  return cert;
}

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};

// The PEM text "write" puts in a memory BIO.
absl::StatusOr<std::string> PemText(const std::function<bool(BIO*)>& write, std::string_view what) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || !write(bio.get())) {
    return Failed(absl::StrCat("writing the PEM of ", ToAbsl(what)));
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

}  // namespace

absl::StatusOr<BenchPki> MakeBenchPki(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  Key ca_key(EVP_EC_gen("P-256")), server_key(EVP_EC_gen("P-256")),
      client_key(EVP_EC_gen("P-256"));
  if (ca_key == nullptr || server_key == nullptr || client_key == nullptr) {
    return Failed("EC key generation");
  }
  absl::StatusOr<Cert> ca =
      Issue("vigil bench CA", ca_key.get(), nullptr, ca_key.get(), 1,
            {{NID_basic_constraints, "critical,CA:TRUE"},
             {NID_key_usage, "critical,keyCertSign,cRLSign"}});
  if (!ca.ok()) return ca.status();
  absl::StatusOr<Cert> server =
      Issue("vigil bench server", server_key.get(), ca->get(), ca_key.get(), 2,
            {{NID_basic_constraints, "critical,CA:FALSE"},
             {NID_ext_key_usage, "serverAuth"},
             {NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost"}});
  if (!server.ok()) return server.status();
  absl::StatusOr<Cert> client =
      Issue("vigil bench client", client_key.get(), ca->get(), ca_key.get(), 3,
            {{NID_basic_constraints, "critical,CA:FALSE"}, {NID_ext_key_usage, "clientAuth"}});
  if (!client.ok()) return client.status();

  BenchPki pki;
  pki.ca_cert = dir + "/ca.pem";
  pki.server_cert = dir + "/server.pem";
  pki.server_key = dir + "/server.key";
  pki.client_cert = dir + "/client.pem";
  pki.client_key = dir + "/client.key";
  pki.client_subject = "CN=vigil bench client,O=vigil bench";
  const auto cert = [](X509* c) { return [c](BIO* b) { return PEM_write_bio_X509(b, c) == 1; }; };
  const auto key = [](EVP_PKEY* k) {
    return [k](BIO* b) {
      return PEM_write_bio_PrivateKey(b, k, nullptr, nullptr, 0, nullptr, nullptr) == 1;
    };
  };
  for (const auto& [path, write] : std::vector<std::pair<std::string, std::function<bool(BIO*)>>>{
           {pki.ca_cert, cert(ca->get())},
           {pki.server_cert, cert(server->get())},
           {pki.server_key, key(server_key.get())},
           {pki.client_cert, cert(client->get())},
           {pki.client_key, key(client_key.get())}}) {
    absl::StatusOr<std::string> pem = PemText(write, path);
    if (!pem.ok()) return pem.status();
    // Replaced, not created once: each run of the benchmark makes a new authority.
    if (absl::Status s = ReplacePrivateFile(path, *pem, "bench certificate file"); !s.ok()) {
      return s;
    }
  }
  return pki;
}

}  // namespace vigil::cli
