#include "vigil/audit/tree_head.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "vigil/common/string_view.h"
#include "vigil/core/transaction.h"

namespace vigil::audit {
namespace {

using Json = nlohmann::ordered_json;

std::string HeadName(const SignedTreeHead& head) {
  return absl::StrCat("tree head of size ", head.size, " at ", FormatUtc(head.time));
}

}  // namespace

std::string TreeHeadSignedBytes(const SignedTreeHead& head) {
  return absl::StrCat("vigil-audit-tree-head/v1\nlog ", head.log_id, "\nhash ",
                      ToAbsl(HashAlgorithmName(head.hash)), "\nsize ", head.size, "\nroot ",
                      HashHex(head.root), "\ntime ", ToUnixMicros(head.time), "\n");
}

absl::Status SignTreeHead(const LogSigner& signer, SignedTreeHead& head) {
  head.signature_algorithm = signer.algorithm();
  head.key_id = signer.key_id();
  absl::StatusOr<std::string> signature = signer.Sign(TreeHeadSignedBytes(head));
  if (!signature.ok()) return signature.status();
  head.signature = *std::move(signature);
  return absl::OkStatus();
}

absl::Status VerifyTreeHead(const LogVerifier& verifier, const SignedTreeHead& head) {
  if (head.signature_algorithm != verifier.algorithm()) {
    return absl::DataLossError(absl::StrCat(
        HeadName(head), ": signed with ", ToAbsl(SignatureAlgorithmName(head.signature_algorithm)),
        ", the trusted key is ", ToAbsl(SignatureAlgorithmName(verifier.algorithm()))));
  }
  const absl::Status s = verifier.Verify(TreeHeadSignedBytes(head), head.signature);
  if (s.ok()) return s;
  return absl::DataLossError(absl::StrCat(HeadName(head), " (key id ", head.key_id.substr(0, 16),
                                          "): ", s.message()));
}

std::string TreeHeadToJson(const SignedTreeHead& head) {
  Json j;
  j["log_id"] = head.log_id;
  j["hash"] = std::string(HashAlgorithmName(head.hash));
  j["size"] = head.size;
  j["root"] = HashHex(head.root);
  j["time"] = FormatUtc(head.time);
  j["time_us"] = ToUnixMicros(head.time);
  j["signature_algorithm"] = std::string(SignatureAlgorithmName(head.signature_algorithm));
  j["key_id"] = head.key_id;
  j["signature"] = absl::Base64Escape(head.signature);
  return j.dump();
}

absl::StatusOr<SignedTreeHead> TreeHeadFromJson(std::string_view text) {
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError("tree head: not a JSON object");
  }
  auto member = [&](const char* name, Json::value_t type) -> absl::StatusOr<const Json*> {
    auto it = j.find(name);
    if (it == j.end()) return absl::InvalidArgumentError(absl::StrCat("tree head: ", name, " missing"));
    const bool number = type == Json::value_t::number_unsigned;
    if (number ? !it->is_number_unsigned() && !it->is_number_integer() : it->type() != type) {
      return absl::InvalidArgumentError(
          absl::StrCat("tree head: ", name, " must be ", number ? "an integer" : "a string"));
    }
    return &*it;
  };
  SignedTreeHead head;
  absl::StatusOr<const Json*> m = member("log_id", Json::value_t::string);
  if (!m.ok()) return m.status();
  head.log_id = (*m)->get<std::string>();
  if (m = member("hash", Json::value_t::string); !m.ok()) return m.status();
  absl::StatusOr<HashAlgorithm> hash = ParseHashAlgorithm((*m)->get<std::string>());
  if (!hash.ok()) return absl::InvalidArgumentError(absl::StrCat("tree head: hash: ", hash.status().message()));
  head.hash = *hash;
  if (m = member("size", Json::value_t::number_unsigned); !m.ok()) return m.status();
  if ((*m)->is_number_integer() && (*m)->get<int64_t>() < 0) {
    return absl::InvalidArgumentError("tree head: size must not be negative");
  }
  head.size = (*m)->get<uint64_t>();
  if (m = member("root", Json::value_t::string); !m.ok()) return m.status();
  absl::StatusOr<Hash> root = ParseHashHex((*m)->get<std::string>());
  if (!root.ok()) return absl::InvalidArgumentError(absl::StrCat("tree head: root: ", root.status().message()));
  head.root = *root;
  if (m = member("time_us", Json::value_t::number_unsigned); !m.ok()) return m.status();
  head.time = FromUnixMicros((*m)->get<int64_t>());
  if (m = member("signature_algorithm", Json::value_t::string); !m.ok()) return m.status();
  absl::StatusOr<SignatureAlgorithm> algorithm = ParseSignatureAlgorithm((*m)->get<std::string>());
  if (!algorithm.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tree head: signature_algorithm: ", algorithm.status().message()));
  }
  head.signature_algorithm = *algorithm;
  if (m = member("key_id", Json::value_t::string); !m.ok()) return m.status();
  head.key_id = (*m)->get<std::string>();
  if (m = member("signature", Json::value_t::string); !m.ok()) return m.status();
  if (!absl::Base64Unescape((*m)->get<std::string>(), &head.signature)) {
    return absl::InvalidArgumentError("tree head: signature is not base64");
  }
  return head;
}

}  // namespace vigil::audit
