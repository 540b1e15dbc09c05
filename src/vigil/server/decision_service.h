// DecisionService: what `POST /v1/score` and `POST /v1/score/batch` do, independent of HTTP:
// parse transactions (the JSON of docs/ingest.md), update the accounts' features, decide with
// the deployed models (champion, a canary challenger, a shadow), and answer with the Decision
// JSON. The HTTP server of `vigil serve` is a thin face over it.
//
// Idempotency: a repeated transaction id that is the same payment (core/payment_identity.h:
// the normalized transaction, not its bytes) is answered with the first decision's exact
// reply, and the features are not updated twice; a duplicate that arrives while the first is
// still being decided waits for it (within one batch too). The same id with another payment is
// refused, 409 "idempotency_conflict", and changes nothing: it is never answered with the first
// payment's decision. The last `idempotency_capacity` transaction ids are remembered (oldest
// forgotten first); with an audit log, ids from before that (and before a restart) are matched
// against the payment fingerprint their record holds.
//
// Event time: a transaction dated more than max_future_skew ahead of the service's clock is
// refused, 422 "event_in_future" on $.timestamp, and changes nothing, so one sender's clock (or
// one hostile payment) cannot move the features' lateness watermark ahead of real time and
// make every later payment "too late". A feature state that holds such events already (written
// before this bound) is repaired when the service starts (event_time_repair()).
//
// Replies: 200 with the Decision; 400 when the body is not a valid transaction (the error names
// the field and the reason); 422 when the features refuse it (say, a currency without an FX
// rate); 503 when the model path is overloaded (its queue is full): nothing was decided, the
// features were updated once and their row is kept, so a retry with the same id is decided on
// that row without counting the payment twice. A request that cannot get a model score within
// its budget is decided on rules alone and marked degraded (200). Error bodies are
// {"error":{"code":...,"field":...,"message":...}}.
//
// Batches: a JSON array of up to max_batch transactions, decided together (one model call per
// deciding model); the reply is {"results":[...]} with, per item in order, the Decision or
// {"index":i,"status":s,"error":{...}}.
//
// Audit (AttachAudit; `vigil serve` always attaches it): every decision is recorded in the
// audit log through DecisionRecorder, and answered only once its record is durable (durable_ack,
// the default). A decision that cannot be recorded is not answered: 503 "audit_unavailable", and
// its feature row is kept for the retry as after an overload. A transaction id the log already
// holds (from before a restart, or evicted from the idempotency memory) is answered with the
// recorded decision, and nothing is counted or written again. The feature state becomes
// durable with each group of records (the log's companion): after a crash the state holds
// every transaction whose decision was acknowledged, and the rows of those applied but never
// acknowledged are restored for their retries (so a retry is not counted twice).
//
// Drift (optional, AttachDrift): every transaction decided here (200, first arrival) is offered
// to a drift tap — event time, feature row, model score — which drops rather than waits when
// its queue is full, so monitoring never slows a decision. While the monitor holds the model
// frozen (drift L3), the deployment's rules decide alone, and every such decision is degraded
// with degraded_reason "drift_freeze"; fail-safe, what the frozen model scores at or above the
// review threshold is at least REVIEW (reason "drift_freeze_floor"), never a quiet ALLOW.
//
// Thread safety: Score and ScoreBatch may be called from any number of threads. Feature updates
// are serialized (one lock); parsing, deciding and encoding run in parallel.
#ifndef VIGIL_SERVER_DECISION_SERVICE_H_
#define VIGIL_SERVER_DECISION_SERVICE_H_

#include <array>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "vigil/common/clock.h"
#include "vigil/common/ids.h"
#include "vigil/core/decision.h"
#include "vigil/core/fx_rates.h"
#include "vigil/decision/decision_maker.h"
#include "vigil/decision/model_deployment.h"
#include "vigil/engine/payment_fingerprint.h"
#include "vigil/features/feature_config.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/features/feature_store.h"
#include "vigil/ingest/payment_message.h"
#include "vigil/metrics/metrics_registry.h"
#include "vigil/server/scoring_service.h"
#include "vigil/store/kv_write_batch.h"

