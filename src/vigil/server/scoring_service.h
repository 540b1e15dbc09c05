// ScoringService: what answers `POST /v1/score` and `POST /v1/score/batch` behind the HTTP face
// (ServeApi), independent of HTTP. `vigil serve` decides in its own process (DecisionService);
// a cluster node publishes the payments to the cluster's log and answers with the decisions its
// partitions' owners wrote there (ClusterScoring). Both answer with the same replies: the
// Decision JSON, or the same error bodies for the same refusals.
//
// Thread safety: implementations take calls from any number of threads.
#ifndef VIGIL_SERVER_SCORING_SERVICE_H_
#define VIGIL_SERVER_SCORING_SERVICE_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "vigil/ingest/payment_message.h"

namespace vigil {

// What the caller adds to a request body.
struct ScoreRequest {
  std::string traceparent;  // W3C trace context recorded in the decisions ("" for none)
  std::string actor;        // who asks ("token:<id>", "tls:<subject>" or both), for the audit log
  std::optional<std::chrono::microseconds> budget;  // this request's SLA budget
  // The body's format. kJson: a transaction (Score) or an array of them (ScoreBatch). kSwiftMt:
  // one message (Score) or messages one after the other (ScoreBatch, one item each). kIso20022:
  // one message holding one transaction (Score) or several (ScoreBatch). A message that cannot
  // be read is 400 "invalid_message"; one of a type vigil does not read is 422
  // "unsupported_message_type". A payment message is timed by its arrival (event_time = the
  // time received): its own times (an MT output header's input time, a pacs.008's CreDtTm) are
  // in the sender's clock or absent, and the accounts' windows need the engine's.
  MessageFormat format = MessageFormat::kJson;
};

// The answer to one scoring request.
struct ScoreReply {
  int status = 200;
  std::string body;
  // For the request log and metrics (single transactions):
  std::string transaction_id;
  std::string error_code;  // when status != 200
  std::string action;      // when status == 200
  bool degraded = false;
  std::string degraded_reason;
  bool repeated = false;  // answered from the idempotency memory
  // Status 503 for overload: where it was shed ("batcher", "audit"); "" otherwise.
  std::string shed_reason;
  // A batch: the transaction ids of its items refused 409 idempotency_conflict, in order
  // (a single transaction's conflict is its error_code), for the log.
  std::vector<std::string> conflicts;
};

class ScoringService {
 public:
  using Reply = ScoreReply;
  using ReplyFn = absl::AnyInvocable<void(Reply) &&>;

  virtual ~ScoringService() = default;

  // Decides one transaction ("body") or a batch of them, and calls "done" exactly once with the
  // reply, on this thread or later from another. "done" must be short and must not block.
  // "body" must stay valid until "done" is called.
  virtual void ScoreThen(std::string_view body, const ScoreRequest& request, ReplyFn done) = 0;
  virtual void ScoreBatchThen(std::string_view body, const ScoreRequest& request, ReplyFn done) = 0;

  // OK, or kResourceExhausted with the message a refused caller is answered (why, and that it
  // may retry) when a request now would be refused for a backlog: for a server to refuse it on
  // arrival, before any work.
  virtual absl::Status Congestion() const = 0;

  // OK while the service can decide; else why not, for /readyz (kUnavailable: a cluster node
  // whose connection to the log is down). DecisionService is always able to (its audit log's
  // health is checked apart).
  virtual absl::Status Health() const { return absl::OkStatus(); }
};

}  // namespace vigil

#endif  // VIGIL_SERVER_SCORING_SERVICE_H_
