// What the audit module's tests share: a fresh signing key, key-encryption keys made by the
// openssl command line (TestKek), the 8-byte big-endian key under which the log stores a chunk
// of records (or a tree head) by sequence number (or size), and StoredRecords, which edits the
// stored records as someone with write access to the store could. Test-only.
#ifndef VIGIL_AUDIT_TESTING_LOG_H_
#define VIGIL_AUDIT_TESTING_LOG_H_

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "vigil/audit/record_chunk.h"
#include "vigil/audit/signing_key.h"
#include "vigil/crypto/key_encryption_key.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/files.h"
#include "vigil/testing/subprocess.h"

namespace vigil::audit {

inline std::shared_ptr<const LogSigner> TestSigner(
    SignatureAlgorithm algorithm = SignatureAlgorithm::kEd25519) {
  absl::StatusOr<std::string> pem = GeneratePrivateKeyPem(algorithm);
  EXPECT_TRUE(pem.ok()) << pem.status();
  absl::StatusOr<std::unique_ptr<LogSigner>> signer = LogSigner::FromPem(*pem, "test key");
  EXPECT_TRUE(signer.ok()) << signer.status();
  return std::shared_ptr<const LogSigner>(*std::move(signer));
}

// A key-encryption key pair made by `openssl genpkey` (RSA-2048 or SM2) in "dir": the private
// key file (mode 0600) and the public one, and both halves loaded.
struct TestKek {
  std::string private_pem;  // path
  std::string public_pem;   // path
  std::shared_ptr<const crypto::KeyEncryptionKey> private_key;
  std::shared_ptr<const crypto::KeyEncryptionKey> public_key;
};
enum class KekKind { kRsa, kSm2 };
inline TestKek MakeTestKek(const std::string& dir, const std::string& name, KekKind kind) {
  std::filesystem::create_directories(dir);
  TestKek kek;
  kek.private_pem = dir + "/" + name + ".pem";
  kek.public_pem = dir + "/" + name + ".pub.pem";
  const std::string log = dir + "/" + name + ".openssl.log";
  std::vector<std::string> args = {"genpkey", "-algorithm", kind == KekKind::kRsa ? "RSA" : "SM2"};
  if (kind == KekKind::kRsa) args.insert(args.end(), {"-pkeyopt", "rsa_keygen_bits:2048"});
  args.insert(args.end(), {"-out", kek.private_pem});
  EXPECT_EQ(::vigil::testing::RunProcess("/usr/bin/openssl", args, log), 0)
      << ::vigil::testing::ReadFile(log);
  ::chmod(kek.private_pem.c_str(), 0600);
  EXPECT_EQ(::vigil::testing::RunProcess(
                "/usr/bin/openssl",
                {"pkey", "-in", kek.private_pem, "-pubout", "-out", kek.public_pem}, log),
            0)
      << ::vigil::testing::ReadFile(log);
  absl::StatusOr<crypto::KeyEncryptionKey> private_key =
      crypto::KeyEncryptionKey::LoadPrivateKeyFile(kek.private_pem);
  EXPECT_TRUE(private_key.ok()) << private_key.status();
  absl::StatusOr<crypto::KeyEncryptionKey> public_key =
      crypto::KeyEncryptionKey::LoadPublicKeyFile(kek.public_pem);
  EXPECT_TRUE(public_key.ok()) << public_key.status();
  if (private_key.ok()) {
    kek.private_key = std::make_shared<const crypto::KeyEncryptionKey>(*std::move(private_key));
  }
  if (public_key.ok()) {
    kek.public_key = std::make_shared<const crypto::KeyEncryptionKey>(*std::move(public_key));
  }
  return kek;
}

inline std::string SequenceKey(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i, v >>= 8) out[static_cast<size_t>(i)] = static_cast<char>(v & 0xff);
  return out;
}

