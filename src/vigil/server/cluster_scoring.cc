#include "vigil/server/cluster_scoring.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "vigil/cluster/cluster_node.h"
#include "vigil/cluster/log_entries.h"
#include "vigil/common/json_text.h"
#include "vigil/common/sha256.h"
#include "vigil/common/string_view.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/ingest/payment_message.h"
#include "vigil/server/score_body.h"

namespace vigil {
namespace {

// What a caller is answered for a payment the cluster settled (or did not, in time).
ScoreReply ReplyOf(const absl::StatusOr<cluster::ClusterAnswer>& answer, const std::string& id,
                   bool from_message) {
  using Kind = cluster::ClusterAnswer::Kind;
  ScoreReply r;
  r.transaction_id = id;
  if (!answer.ok()) {
    r = ErrorReply(
        503, "cluster_unavailable", "",
        absl::StrCat("the cluster's log did not acknowledge the payment (",
                     answer.status().message(),
                     "); retry with the same transaction id: it is never decided twice"));
    r.transaction_id = id;
    return r;
  }
  switch (answer->kind) {
    case Kind::kDecided:
      r.body = answer->decision_json;
      r.action = std::string(ToStd(ActionName(answer->decision.action)));
      r.degraded = answer->decision.degraded;
      r.degraded_reason = answer->decision.degraded_reason;
      r.repeated = answer->repeated;
      break;
    case Kind::kConflict:
      r = ErrorReply(409, "idempotency_conflict", from_message ? "$" : "$.id",
                     absl::StrCat("transaction id \"", id,
                                  "\" is already used by another payment (its amount, parties or "
                                  "details differ); it was not decided: give a new payment its "
                                  "own id"));
      break;
    case Kind::kRefused: {
      const std::string field = RefusedField(answer->refusal);
      r = ErrorReply(422, "features_refused", field.empty() ? "$" : field,
                     ToStd(answer->refusal.message()));
      break;
    }
    case Kind::kPending:
      r = ErrorReply(503, "decision_pending", "",
                     "the payment is in the cluster's log but its partition has not decided it "
                     "within the request's budget (its owner is changing); it will be decided "
                     "exactly once: retry with the same transaction id for that decision");
      break;
  }
  r.transaction_id = id;
  return r;
}

}  // namespace

ClusterScoring::ClusterScoring(cluster::ClusterNode* node, ClusterScoringOptions options,
                               const Clock& clock)
    : node_(node), options_(options), clock_(clock) {}

absl::Status ClusterScoring::Health() const { return node_->health(); }

void ClusterScoring::ScoreThen(std::string_view body, const ScoreRequest& request, ReplyFn done) {
  Score(body, request, /*batch=*/false, std::move(done));
}

void ClusterScoring::ScoreBatchThen(std::string_view body, const ScoreRequest& request,
                                    ReplyFn done) {
  Score(body, request, /*batch=*/true, std::move(done));
}

void ClusterScoring::Score(std::string_view body, const ScoreRequest& request, bool batch,
                           ReplyFn done) {
  const UtcTime received = clock_.Now();
  ScoreBody read = ReadScoreBody(body, request.format, batch, options_.max_batch, received);
  if (read.refused.has_value()) return std::move(done)(std::move(*read.refused));
  const int64_t received_us = ToUnixMicros(received);
  const std::chrono::microseconds budget = request.budget.value_or(options_.score_budget);
  const int64_t limit_us = received_us + options_.max_future_skew.count();
  std::vector<std::optional<ScoreReply>> settled(read.items.size());
  std::vector<cluster::PaymentEntry> entries;
  std::vector<size_t> entry_item;  // the item of each entry
  for (size_t i = 0; i < read.items.size(); ++i) {
    ScoreItem& item = read.items[i];
    if (item.refused.has_value()) {
      settled[i] = std::move(item.refused);
      settled[i]->transaction_id = item.tx.id;
      continue;
    }
    // As `vigil serve` admits it (DecisionService): a sender's clock far ahead would move every
    // node's lateness watermark.
    if (!item.from_message && ToUnixMicros(item.tx.event_time) > limit_us) {
      settled[i] = ErrorReply(
          422, "event_in_future", "$.timestamp",
          absl::StrCat("event time ", FormatUtc(item.tx.event_time), " is more than ",
                       options_.max_future_skew.count() / 1'000'000,
                       " s (max_future_skew) ahead of the server's clock, ", FormatUtc(received),
                       "; check the sender's clock (nothing was recorded)"));
      settled[i]->transaction_id = item.tx.id;
      continue;
    }
    cluster::PaymentEntry& entry = entries.emplace_back();
    entry.transaction = std::move(item.tx);  // the item keeps its raw bytes and format only
    entry.input_format = std::string(MessageFormatName(request.format));
    entry.input_sha256 = Sha256(item.raw);
    entry.received_us = received_us;
    entry.deadline_us = received_us + budget.count();
    entry.actor = request.actor;
    entry.traceparent = request.traceparent;
    entry_item.push_back(i);
  }
  if (!entries.empty()) {
    const auto wait =
        std::chrono::duration_cast<std::chrono::milliseconds>(budget) + options_.answer_slack;
    const std::vector<absl::StatusOr<cluster::ClusterAnswer>> answers =
        node_->DecideAll(entries, wait);
    for (size_t k = 0; k < answers.size(); ++k) {
      settled[entry_item[k]] =
          ReplyOf(answers[k], entries[k].transaction.id, read.items[entry_item[k]].from_message);
    }
  }
  if (!batch) return std::move(done)(std::move(*settled[0]));
  std::vector<const ScoreReply*> replies;
  replies.reserve(settled.size());
  for (const std::optional<ScoreReply>& r : settled) replies.push_back(&*r);
  std::move(done)(BatchReplyOf(replies));
}

}  // namespace vigil
