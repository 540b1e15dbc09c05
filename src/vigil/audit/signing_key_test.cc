#include "vigil/audit/signing_key.h"

#include <openssl/err.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/common/sha256.h"
#include "vigil/common/string_view.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

// The oracle for these tests is the openssl command-line tool (OpenSSL 3.0 on Debian 12), run as
// a separate process: it makes keys and signatures for vigil to load and verify, and checks the
// signatures vigil makes. Fixed answers come from RFC 8032 (Ed25519) and GB/T 32918.2 Annex A
// (SM2, see testdata/audit/PROVENANCE.md).

namespace vigil::audit {
namespace {

using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::vigil::testing::StatusIs;

constexpr char kOpenssl[] = "/usr/bin/openssl";
constexpr char kSha256sum[] = "/usr/bin/sha256sum";
// Written out here rather than taken from kSm2DistinguishingId, so that a change there fails.
constexpr char kGbtDistId[] = "distid:1234567812345678";

std::string Unhex(std::string_view hex) { return absl::HexStringToBytes(ToAbsl(hex)); }

// "der" as PEM with the given label, lines of 64 characters as OpenSSL writes them.
std::string Pem(std::string_view label, std::string_view der) {
  const std::string base64 = absl::Base64Escape(ToAbsl(der));
  std::string pem = absl::StrCat("-----BEGIN ", ToAbsl(label), "-----\n");
  for (size_t i = 0; i < base64.size(); i += 64) absl::StrAppend(&pem, base64.substr(i, 64), "\n");
  absl::StrAppend(&pem, "-----END ", ToAbsl(label), "-----\n");
  return pem;
}

// Binary, as tree heads are: a NUL, high bytes, and more than one SM3/SHA-512 block.
std::string BinaryMessage(int seed) {
  std::string message = absl::StrCat("vigil tree head ", seed, "\n");
  for (int i = 0; i < 300; ++i) message.push_back(static_cast<char>((i * 37 + seed) & 0xff));
  return message;
}

std::string Flipped(std::string s, size_t at) {
  s[at] = static_cast<char>(s[at] ^ 0x01);
  return s;
}

class SigningKeyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(kOpenssl))
        << "these tests use the openssl command-line tool as their oracle (apt-get install "
           "openssl)";
    // The pid keeps two runs of this binary at once (two people, or ctest -j) apart.
    dir_ = absl::StrCat(::testing::TempDir(), "/signing_key_", getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(std::string_view name) const { return absl::StrCat(dir_, "/", ToAbsl(name)); }

  // Private to the owner, as key files must be (LogSigner::FromPemFile refuses others).
  std::string Write(std::string_view name, std::string_view bytes) const {
    const std::string path = Path(name);
    std::ofstream(path, std::ios::binary).write(bytes.data(), bytes.size());
    ::chmod(path.c_str(), 0600);
    return path;
  }

  // Exit status of `openssl args...`; its output goes to Path("openssl.log").
  int Openssl(std::vector<std::string> args) const {
    return ::vigil::testing::RunProcess(kOpenssl, std::move(args), Path("openssl.log"));
  }
  ::testing::AssertionResult OpensslOk(std::vector<std::string> args) const {
    std::string command = "openssl";
    for (const std::string& a : args) absl::StrAppend(&command, " ", a);
    const int status = Openssl(std::move(args));
    if (status == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << command << " exited with " << status << ":\n"
                                         << ::vigil::testing::ReadFile(Path("openssl.log"));
  }

  // `openssl pkey -in key -pubout -outform DER | sha256sum`, or "" on failure.
  std::string OpensslKeyId(const std::string& key) const {
    const std::string der = Path("key_id.der");
    if (Openssl({"pkey", "-in", key, "-pubout", "-outform", "DER", "-out", der}) != 0) return "";
    const std::string log = Path("sha256sum.log");
    if (::vigil::testing::RunProcess(kSha256sum, {der}, log) != 0) return "";
    return ::vigil::testing::ReadFile(log).substr(0, 64);
  }

  // `openssl pkey -in key -pubout`, or "" on failure.
  std::string OpensslPublicPem(const std::string& key) const {
    const std::string out = Path("public_from_cli.pem");
    if (Openssl({"pkey", "-in", key, "-pubout", "-out", out}) != 0) return "";
    return ::vigil::testing::ReadFile(out);
  }

  // Whether the openssl CLI accepts "signature" of "message" under the public key "public_pem".
  // For SM2 "sigopt" is the distinguishing-identifier option ("" for none).
  bool OpensslVerifies(SignatureAlgorithm algorithm, const std::string& public_pem,
                       std::string_view message, std::string_view signature,
                       const std::string& sigopt = kGbtDistId) const {
    const std::string message_path = Write("oracle.msg", message);
    const std::string signature_path = Write("oracle.sig", signature);
    if (algorithm == SignatureAlgorithm::kEd25519) {
      return Openssl({"pkeyutl", "-verify", "-rawin", "-pubin", "-inkey", public_pem, "-sigfile",
                      signature_path, "-in", message_path}) == 0;
    }
    std::vector<std::string> args = {"dgst",     "-sm3",       "-verify",
                                     public_pem, "-signature", signature_path};
    if (!sigopt.empty()) args.insert(args.end(), {"-sigopt", sigopt});
    args.push_back(message_path);
    return Openssl(args) == 0;
  }

  // The openssl CLI's signature of "message" with "private_pem"; "" on failure.
  std::string OpensslSign(SignatureAlgorithm algorithm, const std::string& private_pem,
                          std::string_view message, const std::string& sigopt = kGbtDistId) const {
    const std::string message_path = Write("cli.msg", message);
    const std::string signature_path = Path("cli.sig");
    const int status = algorithm == SignatureAlgorithm::kEd25519
                           ? Openssl({"pkeyutl", "-sign", "-rawin", "-inkey", private_pem, "-in",
                                      message_path, "-out", signature_path})
                           : Openssl({"dgst", "-sm3", "-sign", private_pem, "-sigopt", sigopt,
                                      "-out", signature_path, message_path});
    return status == 0 ? ::vigil::testing::ReadFile(signature_path) : "";
  }

  std::string dir_;
};

TEST(SignatureAlgorithm, NamesRoundTrip) {
  for (SignatureAlgorithm algorithm : {SignatureAlgorithm::kEd25519, SignatureAlgorithm::kSm2}) {
    EXPECT_THAT(ParseSignatureAlgorithm(SignatureAlgorithmName(algorithm)),
                ::vigil::testing::IsOkAndHolds(algorithm));
  }
  EXPECT_EQ(SignatureAlgorithmName(SignatureAlgorithm::kEd25519), "ed25519");
  EXPECT_EQ(SignatureAlgorithmName(SignatureAlgorithm::kSm2), "sm2");
  EXPECT_THAT(ParseSignatureAlgorithm("Ed25519"),
              ::vigil::testing::IsOkAndHolds(SignatureAlgorithm::kEd25519));
  EXPECT_THAT(ParseSignatureAlgorithm("SM2"),
              ::vigil::testing::IsOkAndHolds(SignatureAlgorithm::kSm2));
}

TEST(SignatureAlgorithm, ParseRefusesOtherNames) {
  // Near misses of real names, and algorithms vigil deliberately does not sign with.
  for (std::string_view name : {"", "ed448", "ed25519ph", "ecdsa", "rsa", "sm3", " sm2"}) {
    EXPECT_THAT(ParseSignatureAlgorithm(name),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"ed25519\" or \"sm2\"")))
        << name;
  }
}

