#include "vigil/server/decision_service.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "vigil/audit/audit_log.h"
#include "vigil/batching/batching_scorer.h"
#include "vigil/common/json_text.h"
#include "vigil/common/status_macros.h"
#include "vigil/decision/decision_json.h"
#include "vigil/drift/drift_monitor.h"
#include "vigil/drift/drift_tap.h"
#include "vigil/drift/freeze_floor.h"
#include "vigil/drift/source_ledger.h"
#include "vigil/engine/decide_in_order.h"
#include "vigil/engine/decision_recorder.h"
#include "vigil/engine/drift_feed.h"
#include "vigil/ingest/payment_message.h"
#include "vigil/metrics/value_histogram.h"
#include "vigil/server/http_status.h"
#include "vigil/server/score_body.h"
#include "vigil/store/kv_store.h"

namespace vigil {
namespace {

using Steady = std::chrono::steady_clock;

std::string_view View(absl::string_view s) { return {s.data(), s.size()}; }

// Stages timed per request, in the order of the latency_us object.
// After "total" (the decision path): "audit", the wait for the decision's durable record, and
// "durable", from the body received to that record durable (when the answer may be sent).
enum Stage {
  kParse,
  kFeatures,
  kModel,
  kRules,
  kExplain,
  kEncode,
  kTotal,
  kAudit,
  kDurable,
  kNumStages
};
constexpr const char* kStageNames[kNumStages] = {"parse",  "features", "model", "rules",  "explain",
                                                 "encode", "total",    "audit", "durable"};
enum Role { kChampion, kChallenger, kShadow, kNumRoles };
constexpr const char* kRoleNames[kNumRoles] = {"champion", "challenger", "shadow"};

std::chrono::microseconds Micros(Steady::duration d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d);
}

// The policy's verdict on a score alone: 0 allow, 1 review, 2 block.
int ScoreBand(const Policy& policy, double score) {
  if (std::isnan(score)) return -1;
  if (score >= policy.block_threshold()) return 2;
  if (score >= policy.review_threshold()) return 1;
  return 0;
}

}  // namespace

// A transaction id's reply, published once; later arrivals of the same id wait for it.
struct DecisionService::Entry {
  using WaiterFn = absl::AnyInvocable<void(const Reply&) &&>;
  // Sets the reply and calls the waiters with it (on this thread).
  void Publish(const Reply& r) {
    std::vector<WaiterFn> waiting;
    {
      absl::MutexLock lock(&mu);
      reply = r;
      published = true;
      waiting.swap(waiters);
    }
    for (WaiterFn& w : waiting) std::move(w)(reply);
  }
  // Calls "fn" with the reply: now when it is published, else from Publish.
  void WhenPublished(WaiterFn fn) {
    {
      absl::MutexLock lock(&mu);
      if (!published) {
        waiters.push_back(std::move(fn));
        return;
      }
    }
    std::move(fn)(reply);  // constant once published
  }

  absl::Mutex mu;
  bool published ABSL_GUARDED_BY(mu) = false;
  Reply reply;  // written once, under mu, before published
  std::vector<WaiterFn> waiters ABSL_GUARDED_BY(mu);
  audit::Hash fingerprint{};  // the payment the id stands for (set before it is shared)
};

// One transaction on its way through a call.
struct DecisionService::Item {
  std::string_view raw;
  Steady::time_point start;
  UtcTime received{};
  Transaction tx;
  Reply reply;        // status != 200 once refused
  bool done = false;  // reply is final
  std::shared_ptr<Entry> entry;
  bool first = false;  // this call decides the id (else: it waits for entry)
  int same_as = -1;    // an earlier item of this batch with the same id
  std::vector<double> row;
  // Its row's entry in the call's RiskReads (Call::reads); kNotRead: none (one payment, or a
  // row kept from an earlier attempt).
  size_t read = PaymentsInOrder::kNotRead;
  Steady::duration parse{0}, features{0};
  MessageFormat format = MessageFormat::kJson;
  bool parsed = false;  // tx was read from a payment message (not JSON to parse)
  audit::Hash fingerprint{};  // PaymentFingerprinter::Of(tx), once admitted
};

// One Score or ScoreBatch call on its way: its items, and what it still waits for.
struct DecisionService::Call {
  std::vector<Item> items;
  ScoreRequest request;
  bool batch = false;
  // The accounts the rows of a batch's payments read their risk columns from, so that the
  // batch decides as its payments one at a time would (engine/decide_in_order.h).
  RiskReads reads;
  ReplyFn done;
  // The records of one decision group (Decide's), on their way to the audit log.
  struct Recording {
    std::vector<size_t> members;  // empty: nothing recorded for that group
    Steady::time_point start, end;
    absl::Status status;
  };
  std::array<Recording, 2> recordings;
  // The waits still open: the deciding thread's own (1), then each recording in flight; once
  // released, each duplicate waiting for another call's decision. The thread that ends the
  // last one moves the call on (Settle), so what the waits wrote is visible to it.
  std::atomic<int> pending{1};
  bool released = false;  // read and written only by the thread moving the call on
};

struct DecisionService::Metrics {
  std::array<std::array<LatencyHistogram*, 3>, kNumStages> stage{};  // [stage][class]
  std::array<std::array<Counter*, 3>, 3> decisions{};                // [action][class]
  std::array<Counter*, 3> degraded{}, overload_degraded{};          // [class]
  std::array<Counter*, 3> shed_batcher{}, shed_audit{};              // [class]
  std::array<ValueHistogram*, kNumRoles> scores{};
  Counter* agree = nullptr;
  Counter* disagree = nullptr;
  Counter* conflicts = nullptr;       // idempotency conflicts refused
  Counter* future_refused = nullptr;  // events dated past the clock's bound, refused
  std::array<Counter*, 2> account_alerts{};  // [cause - 1]: score, rule_hits
  // With drift attached (else null):
  std::array<Counter*, 3> frozen{};  // [class]
  Counter* freeze_floor = nullptr;
  Counter* drift_dropped = nullptr;
};

