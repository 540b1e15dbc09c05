#include "vigil/training/model_gate.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace vigil::training {

absl::StatusOr<std::optional<ModelGate>> ReadModelGate(const std::string& model_path) {
  const std::filesystem::path card =
      std::filesystem::path(model_path).parent_path() / "model_card.json";
  std::ifstream in(card);
  if (!in) return std::optional<ModelGate>();
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(card.string(), ": not a JSON object"));
  }
  if (!j.contains("gate")) return std::optional<ModelGate>();
  const nlohmann::json& g = j["gate"];
  if (!g.is_object() || !g.contains("passed") || !g["passed"].is_boolean()) {
    return absl::InvalidArgumentError(
        absl::StrCat(card.string(), ": gate.passed must be true or false"));
  }
  ModelGate gate;
  gate.card_path = card.string();
  gate.passed = g["passed"].get<bool>();
  gate.reason = g.value("reason", "");
  return std::optional<ModelGate>(gate);
}

}  // namespace vigil::training