TEST_F(SigningKeyTest, LoadsOpensslEd25519Key) {
  const std::string key = Path("ed25519.pem");
  ASSERT_TRUE(OpensslOk({"genpkey", "-algorithm", "ed25519", "-out", key}));
  ASSERT_OK_AND_ASSIGN(const auto signer, LogSigner::FromPemFile(key));
  EXPECT_EQ(signer->algorithm(), SignatureAlgorithm::kEd25519);
  const std::string key_id = OpensslKeyId(key);
  ASSERT_EQ(key_id.size(), 64u);
  EXPECT_EQ(signer->key_id(), key_id);
  EXPECT_EQ(signer->PublicKeyPem(), OpensslPublicPem(key));

  // The verifier from the public key, and from the private key for convenience.
  const std::string public_key = Write("ed25519.pub.pem", signer->PublicKeyPem());
  for (const std::string& path : {public_key, key}) {
    ASSERT_OK_AND_ASSIGN(const auto verifier, LogVerifier::FromPemFile(path));
    EXPECT_EQ(verifier->algorithm(), SignatureAlgorithm::kEd25519);
    EXPECT_EQ(verifier->key_id(), key_id);
    EXPECT_EQ(verifier->PublicKeyPem(), signer->PublicKeyPem());
  }
}

// Every PEM form in which OpenSSL writes an SM2 private key loads as SM2 (not as an ECDSA key on
// the SM2 curve), with the key id the openssl CLI computes for its plain PKCS#8 form, and signs
// what the CLI accepts.
TEST_F(SigningKeyTest, LoadsOpensslSm2KeysInEveryForm) {
  const std::string pkcs8 = Path("sm2.pem");
  ASSERT_TRUE(OpensslOk({"genpkey", "-algorithm", "SM2", "-out", pkcs8}));
  const std::string pkcs8_ec = Path("sm2_via_ec.pem");
  ASSERT_TRUE(OpensslOk(
      {"genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:SM2", "-out", pkcs8_ec}));
  // SEC1: OpenSSL 3.0 labels it "SM2 PRIVATE KEY"; 1.1.1 wrote "EC PRIVATE KEY".
  const std::string sec1 = Path("sm2_sec1.pem");
  ASSERT_TRUE(OpensslOk({"ec", "-in", pkcs8, "-out", sec1}));
  std::string sec1_text = ::vigil::testing::ReadFile(sec1);
  ASSERT_THAT(sec1_text, StartsWith("-----BEGIN SM2 PRIVATE KEY-----"));
  for (const char* old_label : {"BEGIN SM2", "END SM2"}) {
    sec1_text.replace(sec1_text.find(old_label), std::string_view(old_label).size(),
                      old_label[0] == 'B' ? "BEGIN EC" : "END EC");
  }
  const std::string sec1_ec = Write("sm2_sec1_ec.pem", sec1_text);
  // Explicit curve parameters instead of the curve's OID.
  const std::string explicit_params = Path("sm2_explicit.pem");
  ASSERT_TRUE(OpensslOk({"ec", "-in", pkcs8, "-param_enc", "explicit", "-out", explicit_params}));
  const std::string compressed = Path("sm2_compressed.pem");
  ASSERT_TRUE(OpensslOk({"ec", "-in", pkcs8, "-conv_form", "compressed", "-out", compressed}));

  // The same key in each form, with one id (the last two would have other ids if their public
  // key were encoded as their files are: explicit parameters, a compressed point).
  const std::string key_id = OpensslKeyId(pkcs8);
  ASSERT_EQ(key_id.size(), 64u);
  ASSERT_NE(OpensslKeyId(explicit_params), key_id);
  ASSERT_NE(OpensslKeyId(compressed), key_id);
  for (const std::string& key : {pkcs8, sec1, sec1_ec, explicit_params, compressed}) {
    SCOPED_TRACE(::vigil::testing::ReadFile(key));
    ASSERT_OK_AND_ASSIGN(const auto signer, LogSigner::FromPemFile(key));
    EXPECT_EQ(signer->algorithm(), SignatureAlgorithm::kSm2);
    EXPECT_EQ(signer->key_id(), key_id);
    EXPECT_EQ(signer->PublicKeyPem(), OpensslPublicPem(pkcs8));
    const std::string public_key = Write("sm2.pub.pem", signer->PublicKeyPem());
    ASSERT_OK_AND_ASSIGN(const std::string signature, signer->Sign("tree head"));
    EXPECT_TRUE(OpensslVerifies(SignatureAlgorithm::kSm2, public_key, "tree head", signature));

    ASSERT_OK_AND_ASSIGN(const auto verifier, LogVerifier::FromPemFile(key));
    EXPECT_EQ(verifier->algorithm(), SignatureAlgorithm::kSm2);
    EXPECT_EQ(verifier->key_id(), key_id);
  }
  // Public keys in the odd encodings too.
  for (const std::string& key : {explicit_params, compressed}) {
    const std::string public_key = Path("odd.pub.pem");
    ASSERT_TRUE(OpensslOk({"pkey", "-in", key, "-pubout", "-out", public_key}));
    ASSERT_OK_AND_ASSIGN(const auto verifier, LogVerifier::FromPemFile(public_key));
    EXPECT_EQ(verifier->key_id(), key_id);
  }

  // Other keys, made as "EC on the SM2 curve" and by `openssl ecparam -genkey` (which writes an
  // "SM2 PARAMETERS" block before the key), load the same way.
  const std::string with_parameters = Path("sm2_ecparam.pem");
  ASSERT_TRUE(OpensslOk({"ecparam", "-name", "SM2", "-genkey", "-out", with_parameters}));
  for (const std::string& key : {pkcs8_ec, with_parameters}) {
    SCOPED_TRACE(::vigil::testing::ReadFile(key));
    ASSERT_OK_AND_ASSIGN(const auto signer, LogSigner::FromPemFile(key));
    EXPECT_EQ(signer->algorithm(), SignatureAlgorithm::kSm2);
    EXPECT_EQ(signer->key_id(), OpensslKeyId(key));
    const std::string public_key = Write("other.pub.pem", signer->PublicKeyPem());
    ASSERT_OK_AND_ASSIGN(const std::string signature, signer->Sign("tree head"));
    EXPECT_TRUE(OpensslVerifies(SignatureAlgorithm::kSm2, public_key, "tree head", signature));
  }
}