DecisionService::DecisionService(const FxRates& fx, DecisionServiceOptions options,
                                 std::shared_ptr<const DecisionMaker> decider, const Clock& clock)
    : options_(options),
      clock_(clock),
      ids_(clock, 0x5c0e),
      fingerprints_(PaymentFingerprinter::Ephemeral()) {
  auto snapshot = std::make_shared<ModelDeployment::Snapshot>();
  snapshot->rules = std::move(decider);
  fixed_ = std::move(snapshot);
  memory_ = std::make_unique<FeatureExtractor>(fx, options.features);
  extractor_ = memory_.get();
}

DecisionService::DecisionService(std::unique_ptr<FeatureStore> store,
                                 DecisionServiceOptions options,
                                 std::shared_ptr<const ModelDeployment> deployment,
                                 const Clock& clock)
    : options_(options),
      clock_(clock),
      deployment_(std::move(deployment)),
      ids_(clock, 0x5c0e),
      fingerprints_(PaymentFingerprinter::Ephemeral()) {
  store_ = std::move(store);
  extractor_ = &store_->extractor();
  // No admitted event is dated past now + max_future_skew; a stored state may be (see the
  // file comment). The repaired accounts are stored with the next checkpoint or group.
  event_time_repair_ = extractor_->BoundEventTimes(ToUnixMicros(clock_.Now()) +
                                                   options_.max_future_skew.count());
}

DecisionService::~DecisionService() = default;

std::shared_ptr<const ModelDeployment::Snapshot> DecisionService::Deployment() const {
  return deployment_ != nullptr ? deployment_->Current() : fixed_;
}

void DecisionService::AttachDrift(drift::DriftMonitor* monitor, drift::DriftTap* tap) {
  drift_monitor_ = monitor;
  drift_tap_ = tap;
}

absl::Status DecisionService::RegisterMetrics(MetricsRegistry& registry) {
  auto m = std::make_unique<Metrics>();
  for (int s = 0; s < kNumStages; ++s) {
    for (int c = 0; c < 3; ++c) {
      VIGIL_ASSIGN_OR_RETURN(
          m->stage[s][c],
          registry.AddHistogram("vigil_stage_latency_seconds",
                                "Time per decision-path stage, by priority class (total: from "
                                "the body received to the decision encoded).",
                                {{"stage", kStageNames[s]},
                                 {"class", std::string(PriorityName(static_cast<Priority>(c)))}}));
    }
  }
  for (int a = 0; a < 3; ++a) {
    for (int c = 0; c < 3; ++c) {
      VIGIL_ASSIGN_OR_RETURN(
          m->decisions[a][c],
          registry.AddCounter("vigil_decisions_total",
                              "Decisions made, by action and priority class.",
                              {{"action", std::string(View(ActionName(static_cast<Action>(a))))},
                               {"class", std::string(PriorityName(static_cast<Priority>(c)))}}));
    }
  }
  for (int c = 0; c < 3; ++c) {
    const std::string cls(PriorityName(static_cast<Priority>(c)));
    VIGIL_ASSIGN_OR_RETURN(
        m->degraded[c],
        registry.AddCounter("vigil_degraded_decisions_total",
                            "Decisions made on rules alone because the model path was late, "
                            "failing or its breaker open, or the drift monitor froze the model.",
                            {{"class", cls}}));
    VIGIL_ASSIGN_OR_RETURN(
        m->overload_degraded[c],
        registry.AddCounter("vigil_overload_degraded_decisions_total",
                            "Decisions made on rules alone because the request's deadline "
                            "passed while it waited in the model's queue (overload; degraded, "
                            "reason overload).",
                            {{"class", cls}}));
    VIGIL_ASSIGN_OR_RETURN(m->shed_batcher[c],
                           registry.AddCounter(kShedMetric, kShedMetricHelp,
                                               {{"class", cls}, {"reason", "batcher"}}));
    VIGIL_ASSIGN_OR_RETURN(m->shed_audit[c],
                           registry.AddCounter(kShedMetric, kShedMetricHelp,
                                               {{"class", cls}, {"reason", "audit"}}));
  }
  std::vector<double> bounds;
  for (int i = 1; i <= 20; ++i) bounds.push_back(i * 0.05);
  for (int r = 0; r < kNumRoles; ++r) {
    VIGIL_ASSIGN_OR_RETURN(
        m->scores[r],
        registry.AddValueHistogram("vigil_model_score",
                                   "Model scores by deployment role (champion, challenger, "
                                   "shadow), to compare their distributions.",
                                   {{"role", kRoleNames[r]}}, bounds));
  }
  const char* kAgreementHelp =
      "Shadow-scored decisions by whether the shadow model's score falls in the same policy "
      "band (allow, review, block) as the deciding model's.";
  VIGIL_ASSIGN_OR_RETURN(m->agree, registry.AddCounter("vigil_shadow_agreement_total",
                                                       kAgreementHelp, {{"agree", "true"}}));
  VIGIL_ASSIGN_OR_RETURN(m->disagree, registry.AddCounter("vigil_shadow_agreement_total",
                                                          kAgreementHelp, {{"agree", "false"}}));
  VIGIL_ASSIGN_OR_RETURN(
      m->conflicts,
      registry.AddCounter("vigil_idempotency_conflicts_total",
                          "Transactions refused with 409 idempotency_conflict: a transaction id "
                          "already used for another payment (nothing decided or changed).",
                          {}));
  VIGIL_ASSIGN_OR_RETURN(
      m->future_refused,
      registry.AddCounter("vigil_event_in_future_total",
                          "Transactions refused with 422 event_in_future: dated more than "
                          "max_future_skew ahead of the server's clock (nothing changed).",
                          {}));
  for (int cause = 1; cause <= 2; ++cause) {
    VIGIL_ASSIGN_OR_RETURN(
        m->account_alerts[cause - 1],
        registry.AddCounter(
            "vigil_account_alerts_total",
            "Account alerts raised (an account's score or rule hits over the policy's accounts "
            "thresholds; at most one per account per window), by cause.",
            {{"cause",
              std::string(AccountAlertCauseName(static_cast<AccountAlertCause>(cause)))}}));
  }
  if (drift_monitor_ != nullptr) {
    for (int c = 0; c < 3; ++c) {
      VIGIL_ASSIGN_OR_RETURN(
          m->frozen[c],
          registry.AddCounter("vigil_drift_frozen_decisions_total",
                              "Decisions made on rules alone (degraded, drift_freeze) because the "
                              "drift monitor froze the model (L3).",
                              {{"class", std::string(PriorityName(static_cast<Priority>(c)))}}));
    }
    VIGIL_ASSIGN_OR_RETURN(
        m->freeze_floor,
        registry.AddCounter("vigil_drift_freeze_floor_total",
                            "Frozen (drift_freeze) decisions the rules allowed but held for "
                            "review because the frozen model scored them at or above the "
                            "review threshold."));
    VIGIL_ASSIGN_OR_RETURN(
        m->drift_dropped,
        registry.AddCounter("vigil_drift_rows_dropped_total",
                            "Decided transactions not seen by the drift monitor because its "
                            "queue (drift.queue) was full."));
  }
  metrics_ = std::move(m);
  return absl::OkStatus();
}

