#include "vigil/audit/signing_key.h"

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstdio>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/private_file.h"
#include "vigil/common/sha256.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/crypto/pem_private_key.h"

namespace vigil::audit {
namespace internal {

void PkeyDeleter::operator()(evp_pkey_st* pkey) const { EVP_PKEY_free(pkey); }

}  // namespace internal

namespace {

using internal::PkeyPtr;

struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};
struct PkeyCtxDeleter {
  void operator()(EVP_PKEY_CTX* ctx) const { EVP_PKEY_CTX_free(ctx); }
};
struct EcdsaSigDeleter {
  void operator()(ECDSA_SIG* sig) const { ECDSA_SIG_free(sig); }
};
struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxDeleter>;
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, PkeyCtxDeleter>;
using EcdsaSigPtr = std::unique_ptr<ECDSA_SIG, EcdsaSigDeleter>;

// A key PEM is a few hundred bytes (an RSA-16384 one under 13 KiB); anything much larger is not
// a key, and the cap keeps a wrong path (a log file) from being read whole.
constexpr size_t kMaxPemBytes = 64 << 10;
constexpr size_t kEd25519SignatureBytes = 64;
// key_id digits quoted in a failed verification: enough to tell keys apart in a message.
constexpr size_t kKeyIdPrefixDigits = 16;

constexpr std::string_view kPublicKeyBegin = "-----BEGIN PUBLIC KEY-----";

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

std::string Prefix(std::string_view origin) {
  return absl::StrCat("audit key ", ToAbsl(origin), ": ");
}

// "reasons": OpenSSL's, as crypto::TakeOpenSslReasons gives them.
absl::Status OpensslError(std::string_view origin, std::string_view what,
                          std::string_view reasons) {
  return absl::InternalError(
      absl::StrCat(Prefix(origin), ToAbsl(what), " failed: ", ToAbsl(reasons)));
}

// Takes the reasons off this thread's OpenSSL error queue: it is per thread, and what is left
// in it would be blamed on some later call.
absl::Status OpensslError(std::string_view origin, std::string_view what) {
  return OpensslError(origin, what, crypto::TakeOpenSslReasons());
}

// OpenSSL calls this only for an encrypted PEM. It records that and fails: vigil never decrypts
// a key and never prompts on a terminal (a NULL callback would make OpenSSL prompt).
int RefusePassphrase(char* /*buf*/, int /*size*/, int /*rwflag*/, void* asked) {
  *static_cast<bool*>(asked) = true;
  return -1;
}

absl::Status EncryptedPemError(std::string_view origin) {
  return absl::InvalidArgumentError(absl::StrCat(
      Prefix(origin),
      "the PEM is encrypted; vigil never asks for a passphrase: store the key unencrypted "
      "(`openssl pkey -in KEY -out NEW`) in a file only vigil can read"));
}

absl::Status CheckPemSize(std::string_view pem, std::string_view origin) {
  if (pem.size() > kMaxPemBytes) {
    return absl::InvalidArgumentError(absl::StrCat(Prefix(origin), pem.size(),
                                                   " bytes, more than a key PEM can be (",
                                                   kMaxPemBytes >> 10, " KiB at most)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<BioPtr> MemoryBio(std::string_view pem, std::string_view origin) {
  VIGIL_RETURN_IF_ERROR(CheckPemSize(pem, origin));
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (bio == nullptr) return OpensslError(origin, "BIO_new_mem_buf");
  return bio;
}

// The first private key in "pem". "wanted" names what the caller accepts, for the message.
absl::StatusOr<PkeyPtr> ReadPrivateKey(std::string_view pem, std::string_view origin,
                                       std::string_view wanted) {
  // Encrypted first: an encrypted PEM is refused as such whatever its size.
  if (crypto::LooksLikeEncryptedPem(pem)) return EncryptedPemError(origin);
  VIGIL_RETURN_IF_ERROR(CheckPemSize(pem, origin));
  crypto::PemPrivateKey read = crypto::ReadPrivateKeyPem(pem);
  switch (read.failure) {
    case crypto::PemPrivateKey::Failure::kNone:
      return PkeyPtr(read.key.release());
    case crypto::PemPrivateKey::Failure::kEncrypted:
      return EncryptedPemError(origin);
    case crypto::PemPrivateKey::Failure::kNoMemory:
      return OpensslError(origin, "BIO_new_mem_buf", read.reasons);
    case crypto::PemPrivateKey::Failure::kNoKey:
      break;
  }
  if (absl::StrContains(ToAbsl(pem), ToAbsl(kPublicKeyBegin))) {
    return absl::InvalidArgumentError(
        absl::StrCat(Prefix(origin), "a public key; signing needs the private key it belongs to"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(Prefix(origin), "no PEM ", ToAbsl(wanted), " (", read.reasons, ")"));
}

absl::StatusOr<PkeyPtr> ReadPublicKey(std::string_view pem, std::string_view origin) {
  VIGIL_ASSIGN_OR_RETURN(BioPtr bio, MemoryBio(pem, origin));
  bool asked = false;
  PkeyPtr key(PEM_read_bio_PUBKEY(bio.get(), nullptr, RefusePassphrase, &asked));
  if (key == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(Prefix(origin), "PUBLIC KEY block is not a SubjectPublicKeyInfo (",
                     crypto::TakeOpenSslReasons(), ")"));
  }
  ERR_clear_error();
  return key;
}

// A key holding only the public half of "key" (DER SubjectPublicKeyInfo out and back in).
absl::StatusOr<PkeyPtr> PublicHalf(EVP_PKEY* key, std::string_view origin) {
  unsigned char* der = nullptr;
  const int size = i2d_PUBKEY(key, &der);
  if (size <= 0) return OpensslError(origin, "i2d_PUBKEY");
  const unsigned char* p = der;
  PkeyPtr pub(d2i_PUBKEY(nullptr, &p, size));
  OPENSSL_free(der);
  if (pub == nullptr) return OpensslError(origin, "d2i_PUBKEY");
  return pub;
}

// The key's EC group ("prime256v1", "SM2"), or "" when it has none.
std::string GroupName(EVP_PKEY* key) {
  char name[80];
  size_t size = 0;
  if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, name, sizeof(name), &size) !=
      1) {
    ERR_clear_error();
    return "";
  }
  return std::string(name, size);
}

// "RSA", "EC on curve prime256v1", "ED448" for refusals.
std::string Describe(EVP_PKEY* key) {
  const char* type = EVP_PKEY_get0_type_name(key);
  std::string text = type != nullptr ? type : "a key of unknown type";
  if (const std::string group = GroupName(key); !group.empty()) {
    absl::StrAppend(&text, " on curve ", group);
  }
  return text;
}

// One key, one id: the SubjectPublicKeyInfo of an SM2 key names the curve and holds the
// uncompressed point, even when its file spelled out the curve's parameters or compressed the
// point (`openssl ec -param_enc explicit` / `-conv_form compressed`). Changes only how OpenSSL
// encodes the key, which no other thread sees yet.
absl::Status UseCanonicalSm2Encoding(EVP_PKEY* key, std::string_view origin) {
  if (EVP_PKEY_set_utf8_string_param(key, OSSL_PKEY_PARAM_EC_ENCODING,
                                     OSSL_PKEY_EC_ENCODING_GROUP) != 1 ||
      EVP_PKEY_set_utf8_string_param(key, OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT,
                                     OSSL_PKEY_EC_POINT_CONVERSION_FORMAT_UNCOMPRESSED) != 1) {
    return OpensslError(origin, "setting the SM2 key's encoding");
  }
  return absl::OkStatus();
}

// The same key material as an OpenSSL "SM2" key. An "EC" key would be signed with ECDSA even on
// the SM2 curve, since OpenSSL 3 picks the signature algorithm from the key's type. OpenSSL 3.0's
// decoders already return every SM2-curve PEM we know of (PKCS#8, SEC1 "EC PRIVATE KEY" and
// "SM2 PRIVATE KEY", explicit parameters) as "SM2"; this covers any that does not.
absl::StatusOr<PkeyPtr> AsSm2Key(EVP_PKEY* key, int selection, std::string_view origin) {
  OSSL_PARAM* params = nullptr;
  if (EVP_PKEY_todata(key, selection, &params) != 1) return OpensslError(origin, "EVP_PKEY_todata");
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "SM2", nullptr));
  EVP_PKEY* sm2 = nullptr;
  const bool ok = ctx != nullptr && EVP_PKEY_fromdata_init(ctx.get()) == 1 &&
                  EVP_PKEY_fromdata(ctx.get(), &sm2, selection, params) == 1;
  OSSL_PARAM_free(params);
  if (!ok) return OpensslError(origin, "importing the EC key on the SM2 curve as SM2");
  return PkeyPtr(sm2);
}

// The algorithm of "*key", after turning an EC key on the SM2 curve into an SM2 key and setting
// an SM2 key's encoding; refuses every other key. "selection" is EVP_PKEY_KEYPAIR or
// EVP_PKEY_PUBLIC_KEY, "kind" "private" or "public".
absl::StatusOr<SignatureAlgorithm> Classify(PkeyPtr* key, int selection, std::string_view origin,
                                            std::string_view kind) {
  if (EVP_PKEY_is_a(key->get(), "ED25519")) return SignatureAlgorithm::kEd25519;
  if (EVP_PKEY_is_a(key->get(), "EC") && GroupName(key->get()) == "SM2") {
    VIGIL_ASSIGN_OR_RETURN(*key, AsSm2Key(key->get(), selection, origin));
  }
  if (EVP_PKEY_is_a(key->get(), "SM2")) {
    VIGIL_RETURN_IF_ERROR(UseCanonicalSm2Encoding(key->get(), origin));
    return SignatureAlgorithm::kSm2;
  }
  return absl::InvalidArgumentError(absl::StrCat(Prefix(origin), "not an Ed25519 or SM2 ",
                                                 ToAbsl(kind), " key (found ", Describe(key->get()),
                                                 ")"));
}

struct PublicParts {
  std::string pem;     // SubjectPublicKeyInfo PEM
  std::string key_id;  // hex SHA-256 of the SubjectPublicKeyInfo DER
};

absl::StatusOr<PublicParts> PublicPartsOf(EVP_PKEY* key, std::string_view origin) {
  unsigned char* der = nullptr;
  const int size = i2d_PUBKEY(key, &der);
  if (size <= 0) return OpensslError(origin, "i2d_PUBKEY");
  PublicParts parts;
  parts.key_id = Sha256Hex(std::string_view(reinterpret_cast<const char*>(der), size));
  OPENSSL_free(der);

  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || PEM_write_bio_PUBKEY(bio.get(), key) != 1) {
    return OpensslError(origin, "PEM_write_bio_PUBKEY");
  }
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio.get(), &data);
  parts.pem.assign(data, static_cast<size_t>(length));
  return parts;
}

