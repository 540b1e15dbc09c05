#include "vigil/ingest/internal/line_buffer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"

namespace vigil::ingest_internal {
namespace {

class FileSource final : public ByteSource {
 public:
  FileSource(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~FileSource() override { ::close(fd_); }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;

  absl::StatusOr<size_t> Read(char* dst, size_t n) override {
    for (;;) {
      const ssize_t got = ::read(fd_, dst, n);
      if (got >= 0) return static_cast<size_t>(got);
      if (errno == EINTR) continue;
      return absl::ErrnoToStatus(errno, absl::StrCat("read ", path_));
    }
  }

 private:
  const int fd_;
  const std::string path_;
};

class StringSource final : public ByteSource {
 public:
  explicit StringSource(std::string data) : data_(std::move(data)) {}
  absl::StatusOr<size_t> Read(char* dst, size_t n) override {
    const size_t take = std::min(n, data_.size() - pos_);
    std::memcpy(dst, data_.data() + pos_, take);
    pos_ += take;
    return take;
  }

 private:
  const std::string data_;
  size_t pos_ = 0;
};

constexpr char kUtf8Bom[] = "\xEF\xBB\xBF";

}  // namespace

absl::StatusOr<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("open ", path));
  // Advisory only: the kernel may read ahead more aggressively. Failure changes nothing.
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  return std::make_unique<FileSource>(fd, path);
}

std::unique_ptr<ByteSource> NewStringSource(std::string data) {
  return std::make_unique<StringSource>(std::move(data));
}

LineBuffer::LineBuffer(std::unique_ptr<ByteSource> source, size_t max_record_bytes,
                       size_t chunk_bytes)
    : source_(std::move(source)),
      max_record_bytes_(std::max<size_t>(max_record_bytes, 1)),
      chunk_bytes_(std::max<size_t>(chunk_bytes, 64)) {}

absl::StatusOr<bool> LineBuffer::Fill() {
  if (eof_) return false;
  // Keep only the current record and the partial line after it.
  if (rec_begin_ > 0) {
    const size_t shift = rec_begin_;
    std::memmove(buf_.get(), buf_.get() + shift, end_ - shift);
    rec_begin_ = 0;
    rec_end_ -= shift;
    last_line_begin_ -= shift;
    first_line_end_ -= shift;
    scanned_ -= shift;
    end_ -= shift;
  }
  // Grow when less than half a chunk is free: a read(2) should stay large.
  if (capacity_ - end_ < chunk_bytes_ / 2) {
    const size_t new_capacity = std::max(capacity_ * 2, end_ + chunk_bytes_);
    auto bigger = std::make_unique<char[]>(new_capacity);
    if (end_ > 0) std::memcpy(bigger.get(), buf_.get(), end_);
    buf_ = std::move(bigger);
    capacity_ = new_capacity;
  }
  VIGIL_ASSIGN_OR_RETURN(const size_t got, source_->Read(buf_.get() + end_, capacity_ - end_));
  if (got == 0) {
    eof_ = true;
    return false;
  }
  end_ += got;
  return true;
}

absl::Status LineBuffer::SkipLine() {
  size_t from = std::max(scanned_, rec_end_);
  for (;;) {
    const void* nl = std::memchr(buf_.get() + from, '\n', end_ - from);
    if (nl != nullptr) {
      rec_begin_ = static_cast<size_t>(static_cast<const char*>(nl) - buf_.get()) + 1;
      break;
    }
    rec_begin_ = end_;  // nothing to keep
    rec_end_ = last_line_begin_ = first_line_end_ = scanned_ = end_;
    VIGIL_ASSIGN_OR_RETURN(const bool more, Fill());
    if (!more) break;
    from = scanned_;
  }
  rec_end_ = last_line_begin_ = first_line_end_ = scanned_ = rec_begin_;
  return absl::OkStatus();
}

absl::StatusOr<LineBuffer::Extend> LineBuffer::ExtendLine() {
  if (!started_) {
    started_ = true;
    while (end_ < 3) {
      VIGIL_ASSIGN_OR_RETURN(const bool more, Fill());
      if (!more) break;
    }
    if (end_ >= 3 && std::memcmp(buf_.get(), kUtf8Bom, 3) == 0) {
      rec_begin_ = rec_end_ = last_line_begin_ = first_line_end_ = scanned_ = 3;
    }
  }
  for (;;) {
    const size_t from = std::max(scanned_, rec_end_);
    const void* nl = end_ > from ? std::memchr(buf_.get() + from, '\n', end_ - from) : nullptr;
    size_t line_end;
    if (nl != nullptr) {
      line_end = static_cast<size_t>(static_cast<const char*>(nl) - buf_.get()) + 1;
    } else {
      scanned_ = end_;
      line_end = end_;  // provisional: the line is at least this long
    }
    if (line_end - rec_begin_ > max_record_bytes_) {
      if (lines_in_record_ > 0) return Extend::kTooLong;
      VIGIL_RETURN_IF_ERROR(SkipLine());
      lines_in_record_ = 1;
      return Extend::kTooLong;
    }
    if (nl == nullptr) {
      VIGIL_ASSIGN_OR_RETURN(const bool more, Fill());
      if (more) continue;
      if (end_ == rec_end_) return Extend::kEnd;
      line_end = end_;  // the last line has no terminator
    }
    last_line_begin_ = rec_end_;
    rec_end_ = line_end;
    scanned_ = line_end;
    if (lines_in_record_ == 0) first_line_end_ = line_end;
    ++lines_in_record_;
    return Extend::kLine;
  }
}

void LineBuffer::TruncateToFirstLine() {
  if (lines_in_record_ <= 1) return;
  rec_end_ = first_line_end_;
  last_line_begin_ = rec_begin_;
  scanned_ = rec_end_;
  lines_in_record_ = 1;
}

void LineBuffer::DropLastLine() {
  if (lines_in_record_ <= 1) return;
  rec_end_ = scanned_ = last_line_begin_;
  if (--lines_in_record_ == 1) first_line_end_ = rec_end_;
}

void LineBuffer::Unread() {
  rec_end_ = last_line_begin_ = first_line_end_ = scanned_ = rec_begin_;
  lines_in_record_ = 0;
}

void LineBuffer::Consume() {
  record_line_ += lines_in_record_;
  lines_in_record_ = 0;
  rec_begin_ = last_line_begin_ = first_line_end_ = rec_end_;
}

}  // namespace vigil::ingest_internal