const LatencyHistogram* DecisionService::StageLatency(std::string_view stage,
                                                      Priority priority) const {
  if (metrics_ == nullptr) return nullptr;
  for (int s = 0; s < kNumStages; ++s) {
    if (stage == kStageNames[s]) return metrics_->stage[s][static_cast<int>(priority)];
  }
  return nullptr;
}

absl::Status DecisionService::Checkpoint() {
  // The log's committer writes the state with its groups; staging it here too could commit an
  // older copy of an account after a newer one.
  if (audit_log_ != nullptr) return audit_log_->Flush(/*with_state=*/true);
  absl::MutexLock commit(&checkpoint_mu_);
  FeatureStore* store;
  {
    absl::MutexLock lock(&features_mu_);
    if (store_ == nullptr) return absl::OkStatus();
    store = store_.get();
    uncommitted_.push_back(store->Stage({{"serve", "live"}}));
  }
  while (!uncommitted_.empty()) {
    VIGIL_RETURN_IF_ERROR(store->Commit(uncommitted_.front()));
    uncommitted_.pop_front();
  }
  return absl::OkStatus();
}

namespace {

// Calls start(done) and waits until "done" is given the reply.
template <typename Start>
DecisionService::Reply AwaitReply(Start start) {
  DecisionService::Reply reply;
  absl::Notification answered;
  start([&](DecisionService::Reply r) {
    reply = std::move(r);
    answered.Notify();
  });
  answered.WaitForNotification();
  return reply;
}

}  // namespace

DecisionService::Reply DecisionService::Score(std::string_view body, const ScoreRequest& request) {
  return AwaitReply([&](ReplyFn done) { ScoreThen(body, request, std::move(done)); });
}

DecisionService::Reply DecisionService::ScoreBatch(std::string_view body,
                                                   const ScoreRequest& request) {
  return AwaitReply([&](ReplyFn done) { ScoreBatchThen(body, request, std::move(done)); });
}

void DecisionService::ScoreThen(std::string_view body, const ScoreRequest& request, ReplyFn done) {
  Read(body, request, /*batch=*/false, std::move(done));
}

void DecisionService::ScoreBatchThen(std::string_view body, const ScoreRequest& request,
                                     ReplyFn done) {
  Read(body, request, /*batch=*/true, std::move(done));
}

void DecisionService::Read(std::string_view body, const ScoreRequest& request, bool batch,
                           ReplyFn done) {
  auto call = std::make_shared<Call>();
  call->request = request;
  call->batch = batch;
  call->done = std::move(done);
  const Steady::time_point start = Steady::now();
  const UtcTime received = clock_.Now();
  ScoreBody read = ReadScoreBody(body, request.format, batch, options_.max_batch, received);
  if (read.refused.has_value()) return std::move(call->done)(std::move(*read.refused));
  call->items.reserve(read.items.size());
  for (ScoreItem& from : read.items) {
    Item& item = call->items.emplace_back();
    item.raw = from.raw;
    item.start = start;
    item.received = received;
    item.format = request.format;
    item.tx = std::move(from.tx);
    item.parsed = from.from_message;
    item.parse = from.parse;
    if (from.refused.has_value()) {
      item.reply = std::move(*from.refused);
      item.done = true;
    }
    item.reply.transaction_id = item.tx.id;
  }
  DecideItems(call);
}

DecisionService::Reply DecisionService::BatchReply(const std::vector<Item>& items) {
  std::vector<const Reply*> replies;
  replies.reserve(items.size());
  for (const Item& item : items) replies.push_back(&item.reply);
  return BatchReplyOf(replies);
}

void DecisionService::DecideItems(const std::shared_ptr<Call>& call) {
  std::vector<Item>& items = call->items;
  Admit(items);
  if (audit_ != nullptr) {
    RefuseWhileCongested(items);
    AnswerRecorded(items);
  }
  Claim(items);
  Features(*call);
  Decide(call);
  Settle(call);  // the deciding thread's own wait
}