namespace vigil {

namespace drift {
class DriftMonitor;
class DriftTap;
}  // namespace drift
namespace audit {
class AuditLog;
struct AuditRecord;
}  // namespace audit
class DecisionRecorder;

// The degraded_reason of a decision made rules-only because the drift monitor froze the model.
inline constexpr std::string_view kDriftFreezeReason = "drift_freeze";

// The degraded_reason of a decision made rules-only because the request's deadline passed
// while it waited in the model's queue (overload, not a late model); counted in
// vigil_overload_degraded_decisions_total{class} besides vigil_degraded_decisions_total.
inline constexpr std::string_view kOverloadReason =
    "overload: the deadline passed while the request waited for the model; rules only";

// vigil_shed_total{class,reason}: every request refused 503 for overload, counted where it was
// refused. "class" is the payment's priority class, "unknown" when it was refused before its
// body was read. DecisionService counts reasons "batcher" (the model's class queue was full) and
// "audit" (the audit log's admission bound, audit.max_waiting, or its queue was full); the HTTP
// face counts "connections", "workers" and "budget".
inline constexpr char kShedMetric[] = "vigil_shed_total";
inline constexpr char kShedMetricHelp[] =
    "Requests refused with 503 because the server was overloaded (nothing decided), by the "
    "payment's class (unknown: refused before the body was read) and where they were refused.";

struct DecisionServiceOptions {
  FeatureConfig features;
  size_t idempotency_capacity = 100'000;
  // How long a request may wait for a model score before it is decided on rules alone
  // (degraded): the SLA budget of the decision path, unless the request brings its own.
  std::chrono::microseconds score_budget{200'000};
  size_t max_batch = 1000;  // transactions per ScoreBatch
  // How far ahead of the service's clock a transaction's own event time may be (a sender's
  // clock running fast). Larger tolerates worse clocks; every admitted payment may move the
  // lateness watermark up to this far ahead of real time, so payments up to this much less
  // than allowed_lateness behind real time are still heard. Default 5 minutes (half the
  // default lateness of 10).
  std::chrono::microseconds max_future_skew = std::chrono::minutes(5);
};

class DecisionService final : public ScoringService {
 public:
  // Features in memory only, decided by one fixed decision maker (tests, tools).
  // "decider" must use FeatureExtractor::Schema() (the layout BuildDecisionMaker gives).
  DecisionService(const FxRates& fx, DecisionServiceOptions options,
                  std::shared_ptr<const DecisionMaker> decider, const Clock& clock);
  // Features from (and checkpointed to) "store"; decided by "deployment"'s models.
  DecisionService(std::unique_ptr<FeatureStore> store, DecisionServiceOptions options,
                  std::shared_ptr<const ModelDeployment> deployment, const Clock& clock);
  ~DecisionService();

  Reply Score(std::string_view body, const ScoreRequest& request = {});
  Reply ScoreBatch(std::string_view body, const ScoreRequest& request = {});

  // Score's and ScoreBatch's asynchronous forms, for a server: the request is parsed, its
  // features updated and decided on this thread; "done" is then called exactly once with the
  // reply, when nothing is left to wait for: before return when nothing waits; else from the
  // thread that ends the wait, the audit log's writer once the decisions' records are durable
  // (durable_ack), or the call that decides a duplicate in flight. So no thread is held while
  // a record syncs. "done" must be short and must not block. "body" must stay valid until
  // "done" is called. Score and ScoreBatch are these with a wait.
  void ScoreThen(std::string_view body, const ScoreRequest& request, ReplyFn done) override;
  void ScoreBatchThen(std::string_view body, const ScoreRequest& request, ReplyFn done) override;

  // Watches the decisions for drift: each one decided from now on is offered to "tap" (which
  // feeds "monitor"); while monitor->frozen(), decisions are rules-only and degraded
  // ("drift_freeze"). "tap" should be a WhenFull::kDrop tap, so that a full queue drops rows
  // (counted) instead of making a decision wait. Both must outlive the service (or at least its
  // last Score call). Call once, before RegisterMetrics and before serving: the pointers are
  // read without synchronization.
  void AttachDrift(drift::DriftMonitor* monitor, drift::DriftTap* tap);

