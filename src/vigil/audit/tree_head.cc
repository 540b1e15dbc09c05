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

// The members of a chained head: "index", "previous", "every" and "interval_ms", all or none.
absl::StatusOr<TreeHeadChain> ChainFromJson(const Json& j) {
  TreeHeadChain chain;
  auto count = [&](const char* name, uint64_t min) -> absl::StatusOr<uint64_t> {
    auto it = j.find(name);
    if (it == j.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tree head: ", name, " missing (a chained head has index, previous, "
                       "every and interval_ms)"));
    }
    if (!it->is_number_unsigned() || it->get<uint64_t>() < min) {
      return absl::InvalidArgumentError(absl::StrCat("tree head: ", name, " must be an integer >= ",
                                                     min));
    }
    return it->get<uint64_t>();
  };
  absl::StatusOr<uint64_t> v = count("index", 0);
  if (!v.ok()) return v.status();
  chain.index = *v;
  if (v = count("every", 1); !v.ok()) return v.status();
  chain.every_records = *v;
  if (v = count("interval_ms", 0); !v.ok()) return v.status();
  chain.interval_ms = static_cast<int64_t>(*v);
  auto it = j.find("previous");
  if (it == j.end()) return absl::InvalidArgumentError("tree head: previous missing");
  if (it->is_null() != (chain.index == 0)) {
    return absl::InvalidArgumentError(
        "tree head: previous must be null for index 0 and a hash for any other index");
  }
  if (!it->is_null()) {
    if (!it->is_string()) return absl::InvalidArgumentError("tree head: previous must be a string");
    absl::StatusOr<Hash> previous = ParseHashHex(it->get<std::string>());
    if (!previous.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tree head: previous: ", previous.status().message()));
    }
    chain.previous = *previous;
  }
  return chain;
}

}  // namespace

std::string TreeHeadSignedBytes(const SignedTreeHead& head) {
  std::string bytes = absl::StrCat(
      "vigil-audit-tree-head/", head.chain.has_value() ? "v2" : "v1", "\nlog ", head.log_id,
      "\nhash ", ToAbsl(HashAlgorithmName(head.hash)), "\nsize ", head.size, "\nroot ",
      HashHex(head.root), "\ntime ", ToUnixMicros(head.time), "\n");
  if (const std::optional<TreeHeadChain>& c = head.chain; c.has_value()) {
    absl::StrAppend(&bytes, "index ", c->index, "\nprevious ",
                    c->previous.has_value() ? HashHex(*c->previous) : std::string("none"),
                    "\nevery ", c->every_records, "\ninterval_ms ", c->interval_ms, "\n");
  }
  return bytes;
}

Hash TreeHeadHash(const SignedTreeHead& head) {
  return Digest(head.hash, TreeHeadSignedBytes(head));
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
  if (const std::optional<TreeHeadChain>& c = head.chain; c.has_value()) {
    j["index"] = c->index;
    j["previous"] = c->previous.has_value() ? Json(HashHex(*c->previous)) : Json(nullptr);
    j["every"] = c->every_records;
    j["interval_ms"] = c->interval_ms;
  }
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
  if (j.contains("index")) {
    absl::StatusOr<TreeHeadChain> chain = ChainFromJson(j);
    if (!chain.ok()) return chain.status();
    head.chain = *std::move(chain);
  }
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