// Who decides each id: the first arrival; later ones (here or in other calls) wait for it.
void DecisionService::Claim(std::vector<Item>& items) {
  absl::flat_hash_map<std::string_view, int> in_batch;
  absl::MutexLock lock(&seen_mu_);
  for (size_t i = 0; i < items.size(); ++i) {
    Item& item = items[i];
    if (item.done) continue;
    if (auto it = in_batch.find(item.tx.id); it != in_batch.end()) {
      if (items[static_cast<size_t>(it->second)].fingerprint != item.fingerprint) {
        Conflict(item, absl::StrCat("item ", it->second, " of this batch"));
        continue;
      }
      item.same_as = it->second;
      continue;
    }
    if (auto s = seen_.find(item.tx.id); s != seen_.end() &&
                                          s->second->fingerprint != item.fingerprint) {
      Conflict(item, "a payment already decided or being decided");
      continue;
    }
    auto u = unscored_.find(item.tx.id);
    if (u != unscored_.end() && u->second.fingerprint != audit::Hash{} &&
        u->second.fingerprint != item.fingerprint) {
      Conflict(item, "a payment the features already counted (answered 503 before)");
      continue;
    }
    in_batch.emplace(item.tx.id, static_cast<int>(i));
    auto [it, inserted] = seen_.try_emplace(item.tx.id);
    if (inserted) {
      it->second = std::make_shared<Entry>();
      it->second->fingerprint = item.fingerprint;
      item.first = true;
      // A retry after a 503: the features already counted this payment.
      if (u != unscored_.end()) {
        item.row = std::move(u->second.row);
        unscored_.erase(u);
      }
    }
    item.entry = it->second;  // before the eviction below, which may invalidate "it"
    if (inserted) {
      seen_order_.push_back(item.tx.id);
      if (seen_order_.size() > options_.idempotency_capacity) {
        seen_.erase(seen_order_.front());
        seen_order_.pop_front();
      }
    }
  }
}

void DecisionService::Features(Call& call) {
  const size_t width = FeatureExtractor::Schema()->size();
  // A batch notes what its rows read; one payment has no earlier payment to be stale against.
  RiskReads* reads = call.items.size() > 1 ? &call.reads : nullptr;
  absl::MutexLock lock(&features_mu_);
  for (Item& item : call.items) {
    if (item.done || !item.first || !item.row.empty()) continue;
    const Steady::time_point t0 = Steady::now();
    item.row.resize(width);
    if (reads != nullptr) item.read = reads->size();
    const absl::Status s = extractor_->Process(item.tx, absl::MakeSpan(item.row), reads);
    item.features = Steady::now() - t0;
    if (s.ok() && audit_ != nullptr) {
      pending_rows_.emplace_back(item.tx.id, KeptRow{item.row, item.fingerprint});
    }
    if (!s.ok()) {
      item.row.clear();
      item.reply.status = 422;
      item.reply.error_code = "features_refused";
      // The features name the member the caller must look at (its event time, currency or
      // amount).
      const std::string field = RefusedField(s);
      item.reply.body = JsonErrorBody("features_refused", field.empty() ? "$" : field,
                                      View(s.message()));
      item.done = true;
    }
  }
}

