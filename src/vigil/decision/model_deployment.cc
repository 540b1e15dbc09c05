#include "vigil/decision/model_deployment.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "vigil/common/status_macros.h"

namespace vigil {

ModelDeployment::ModelDeployment(ModelRegistry registry, ModelLoader load,
                                 std::shared_ptr<const DecisionMaker> rules,
                                 std::string record_path)
    : registry_(std::move(registry)), load_(std::move(load)), record_path_(std::move(record_path)) {
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
  return Apply(ref, 1.0, false, /*durable=*/false).status();
}

absl::StatusOr<std::shared_ptr<const ModelDeployment::Snapshot>> ModelDeployment::Activate(
    std::string_view ref, double traffic_weight, bool shadow) {
  return Apply(ref, traffic_weight, shadow, /*durable=*/true);
}

absl::Status ModelDeployment::Restore(const DeploymentRecord& record) {
  absl::MutexLock activation(&activate_mu_);
  auto next = std::make_shared<Snapshot>(*Current());
  std::shared_ptr<const Model> loaded[3];
  const std::string* refs[3] = {&record.champion, &record.challenger, &record.shadow};
  constexpr const char* kSlots[3] = {"champion", "challenger", "shadow"};
  for (int i = 0; i < 3; ++i) {
    if (refs[i]->empty()) continue;
    // The same model in two slots (champion and shadow) is loaded once.
    for (int j = 0; j < i; ++j) {
      if (*refs[j] == *refs[i]) loaded[i] = loaded[j];
    }
    if (loaded[i] != nullptr) continue;
    absl::StatusOr<std::shared_ptr<const Model>> model = Load(*refs[i]);
    if (!model.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the stored model activation (", record_path_, ") makes ", refs[i]->substr(0, 12),
          " the ", kSlots[i], ", which cannot be loaded: ", model.status().message(),
          "; add the model back (vigil model add), or remove ", record_path_,
          " to start from --model / --model-ref"));
    }
    loaded[i] = *std::move(model);
  }
  next->champion = loaded[0];
  next->challenger = loaded[1];
  next->traffic_weight = loaded[1] != nullptr ? record.traffic_weight : 0;
  next->shadow = loaded[2];
  absl::MutexLock lock(&mu_);
  current_ = std::move(next);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const ModelDeployment::Snapshot>> ModelDeployment::Apply(
    std::string_view ref, double traffic_weight, bool shadow, bool durable) {
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
  if (durable && !record_path_.empty()) {
    // Durable before it takes effect: a restart never brings back less than was answered.
    const auto ref_of = [](const std::shared_ptr<const Model>& m) {
      return m != nullptr ? m->ref : std::string();
    };
    DeploymentRecord record;
    record.champion = ref_of(next->champion);
    record.challenger = ref_of(next->challenger);
    record.traffic_weight = next->challenger != nullptr ? next->traffic_weight : 0;
    record.shadow = ref_of(next->shadow);
    record.activated_at = absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone());
    VIGIL_RETURN_IF_ERROR(WriteDeploymentRecord(record_path_, record));
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