TEST_F(SigningKeyTest, Ed25519SignaturesVerifyWithOpensslCli) {
  const std::string key = Path("ed25519.pem");
  ASSERT_TRUE(OpensslOk({"genpkey", "-algorithm", "ed25519", "-out", key}));
  ASSERT_OK_AND_ASSIGN(const auto signer, LogSigner::FromPemFile(key));
  const std::string public_key = Write("ed25519.pub.pem", signer->PublicKeyPem());
  for (const std::string& message : {std::string("x"), BinaryMessage(1), std::string(10000, 'q')}) {
    ASSERT_OK_AND_ASSIGN(const std::string signature, signer->Sign(message));
    EXPECT_EQ(signature.size(), 64u);
    EXPECT_TRUE(OpensslVerifies(SignatureAlgorithm::kEd25519, public_key, message, signature));
    // The oracle can say no.
    EXPECT_FALSE(
        OpensslVerifies(SignatureAlgorithm::kEd25519, public_key, message + "!", signature));
  }
}

TEST_F(SigningKeyTest, Sm2SignaturesVerifyWithOpensslCli) {
  const std::string key = Path("sm2.pem");
  ASSERT_TRUE(OpensslOk({"genpkey", "-algorithm", "SM2", "-out", key}));
  ASSERT_OK_AND_ASSIGN(const auto signer, LogSigner::FromPemFile(key));
  const std::string public_key = Write("sm2.pub.pem", signer->PublicKeyPem());
  for (const std::string& message : {std::string("x"), BinaryMessage(2), std::string(10000, 'q')}) {
    ASSERT_OK_AND_ASSIGN(const std::string signature, signer->Sign(message));
    EXPECT_TRUE(OpensslVerifies(SignatureAlgorithm::kSm2, public_key, message, signature));
    EXPECT_FALSE(OpensslVerifies(SignatureAlgorithm::kSm2, public_key, message + "!", signature));
    // Z binds the identifier: the signature is one for 1234567812345678, not for a neighbour of
    // it, nor for the empty identifier OpenSSL 3.0 uses when none is given.
    EXPECT_FALSE(OpensslVerifies(SignatureAlgorithm::kSm2, public_key, message, signature,
                                 "distid:1234567812345679"));
    EXPECT_FALSE(OpensslVerifies(SignatureAlgorithm::kSm2, public_key, message, signature, ""));
  }
  // SM2 draws a fresh nonce per signature.
  ASSERT_OK_AND_ASSIGN(const std::string first, signer->Sign("same"));
  ASSERT_OK_AND_ASSIGN(const std::string second, signer->Sign("same"));
  EXPECT_NE(first, second);
  EXPECT_TRUE(OpensslVerifies(SignatureAlgorithm::kSm2, public_key, "same", second));
}

