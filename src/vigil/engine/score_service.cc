#include "vigil/engine/score_service.h"

#include <vector>

#include "absl/synchronization/notification.h"
#include "vigil/common/json_text.h"
#include "vigil/decision/decision_json.h"
#include "vigil/ingest/json_parser.h"
#include "vigil/ingest/record_error.h"

namespace vigil {
namespace {

std::string ErrorBody(std::string_view code, std::string_view field, std::string_view message) {
  std::string out = "{\"error\":{\"code\":";
  AppendJsonString(code, &out);
  out += ",\"field\":";
  AppendJsonString(field, &out);
  out += ",\"message\":";
  AppendJsonString(message, &out);
  out += "}}";
  return out;
}

}  // namespace

// A transaction id's reply, filled once; later arrivals of the same id wait for it.
struct ScoreService::Entry {
  absl::Notification done;
  Reply reply;
};

ScoreService::ScoreService(const FxRates& fx, ScoreServiceOptions options,
                           std::shared_ptr<const DecisionMaker> decider, const Clock& clock)
    : options_(options),
      decider_(std::move(decider)),
      ids_(clock, 0x5c0e),
      extractor_(fx, options.features) {}

ScoreService::Reply ScoreService::Score(std::string_view body) {
  thread_local JsonTransactionParser parser;  // holds simdjson's buffers: one per thread
  Transaction tx;
  RecordError error;
  if (!parser.Parse(body, &tx, &error)) {
    return {400, ErrorBody(error.reason, error.field, error.message)};
  }
  std::shared_ptr<Entry> entry;
  bool first = false;
  {
    absl::MutexLock lock(&seen_mu_);
    auto [it, inserted] = seen_.try_emplace(tx.id);
    if (inserted) {
      it->second = std::make_shared<Entry>();
      first = true;
      seen_order_.push_back(tx.id);
      if (seen_order_.size() > options_.idempotency_capacity) {
        seen_.erase(seen_order_.front());
        seen_order_.pop_front();
      }
    }
    entry = it->second;
  }
  if (!first) {
    entry->done.WaitForNotification();
    return entry->reply;
  }
  entry->reply = Decide(body, tx);
  entry->done.Notify();
  if (entry->reply.status != 200) {
    // A refused transaction was not decided: a corrected retry with the same id must be heard.
    absl::MutexLock lock(&seen_mu_);
    auto it = seen_.find(tx.id);
    if (it != seen_.end() && it->second == entry) seen_.erase(it);
  }
  return entry->reply;
}

ScoreService::Reply ScoreService::Decide(std::string_view, const Transaction& tx) {
  const size_t width = FeatureExtractor::Schema()->size();
  std::vector<double> row;
  {
    // A retry after a 503: the features already counted this payment.
    absl::MutexLock lock(&seen_mu_);
    auto it = unscored_.find(tx.id);
    if (it != unscored_.end()) {
      row = std::move(it->second);
      unscored_.erase(it);
    }
  }
  if (row.empty()) {
    row.resize(width);
    absl::Status s;
    {
      absl::MutexLock lock(&features_mu_);
      s = extractor_.Process(tx, absl::MakeSpan(row));
    }
    if (!s.ok()) {
      return {422, ErrorBody("features_refused", "amount",
                             std::string_view(s.message().data(), s.message().size()))};
    }
  }
  const Transaction* txs[] = {&tx};
  Decision decision;
  ScoreContext context;
  context.priority = tx.priority;
  context.deadline = std::chrono::steady_clock::now() + options_.score_budget;
  const absl::Status decided =
      decider_->DecideBatch(txs, row, absl::MakeSpan(&decision, 1), ids_, context);
  if (!decided.ok()) {
    absl::MutexLock lock(&seen_mu_);
    if (unscored_.emplace(tx.id, std::move(row)).second) {
      unscored_order_.push_back(tx.id);
      if (unscored_order_.size() > options_.idempotency_capacity) {
        unscored_.erase(unscored_order_.front());
        unscored_order_.pop_front();
      }
    }
    return {503, ErrorBody("overloaded", "",
                           std::string_view(decided.message().data(), decided.message().size()))};
  }
  return {200, DecisionToJson(decision)};
}

}  // namespace vigil
