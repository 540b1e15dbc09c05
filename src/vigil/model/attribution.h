// Attribution: every feature's exact TreeSHAP value for one row, with the bias, so that a
// reader can check that they sum to the model's margin (docs/model.md, "Explanations").
//
// Thread safety: plain value type.
#ifndef VIGIL_MODEL_ATTRIBUTION_H_
#define VIGIL_MODEL_ATTRIBUTION_H_

#include <string>
#include <vector>

namespace vigil {

struct FeatureAttribution {
  std::string feature;  // the model's feature name
  double value = 0;     // the row's value (NaN: missing)
  double contribution = 0;
};

struct Attribution {
  // In the model's feature order: one per model feature, zero contributions included.
  std::vector<FeatureAttribution> features;
  // The expected margin (base margin plus each tree's cover-weighted mean leaf value).
  double bias = 0;
  // The model's margin for the row, as its predictor computes it; bias plus the
  // contributions equals it up to rounding.
  double margin = 0;
  double score = 0;  // the probability the margin maps to
};

}  // namespace vigil

#endif  // VIGIL_MODEL_ATTRIBUTION_H_
