#include "vigil/ingest/payment_message.h"

#include <utility>

#include "vigil/ingest/iso20022.h"
#include "vigil/ingest/swift_mt_transaction.h"

namespace vigil {

std::string_view MessageFormatName(MessageFormat format) {
  switch (format) {
    case MessageFormat::kJson:
      return "json";
    case MessageFormat::kSwiftMt:
      return "swift_mt";
    case MessageFormat::kIso20022:
      return "iso20022";
  }
  return "json";
}

std::optional<MessageFormat> MessageFormatOfMediaType(std::string_view media_type) {
  if (media_type == "application/json") return MessageFormat::kJson;
  if (media_type == "application/xml" || media_type == "text/xml") return MessageFormat::kIso20022;
  if (media_type == "application/x-swift-mt" || media_type == "text/plain") {
    return MessageFormat::kSwiftMt;
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<Transaction>> ReadPaymentMessage(std::string_view body,
                                                            MessageFormat format) {
  if (format == MessageFormat::kIso20022) return ParseIso20022(body);
  absl::StatusOr<Transaction> tx = ParseSwiftMt(body);
  if (!tx.ok()) return tx.status();
  std::vector<Transaction> out;
  out.push_back(*std::move(tx));
  return out;
}

}  // namespace vigil