// Edits the records of a log in its store ("audit_records"), re-encoding the chunk that holds
// them as the log would (same codec), so that what the verifier sees is an altered record, not
// an unreadable chunk.
class StoredRecords {
 public:
  static constexpr char kFamily[] = "audit_records";

  explicit StoredRecords(KvStore* store) : store_(store) {}

  // Every chunk as stored: (key, value), in order. To put back with Restore.
  std::vector<std::pair<std::string, std::string>> Snapshot() const {
    std::vector<std::pair<std::string, std::string>> chunks;
    const absl::Status s =
        store_->ForEach(kFamily, "", [&](absl::string_view key, absl::string_view value) {
          chunks.emplace_back(std::string(key), std::string(value));
          return absl::OkStatus();
        });
    EXPECT_TRUE(s.ok()) << s;
    return chunks;
  }
  absl::Status Restore(const std::vector<std::pair<std::string, std::string>>& chunks) {
    for (const auto& [key, value] : Snapshot()) {
      if (absl::Status s = store_->Delete(kFamily, key); !s.ok()) return s;
    }
    for (const auto& [key, value] : chunks) {
      if (absl::Status s = store_->Put(kFamily, key, value); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // The stored bytes of record "sequence".
  absl::StatusOr<std::string> Read(uint64_t sequence) {
    std::string bytes;
    absl::Status s = Edit(sequence, [&](std::vector<std::string>& records, size_t i) {
      bytes = records[i];
    });
    if (!s.ok()) return s;
    return bytes;
  }
  // Replaces the stored bytes of record "sequence".
  absl::Status Replace(uint64_t sequence, std::string_view bytes) {
    return Edit(sequence, [&](std::vector<std::string>& records, size_t i) {
      records[i] = std::string(bytes);
    });
  }
  // Removes record "sequence" from its chunk: the records after it in the chunk move up.
  absl::Status Remove(uint64_t sequence) {
    return Edit(sequence, [](std::vector<std::string>& records, size_t i) {
      records.erase(records.begin() + static_cast<std::ptrdiff_t>(i));
    });
  }
  // Removes records "sequence" and after: what a truncated log looks like.
  absl::Status TruncateFrom(uint64_t sequence) {
    for (const auto& [key, value] : Snapshot()) {
      if (Position(key) >= sequence) {
        if (absl::Status s = store_->Delete(kFamily, key); !s.ok()) return s;
      }
    }
    const absl::Status s = Edit(sequence, [](std::vector<std::string>& records, size_t i) {
      records.resize(i);
    });
    return absl::IsNotFound(s) ? absl::OkStatus() : s;  // nothing left to trim
  }

 private:
  static uint64_t Position(std::string_view key) {
    uint64_t v = 0;
    for (char c : key) v = v << 8 | static_cast<uint8_t>(c);
    return v;
  }

  template <typename Fn>
  absl::Status Edit(uint64_t sequence, Fn fn) {
    std::string key, value;
    for (auto& [k, v] : Snapshot()) {
      if (Position(k) > sequence) break;
      key = std::move(k);
      value = std::move(v);
    }
    if (key.empty()) return absl::NotFoundError(absl::StrCat("no chunk holds ", sequence));
    absl::StatusOr<RecordChunk> chunk = RecordChunk::Parse(value);
    if (!chunk.ok()) return chunk.status();
    const uint64_t first = Position(key);
    if (sequence - first >= chunk->size()) {
      return absl::NotFoundError(absl::StrCat("no record ", sequence));
    }
    std::vector<std::string> records;
    for (size_t i = 0; i < chunk->size(); ++i) records.emplace_back(chunk->record(i));
    fn(records, static_cast<size_t>(sequence - first));
    if (records.empty()) return store_->Delete(kFamily, key);
    return store_->Put(kFamily, key, EncodeRecordChunk(records, chunk->codec()));
  }

  KvStore* store_;
};

}  // namespace vigil::audit

#endif  // VIGIL_AUDIT_TESTING_LOG_H_
