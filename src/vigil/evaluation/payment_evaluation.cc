#include "vigil/evaluation/payment_evaluation.h"

#include <cmath>
#include <limits>
#include <map>

#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"

namespace vigil::evaluation {
namespace {

SliceFigures Slice(std::string name, absl::Span<const double> scores,
                   absl::Span<const uint8_t> labels, const PaymentEvaluationOptions& o,
                   bool interval) {
  SliceFigures f;
  f.name = std::move(name);
  f.rows = scores.size();
  for (uint8_t l : labels) f.positives += l != 0;
  f.at_threshold = ConfusionAt(scores, labels, o.threshold);
  if (interval) {
    f.pr_auc = BootstrapInterval(scores, labels, AveragePrecision, o.bootstrap_resamples, o.seed);
  } else {
    f.pr_auc.estimate = f.pr_auc.low = f.pr_auc.high = std::numeric_limits<double>::quiet_NaN();
  }
  return f;
}

std::string BandName(double low, double high) {
  if (std::isinf(low)) return absl::StrCat("< ", high);
  if (std::isinf(high)) return absl::StrCat(">= ", low);
  return absl::StrCat("[", low, ", ", high, ")");
}

}  // namespace

PaymentEvaluation EvaluatePayments(absl::Span<const double> scores,
                                   absl::Span<const uint8_t> labels,
                                   absl::Span<const std::string> typologies,
                                   absl::Span<const double> amounts,
                                   const PaymentEvaluationOptions& options) {
  VIGIL_CHECK(scores.size() == labels.size());
  VIGIL_CHECK(typologies.empty() || typologies.size() == scores.size());
  VIGIL_CHECK(amounts.empty() || amounts.size() == scores.size());
  PaymentEvaluation out;
  out.all = Slice("all", scores, labels, options, true);
  out.base_rate = scores.empty() ? std::numeric_limits<double>::quiet_NaN()
                                 : static_cast<double>(out.all.positives) /
                                       static_cast<double>(scores.size());
  out.precision_at_k = PrecisionAtK(scores, labels, options.top_k);

  std::map<std::string, std::pair<std::vector<double>, std::vector<uint8_t>>> by_typology;
  for (size_t i = 0; i < typologies.size(); ++i) {
    if (labels[i] == 0 || typologies[i].empty()) continue;
    auto& [s, l] = by_typology[typologies[i]];
    s.push_back(scores[i]);
    l.push_back(1);
  }
  for (const auto& [name, rows] : by_typology) {
    out.typologies.push_back(Slice(name, rows.first, rows.second, options, false));
  }

  if (!amounts.empty()) {
    std::vector<double> edges = {-HUGE_VAL};
    edges.insert(edges.end(), options.amount_bands.begin(), options.amount_bands.end());
    edges.push_back(HUGE_VAL);
    for (size_t b = 0; b + 1 < edges.size(); ++b) {
      std::vector<double> s;
      std::vector<uint8_t> l;
      for (size_t i = 0; i < amounts.size(); ++i) {
        if (amounts[i] >= edges[b] && amounts[i] < edges[b + 1]) {
          s.push_back(scores[i]);
          l.push_back(labels[i]);
        }
      }
      out.amount_bands.push_back(
          Slice(BandName(edges[b], edges[b + 1]), s, l, options, true));
    }
  }
  return out;
}

}  // namespace vigil::evaluation