TEST_F(SigningKeyTest, VerifiesOpensslCliEd25519Signatures) {
  const std::string key = Path("ed25519.pem");
  ASSERT_TRUE(OpensslOk({"genpkey", "-algorithm", "ed25519", "-out", key}));
  const std::string public_key = Path("ed25519.pub.pem");
  ASSERT_TRUE(OpensslOk({"pkey", "-in", key, "-pubout", "-out", public_key}));
  ASSERT_OK_AND_ASSIGN(const auto verifier, LogVerifier::FromPemFile(public_key));
  for (const std::string& message : {std::string("x"), BinaryMessage(3)}) {
    const std::string signature = OpensslSign(SignatureAlgorithm::kEd25519, key, message);
    ASSERT_EQ(signature.size(), 64u);
    EXPECT_OK(verifier->Verify(message, signature));
    EXPECT_THAT(verifier->Verify(message + "!", signature), StatusIs(absl::StatusCode::kDataLoss));
  }
}

TEST_F(SigningKeyTest, VerifiesOpensslCliSm2Signatures) {
  const std::string key = Path("sm2.pem");
  ASSERT_TRUE(OpensslOk({"genpkey", "-algorithm", "SM2", "-out", key}));
  const std::string public_key = Path("sm2.pub.pem");
  ASSERT_TRUE(OpensslOk({"pkey", "-in", key, "-pubout", "-out", public_key}));
  ASSERT_OK_AND_ASSIGN(const auto verifier, LogVerifier::FromPemFile(public_key));
  for (const std::string& message : {std::string("x"), BinaryMessage(4)}) {
    const std::string signature = OpensslSign(SignatureAlgorithm::kSm2, key, message);
    ASSERT_FALSE(signature.empty());
    EXPECT_OK(verifier->Verify(message, signature));
    EXPECT_THAT(verifier->Verify(message + "!", signature), StatusIs(absl::StatusCode::kDataLoss));
    // Signed under another identifier (draft-shen-sm2's example one): a different Z.
    const std::string other_id =
        OpensslSign(SignatureAlgorithm::kSm2, key, message, "distid:ALICE123@YAHOO.COM");
    ASSERT_FALSE(other_id.empty());
    EXPECT_THAT(verifier->Verify(message, other_id), StatusIs(absl::StatusCode::kDataLoss));
  }
}