enum class Operation { kSign, kVerify };

// Readies "ctx" for one signature or verification with "key". SM2 hashes with SM3 and needs the
// distinguishing identifier on the context OpenSSL made for the operation (owned by "ctx"):
// without it OpenSSL 3 uses an empty identifier, not GB/T 35276's. Ed25519 takes no digest: pure
// EdDSA hashes the message inside the algorithm.
absl::Status InitContext(Operation operation, SignatureAlgorithm algorithm, EVP_PKEY* key,
                         EVP_MD_CTX* ctx, std::string_view origin) {
  const char* digest = algorithm == SignatureAlgorithm::kSm2 ? "SM3" : nullptr;
  EVP_PKEY_CTX* pkey_ctx = nullptr;
  const int ok =
      operation == Operation::kSign
          ? EVP_DigestSignInit_ex(ctx, &pkey_ctx, digest, nullptr, nullptr, key, nullptr)
          : EVP_DigestVerifyInit_ex(ctx, &pkey_ctx, digest, nullptr, nullptr, key, nullptr);
  if (ok != 1) return OpensslError(origin, "EVP_DigestSignInit/EVP_DigestVerifyInit");
  if (algorithm == SignatureAlgorithm::kSm2 &&
      EVP_PKEY_CTX_set1_id(pkey_ctx, kSm2DistinguishingId.data(),
                           static_cast<int>(kSm2DistinguishingId.size())) <= 0) {
    return OpensslError(origin, "EVP_PKEY_CTX_set1_id");
  }
  return absl::OkStatus();
}

