// The formats one payment message arrives in over the API (POST /v1/score), and reading the
// ones that are not vigil's JSON: SWIFT MT (swift_mt_transaction.h) and ISO 20022 (iso20022.h).
// JSON has its own reusable parser (json_parser.h), which the caller keeps per thread.
//
// Thread safety: pure functions.
#ifndef VIGIL_INGEST_PAYMENT_MESSAGE_H_
#define VIGIL_INGEST_PAYMENT_MESSAGE_H_

#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/core/transaction.h"

namespace vigil {

enum class MessageFormat { kJson, kSwiftMt, kIso20022 };

// "json", "swift_mt", "iso20022": the input format the audit log records.
std::string_view MessageFormatName(MessageFormat format);

// The format of a media type (lower case, without parameters): application/json;
// application/xml or text/xml (ISO 20022); application/x-swift-mt or text/plain (SWIFT MT).
// nullopt for any other.
std::optional<MessageFormat> MessageFormatOfMediaType(std::string_view media_type);

// The media types MessageFormatOfMediaType accepts, for error messages.
inline constexpr std::string_view kPaymentMediaTypes =
    "application/json, application/xml (ISO 20022 pacs.008/pacs.009), "
    "application/x-swift-mt or text/plain (SWIFT MT103/MT202/MT202COV)";

// Reads one SWIFT MT message (one transaction) or one ISO 20022 message (one or more).
// kInvalidArgument for a malformed or invalid message, kUnimplemented for a message type vigil
// does not read; the message says where (block, tag and line, or the XPath).
// REQUIRES: format is kSwiftMt or kIso20022.
absl::StatusOr<std::vector<Transaction>> ReadPaymentMessage(std::string_view body,
                                                            MessageFormat format);

}  // namespace vigil

#endif  // VIGIL_INGEST_PAYMENT_MESSAGE_H_
