// SwiftMtMessage: a SWIFT FIN (MT) message split into its blocks, and block 4 into its fields,
// with the structure checked: the basic header {1:}, the application header {2:} (input or
// output), the user header {3:}, trailer {5:} and system trailer {S:} as tag/value sub-blocks,
// and the text block
// {4: CrLf :TAG:value ... CrLf -}; and the network's acknowledgement (ACK or NAK) that exports
// write in front of a message. Business rules (mandatory fields per message type, field
// formats) belong to the message types built on it (swift_mt103.h); this layer only splits.
//
// Views, not copies: every string_view points into the text given to Parse, which must outlive
// the message. Line endings may be CrLf (the network's) or Lf; the views keep them as they are
// (MtLines splits a value into its lines).
//
// Errors (kInvalidArgument) name the block, the line (1-based, counted in the whole text), the
// tag where there is one, and the reason: "SWIFT MT block 4, line 7, field :32A: ...".
#ifndef VIGIL_INGEST_SWIFT_MT_H_
#define VIGIL_INGEST_SWIFT_MT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace vigil {

// {1:F01BANKBEBBAXXX0000000000}: application F (FIN), service 01, the logical terminal
// (BIC8 + terminal code + branch), session and sequence numbers.
struct MtBasicHeader {
  char application_id = 'F';
  std::string_view service_id;        // "01"
  std::string_view logical_terminal;  // 12 characters: BIC8, terminal code, branch (3)
  std::string_view session;           // 4 digits
  std::string_view sequence;          // 6 digits
};

// {2:I103DEUTDEFFXXXXN} (input: sent to the network) or
// {2:O1031101051102KKKKESMMAXXX54267818770511021101N} (output: delivered by it).
struct MtApplicationHeader {
  bool input = true;
  std::string_view message_type;  // "103", "202", ...
  // Input: the receiver's address (12 characters). Output: the sender's logical terminal
  // taken from the message input reference (12 characters).
  std::string_view counterparty_address;
  char priority = 'N';  // N normal, U urgent, S system; N when absent
  // Output only: input time (HHMM), the message input reference (28 characters: date,
  // logical terminal, session, sequence), output date (YYMMDD) and time (HHMM).
  std::string_view input_time, input_reference, output_date, output_time;
};

// A field of block 4: ":32A:250827USD7138,40". tag is "32A" (number and option letter);
// value runs to the field's last line, without the final line ending.
struct MtField {
  std::string_view tag;
  std::string_view value;
  int line = 0;  // the line of ":TAG:"

  // The field number (32 for "32A") and option letter ('A'; ' ' for none). Parse guarantees
  // two digits and at most one letter.
  int number() const { return (tag[0] - '0') * 10 + (tag[1] - '0'); }
  char option() const { return tag.size() == 3 ? tag[2] : ' '; }
};

// A sub-block of block 3 or 5: {121:8403c004-66b2-40fc-acba-9f11d1a4ad84}.
struct MtTagValue {
  std::string_view tag;
  std::string_view value;
};

// The network's acknowledgement of a message, as SWIFT Alliance and RJE exports write it in front
// of the message: service message 21, {1:F21<LT><session><sequence>}{4:{177:YYMMDDHHMM}{451:0}}.
// {451:0} is an ACK (the network took the message), {451:1} a NAK (it refused it, the error code
// in {405:}). Block 4 may also carry {108:} (the message user reference) and {106:} (the message
// input reference); a trailer {5:} may follow.
struct MtAcknowledgement {
  // Service "21"; the logical terminal, session and sequence number of the message acknowledged.
  MtBasicHeader basic;
  std::vector<MtTagValue> text;      // block 4's sub-blocks, in order
  std::vector<MtTagValue> trailer;   // block 5's, in order
  bool accepted = true;              // {451:0}; false for a NAK ({451:1})
  std::string_view date_time;        // {177:}, 10 digits YYMMDDHHMM; empty when absent
  std::string_view error_code;       // {405:}, why a NAK refused the message; empty when absent
  std::string_view input_reference;  // {106:} when the ACK carries one (28 characters)
  int line = 1;                      // the line of the acknowledgement's block 4

  // The message input reference the acknowledgement gives the message: {106:}, else the date of
  // {177:} followed by block 1's logical terminal, session and sequence (28 characters, the MIR's
  // layout); empty when it has neither {106:} nor {177:}.
  std::string Reference() const;
  // "NAK {451:1}, error code \"T27\" in {405:}" (or "..., no error code {405:}"), for errors.
  std::string NakReason() const;
};

struct SwiftMtMessage {
  // The acknowledgement exported in front of the message, when there is one.
  std::optional<MtAcknowledgement> acknowledgement;
  MtBasicHeader basic;
  MtApplicationHeader application;
  std::vector<MtTagValue> user_header;  // block 3, in order
  std::vector<MtField> fields;          // block 4, in order
  std::vector<MtTagValue> trailer;      // block 5, in order
  std::vector<MtTagValue> system_trailer;  // block S (added by an interface), in order

  // The sender's and receiver's BIC (8 or 11 characters: BIC8 and branch, the terminal code
  // dropped), from the headers according to the direction.
  std::string SenderBic() const;
  std::string ReceiverBic() const;
  // The first field with this tag ("32A"), or with this number and any option ("50" matches
  // 50A, 50F, 50K) when the tag has no letter; nullptr when absent.
  const MtField* Find(std::string_view tag) const;
  // Block 3's value for "tag" ("121": the UETR), if present.
  std::optional<std::string_view> UserHeader(std::string_view tag) const;

  // Splits "text" (one message; whitespace around it and line endings between blocks are
  // tolerated). Limits: at most kMaxMessageBytes of text and kMaxFields fields. An
  // acknowledgement (service 21) in front of the message is read into "acknowledgement"; the
  // message is the one after it. An acknowledgement with no message after it is an error:
  // kUnimplemented for an ACK (nothing to read as a payment), kInvalidArgument for a NAK (naming
  // its error code). A NAK in front of a message is kept for the mapping to refuse
  // (swift_mt_transaction.h); when the message itself does not split, the error names the NAK
  // too.
  static absl::StatusOr<SwiftMtMessage> Parse(std::string_view text);
  // The same into *out, reusing its vectors' storage (readers that split many messages). On
  // error *out is left partly filled.
  static absl::Status ParseInto(std::string_view text, SwiftMtMessage* out);
};

inline constexpr size_t kMaxMessageBytes = size_t{1} << 20;
inline constexpr size_t kMaxFields = 1000;

// Splits text holding several messages one after the other ("-}{5:...}{1:F01...": exports
// glue them on one line; RJE files put "$" between them) into one view per message. A message
// ends after its text block's "-}" line and the trailer blocks {5:} and {S:} that follow; the
// next starts at "{1:". An acknowledgement (service 21) stays with the message that follows it
// directly (line breaks between them allowed); one followed by "$", by another acknowledgement or
// by nothing is a view of its own (Parse reports it). Text that does not split this way stays
// with the message before it, for Parse to report.
std::vector<std::string_view> SplitSwiftMtMessages(std::string_view text);

// Whether text, white space around it aside, is one acknowledgement (service message 21) and
// nothing else: a reader that finds one on lines of its own keeps it with the next message.
bool IsSwiftMtAcknowledgementOnly(std::string_view text);

// The lines of a field value (without their line endings).
std::vector<std::string_view> MtLines(std::string_view value);

}  // namespace vigil

#endif  // VIGIL_INGEST_SWIFT_MT_H_