void DecisionService::Decide(const std::shared_ptr<Call>& call) {
  std::vector<Item>& items = call->items;
  const ScoreRequest& request = call->request;
  const std::shared_ptr<const ModelDeployment::Snapshot> deployment = Deployment();
  const size_t width = FeatureExtractor::Schema()->size();
  // Group the items this call decides by the model that decides them.
  struct Group {
    const DecisionMaker* decider = nullptr;
    const char* role = "none";
    Role metric_role = kChampion;
    std::vector<size_t> members;
  };
  std::array<Group, 2> groups;
  // A model frozen by the drift monitor decides nothing: the rules decide alone (no champion,
  // no challenger). Read once, so that a batch is decided one way.
  const bool frozen = drift_monitor_ != nullptr && drift_monitor_->frozen();
  const bool champion = deployment->champion != nullptr && !frozen;
  groups[0].decider = champion ? deployment->champion->decider.get() : deployment->rules.get();
  groups[0].role = champion ? "champion" : "none";
  if (deployment->challenger != nullptr && !frozen) {
    groups[1].decider = deployment->challenger->decider.get();
    groups[1].role = "challenger";
    groups[1].metric_role = kChallenger;
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& item = items[i];
    if (item.done || !item.first) continue;
    const bool challenger =
        groups[1].decider != nullptr &&
        ModelDeployment::RoutesToChallenger(item.tx.id, deployment->traffic_weight);
    groups[challenger ? 1 : 0].members.push_back(i);
  }
  const std::chrono::microseconds budget = request.budget.value_or(options_.score_budget);
  // With a challenger, the champion's payments are decided before the challenger's.
  AccountsChanged changed;
  for (size_t g = 0; g < groups.size(); ++g) {
    Group& group = groups[g];
    if (group.members.empty()) continue;
    const size_t n = group.members.size();
    std::vector<const Transaction*> txs(n);
    // What each row read, for a batch only: one payment (every POST /v1/score) allocates
    // nothing for it.
    const bool batch_reads = call->reads.size() > 0;
    std::vector<size_t> read_of(batch_reads ? n : 0);
    // One transaction (every POST /v1/score) decides on its own row; a batch's rows are
    // gathered into one contiguous block.
    std::vector<double> gathered;
    if (n > 1) gathered.resize(n * width);
    ScoreContext context;
    context.priority = Priority::kP2;
    for (size_t k = 0; k < n; ++k) {
      const Item& item = items[group.members[k]];
      txs[k] = &item.tx;
      if (batch_reads) read_of[k] = item.read;
      if (n > 1) {
        std::copy(item.row.begin(), item.row.end(),
                  gathered.begin() + static_cast<std::ptrdiff_t>(k * width));
      }
      context.priority = std::min(context.priority, item.tx.priority);
    }
    const absl::Span<double> rows =
        n > 1 ? absl::MakeSpan(gathered) : absl::MakeSpan(items[group.members[0]].row);
    context.deadline = Steady::now() + budget;
    std::vector<Decision> decisions(n);
    // The decide step and the account step (both parties' standing and any account alert),
    // before the decision is answered or recorded: vigil replay's (engine/decide_in_order.h).
    const DecisionStep step{.decider = group.decider,
                            .features = extractor_,
                            .features_mu = &features_mu_,
                            .ids = &ids_,
                            .model_role = group.role};
    const absl::StatusOr<int64_t> decided = DecideInOrder(
        step,
        {.txs = txs,
         .rows = rows,
         .reads = batch_reads ? &call->reads : nullptr,
         .read_of = read_of},
        context, changed, absl::MakeSpan(decisions));
    if (!decided.ok()) {
      // Overloaded: nothing decided; keep the rows for the retries.
      absl::MutexLock lock(&seen_mu_);
      for (size_t k = 0; k < n; ++k) {
        Item& item = items[group.members[k]];
        item.reply.status = HttpStatusOf(decided.status().code());
        item.reply.error_code = "overloaded";
        item.reply.shed_reason = "batcher";
        item.reply.body = JsonErrorBody("overloaded", "", View(decided.status().message()));
        item.done = true;
        KeepUnscored(item);
      }
      continue;
    }
    if (*decided > 0 && n > 1) {
      // The repaired rows are the ones recorded and watched.
      for (size_t k = 0; k < n; ++k) {
        const absl::Span<const double> row = rows.subspan(k * width, width);
        std::copy(row.begin(), row.end(), items[group.members[k]].row.begin());
      }
    }
    const std::shared_ptr<const Policy> policy = group.decider->policy();
    if (metrics_ != nullptr) {
      for (const Decision& d : decisions) {
        for (const AccountStanding* a : {&d.originator_account, &d.beneficiary_account}) {
          if (a->alert) metrics_->account_alerts[static_cast<int>(a->cause) - 1]->Increment();
        }
      }
    }
    // Frozen, the champion still scores every row (directly, never queued): for the fail-safe
    // floor, and for the monitor, which must see the traffic return to the model's reference.
    std::vector<double> frozen_scores;
    std::shared_ptr<const Policy> floor_policy;
    if (frozen && deployment->champion != nullptr && deployment->champion->direct != nullptr) {
      frozen_scores.assign(n, std::nan(""));
      if (!deployment->champion->direct->Score(rows, n, absl::MakeSpan(frozen_scores)).ok()) {
        std::fill(frozen_scores.begin(), frozen_scores.end(), std::nan(""));
      }
      floor_policy = group.decider->policy();
    }
    for (size_t k = 0; k < n; ++k) {
      Item& item = items[group.members[k]];
      Decision& d = decisions[k];
      d.traceparent = request.traceparent;
      if (frozen) {
        d.degraded = true;
        d.degraded_reason = std::string(kDriftFreezeReason);
        // Fail-safe: what the frozen model would have raised is held for review at least.
        const bool floored =
            floor_policy != nullptr &&
            drift::ApplyFreezeFloor(floor_policy->review_threshold(), frozen_scores[k], d);
        if (floored && metrics_ != nullptr && metrics_->freeze_floor != nullptr) {
          metrics_->freeze_floor->Increment();
        }
      }
      // Not the model's failure: the request never reached it (see kOverloadReason).
      const bool overload =
          d.degraded && absl::StrContains(d.degraded_reason, kExpiredInQueueMessage);
      if (overload) d.degraded_reason = std::string(kOverloadReason);
      if (deployment->shadow != nullptr) {
        // Scored directly, never queued: the shadow must not slow or shed the decision.
        double shadow_score = std::nan("");
        const absl::Status s = deployment->shadow->direct->Score(absl::MakeConstSpan(item.row), 1,
                                                                 absl::MakeSpan(&shadow_score, 1));
        d.shadow_model_version = deployment->shadow->version;
        d.shadow_score = s.ok() ? shadow_score : std::nan("");
        if (metrics_ != nullptr && s.ok()) {
          metrics_->scores[kShadow]->Record(shadow_score);
          if (!std::isnan(d.score)) {
            (ScoreBand(*policy, d.score) == ScoreBand(*policy, shadow_score) ? metrics_->agree
                                                                             : metrics_->disagree)
                ->Increment();
          }
        }
      }
      if (metrics_ != nullptr && !std::isnan(d.score)) {
        metrics_->scores[group.metric_role]->Record(d.score);
      }
      d.timings.insert(d.timings.begin(),
                       {{"parse", Micros(item.parse)}, {"features", Micros(item.features)}});
      d.timings.push_back({"total", Micros(Steady::now() - item.start)});
      const Steady::time_point encode_start = Steady::now();
      item.reply.status = 200;
      item.reply.body = DecisionToJson(d);
      item.reply.action = std::string(View(ActionName(d.action)));
      item.reply.degraded = d.degraded;
      item.reply.degraded_reason = d.degraded_reason;
      item.done = true;
      if (metrics_ != nullptr) {
        const Steady::time_point end = Steady::now();
        const int c = static_cast<int>(item.tx.priority);
        auto record = [&](Stage s, Steady::duration t) { metrics_->stage[s][c]->Record(t); };
        record(kParse, item.parse);
        record(kFeatures, item.features);
        for (const StageTiming& t : d.timings) {
          if (t.stage == "model") record(kModel, t.elapsed);
          if (t.stage == "rules") record(kRules, t.elapsed);
          if (t.stage == "explain") record(kExplain, t.elapsed);
        }
        record(kEncode, end - encode_start);
        record(kTotal, end - item.start);
        metrics_->decisions[static_cast<int>(d.action)][c]->Increment();
        if (d.degraded) metrics_->degraded[c]->Increment();
        if (overload) metrics_->overload_degraded[c]->Increment();
        if (frozen && metrics_->frozen[c] != nullptr) metrics_->frozen[c]->Increment();
      }
    }
    if (audit_ != nullptr) RecordDecisions(call, g, group.members, decisions);
    if (drift_tap_ != nullptr) {
      OfferDrift(items, group.members, rows, decisions, group.metric_role == kChampion,
                 frozen_scores, request);
    }
  }
}

