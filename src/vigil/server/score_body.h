// ScoreBody: the transactions of a scoring request's body, read the one way every
// ScoringService reads them (docs/serve.md, "Request formats"): one transaction or a JSON array
// of them (parsed by the JSON transaction parser), one SWIFT MT message or several one after the
// other, one ISO 20022 message holding one or more transactions. A payment message's
// transactions are timed by their arrival ("received").
//
// What cannot be read at all (not JSON, not a message, an empty batch, too many items) refuses
// the whole request; in a batch, an item that is not a transaction is that item's error and the
// others are still read.
//
// Thread safety: pure function (the JSON parser is per thread).
#ifndef VIGIL_SERVER_SCORE_BODY_H_
#define VIGIL_SERVER_SCORE_BODY_H_

#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "vigil/common/clock.h"
#include "vigil/core/transaction.h"
#include "vigil/ingest/payment_message.h"
#include "vigil/server/scoring_service.h"

namespace vigil {

struct ScoreItem {
  std::string_view raw;       // its bytes in the body (what the audit record's input hash covers)
  Transaction tx;             // valid unless "refused"
  bool from_message = false;  // read from SWIFT MT or ISO 20022: event time = arrival
  std::optional<ScoreReply> refused;  // 400: this item is not a transaction (why, and where)
  std::chrono::steady_clock::duration parse{};  // the time spent reading it
};

struct ScoreBody {
  std::optional<ScoreReply> refused;  // the whole request's error; then "items" is empty
  std::vector<ScoreItem> items;       // in the body's order
};

// "batch": the body of /v1/score/batch (an array, or several messages), else of /v1/score
// (exactly one transaction). "body" must outlive the items (they view it).
ScoreBody ReadScoreBody(std::string_view body, MessageFormat format, bool batch, size_t max_batch,
                        UtcTime received);

// A refusal: "status" with the JSON error body (code, field, message).
ScoreReply ErrorReply(int status, std::string_view code, std::string_view field,
                      std::string_view message);

// 413 batch_too_large: more than "max_batch" transactions in one request.
ScoreReply BatchTooLargeReply(size_t max_batch);

// {"results":[...]}: per item in order the 200 body, or {"index":i,"status":s,"error":{...}};
// "conflicts" lists the 409 items' transaction ids (each reply's transaction_id).
ScoreReply BatchReplyOf(const std::vector<const ScoreReply*>& replies);

}  // namespace vigil

#endif  // VIGIL_SERVER_SCORE_BODY_H_
