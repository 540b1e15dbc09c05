#include "vigil/server/score_body.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "simdjson.h"
#include "vigil/common/json_text.h"
#include "vigil/common/string_view.h"
#include "vigil/ingest/json_parser.h"
#include "vigil/ingest/record_error.h"
#include "vigil/ingest/swift_mt.h"
#include "vigil/server/http_status.h"

namespace vigil {
namespace {

using Steady = std::chrono::steady_clock;

ScoreReply MessageError(const absl::Status& status) {
  const bool unsupported = status.code() == absl::StatusCode::kUnimplemented;
  return ErrorReply(HttpStatusOf(unsupported ? status.code() : absl::StatusCode::kInvalidArgument),
                    unsupported ? "unsupported_message_type" : "invalid_message", "$",
                    ToStd(status.message()));
}

ScoreBody Refused(ScoreReply reply) {
  ScoreBody out;
  out.refused = std::move(reply);
  return out;
}

// Parses each JSON item that was not refused while the body was split.
void ParseJsonItems(std::vector<ScoreItem>& items) {
  thread_local JsonTransactionParser parser;  // holds simdjson's buffers: one per thread
  for (ScoreItem& item : items) {
    if (item.refused.has_value()) continue;
    const Steady::time_point t0 = Steady::now();
    RecordError error;
    if (!parser.Parse(item.raw, &item.tx, &error)) {
      item.refused = ErrorReply(400, error.reason, error.field, error.message);
    }
    item.parse = Steady::now() - t0;
  }
}

ScoreBody ReadMessages(std::string_view body, MessageFormat format, bool batch, size_t max_batch,
                       UtcTime received) {
  ScoreBody out;
  const Steady::time_point start = Steady::now();
  if (format == MessageFormat::kIso20022 || !batch) {
    absl::StatusOr<std::vector<Transaction>> read = ReadPaymentMessage(body, format);
    if (!read.ok()) return Refused(MessageError(read.status()));
    if (!batch && read->size() != 1) {
      return Refused(ErrorReply(400, "invalid_message", "$",
                                absl::StrCat("the message holds ", read->size(),
                                             " transactions: POST it to /v1/score/batch")));
    }
    if (read->size() > max_batch) return Refused(BatchTooLargeReply(max_batch));
    const Steady::duration parse = Steady::now() - start;
    for (Transaction& tx : *read) {
      ScoreItem& item = out.items.emplace_back();
      item.raw = body;  // the audit log keeps the hash of the message as received
      item.tx = std::move(tx);
      item.tx.event_time = received;  // see ScoreRequest::format
      item.from_message = true;
      item.parse = parse;
    }
  } else {
    for (std::string_view message : SplitSwiftMtMessages(body)) {
      if (out.items.size() == max_batch) return Refused(BatchTooLargeReply(max_batch));
      ScoreItem& item = out.items.emplace_back();
      item.raw = message;
      item.from_message = true;
      const Steady::time_point t0 = Steady::now();
      absl::StatusOr<std::vector<Transaction>> read = ReadPaymentMessage(message, format);
      item.parse = Steady::now() - t0;
      if (!read.ok()) {
        item.refused = MessageError(read.status());
        continue;
      }
      item.tx = std::move((*read)[0]);
      item.tx.event_time = received;
    }
  }
  if (out.items.empty()) {
    return Refused(ErrorReply(400, "invalid_message", "$", "the body holds no message"));
  }
  return out;
}

ScoreBody ReadJsonArray(std::string_view body, size_t max_batch) {
  // The array's elements, as raw JSON text (each is then parsed by the transaction parser).
  simdjson::padded_string padded(body);
  simdjson::ondemand::parser parser;
  const auto invalid = [](std::string_view message, std::string_view code = "invalid_field") {
    return Refused(ErrorReply(400, code, "$", message));
  };
  simdjson::ondemand::document doc;
  simdjson::ondemand::array array;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS) {
    return invalid("the body is not valid JSON", "invalid_json");
  }
  if (const simdjson::error_code e = doc.get_array().get(array); e != simdjson::SUCCESS) {
    return e == simdjson::INCORRECT_TYPE ? invalid("the body must be a JSON array of transactions")
                                         : invalid("the body is not valid JSON", "invalid_json");
  }
  ScoreBody out;
  for (auto element : array) {
    if (out.items.size() == max_batch) return Refused(BatchTooLargeReply(max_batch));
    std::string_view raw;
    simdjson::ondemand::object object;
    const simdjson::error_code is_object = element.get_object().get(object);
    if (is_object == simdjson::INCORRECT_TYPE) {
      // Not a transaction: that item's error; the others are still decided.
      ScoreItem& item = out.items.emplace_back();
      item.refused = ErrorReply(400, "invalid_field", absl::StrCat("$[", out.items.size() - 1, "]"),
                                "a batch item must be a JSON object (a transaction)");
      continue;
    }
    if (is_object != simdjson::SUCCESS || object.raw_json().get(raw) != simdjson::SUCCESS) {
      return invalid(absl::StrCat("element ", out.items.size(), " is not valid JSON"),
                     "invalid_json");
    }
    ScoreItem& item = out.items.emplace_back();
    // raw_json points into the padded copy: keep offsets into the caller's body instead.
    item.raw = body.substr(static_cast<size_t>(raw.data() - padded.data()), raw.size());
  }
  if (out.items.empty()) return invalid("the array holds no transactions");
  return out;
}

}  // namespace

ScoreBody ReadScoreBody(std::string_view body, MessageFormat format, bool batch, size_t max_batch,
                        UtcTime received) {
  if (format != MessageFormat::kJson) return ReadMessages(body, format, batch, max_batch, received);
  ScoreBody out;
  if (batch) {
    out = ReadJsonArray(body, max_batch);
  } else {
    out.items.emplace_back().raw = body;
  }
  ParseJsonItems(out.items);
  return out;
}

ScoreReply ErrorReply(int status, std::string_view code, std::string_view field,
                      std::string_view message) {
  ScoreReply r;
  r.status = status;
  r.error_code = std::string(code);
  r.body = JsonErrorBody(code, field, message);
  return r;
}

ScoreReply BatchTooLargeReply(size_t max_batch) {
  return ErrorReply(413, "batch_too_large", "$",
                    absl::StrCat("a batch holds at most ", max_batch, " transactions; split it"));
}

ScoreReply BatchReplyOf(const std::vector<const ScoreReply*>& replies) {
  ScoreReply out;
  out.body = "{\"results\":[";
  for (size_t i = 0; i < replies.size(); ++i) {
    if (i > 0) out.body.push_back(',');
    const ScoreReply& r = *replies[i];
    if (r.status == 409) out.conflicts.push_back(r.transaction_id);
    if (r.status == 200) {
      out.body += r.body;
    } else {
      absl::StrAppend(&out.body, "{\"index\":", i, ",\"status\":", r.status, ",");
      out.body.append(r.body, 1, std::string::npos);  // the error body's members
    }
  }
  out.body += "]}";
  return out;
}

}  // namespace vigil