void DecisionService::OfferDrift(const std::vector<Item>& items, const std::vector<size_t>& members,
                                 absl::Span<const double> rows,
                                 absl::Span<const Decision> decisions, bool champion,
                                 absl::Span<const double> frozen_scores,
                                 const ScoreRequest& request) {
  const size_t n = members.size();
  const size_t width = FeatureExtractor::Schema()->size();
  // Buffers the monitor has observed before, when it has some to spare.
  drift::DriftTap::Rows batch = drift_tap_->Spare();
  batch.times.reserve(n);
  batch.scores.reserve(n);
  batch.features.reserve(n * width);
  batch.sources.reserve(n);
  // Who each row comes from, so that no one account, counterparty or client makes up a
  // window (drift/source_ledger.h).
  const uint64_t client = drift::SourceHash(request.actor);
  for (size_t k = 0; k < n; ++k) {
    // A challenger's score comes from another model: against the champion's profile it would
    // look like drift, so only its row counts. A frozen model decides nothing, but the
    // monitor still needs its score distribution to see the traffic return to what the model
    // was trained on (and to lift the freeze when the score was what drifted); the Decision
    // carries no score.
    const double score = !frozen_scores.empty() ? frozen_scores[k]
                         : champion            ? decisions[k].score
                                               : std::nan("");
    AppendDriftRow(items[members[k]].tx, rows.subspan(k * width, width), score, client, batch);
  }
  if (!drift_tap_->Offer(std::move(batch)) && metrics_ != nullptr &&
      metrics_->drift_dropped != nullptr) {
    metrics_->drift_dropped->Increment(n);
  }
}

absl::Status DecisionService::AttachAudit(std::unique_ptr<audit::AuditLog> log, bool durable_ack,
                                          size_t max_waiting, std::chrono::microseconds max_wait) {
  absl::MutexLock seen(&seen_mu_);
  absl::MutexLock features(&features_mu_);
  if (store_ == nullptr) {
    return absl::FailedPreconditionError("an audit log needs the feature store of a data dir");
  }
  // Rows applied before a restart whose decisions were never recorded: their retries are
  // decided on them, not counted again.
  // The records outlive the process: their payments are fingerprinted under the data dir's key.
  VIGIL_ASSIGN_OR_RETURN(fingerprints_, PaymentFingerprinter::ForStore(store_->kv()));
  // A pending row is the row's doubles, then (since payments are fingerprinted) the
  // fingerprint of the payment it counts.
  const size_t row_bytes = FeatureExtractor::Schema()->size() * sizeof(double);
  VIGIL_RETURN_IF_ERROR(store_->kv().ForEach(
      kPendingRowsFamily, "", [&](absl::string_view id, absl::string_view bytes) {
        KeptRow kept;
        if (bytes.size() == row_bytes + kept.fingerprint.size()) {
          std::memcpy(kept.fingerprint.data(), bytes.data() + row_bytes, kept.fingerprint.size());
        } else if (bytes.size() != row_bytes) {
          return absl::DataLossError(absl::StrCat("feature store: the pending row of \"", id,
                                                  "\" has ", bytes.size(), " bytes, not ",
                                                  row_bytes, " (or ", row_bytes + 32,
                                                  " with its payment's fingerprint)"));
        }
        kept.row.resize(row_bytes / sizeof(double));
        std::memcpy(kept.row.data(), bytes.data(), row_bytes);
        std::string key(id);
        if (unscored_.emplace(key, std::move(kept)).second) unscored_order_.push_back(key);
        pending_durable_.insert(std::move(key));
        return absl::OkStatus();
      }));
  audit_log_ = std::move(log);
  audit_ = std::make_unique<DecisionRecorder>(audit_log_.get(),
                                              DecisionRecorderOptions{.source = "serve",
                                                                      .input_format = "json",
                                                                      .durable_ack = durable_ack,
                                                                      .max_waiting = max_waiting,
                                                                      .max_wait = max_wait});
  audit_log_->SetCompanion([this](absl::Span<const std::string> recorded, KvWriteBatch& batch) {
    StageState(recorded, batch);
  });
  return absl::OkStatus();
}

void DecisionService::StageState(absl::Span<const std::string> recorded, KvWriteBatch& batch) {
  std::vector<std::string> forgotten;
  {
    absl::MutexLock lock(&seen_mu_);
    forgotten.swap(pending_forgotten_);
  }
  absl::MutexLock lock(&features_mu_);
  store_->StageInto(batch);
  // Rows applied since the last group become durable, except those recorded (or forgotten)
  // in this very group; rows now recorded or forgotten are deleted.
  absl::flat_hash_set<std::string_view> settled(recorded.begin(), recorded.end());
  settled.insert(forgotten.begin(), forgotten.end());
  std::string bytes;
  for (const auto& [id, kept] : pending_rows_) {
    if (settled.contains(id)) continue;
    bytes.assign(reinterpret_cast<const char*>(kept.row.data()), kept.row.size() * sizeof(double));
    bytes.append(reinterpret_cast<const char*>(kept.fingerprint.data()), kept.fingerprint.size());
    batch.Put(kPendingRowsFamily, id, bytes);
    pending_durable_.insert(id);
  }
  pending_rows_.clear();
  for (const std::string& id : recorded) {
    if (pending_durable_.erase(id) > 0) batch.Delete(kPendingRowsFamily, id);
  }
  for (const std::string& id : forgotten) {
    if (pending_durable_.erase(id) > 0) batch.Delete(kPendingRowsFamily, id);
  }
}

