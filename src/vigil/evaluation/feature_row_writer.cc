#include "vigil/evaluation/feature_row_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"

namespace vigil::evaluation {
namespace {

constexpr size_t kBufferBytes = 1 << 20;

absl::Status Errno(absl::string_view op, const std::string& path) {
  return absl::UnavailableError(
      absl::StrCat("features output '", path, "': ", op, ": ", std::strerror(errno)));
}

void AppendCsvField(std::string* out, std::string_view field) {
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) {
    out->append(field);
    return;
  }
  out->push_back('"');
  for (char c : field) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

void AppendNumber(std::string* out, double v) {
  if (std::isnan(v)) return;
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, static_cast<size_t>(end - buf));
}

}  // namespace

FeatureRowWriter::FeatureRowWriter(int fd, std::string path, int64_t offset)
    : fd_(fd), path_(std::move(path)), offset_(offset) {
  buffer_.reserve(kBufferBytes + 4096);
}

FeatureRowWriter::~FeatureRowWriter() {
  (void)FlushBuffer();  // best effort; callers that need durability call Sync()
  ::close(fd_);
}

absl::StatusOr<std::unique_ptr<FeatureRowWriter>> FeatureRowWriter::Create(
    const std::string& path, const FeatureSchema& schema) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("open", path);
  std::unique_ptr<FeatureRowWriter> w(new FeatureRowWriter(fd, path, 0));
  std::string header = "tx_id,timestamp,originator,beneficiary";
  for (const std::string& name : schema.names()) absl::StrAppend(&header, ",", name);
  header += ",label,typology\n";
  w->buffer_ = header;
  w->offset_ = static_cast<int64_t>(header.size());
  return w;
}

absl::StatusOr<std::unique_ptr<FeatureRowWriter>> FeatureRowWriter::ResumeAt(
    const std::string& path, int64_t offset) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Errno("open for resume", path);
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size < offset) {
    ::close(fd);
    return absl::DataLossError(absl::StrCat(
        "features output '", path, "' has ", size, " bytes but the checkpoint recorded ", offset,
        "; it was truncated or replaced since: remove it and the data dir to start over"));
  }
  if (::ftruncate(fd, offset) != 0 || ::lseek(fd, offset, SEEK_SET) != offset) {
    const absl::Status s = Errno("truncate to checkpoint", path);
    ::close(fd);
    return s;
  }
  return std::unique_ptr<FeatureRowWriter>(new FeatureRowWriter(fd, path, offset));
}

absl::Status FeatureRowWriter::Append(const Transaction& tx, absl::Span<const double> values) {
  const size_t before = buffer_.size();
  AppendCsvField(&buffer_, tx.id);
  buffer_.push_back(',');
  buffer_.append(FormatUtc(tx.event_time));
  buffer_.push_back(',');
  AppendCsvField(&buffer_, tx.originator.account_id);
  buffer_.push_back(',');
  AppendCsvField(&buffer_, tx.beneficiary.account_id);
  for (double v : values) {
    buffer_.push_back(',');
    AppendNumber(&buffer_, v);
  }
  buffer_.push_back(',');
  if (tx.label.has_value()) buffer_.push_back(tx.label->is_laundering ? '1' : '0');
  buffer_.push_back(',');
  if (tx.label.has_value()) AppendCsvField(&buffer_, tx.label->typology);
  buffer_.push_back('\n');
  offset_ += static_cast<int64_t>(buffer_.size() - before);
  if (buffer_.size() >= kBufferBytes) return FlushBuffer();
  return absl::OkStatus();
}

absl::Status FeatureRowWriter::FlushBuffer() {
  const char* p = buffer_.data();
  size_t left = buffer_.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("write", path_);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  buffer_.clear();
  return absl::OkStatus();
}

absl::Status FeatureRowWriter::Sync() {
  VIGIL_RETURN_IF_ERROR(FlushBuffer());
  if (::fdatasync(fd_) != 0) return Errno("fdatasync", path_);
  return absl::OkStatus();
}

}  // namespace vigil::evaluation