// RFC 8032 section 7.1, TEST 1 and TEST 2: seed -> public key, and the (deterministic) signature.
TEST(LogSigner, Ed25519MatchesRfc8032Test1AndTest2) {
  struct Vector {
    std::string_view seed, public_key, message, signature;
  };
  const Vector vectors[] = {
      {"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
       "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
       "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701"
       "cf9b46bd25bf5f0595bbe24655141438e7a100b"},
      {"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
       "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
       "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d"
       "0f11d8c387b2eaeb4302aeeb00d291612bb0c00"},
  };
  for (const Vector& v : vectors) {
    SCOPED_TRACE(v.seed);
    // PKCS#8 OneAsymmetricKey { version 0, AlgorithmIdentifier { id-Ed25519 }, OCTET STRING {
    // OCTET STRING seed } } (RFC 8410 section 7): a fixed 16-byte prefix, then the seed.
    const std::string private_pem =
        Pem("PRIVATE KEY", Unhex("302e020100300506032b657004220420") + Unhex(v.seed));
    // SubjectPublicKeyInfo { AlgorithmIdentifier { id-Ed25519 }, BIT STRING key } (RFC 8410).
    const std::string spki = Unhex("302a300506032b6570032100") + Unhex(v.public_key);
    ASSERT_OK_AND_ASSIGN(const auto signer, LogSigner::FromPem(private_pem, "rfc8032"));
    EXPECT_EQ(signer->PublicKeyPem(), Pem("PUBLIC KEY", spki));
    EXPECT_EQ(signer->key_id(), Sha256Hex(spki));
    const std::string message = Unhex(v.message);
    ASSERT_OK_AND_ASSIGN(const std::string signature, signer->Sign(message));
    EXPECT_EQ(absl::BytesToHexString(signature), v.signature);

    ASSERT_OK_AND_ASSIGN(const auto verifier,
                         LogVerifier::FromPem(Pem("PUBLIC KEY", spki), "rfc8032"));
    EXPECT_OK(verifier->Verify(message, Unhex(v.signature)));
    EXPECT_THAT(verifier->Verify(message + "x", Unhex(v.signature)),
                StatusIs(absl::StatusCode::kDataLoss));
  }
}