void DecisionService::AnswerRecorded(std::vector<Item>& items) {
  std::vector<size_t> unseen;
  {
    absl::MutexLock lock(&seen_mu_);
    for (size_t i = 0; i < items.size(); ++i) {
      if (!items[i].done && !seen_.contains(items[i].tx.id)) unseen.push_back(i);
    }
  }
  for (size_t i : unseen) {
    Item& item = items[i];
    absl::StatusOr<std::optional<audit::AuditRecord>> recorded = audit_->Recorded(item.tx.id);
    if (!recorded.ok()) {
      // Whether it was decided before cannot be told: deciding again could record it twice.
      item.reply.status = 503;
      item.reply.error_code = "audit_unavailable";
      item.reply.body = JsonErrorBody(
          "audit_unavailable", "",
          absl::StrCat("the audit log cannot be read: ", recorded.status().message()));
      item.done = true;
      continue;
    }
    if (!recorded->has_value()) continue;
    if (!SamePayment(item, **recorded)) {
      Conflict(item, absl::StrCat("the payment recorded in the audit log at sequence ",
                                  (*recorded)->sequence));
      continue;
    }
    const Decision& d = (*recorded)->decision;
    item.reply.status = 200;
    item.reply.body = DecisionToJson(d);
    item.reply.action = std::string(View(ActionName(d.action)));
    item.reply.degraded = d.degraded;
    item.reply.degraded_reason = d.degraded_reason;
    item.reply.repeated = true;
    item.done = true;
  }
}

void DecisionService::RecordDecisions(const std::shared_ptr<Call>& call, size_t group,
                                      const std::vector<size_t>& members,
                                      absl::Span<const Decision> decisions) {
  std::vector<Item>& items = call->items;
  Call::Recording& recording = call->recordings[group];
  recording.members = members;
  recording.start = Steady::now();
  const UtcTime decided = clock_.Now();
  std::vector<DecisionToRecord> records(members.size());
  for (size_t k = 0; k < members.size(); ++k) {
    const Item& item = items[members[k]];
    records[k] = {.transaction = &item.tx,
                  .input = item.raw,
                  .input_format = MessageFormatName(item.format),
                  .features = item.row,
                  .decision = &decisions[k],
                  .received = item.received,
                  .decided = decided,
                  .payment_fingerprint = &item.fingerprint};
  }
  // The callback may run before RecordThen returns (without durable acknowledgement, or a
  // fast sync): it only notes the outcome; the items are settled once every wait has ended.
  call->pending.fetch_add(1, std::memory_order_relaxed);
  const absl::Status queued =
      audit_->RecordThen(records, call->request.actor, [this, call, group](absl::Status s) {
        Call::Recording& r = call->recordings[group];
        r.end = Steady::now();
        r.status = std::move(s);
        Settle(call);
      });
  if (!queued.ok()) {
    // Refused: nothing queued, the callback never runs; the deciding thread's own wait keeps
    // "pending" above zero.
    recording.end = Steady::now();
    recording.status = queued;
    call->pending.fetch_sub(1, std::memory_order_relaxed);
  }
}

void DecisionService::SettleRecordings(Call& call) {
  for (const Call::Recording& recording : call.recordings) {
    if (recording.members.empty()) continue;
    if (metrics_ != nullptr) {
      for (size_t member : recording.members) {
        const Item& item = call.items[member];
        const int c = static_cast<int>(item.tx.priority);
        metrics_->stage[kAudit][c]->Record(recording.end - recording.start);
        metrics_->stage[kDurable][c]->Record(recording.end - item.start);
      }
    }
    const absl::Status& recorded = recording.status;
    if (recorded.ok()) continue;
    // Full (kResourceExhausted: too many records waiting to become durable, or the log's
    // queue) is overload, to retry shortly; anything else is the log failing.
    const bool overloaded = absl::IsResourceExhausted(recorded);
    absl::MutexLock lock(&seen_mu_);
    for (size_t member : recording.members) {
      Item& item = call.items[member];
      item.reply = Reply{};
      item.reply.status = 503;
      item.reply.transaction_id = item.tx.id;
      if (overloaded) {
        item.reply.error_code = "overloaded";
        item.reply.shed_reason = "audit";
        item.reply.body = JsonErrorBody(
            "overloaded", "",
            absl::StrCat("the audit log cannot take the decision now, so it is not given; retry: ",
                         recorded.message()));
      } else {
        item.reply.error_code = "audit_unavailable";
        item.reply.body = JsonErrorBody(
            "audit_unavailable", "",
            absl::StrCat(
                "the decision could not be recorded in the audit log, so it is not given: ",
                recorded.message()));
      }
      KeepUnscored(item);
    }
  }
}

void DecisionService::KeepUnscored(Item& item) {
  if (!unscored_.emplace(item.tx.id, KeptRow{std::move(item.row), item.fingerprint}).second) {
    return;
  }
  unscored_order_.push_back(item.tx.id);
  if (unscored_order_.size() > options_.idempotency_capacity) {
    if (audit_ != nullptr) pending_forgotten_.push_back(unscored_order_.front());
    unscored_.erase(unscored_order_.front());
    unscored_order_.pop_front();
  }
}

