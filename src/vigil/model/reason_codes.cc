#include "vigil/model/reason_codes.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace vigil {

std::vector<Reason> TopReasons(const TreeShapExplainer& explainer, absl::Span<const double> row,
                               absl::Span<const double> contributions, int k, int group) {
  const TreeEnsemble& m = explainer.model();
  const size_t n = m.feature_names.size();
  const absl::Span<const double> phi =
      contributions.subspan(static_cast<size_t>(group) * (n + 1), n);
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i) {
    if (phi[i] != 0) order.push_back(i);
  }
  const auto take = std::min(order.size(), static_cast<size_t>(std::max(k, 0)));
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(take), order.end(),
                    [&](size_t a, size_t b) {
                      const double x = std::abs(phi[a]), y = std::abs(phi[b]);
                      return x != y ? x > y : a < b;
                    });
  std::vector<Reason> reasons;
  for (size_t r = 0; r < take; ++r) {
    const size_t f = order[r];
    const double value = row[explainer.column(f)];
    Reason reason;
    reason.kind = Reason::Kind::kModel;
    reason.code = m.feature_names[f];
    reason.contribution = phi[f];
    reason.text = absl::StrCat(m.feature_names[f], "=",
                               std::isnan(value) ? "missing" : absl::StrFormat("%g", value),
                               absl::StrFormat(" (%+.4f)", phi[f]));
    reasons.push_back(std::move(reason));
  }
  return reasons;
}

}  // namespace vigil