// kInvalidArgument when "signature" cannot be a signature of "algorithm" at all.
absl::Status CheckSignatureForm(SignatureAlgorithm algorithm, std::string_view signature,
                                std::string_view origin) {
  if (signature.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(Prefix(origin), "empty signature"));
  }
  if (algorithm == SignatureAlgorithm::kEd25519) {
    if (signature.size() == kEd25519SignatureBytes) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(Prefix(origin), "an Ed25519 signature is ",
                                                   kEd25519SignatureBytes, " bytes, not ",
                                                   signature.size()));
  }
  // Exactly one DER SEQUENCE { INTEGER r, INTEGER s }, re-encoding to the same bytes; OpenSSL's
  // SM2 verification insists on the same, but would not say that the form was the problem.
  const unsigned char* p = Bytes(signature);
  EcdsaSigPtr sig(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(signature.size())));
  bool canonical = sig != nullptr && p == Bytes(signature) + signature.size();
  if (canonical) {
    unsigned char* der = nullptr;
    const int size = i2d_ECDSA_SIG(sig.get(), &der);
    canonical = size == static_cast<int>(signature.size()) &&
                std::string_view(reinterpret_cast<const char*>(der), size) == signature;
    OPENSSL_free(der);
  }
  ERR_clear_error();
  if (canonical) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      Prefix(origin), "an SM2 signature is a DER SEQUENCE { INTEGER r, INTEGER s }; these ",
      signature.size(), " bytes are not one"));
}