void DecisionService::Admit(std::vector<Item>& items) {
  const int64_t now_us = ToUnixMicros(clock_.Now());
  const int64_t limit_us = now_us + options_.max_future_skew.count();
  for (Item& item : items) {
    if (item.done) continue;
    // A payment message is timed by its arrival (ScoreRequest::format): never ahead.
    const EventTimeSource time = item.parsed ? EventTimeSource::kArrival : EventTimeSource::kSender;
    if (time == EventTimeSource::kSender && ToUnixMicros(item.tx.event_time) > limit_us) {
      item.reply.status = 422;
      item.reply.error_code = "event_in_future";
      item.reply.body = JsonErrorBody(
          "event_in_future", "$.timestamp",
          absl::StrCat("event time ", FormatUtc(item.tx.event_time), " is more than ",
                       options_.max_future_skew.count() / 1'000'000,
                       " s (max_future_skew) ahead of the server's clock, ",
                       FormatUtc(FromUnixMicros(now_us)),
                       "; check the sender's clock (nothing was recorded)"));
      item.done = true;
      if (metrics_ != nullptr) metrics_->future_refused->Increment();
      continue;
    }
    item.fingerprint = fingerprints_.Of(item.tx, time);
  }
}

absl::Status DecisionService::Congestion() const {
  if (audit_ == nullptr) return absl::OkStatus();
  const absl::Status congestion = audit_->Congestion();
  if (congestion.ok()) return congestion;
  return absl::ResourceExhaustedError(
      absl::StrCat("the audit log is behind, so the payment was not decided (nothing changed); "
                   "retry: ",
                   congestion.message()));
}

void DecisionService::RefuseWhileCongested(std::vector<Item>& items) {
  const absl::Status congestion = Congestion();
  if (congestion.ok()) return;
  for (Item& item : items) {
    if (item.done) continue;
    item.reply.status = 503;
    item.reply.error_code = "overloaded";
    item.reply.shed_reason = "audit";
    item.reply.body = JsonErrorBody("overloaded", "", View(congestion.message()));
    item.done = true;
    if (metrics_ != nullptr) metrics_->shed_audit[static_cast<int>(item.tx.priority)]->Increment();
  }
}

void DecisionService::Conflict(Item& item, std::string_view what) {
  item.reply.status = 409;
  item.reply.error_code = "idempotency_conflict";
  item.reply.body = JsonErrorBody(
      "idempotency_conflict", item.parsed ? "$" : "$.id",
      absl::StrCat("transaction id \"", item.tx.id, "\" is already used by ",
                   absl::string_view(what.data(), what.size()),
                   ", and this is another payment (its amount, parties or details differ); it "
                   "was not decided: give a new payment its own id"));
  item.done = true;
  item.entry = nullptr;
  if (metrics_ != nullptr) metrics_->conflicts->Increment();
}

bool DecisionService::SamePayment(const Item& item, const audit::AuditRecord& record) const {
  if (record.payment_fingerprint != audit::Hash{}) {
    return record.payment_fingerprint == item.fingerprint;
  }
  // A record from before payments were fingerprinted: the same input bytes are the same
  // payment; otherwise its transaction, when it is in the clear, tells.
  if (record.input_sha256 == audit::Digest(audit::HashAlgorithm::kSha256, item.raw)) return true;
  if (!record.sealed.empty()) return false;  // cannot be told: refused rather than guessed
  const EventTimeSource time =
      record.input_format == "json" ? EventTimeSource::kSender : EventTimeSource::kArrival;
  return fingerprints_.Of(record.transaction, time) == item.fingerprint &&
         time == (item.parsed ? EventTimeSource::kArrival : EventTimeSource::kSender);
}

void DecisionService::Settle(const std::shared_ptr<Call>& call) {
  if (call->pending.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (!call->released) {
    call->released = true;
    Release(call);
  } else {
    Answer(*call);
  }
}

// Publishes the replies this call decided, then waits (without a thread) for those that other
// calls decide.
void DecisionService::Release(const std::shared_ptr<Call>& call) {
  SettleRecordings(*call);
  std::vector<Item>& items = call->items;
  for (Item& item : items) {
    if (!item.first) continue;
    if (item.reply.status != 200) {
      // A refused transaction was not decided: a corrected retry with the same id must be heard.
      absl::MutexLock lock(&seen_mu_);
      auto it = seen_.find(item.tx.id);
      if (it != seen_.end() && it->second == item.entry) {
        seen_.erase(it);
        // And its place in the eviction order (near the back: it was claimed just now), so
        // that the order holds exactly the remembered ids. A stale place would later evict the
        // entry of a decided retry early, or the retry's own new entry while it is claimed.
        for (auto r = seen_order_.rbegin(); r != seen_order_.rend(); ++r) {
          if (*r == item.tx.id) {
            seen_order_.erase(std::next(r).base());
            break;
          }
        }
      }
    }
    if (item.reply.status == 503 && metrics_ != nullptr) {
      const int c = static_cast<int>(item.tx.priority);
      if (item.reply.shed_reason == "batcher") metrics_->shed_batcher[c]->Increment();
      if (item.reply.shed_reason == "audit") metrics_->shed_audit[c]->Increment();
    }
    // Last: a waiter may answer its own call at once, on this thread.
    item.entry->Publish(item.reply);
  }
  // Every wait of the recordings has ended: "pending" is 0 and this thread alone holds it.
  call->pending.store(1, std::memory_order_relaxed);
  for (size_t i = 0; i < items.size(); ++i) {
    Item& item = items[i];
    if (item.first || item.same_as >= 0 || item.entry == nullptr) continue;
    call->pending.fetch_add(1, std::memory_order_relaxed);
    item.entry->WhenPublished([this, call, i](const Reply& reply) {
      Item& waiting = call->items[i];
      waiting.reply = reply;
      waiting.reply.repeated = reply.status == 200;
      Settle(call);
    });
  }
  Settle(call);
}

void DecisionService::Answer(Call& call) {
  std::vector<Item>& items = call.items;
  for (Item& item : items) {
    if (item.same_as < 0) continue;
    item.reply = items[static_cast<size_t>(item.same_as)].reply;
    item.reply.repeated = item.reply.status == 200;
  }
  std::move(call.done)(call.batch ? BatchReply(items) : std::move(items[0].reply));
}

}  // namespace vigil