// GB/T 32918.2-2016 Annex A (also GM/T 0003.2-2012): the signature example on the SM2 curve,
// with the default identifier. The public key is d*G for the standard's d.
TEST(LogVerifier, Sm2VerifiesGbt32918AnnexASignature) {
  constexpr absl::string_view kX =
      "09F9DF311E5421A150DD7D161E4BC5C672179FAD1833FC076BB08FF356F35020";
  constexpr absl::string_view kY =
      "CCEA490CE26775A52DC6EA718CC1AA600AED05FBF35E084A6632F6072DA9AD13";
  constexpr absl::string_view kR =
      "F5A03B0648D2C4630EEAC513E1BB81A15944DA3827D5B74143AC7EACEEE720B3";
  constexpr absl::string_view kS =
      "B1B6AA29DF212FD8763182BC0D421CA1BB9038FD1F7F42D4840B69C485BBC1AA";
  // SEQUENCE { INTEGER r, INTEGER s }; both have the top bit set, so each takes a 0x00 pad.
  const std::string der_rs = Unhex(absl::StrCat("3046", "022100", kR, "022100", kS));
  const std::string swapped = Unhex(absl::StrCat("3046", "022100", kS, "022100", kR));

  ASSERT_OK_AND_ASSIGN(const auto verifier, LogVerifier::FromPemFile(::vigil::testing::TestDataPath(
                                                "audit/keys/sm2_gbt32918_annexA_public.pem")));
  EXPECT_EQ(verifier->algorithm(), SignatureAlgorithm::kSm2);
  // The file holds the standard's point: SubjectPublicKeyInfo { { id-ecPublicKey, sm2 },
  // 04 || x || y }.
  const std::string spki =
      Unhex(absl::StrCat("3059301306072a8648ce3d020106082a811ccf5501822d03420004", kX, kY));
  EXPECT_EQ(verifier->key_id(), Sha256Hex(spki));

  EXPECT_OK(verifier->Verify("message digest", der_rs));
  EXPECT_THAT(verifier->Verify("message digesT", der_rs), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(verifier->Verify("message digest", swapped), StatusIs(absl::StatusCode::kDataLoss));
}

// Each case: what must not verify, and why it gets its code.
TEST(LogVerifier, RefusesWhatIsNotThisKeysSignatureOfTheMessage) {
  for (SignatureAlgorithm algorithm : {SignatureAlgorithm::kEd25519, SignatureAlgorithm::kSm2}) {
    SCOPED_TRACE(SignatureAlgorithmName(algorithm));
    const SignatureAlgorithm other = algorithm == SignatureAlgorithm::kSm2
                                         ? SignatureAlgorithm::kEd25519
                                         : SignatureAlgorithm::kSm2;
    ASSERT_OK_AND_ASSIGN(const std::string pem, GeneratePrivateKeyPem(algorithm));
    ASSERT_OK_AND_ASSIGN(const std::string another_pem, GeneratePrivateKeyPem(algorithm));
    ASSERT_OK_AND_ASSIGN(const std::string other_algorithm_pem, GeneratePrivateKeyPem(other));
    ASSERT_OK_AND_ASSIGN(const auto signer, LogSigner::FromPem(pem, "k"));
    ASSERT_OK_AND_ASSIGN(const auto another, LogSigner::FromPem(another_pem, "k2"));
    ASSERT_OK_AND_ASSIGN(const auto other_signer, LogSigner::FromPem(other_algorithm_pem, "k3"));
    ASSERT_OK_AND_ASSIGN(const auto verifier, LogVerifier::FromPem(signer->PublicKeyPem(), "k"));

    const std::string message = BinaryMessage(5);
    ASSERT_OK_AND_ASSIGN(const std::string signature, signer->Sign(message));
    ASSERT_OK(verifier->Verify(message, signature));
    ASSERT_OK_AND_ASSIGN(const std::string wrong_key, another->Sign(message));
    ASSERT_OK_AND_ASSIGN(const std::string wrong_algorithm, other_signer->Sign(message));

    // Well-formed but wrong: kDataLoss, naming the key.
    const auto data_loss = StatusIs(absl::StatusCode::kDataLoss,
                                    absl::StrCat("audit key k: signature does not verify with key ",
                                                 signer->key_id().substr(0, 16)));
    EXPECT_THAT(verifier->Verify(message, wrong_key), data_loss) << "another key's signature";
    EXPECT_THAT(verifier->Verify(Flipped(message, 0), signature), data_loss) << "first byte";
    EXPECT_THAT(verifier->Verify(Flipped(message, message.size() - 1), signature), data_loss)
        << "last byte";
    EXPECT_THAT(verifier->Verify(message.substr(1), signature), data_loss) << "shorter message";
    // The last byte is inside s for SM2, inside S for Ed25519.
    EXPECT_THAT(verifier->Verify(message, Flipped(signature, signature.size() - 1)), data_loss);

    // Not a signature of this algorithm at all: kInvalidArgument.
    EXPECT_THAT(verifier->Verify(message, ""),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty signature")));
    // Ed25519 -> SM2: 64 bytes that are not DER; SM2 -> Ed25519: DER of about 71 bytes, not 64.
    EXPECT_THAT(verifier->Verify(message, wrong_algorithm),
                StatusIs(absl::StatusCode::kInvalidArgument));
    // Ed25519: 63 or 65 bytes; SM2: a DER length that no longer matches, trailing garbage.
    EXPECT_THAT(verifier->Verify(message, signature.substr(0, signature.size() - 1)),
                StatusIs(absl::StatusCode::kInvalidArgument));
    EXPECT_THAT(verifier->Verify(message, signature + '\0'),
                StatusIs(absl::StatusCode::kInvalidArgument));
    // Every single-bit change fails; which code depends on where it lands for SM2 (DER header
    // bytes: kInvalidArgument, r and s: kDataLoss), always kDataLoss for Ed25519.
    const ::testing::Matcher<absl::Status> flipped_bit =
        algorithm == SignatureAlgorithm::kEd25519
            ? ::testing::Matcher<absl::Status>(StatusIs(absl::StatusCode::kDataLoss))
            : AnyOf(StatusIs(absl::StatusCode::kDataLoss),
                    StatusIs(absl::StatusCode::kInvalidArgument));
    for (size_t i = 0; i < signature.size(); ++i) {
      EXPECT_THAT(verifier->Verify(message, Flipped(signature, i)), flipped_bit) << "byte " << i;
    }
  }
}

TEST(LogVerifier, Sm2RefusesNonDerSignatures) {
  ASSERT_OK_AND_ASSIGN(const std::string pem, GeneratePrivateKeyPem(SignatureAlgorithm::kSm2));
  ASSERT_OK_AND_ASSIGN(const auto verifier, LogVerifier::FromPem(pem, "k"));
  // SEQUENCE { INTEGER 1, INTEGER 1 } is DER; the rest encode the same values otherwise.
  EXPECT_THAT(verifier->Verify("m", Unhex("3006020101020101")),
              StatusIs(absl::StatusCode::kDataLoss));
  for (std::string_view hex : {
           "300702020001020101",    // r with a superfluous 0x00: BER, not DER
           "30800201010201010000",  // indefinite length
           "300602010102010100",    // trailing byte
           "3006020101040101",      // s is an OCTET STRING
           "30",                    // truncated
       }) {
    EXPECT_THAT(verifier->Verify("m", Unhex(hex)),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("DER")))
        << hex;
  }
}

TEST_F(SigningKeyTest, RefusesOtherKeyTypesNamingThem) {
  struct Case {
    std::vector<std::string> genpkey;
    std::string found;
  };
  const std::vector<Case> cases = {
      {{"-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"}, "RSA"},
      {{"-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"}, "EC on curve prime256v1"},
      {{"-algorithm", "ed448"}, "ED448"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.found);
    const std::string key = Path("other.pem");
    std::vector<std::string> args = {"genpkey", "-out", key};
    args.insert(args.end(), c.genpkey.begin(), c.genpkey.end());
    ASSERT_TRUE(OpensslOk(args));
    EXPECT_THAT(
        LogSigner::FromPemFile(key),
        StatusIs(absl::StatusCode::kInvalidArgument,
                 absl::StrCat("audit key ", key, ": not an Ed25519 or SM2 private key (found ",
                              c.found, ")")));
    const std::string public_key = Path("other.pub.pem");
    ASSERT_TRUE(OpensslOk({"pkey", "-in", key, "-pubout", "-out", public_key}));
    EXPECT_THAT(LogVerifier::FromPemFile(public_key),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         absl::StrCat("audit key ", public_key,
                                      ": not an Ed25519 or SM2 public key (found ", c.found, ")")));
    EXPECT_THAT(LogVerifier::FromPemFile(key),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("public key (found")));
  }
}

