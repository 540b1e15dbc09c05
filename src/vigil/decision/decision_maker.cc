#include "vigil/decision/decision_maker.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "vigil/common/check.h"
#include "vigil/common/clock.h"

namespace vigil {
namespace {

std::string_view View(absl::string_view s) { return {s.data(), s.size()}; }

using SteadyClock = std::chrono::steady_clock;

std::chrono::microseconds PerItem(SteadyClock::duration total, size_t n) {
  return std::chrono::duration_cast<std::chrono::microseconds>(total / static_cast<int64_t>(n));
}

// "beneficiary name matches OFAC SDN 306 "BANCO NACIONAL DE CUBA" (as "ACME TRADING"), score
// 0.9712 >= block threshold 0.95"; for identifiers, what was listed. The party is named by its
// role, never by its own name or account: a decision is answered and recorded in the clear,
// and carries no personal data beyond the public list entry (docs/security.md).
std::string ScreeningReasonText(const screening::ScreeningHit& hit, std::string_view level,
                                double threshold) {
  const std::string_view party = hit.party.empty() ? std::string_view("party") : hit.party;
  if (hit.by_identifier) {
    return absl::StrFormat("%s identifier is listed by %s %s \"%s\" (identifier \"%s\")", party,
                           hit.list, hit.entry_id, hit.entry_name, hit.matched_name);
  }
  std::string text = absl::StrFormat("%s name matches %s %s \"%s\"", party, hit.list,
                                     hit.entry_id, hit.entry_name);
  if (hit.matched_name != hit.entry_name) {
    absl::StrAppendFormat(&text, " (as \"%s\")", hit.matched_name);
  }
  absl::StrAppendFormat(&text, ", score %.4f >= %s threshold %g", hit.score, level, threshold);
  return text;
}

}  // namespace

PolicyInputs::PolicyInputs(const PolicyInputLayout& layout)
    : numbers_(layout.number_count()), width_(layout.schema().size()) {}

void PolicyInputs::Set(const Transaction& tx, absl::Span<const double> features, double score,
                       const screening::TransactionScreening* screening) {
  VIGIL_DCHECK(features.size() == width_);
  std::copy(features.begin(), features.end(), numbers_.begin());
  numbers_[width_] = score;
  const auto number = [this](ScreeningNumber n) -> double& {
    return numbers_[width_ + 1 + static_cast<size_t>(n)];
  };
  const screening::ScreeningHit* best =
      screening != nullptr && !screening->hits.empty() ? &screening->hits.front() : nullptr;
  number(ScreeningNumber::kMaxScore) = screening != nullptr ? screening->max_score : 0.0;
  number(ScreeningNumber::kHitCount) =
      screening != nullptr ? static_cast<double>(screening->hits.size()) : 0.0;
  number(ScreeningNumber::kByIdentifier) = best != nullptr && best->by_identifier ? 1.0 : 0.0;
  currency_ = tx.amount.currency().code();
  settled_currency_ = tx.settled_amount ? tx.settled_amount->currency().code() : currency_;
  const auto at = [this](PolicyString s) -> std::string_view& {
    return strings_[static_cast<size_t>(s)];
  };
  at(PolicyString::kCurrency) = currency_;
  at(PolicyString::kSettledCurrency) = settled_currency_;
  at(PolicyString::kOriginatorCountry) = tx.originator.country;
  at(PolicyString::kBeneficiaryCountry) = tx.beneficiary.country;
  at(PolicyString::kOriginatorBank) = tx.originator.bank_id;
  at(PolicyString::kBeneficiaryBank) = tx.beneficiary.bank_id;
  at(PolicyString::kPaymentFormat) = View(PaymentFormatJsonName(tx.payment_format));
  at(PolicyString::kChannel) = tx.channel;
  at(PolicyString::kRemittance) = tx.remittance;
  at(PolicyString::kScreeningList) = best != nullptr ? std::string_view(best->list) : "";
  at(PolicyString::kScreeningParty) = best != nullptr ? std::string_view(best->party) : "";
  at(PolicyString::kScreeningEntryType) =
      best != nullptr ? screening::WatchlistEntryTypeName(best->entry_type) : "";
}

absl::StatusOr<std::unique_ptr<DecisionMaker>> DecisionMaker::Create(
    std::shared_ptr<const PolicySource> policies, std::shared_ptr<const Scorer> scorer,
    PolicyInputLayout layout, DecisionOptions options,
    std::shared_ptr<const screening::Screener> screener) {
  if (policies->Active() == nullptr) {
    return absl::FailedPreconditionError("no policy is active: activate one before deciding");
  }
  return std::unique_ptr<DecisionMaker>(new DecisionMaker(
      std::move(policies), std::move(scorer), std::move(layout), options, std::move(screener)));
}

DecisionMaker::DecisionMaker(std::shared_ptr<const PolicySource> policies,
                             std::shared_ptr<const Scorer> scorer, PolicyInputLayout layout,
                             DecisionOptions options,
                             std::shared_ptr<const screening::Screener> screener)
    : policies_(std::move(policies)),
      scorer_(std::move(scorer)),
      screener_(std::move(screener)),
      layout_(std::move(layout)),
      options_(options) {}

DecisionMaker::DecisionMaker(std::shared_ptr<const Policy> policy,
                             std::shared_ptr<const Scorer> scorer, PolicyInputLayout layout,
                             DecisionOptions options,
                             std::shared_ptr<const screening::Screener> screener)
    : DecisionMaker(std::make_shared<FixedPolicy>(std::move(policy)), std::move(scorer),
                    std::move(layout), options, std::move(screener)) {}

absl::Status DecisionMaker::DecideBatch(absl::Span<const Transaction* const> txs,
                                        absl::Span<const double> rows,
                                        absl::Span<Decision> decisions, UuidV7Generator& ids,
                                        const ScoreContext& context) const {
  const size_t n = txs.size();
  if (n == 0) return absl::OkStatus();
  const size_t width = layout_.schema().size();
  VIGIL_CHECK(rows.size() >= n * width && decisions.size() >= n);
  // One version for the whole batch, held to its end whatever is activated meanwhile.
  const std::shared_ptr<const Policy> held = policies_->Active();
  const Policy& policy = *held;

  // The model, for the whole batch.
  std::vector<double> scores(n, std::nan(""));
  absl::Status scored = absl::OkStatus();
  SteadyClock::duration model_time{0};
  ScoreBackend backend = ScoreBackend::kNone;
  if (scorer_ != nullptr) {
    const auto start = SteadyClock::now();
    ScoreContext with_backend = context;
    with_backend.backend = &backend;
    scored = scorer_->Score(rows, n, absl::MakeSpan(scores), with_backend);
    model_time = SteadyClock::now() - start;
    if (absl::IsResourceExhausted(scored)) return scored;
    if (!scored.ok()) std::fill(scores.begin(), scores.end(), std::nan(""));
  }

  // One set of lists for the whole batch, as for the policy.
  const std::shared_ptr<const screening::ScreeningLists> lists =
      screener_ != nullptr ? screener_->Current() : nullptr;
  // The floor never hides a hit the policy's own review threshold would act on.
  const double review = policy.screening_review_threshold();
  const screening::ScreeningOptions screening_options{
      options_.screening_min_score > 0 ? std::min(options_.screening_min_score, review) : review,
      options_.screening_max_hits};

  PolicyInputs inputs(layout_);
  screening::TransactionScreening screened;
  std::vector<std::pair<screening::ScreeningHit, screening::ScreeningClearance>> cleared;
  const screening::ScreeningClearances* clearances = options_.clearances.get();
  std::vector<uint32_t> fired(policy.rules().size());
  for (size_t i = 0; i < n; ++i) {
    const Transaction& tx = *txs[i];
    const absl::Span<const double> row = rows.subspan(i * width, width);
    Decision& d = decisions[i];
    d = Decision{};
    d.transaction_id = tx.id;
    d.trace_id = ids.Next();
    d.feature_schema_version = layout_.schema().version();
    d.policy_version = policy.tag();
    d.score = scores[i];
    if (scorer_ != nullptr) {
      d.model_version = scorer_->model_version();
      if (scored.ok()) d.model_backend = std::string(ScoreBackendName(backend));
      if (!scored.ok()) {
        d.degraded = true;
        d.degraded_reason = absl::StrCat("rules only: the model failed: ", scored.message());
      }
    }

    SteadyClock::duration screening_time{0};
    if (lists != nullptr) {
      const auto start = SteadyClock::now();
      screened = lists->ScreenTransaction(tx, screening_options);
      cleared.clear();
      if (clearances != nullptr && !screened.hits.empty() && !clearances->empty()) {
        // Cleared hits leave the screening the policy reads; they stay on the record.
        const UtcTime now = RealClock().Now();
        std::vector<screening::ScreeningHit> kept;
        screened.max_score = 0;
        for (screening::ScreeningHit& hit : screened.hits) {
          std::optional<screening::ScreeningClearance> c =
              clearances->Find(absl::StrCat(hit.list, ":", hit.entry_id),
                               screening::ScreenedParty(tx, hit.party), now);
          if (c.has_value()) {
            cleared.push_back({std::move(hit), *std::move(c)});
          } else {
            screened.max_score = std::max(screened.max_score, hit.score);
            kept.push_back(std::move(hit));
          }
        }
        screened.hits = std::move(kept);
      }
      screening_time = SteadyClock::now() - start;
      d.screening_score = screened.max_score;
      d.screening_lists = lists->versions();
    }

    const auto rules_start = SteadyClock::now();
    inputs.Set(tx, row, d.score, lists != nullptr ? &screened : nullptr);
    const EvalInputs view = inputs.view();
    const size_t hits = policy.Evaluate(view, absl::MakeSpan(fired));
    Action action = Action::kAllow;
    for (size_t h = 0; h < hits; ++h) {
      const PolicyRule& rule = policy.rules()[fired[h]];
      Reason reason;
      reason.kind = Reason::Kind::kRule;
      reason.code = rule.id;
      reason.text = policy.RenderReason(rule, view);
      reason.shadow = rule.mode == RuleMode::kShadow;
      action = std::max(action, DecisionOf(rule));
      d.reasons.push_back(std::move(reason));
    }
    if (!std::isnan(d.score)) {
      const double threshold = d.score >= policy.block_threshold()    ? policy.block_threshold()
                               : d.score >= policy.review_threshold() ? policy.review_threshold()
                                                                      : -1;
      if (threshold >= 0) {
        const Action by_score = policy.ScoreDecision(d.score);
        action = std::max(action, by_score);
        d.reasons.push_back(
            {Reason::Kind::kModel, "score",
             absl::StrFormat("model score %.4f >= %s threshold %g", d.score,
                             by_score == Action::kBlock ? "block" : "review", threshold),
             0, false});
      }
    }
    if (lists != nullptr) {
      for (const screening::ScreeningHit& hit : screened.hits) {
        if (hit.score < policy.screening_review_threshold()) break;  // best first
        const bool blocks = hit.score >= policy.screening_block_threshold();
        action = std::max(action, blocks ? Action::kBlock : Action::kReview);
        d.reasons.push_back({Reason::Kind::kScreening, absl::StrCat(hit.list, ":", hit.entry_id),
                             ScreeningReasonText(hit, blocks ? "block" : "review",
                                                 blocks ? policy.screening_block_threshold()
                                                        : policy.screening_review_threshold()),
                             hit.score, false});
      }
      for (const auto& [hit, c] : cleared) {
        d.reasons.push_back(
            {Reason::Kind::kScreening, absl::StrCat(hit.list, ":", hit.entry_id),
             absl::StrCat(ScreeningReasonText(hit, "review", policy.screening_review_threshold()),
                          "; cleared for this party by ", c.case_id, " until ",
                          FormatUtc(c.expires)),
             hit.score, /*shadow=*/true});
      }
    }
    d.action = action;
    const auto rules_time = SteadyClock::now() - rules_start;

    SteadyClock::duration explain_time{0};
    if (action != Action::kAllow && scorer_ != nullptr && scored.ok() &&
        options_.reason_codes > 0) {
      const auto start = SteadyClock::now();
      auto reasons = scorer_->Explain(row, options_.reason_codes);
      explain_time = SteadyClock::now() - start;
      if (reasons.ok()) {
        for (Reason& r : *reasons) d.reasons.push_back(std::move(r));
      }
    }
    if (lists != nullptr) {
      d.timings.push_back(
          {"screening", std::chrono::duration_cast<std::chrono::microseconds>(screening_time)});
    }
    d.timings.push_back(
        {"rules", std::chrono::duration_cast<std::chrono::microseconds>(rules_time)});
    if (scorer_ != nullptr) d.timings.push_back({"model", PerItem(model_time, n)});
    if (explain_time.count() > 0) {
      d.timings.push_back(
          {"explain", std::chrono::duration_cast<std::chrono::microseconds>(explain_time)});
    }
  }
  return absl::OkStatus();
}

}  // namespace vigil