  // Records every decision from now on in "log" (see the file comment), which must live in
  // this service's feature store (its KvStore opened with audit::AuditColumnFamilies() and
  // kPendingRowsFamily) and is owned by the service from now on. Restores the rows of
  // transactions applied but never acknowledged before a restart. Call once, before
  // RegisterMetrics and before serving. Errors: reading those rows, or a service without a
  // feature store (kFailedPrecondition).
  // "max_waiting" and "max_wait": DecisionRecorderOptions's admission bounds (0 and max():
  // unbounded). While the log's backlog is beyond them a request is refused before anything is
  // done, 503 overloaded (shed "audit"); a decision refused by them after it was made (a race)
  // is answered the same, its row kept for the retry.
  absl::Status AttachAudit(std::unique_ptr<audit::AuditLog> log, bool durable_ack,
                           size_t max_waiting = 0,
                           std::chrono::microseconds max_wait = std::chrono::microseconds::max());
  // OK, or kResourceExhausted with the message a refused caller is answered (why, and that it
  // may retry) when a request now would be refused because the audit log is behind
  // (DecisionRecorder::Congestion): for a server to refuse it on arrival, before any work. OK
  // without an audit log.
  absl::Status Congestion() const override;

  // The attached audit log and the trail that records into it (null before AttachAudit).
  audit::AuditLog* audit_log() const { return audit_log_.get(); }
  DecisionRecorder* decision_recorder() const { return audit_.get(); }
  // The feature store's column family of rows applied but not yet recorded.
  static constexpr char kPendingRowsFamily[] = "features_pending";

  // Registers the service's metrics (stage latency per priority class, decisions, degraded and
  // shed counts, model score distributions by role, shadow agreement; with drift attached, the
  // decisions frozen by drift and the drift rows dropped). Call once, before serving.
  absl::Status RegisterMetrics(MetricsRegistry& registry);

  // The latency histogram of one stage ("parse", "features", "model", "rules", "explain",
  // "encode", "total"; with an audit log also "audit", the wait for the durable record, and
  // "durable", body received to record durable) for one class; null before RegisterMetrics or
  // for an unknown stage.
  const LatencyHistogram* StageLatency(std::string_view stage, Priority priority) const;

  // Durably writes the feature state changed since the last checkpoint (no-op in memory).
  // With an audit log, through the log (whose groups carry the state), after what it holds.
  absl::Status Checkpoint();

  // What the start repaired in a feature state that held events dated past the clock's bound
  // (FeatureExtractor::BoundEventTimes); nothing repaired() for a healthy state.
  const EventTimeRepair& event_time_repair() const { return event_time_repair_; }

 private:
  struct Entry;
  struct Item;
  struct Call;
  struct Metrics;
  // Reads the body (ScoreBody) into a call's items, then DecideItems.
  void Read(std::string_view body, const ScoreRequest& request, bool batch, ReplyFn done);
  static Reply BatchReply(const std::vector<Item>& items);
  // The steps of a call, in order: DecideItems on the calling thread (through Decide, which
  // starts the records), then Settle as each wait ends, Release once the records are settled,
  // and Answer once the duplicates' decisions are in.
  void DecideItems(const std::shared_ptr<Call>& call);
  void Claim(std::vector<Item>& items);
  void Features(Call& call);
  void Decide(const std::shared_ptr<Call>& call);
  // Ends one of the call's waits; the last one moves the call on.
  void Settle(const std::shared_ptr<Call>& call);
  void Release(const std::shared_ptr<Call>& call);
  static void Answer(Call& call);
  // Refuses every item not yet answered, 503 overloaded (shed "audit"), while the audit log's
  // backlog is beyond its admission bounds (DecisionRecorder::Congestion).
  void RefuseWhileCongested(std::vector<Item>& items);
  // Answers the items whose ids the audit log holds with their recorded decisions.
  void AnswerRecorded(std::vector<Item>& items);
  // Starts recording decision group "group"'s decisions (Settle once they are settled).
  void RecordDecisions(const std::shared_ptr<Call>& call, size_t group,
                       const std::vector<size_t>& members, absl::Span<const Decision> decisions);
  // Turns the replies of the group recordings that failed into 503s, keeping their rows for
  // the retries.
  void SettleRecordings(Call& call);
  // Keeps a feature row of a transaction answered 503 for its retry.
  void KeepUnscored(Item& item) ABSL_EXCLUSIVE_LOCKS_REQUIRED(seen_mu_);
  // The audit log's companion: the feature state and pending rows of a group.
  void StageState(absl::Span<const std::string> recorded, KvWriteBatch& batch);
  // Offers the decided members' rows (contiguous in "rows") to the drift tap, each with its
  // sources (the parties' accounts and the request's actor). The score watched is the
  // champion's, whose training profile it is compared with: "champion" false (a challenger's
  // group) offers the rows unscored. "frozen_scores": the frozen champion's scores while the
  // model is frozen (computed for the floor and for monitoring only), else empty and the
  // decisions' scores are offered.
  void OfferDrift(const std::vector<Item>& items, const std::vector<size_t>& members,
                  absl::Span<const double> rows, absl::Span<const Decision> decisions,
                  bool champion, absl::Span<const double> frozen_scores,
                  const ScoreRequest& request);
  std::shared_ptr<const ModelDeployment::Snapshot> Deployment() const;
  // Refuses the items dated too far ahead of the clock, and fingerprints the rest.
  void Admit(std::vector<Item>& items);
  // Refuses "item" as another payment under a transaction id already used ("what": where the
  // first one is).
  void Conflict(Item& item, std::string_view what);
  // Whether the recorded decision is of the same payment as "item" (see the file comment).
  bool SamePayment(const Item& item, const audit::AuditRecord& record) const;