TEST_F(SigningKeyTest, RefusesEncryptedPemsWithoutAskingForAPassphrase) {
  const std::string pkcs8 = Path("encrypted.pem");  // "ENCRYPTED PRIVATE KEY" (PKCS#8)
  ASSERT_TRUE(OpensslOk(
      {"genpkey", "-algorithm", "ed25519", "-aes-256-cbc", "-pass", "pass:secret", "-out", pkcs8}));
  const std::string plain = Path("sm2.pem");
  ASSERT_TRUE(OpensslOk({"genpkey", "-algorithm", "SM2", "-out", plain}));
  const std::string sec1 = Path("encrypted_sec1.pem");  // "Proc-Type: 4,ENCRYPTED" (SEC1)
  ASSERT_TRUE(OpensslOk({"ec", "-in", plain, "-aes256", "-passout", "pass:secret", "-out", sec1}));
  for (const std::string& key : {pkcs8, sec1}) {
    SCOPED_TRACE(::vigil::testing::ReadFile(key));
    const auto refused = StatusIs(absl::StatusCode::kInvalidArgument,
                                  AllOf(StartsWith(absl::StrCat("audit key ", key, ": ")),
                                        HasSubstr("encrypted"), HasSubstr("passphrase")));
    EXPECT_THAT(LogSigner::FromPemFile(key), refused);
    EXPECT_THAT(LogVerifier::FromPemFile(key), refused);
  }
}

TEST_F(SigningKeyTest, RefusesWhatIsNotAKeyFile) {
  ASSERT_OK_AND_ASSIGN(const std::string pem, GeneratePrivateKeyPem(SignatureAlgorithm::kSm2));
  ASSERT_OK_AND_ASSIGN(const auto signer, LogSigner::FromPem(pem, "k"));
  EXPECT_THAT(LogSigner::FromPem(signer->PublicKeyPem(), "pub.pem"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(StartsWith("audit key pub.pem: "), HasSubstr("public key"))));
  EXPECT_THAT(LogSigner::FromPem("", "empty"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       StartsWith("audit key empty: no PEM private key")));
  EXPECT_THAT(LogVerifier::FromPem("not a key", "text"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       StartsWith("audit key text: no PEM public or private key")));
  // A PUBLIC KEY block whose body is not a SubjectPublicKeyInfo (here: a PKCS#8 private key).
  std::string relabelled = pem;
  for (const char* label : {"BEGIN PRIVATE KEY", "END PRIVATE KEY"}) {
    relabelled.replace(relabelled.find(label), std::string_view(label).size(),
                       label[0] == 'B' ? "BEGIN PUBLIC KEY" : "END PUBLIC KEY");
  }
  EXPECT_THAT(LogVerifier::FromPem(relabelled, "odd"),
              StatusIs(absl::StatusCode::kInvalidArgument, StartsWith("audit key odd: ")));

  const std::string missing = Path("missing.pem");
  EXPECT_THAT(LogSigner::FromPemFile(missing),
              StatusIs(absl::StatusCode::kNotFound, StartsWith("audit key " + missing + ": ")));
  EXPECT_THAT(LogVerifier::FromPemFile(missing), StatusIs(absl::StatusCode::kNotFound));
  // A key followed by 64 KiB of something else is not a key file.
  const std::string huge = Write("huge.pem", pem + std::string(64 << 10, '#'));
  EXPECT_THAT(LogSigner::FromPemFile(huge),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("64 KiB")));
}

