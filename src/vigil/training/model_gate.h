// The model gate: whether a model file's card (model_card.json beside it, as `vigil model
// train` writes it) records that the model beat its one-feature baselines. `vigil model add`
// refuses a model whose card says it did not, unless forced: a model-risk reviewer's check that
// the model learned more than one column.
//
// Thread safety: a pure function.
#ifndef VIGIL_TRAINING_MODEL_GATE_H_
#define VIGIL_TRAINING_MODEL_GATE_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace vigil::training {

struct ModelGate {
  std::string card_path;
  bool passed = false;
  std::string reason;
};

// The gate recorded in the card beside "model_path"; nullopt when there is no card or the card
// records no gate (a card written before gates). Errors: kInvalidArgument naming the card when
// it is not JSON or its gate is malformed.
absl::StatusOr<std::optional<ModelGate>> ReadModelGate(const std::string& model_path);

}  // namespace vigil::training

#endif  // VIGIL_TRAINING_MODEL_GATE_H_
