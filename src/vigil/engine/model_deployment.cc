#include "vigil/engine/model_deployment.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"

namespace vigil {

ModelDeployment::ModelDeployment(ModelRegistry registry, ModelLoader load,
                                 std::shared_ptr<const DecisionMaker> rules)
    : registry_(std::move(registry)), load_(std::move(load)) {
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->rules = std::move(rules);
  current_ = std::move(snapshot);
}

std::shared_ptr<const ModelDeployment::Snapshot> ModelDeployment::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

absl::StatusOr<std::shared_ptr<const ModelDeployment::Model>> ModelDeployment::Load(
    std::string_view ref) {
  VIGIL_ASSIGN_OR_RETURN(ModelRegistry::Entry entry, registry_.Resolve(ref));
  return load_(entry);
}

absl::Status ModelDeployment::SetChampion(std::string_view ref) {
  return Activate(ref, 1.0, false).status();
}

absl::StatusOr<std::shared_ptr<const ModelDeployment::Snapshot>> ModelDeployment::Activate(
    std::string_view ref, double traffic_weight, bool shadow) {
  if (!(traffic_weight >= 0 && traffic_weight <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("traffic_weight must be within [0, 1], not ", traffic_weight));
  }
  if (shadow && traffic_weight != 0) {
    return absl::InvalidArgumentError(
        "a shadow model decides no traffic: give traffic_weight 0 with shadow true");
  }
  absl::MutexLock activation(&activate_mu_);
  VIGIL_ASSIGN_OR_RETURN(ModelRegistry::Entry entry, registry_.Resolve(ref));
  const std::shared_ptr<const Snapshot> now = Current();
  auto next = std::make_shared<Snapshot>(*now);
  const bool is_champion = now->champion != nullptr && now->champion->ref == entry.ref;
  if (!shadow && traffic_weight == 0) {
    if (!is_champion) {
      return absl::InvalidArgumentError(absl::StrCat(
          "traffic_weight 0 without shadow clears the challenger and shadow, and must name the "
          "champion (",
          now->champion != nullptr ? now->champion->ref.substr(0, 12) : "none", "), not ",
          entry.ref.substr(0, 12)));
    }
    next->challenger = nullptr;
    next->traffic_weight = 0;
    next->shadow = nullptr;
  } else {
    std::shared_ptr<const Model> model;
    // Reuse what is loaded already: a promotion keeps the challenger's warm batcher.
    for (const auto& loaded : {now->champion, now->challenger, now->shadow}) {
      if (loaded != nullptr && loaded->ref == entry.ref) model = loaded;
    }
    if (model == nullptr) {
      VIGIL_ASSIGN_OR_RETURN(model, load_(entry));
    }
    if (shadow) {
      next->shadow = model;
    } else if (traffic_weight == 1) {
      next->champion = model;
      next->challenger = nullptr;
      next->traffic_weight = 0;
      if (next->shadow == model) next->shadow = nullptr;
    } else {
      if (now->champion == nullptr) {
        return absl::InvalidArgumentError(
            "there is no champion for a challenger to share the traffic with: activate a "
            "champion first (traffic_weight 1)");
      }
      if (is_champion) {
        return absl::InvalidArgumentError("the champion cannot also be its own challenger");
      }
      next->challenger = model;
      next->traffic_weight = traffic_weight;
    }
  }
  std::shared_ptr<const Snapshot> result = next;
  absl::MutexLock lock(&mu_);
  current_ = result;
  return result;
}

bool ModelDeployment::RoutesToChallenger(std::string_view transaction_id, double traffic_weight) {
  if (traffic_weight <= 0) return false;
  if (traffic_weight >= 1) return true;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : transaction_id) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  // MurmurHash3's finalizer: ids that differ in their last character land far apart.
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  // Scale to [0, 1) with the top 53 bits (exact in a double).
  return std::ldexp(static_cast<double>(h >> 11), -53) < traffic_weight;
}

}  // namespace vigil