TEST_F(SigningKeyTest, GeneratedKeysAreUnencryptedPkcs8AndRoundTrip) {
  for (SignatureAlgorithm algorithm : {SignatureAlgorithm::kEd25519, SignatureAlgorithm::kSm2}) {
    SCOPED_TRACE(SignatureAlgorithmName(algorithm));
    ASSERT_OK_AND_ASSIGN(const std::string pem, GeneratePrivateKeyPem(algorithm));
    EXPECT_THAT(pem, StartsWith("-----BEGIN PRIVATE KEY-----\n"));
    // The CLI reads it as the right kind of key.
    const std::string key = Write("generated.pem", pem);
    ASSERT_TRUE(OpensslOk({"pkey", "-in", key, "-noout", "-text"}));
    EXPECT_THAT(::vigil::testing::ReadFile(Path("openssl.log")),
                algorithm == SignatureAlgorithm::kSm2 ? HasSubstr("ASN1 OID: SM2")
                                                      : HasSubstr("ED25519 Private-Key"));

    ASSERT_OK_AND_ASSIGN(const auto signer, LogSigner::FromPem(pem, "generated"));
    EXPECT_EQ(signer->algorithm(), algorithm);
    EXPECT_EQ(signer->key_id(), OpensslKeyId(key));
    ASSERT_OK_AND_ASSIGN(const std::string signature, signer->Sign("tree head"));
    ASSERT_OK_AND_ASSIGN(const auto verifier, LogVerifier::FromPem(signer->PublicKeyPem(), "pub"));
    EXPECT_OK(verifier->Verify("tree head", signature));
    const std::string public_key = Write("generated.pub.pem", signer->PublicKeyPem());
    EXPECT_TRUE(OpensslVerifies(algorithm, public_key, "tree head", signature));

    // Fresh randomness each time.
    ASSERT_OK_AND_ASSIGN(const std::string again, GeneratePrivateKeyPem(algorithm));
    ASSERT_OK_AND_ASSIGN(const auto other, LogSigner::FromPem(again, "again"));
    EXPECT_NE(other->key_id(), signer->key_id());
  }
}

// Failures leave nothing in OpenSSL's per-thread error queue, where the next OpenSSL user on the
// thread would find it and report it as its own.
TEST(SigningKey, FailuresLeaveOpensslErrorQueueEmpty) {
  ERR_clear_error();
  EXPECT_FALSE(LogSigner::FromPem("garbage", "g").ok());
  EXPECT_EQ(ERR_peek_error(), 0u);
  EXPECT_FALSE(
      LogVerifier::FromPem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", "g")
          .ok());
  EXPECT_EQ(ERR_peek_error(), 0u);
  ASSERT_OK_AND_ASSIGN(const std::string pem, GeneratePrivateKeyPem(SignatureAlgorithm::kSm2));
  ASSERT_OK_AND_ASSIGN(const auto verifier, LogVerifier::FromPem(pem, "k"));
  EXPECT_FALSE(verifier->Verify("m", Unhex("3006020101020101")).ok());
  EXPECT_EQ(ERR_peek_error(), 0u);
  EXPECT_FALSE(verifier->Verify("m", Unhex("300702020001020101")).ok());
  EXPECT_EQ(ERR_peek_error(), 0u);
}

// One signer and one verifier per algorithm, shared by 8 threads that sign and verify at once.
TEST(SigningKey, ConcurrentSignAndVerify) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 40;
  for (SignatureAlgorithm algorithm : {SignatureAlgorithm::kEd25519, SignatureAlgorithm::kSm2}) {
    SCOPED_TRACE(SignatureAlgorithmName(algorithm));
    ASSERT_OK_AND_ASSIGN(const std::string pem, GeneratePrivateKeyPem(algorithm));
    ASSERT_OK_AND_ASSIGN(const auto signer, LogSigner::FromPem(pem, "k"));
    ASSERT_OK_AND_ASSIGN(const auto verifier, LogVerifier::FromPem(signer->PublicKeyPem(), "k"));
    // Ed25519 is deterministic: every thread must reproduce this.
    ASSERT_OK_AND_ASSIGN(const std::string reference, signer->Sign("shared"));

    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int round = 0; round < kRounds; ++round) {
          const std::string message = absl::StrCat("thread ", t, " round ", round);
          const absl::StatusOr<std::string> signature = signer->Sign(message);
          if (!signature.ok() || !verifier->Verify(message, *signature).ok() ||
              verifier->Verify(message + ".", *signature).code() != absl::StatusCode::kDataLoss ||
              !verifier->Verify("shared", reference).ok()) {
            ++failures;
          }
          if (algorithm == SignatureAlgorithm::kEd25519) {
            const absl::StatusOr<std::string> shared = signer->Sign("shared");
            if (!shared.ok() || *shared != reference) ++failures;
          }
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(failures.load(), 0);
  }
}

TEST_F(SigningKeyTest, RefusesAPrivateKeyFileOthersMayReadOrReplace) {
  const std::string key = Path("open.pem");
  ASSERT_TRUE(OpensslOk({"genpkey", "-algorithm", "ed25519", "-out", key}));
  for (const mode_t mode : {0640, 0604, 0620}) {
    ::chmod(key.c_str(), mode);
    EXPECT_THAT(LogSigner::FromPemFile(key).status(),
                StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("chmod 600")))
        << std::oct << mode;
  }
  ::chmod(key.c_str(), 0600);
  EXPECT_OK(LogSigner::FromPemFile(key).status());
  // A public key may be read by anyone.
  const std::string public_key = Path("open.pub.pem");
  ASSERT_TRUE(OpensslOk({"pkey", "-in", key, "-pubout", "-out", public_key}));
  ::chmod(public_key.c_str(), 0644);
  EXPECT_OK(LogVerifier::FromPemFile(public_key).status());
}

}  // namespace
}  // namespace vigil::audit