absl::StatusOr<std::string> ReadPemFile(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) return absl::ErrnoToStatus(errno, absl::StrCat(Prefix(path), "cannot open"));
  std::string bytes(kMaxPemBytes + 1, '\0');
  const size_t size = std::fread(bytes.data(), 1, bytes.size(), file.get());
  if (std::ferror(file.get())) {
    return absl::ErrnoToStatus(errno, absl::StrCat(Prefix(path), "cannot read"));
  }
  if (size > kMaxPemBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(Prefix(path), "larger than ", kMaxPemBytes >> 10, " KiB: not a key PEM"));
  }
  bytes.resize(size);
  return bytes;
}

}  // namespace

std::string_view SignatureAlgorithmName(SignatureAlgorithm algorithm) {
  return algorithm == SignatureAlgorithm::kSm2 ? "sm2" : "ed25519";
}

absl::StatusOr<SignatureAlgorithm> ParseSignatureAlgorithm(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(ToAbsl(name));
  if (lower == "ed25519") return SignatureAlgorithm::kEd25519;
  if (lower == "sm2") return SignatureAlgorithm::kSm2;
  return absl::InvalidArgumentError(absl::StrCat("unknown signature algorithm \"", ToAbsl(name),
                                                 "\": expected \"ed25519\" or \"sm2\""));
}

LogSigner::LogSigner(SignatureAlgorithm algorithm, PkeyPtr key, std::string origin,
                     std::string public_key_pem, std::string key_id)
    : algorithm_(algorithm),
      key_(std::move(key)),
      origin_(std::move(origin)),
      public_key_pem_(std::move(public_key_pem)),
      key_id_(std::move(key_id)) {}

LogSigner::~LogSigner() = default;

absl::StatusOr<std::unique_ptr<LogSigner>> LogSigner::FromPem(std::string_view pem,
                                                              std::string_view origin) {
  VIGIL_ASSIGN_OR_RETURN(PkeyPtr key, ReadPrivateKey(pem, origin, "private key"));
  VIGIL_ASSIGN_OR_RETURN(const SignatureAlgorithm algorithm,
                         Classify(&key, EVP_PKEY_KEYPAIR, origin, "private"));
  VIGIL_ASSIGN_OR_RETURN(PublicParts parts, PublicPartsOf(key.get(), origin));
  return std::unique_ptr<LogSigner>(new LogSigner(algorithm, std::move(key), std::string(origin),
                                                  std::move(parts.pem), std::move(parts.key_id)));
}

absl::StatusOr<std::unique_ptr<LogSigner>> LogSigner::FromPemFile(const std::string& path) {
  // A signing key that other accounts can read or replace signs nothing trustworthy.
  VIGIL_RETURN_IF_ERROR(CheckOwnerOnly(path, "audit key"));
  VIGIL_ASSIGN_OR_RETURN(const std::string pem, ReadPemFile(path));
  return FromPem(pem, path);
}

absl::StatusOr<std::string> LogSigner::Sign(std::string_view message) const {
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (ctx == nullptr) return OpensslError(origin_, "EVP_MD_CTX_new");
  VIGIL_RETURN_IF_ERROR(InitContext(Operation::kSign, algorithm_, key_.get(), ctx.get(), origin_));
  // The largest signature the key makes: 64 for Ed25519, 72 for a DER SM2 (r, s).
  size_t size = static_cast<size_t>(EVP_PKEY_get_size(key_.get()));
  std::string signature(size, '\0');
  if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &size,
                     Bytes(message), message.size()) != 1) {
    return OpensslError(origin_, "EVP_DigestSign");
  }
  signature.resize(size);
  return signature;
}