  DecisionServiceOptions options_;
  const Clock& clock_;
  std::shared_ptr<const ModelDeployment> deployment_;         // or
  std::shared_ptr<const ModelDeployment::Snapshot> fixed_;    // a fixed decision maker
  mutable UuidV7Generator ids_;
  absl::Mutex features_mu_;
  std::unique_ptr<FeatureStore> store_ ABSL_GUARDED_BY(features_mu_);        // or
  std::unique_ptr<FeatureExtractor> memory_ ABSL_GUARDED_BY(features_mu_);   // in memory
  FeatureExtractor* extractor_ ABSL_GUARDED_BY(features_mu_) = nullptr;
  // Checkpoints: staged under features_mu_, committed (fsync) under checkpoint_mu_ only, so
  // decisions never wait for the disk; a batch whose commit failed is retried first next time.
  absl::Mutex checkpoint_mu_ ABSL_ACQUIRED_BEFORE(features_mu_);
  std::deque<FeatureStore::StagedCheckpoint> uncommitted_ ABSL_GUARDED_BY(checkpoint_mu_);
  absl::Mutex seen_mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Entry>> seen_ ABSL_GUARDED_BY(seen_mu_);
  std::deque<std::string> seen_order_ ABSL_GUARDED_BY(seen_mu_);
  // Feature rows of transactions answered 503, kept for their retry (bounded like seen_), with
  // the fingerprint of the payment they count (all zero: unknown, a row stored before).
  struct KeptRow {
    std::vector<double> row;
    audit::Hash fingerprint{};
  };
  absl::flat_hash_map<std::string, KeptRow> unscored_ ABSL_GUARDED_BY(seen_mu_);
  std::deque<std::string> unscored_order_ ABSL_GUARDED_BY(seen_mu_);
  // Rows applied to the features but not yet recorded, staged into the next audit group
  // (with an audit log), and the ids whose row is durable in kPendingRowsFamily.
  std::vector<std::pair<std::string, KeptRow>> pending_rows_ ABSL_GUARDED_BY(features_mu_);
  absl::flat_hash_set<std::string> pending_durable_ ABSL_GUARDED_BY(features_mu_);
  // Kept rows forgotten (unscored_ full): their durable copies are deleted with the next group.
  std::vector<std::string> pending_forgotten_ ABSL_GUARDED_BY(seen_mu_);
  std::unique_ptr<Metrics> metrics_;
  // Ephemeral until AttachAudit, then the data dir's (its records outlive the process).
  PaymentFingerprinter fingerprints_;
  EventTimeRepair event_time_repair_;
  // Set by AttachDrift before serving, then constant; null: no drift monitoring.
  drift::DriftMonitor* drift_monitor_ = nullptr;
  drift::DriftTap* drift_tap_ = nullptr;
  // Set by AttachAudit before serving, then constant; null: decisions are not recorded.
  // The log is declared last: destroyed first, while the feature store its committer writes
  // through, the members its companion reads, and the trail and the members that its last
  // records' completions (RecordThen) reach still exist.
  std::unique_ptr<DecisionRecorder> audit_;
  std::unique_ptr<audit::AuditLog> audit_log_;
};

}  // namespace vigil

#endif  // VIGIL_SERVER_DECISION_SERVICE_H_
