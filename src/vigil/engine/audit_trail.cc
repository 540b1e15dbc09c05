#include "vigil/engine/audit_trail.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "vigil/audit/log_hash.h"
#include "vigil/common/string_view.h"

namespace vigil {

AuditTrail::AuditTrail(audit::AuditLog* log, AuditTrailOptions options)
    : log_(log), options_(std::move(options)) {}

absl::Status AuditTrail::Record(absl::Span<const DecisionToRecord> decisions,
                                std::string_view actor) {
  if (decisions.empty()) return absl::OkStatus();
  std::vector<audit::PendingRecord> pending;
  pending.reserve(decisions.size());
  for (const DecisionToRecord& d : decisions) {
    const audit::Hash input_sha256 = audit::Digest(audit::HashAlgorithm::kSha256, d.input);
    pending.push_back(
        {d.transaction->id, audit::EncodeRecordBody(audit::RecordBodyFields{
                                .received = d.received,
                                .decided = d.decided,
                                .actor = actor,
                                .source = options_.source,
                                .input_format = d.input_format.empty()
                                                    ? std::string_view(options_.input_format)
                                                    : d.input_format,
                                .input_sha256 = &input_sha256,
                                .transaction = d.transaction,
                                .features = d.features,
                                .decision = d.decision})});
  }
  absl::StatusOr<std::vector<audit::AppendedRecord>> appended =
      log_->Append(std::move(pending), options_.durable_ack);
  return appended.status();
}

absl::StatusOr<std::optional<audit::AuditRecord>> AuditTrail::Recorded(
    std::string_view transaction_id) const {
  absl::StatusOr<std::optional<uint64_t>> sequence = log_->FindTransaction(transaction_id);
  if (!sequence.ok()) return sequence.status();
  if (!sequence->has_value()) return std::optional<audit::AuditRecord>();
  absl::StatusOr<std::string> bytes = log_->ReadRecord(**sequence);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<audit::AuditRecord> record = audit::DecodeRecord(*bytes);
  if (!record.ok()) return record.status();
  return std::optional<audit::AuditRecord>(*std::move(record));
}

std::string DefaultSigningKeyPath(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / "audit_signing_key.pem").string();
}

absl::StatusOr<std::shared_ptr<const audit::LogSigner>> DataDirSigningKey(
    const std::string& configured, const std::string& data_dir, bool* created) {
  if (configured.empty()) return LoadOrCreateSigningKey(DefaultSigningKeyPath(data_dir), created);
  if (created != nullptr) *created = false;
  absl::StatusOr<std::unique_ptr<audit::LogSigner>> signer =
      audit::LogSigner::FromPemFile(configured);
  if (!signer.ok()) return signer.status();
  return std::shared_ptr<const audit::LogSigner>(*std::move(signer));
}

absl::StatusOr<std::shared_ptr<const audit::LogSigner>> LoadOrCreateSigningKey(
    const std::string& path, bool* created) {
  if (created != nullptr) *created = false;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    absl::StatusOr<std::string> pem =
        audit::GeneratePrivateKeyPem(audit::SignatureAlgorithm::kEd25519);
    if (!pem.ok()) return pem.status();
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    const std::string dir = parent.empty() ? "." : parent.string();
    std::filesystem::create_directories(dir, ec);
    const auto failed = [&](const char* what) {
      return absl::UnavailableError(
          absl::StrCat("audit signing key ", path, ": cannot ", what, ": ", std::strerror(errno)));
    };
    // Written whole and synced under a temporary name, then linked into place: the key is
    // either absent or complete, also after a crash, and of two processes starting on one
    // fresh data dir exactly one key wins (link fails with EEXIST for the other).
    std::string temp = absl::StrCat(path, ".tmp.XXXXXX");
    const int fd = ::mkstemp(temp.data());
    if (fd < 0) return failed("create a temporary file");
    const bool written =
        ::fchmod(fd, 0600) == 0 &&
        ::write(fd, pem->data(), pem->size()) == static_cast<ssize_t>(pem->size()) &&
        ::fsync(fd) == 0;
    const int write_errno = errno;
    ::close(fd);
    if (!written) {
      ::unlink(temp.c_str());
      errno = write_errno;
      return failed("write");
    }
    const int linked = ::link(temp.c_str(), path.c_str());
    const int link_errno = errno;
    ::unlink(temp.c_str());
    if (linked != 0 && link_errno != EEXIST) {
      errno = link_errno;
      return failed("create");
    }
    if (linked == 0) {
      // The directory entry must survive an OS crash too, or the log would outlive its key.
      const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dir_fd < 0 || ::fsync(dir_fd) != 0) {
        if (dir_fd >= 0) ::close(dir_fd);
        return failed("sync its directory");
      }
      ::close(dir_fd);
      if (created != nullptr) *created = true;
    }
  }
  absl::StatusOr<std::unique_ptr<audit::LogSigner>> signer = audit::LogSigner::FromPemFile(path);
  if (!signer.ok()) return signer.status();
  return std::shared_ptr<const audit::LogSigner>(*std::move(signer));
}

}  // namespace vigil