LogVerifier::LogVerifier(SignatureAlgorithm algorithm, PkeyPtr key, std::string origin,
                         std::string public_key_pem, std::string key_id)
    : algorithm_(algorithm),
      key_(std::move(key)),
      origin_(std::move(origin)),
      public_key_pem_(std::move(public_key_pem)),
      key_id_(std::move(key_id)) {}

LogVerifier::~LogVerifier() = default;

absl::StatusOr<std::unique_ptr<LogVerifier>> LogVerifier::FromPem(std::string_view pem,
                                                                  std::string_view origin) {
  PkeyPtr key;
  if (absl::StrContains(ToAbsl(pem), ToAbsl(kPublicKeyBegin))) {
    VIGIL_ASSIGN_OR_RETURN(key, ReadPublicKey(pem, origin));
  } else {
    VIGIL_ASSIGN_OR_RETURN(PkeyPtr private_key,
                           ReadPrivateKey(pem, origin, "public or private key"));
    VIGIL_ASSIGN_OR_RETURN(key, PublicHalf(private_key.get(), origin));
  }
  VIGIL_ASSIGN_OR_RETURN(const SignatureAlgorithm algorithm,
                         Classify(&key, EVP_PKEY_PUBLIC_KEY, origin, "public"));
  VIGIL_ASSIGN_OR_RETURN(PublicParts parts, PublicPartsOf(key.get(), origin));
  return std::unique_ptr<LogVerifier>(new LogVerifier(algorithm, std::move(key),
                                                      std::string(origin), std::move(parts.pem),
                                                      std::move(parts.key_id)));
}

absl::StatusOr<std::unique_ptr<LogVerifier>> LogVerifier::FromPemFile(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(const std::string pem, ReadPemFile(path));
  return FromPem(pem, path);
}

absl::Status LogVerifier::Verify(std::string_view message, std::string_view signature) const {
  VIGIL_RETURN_IF_ERROR(CheckSignatureForm(algorithm_, signature, origin_));
  MdCtxPtr ctx(EVP_MD_CTX_new());
  if (ctx == nullptr) return OpensslError(origin_, "EVP_MD_CTX_new");
  VIGIL_RETURN_IF_ERROR(
      InitContext(Operation::kVerify, algorithm_, key_.get(), ctx.get(), origin_));
  const int verified = EVP_DigestVerify(ctx.get(), Bytes(signature), signature.size(),
                                        Bytes(message), message.size());
  // 0 is a wrong signature; below 0 an error, which for a well-formed signature and a loaded key
  // also means "does not verify" (e.g. r or s out of range). Either way OpenSSL queued reasons
  // that must not reach this thread's next call.
  ERR_clear_error();
  if (verified == 1) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(Prefix(origin_), "signature does not verify with key ",
                                          key_id_.substr(0, kKeyIdPrefixDigits)));
}

absl::StatusOr<std::string> GeneratePrivateKeyPem(SignatureAlgorithm algorithm) {
  constexpr std::string_view kOrigin = "(new key)";
  const bool sm2 = algorithm == SignatureAlgorithm::kSm2;
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, sm2 ? "SM2" : "ED25519", nullptr));
  if (ctx == nullptr || EVP_PKEY_keygen_init(ctx.get()) != 1) {
    return OpensslError(kOrigin, "EVP_PKEY_keygen_init");
  }
  // SM2 keys live on the SM2 curve only; saying so does not leave it to a default.
  if (sm2 && EVP_PKEY_CTX_set_group_name(ctx.get(), "SM2") != 1) {
    return OpensslError(kOrigin, "EVP_PKEY_CTX_set_group_name");
  }
  EVP_PKEY* generated = nullptr;
  if (EVP_PKEY_generate(ctx.get(), &generated) != 1) return OpensslError(kOrigin, "keygen");
  const PkeyPtr key(generated);
  BioPtr bio(BIO_new(BIO_s_mem()));
  // PEM_write_bio_PrivateKey writes unencrypted PKCS#8 ("PRIVATE KEY") when given no cipher.
  if (bio == nullptr ||
      PEM_write_bio_PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return OpensslError(kOrigin, "PEM_write_bio_PrivateKey");
  }
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(length));
}

}  // namespace vigil::audit
