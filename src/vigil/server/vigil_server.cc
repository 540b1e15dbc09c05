#include "vigil/server/vigil_server.h"

#include <array>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "vigil/batching/batching_scorer.h"
#include "vigil/batching/circuit_breaker.h"
#include "vigil/common/clock.h"
#include "vigil/common/status_macros.h"
#include "vigil/engine/decision_pipeline.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/features/feature_store.h"
#include "vigil/model/cpu/cpu_scorer.h"
#include "vigil/model/model_file.h"

namespace vigil {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The roles whose models queue (a shadow is scored directly).
constexpr std::array<const char*, 2> kQueuedRoles = {"champion", "challenger"};

}  // namespace

struct VigilServer::Gauges {
  std::array<std::array<Gauge*, 3>, 2> queue_depth{};  // [role][class]
  std::array<Gauge*, 2> breaker_state{};               // [role]: 0 closed, 1 open, 2 half-open
  Gauge* connections = nullptr;
  Gauge* workers_busy = nullptr;
  Gauge* workers_queued = nullptr;
  Counter* breaker_openings = nullptr;
};

absl::StatusOr<std::unique_ptr<VigilServer>> VigilServer::Start(ServeConfig config, FxRates fx,
                                                                ServeHooks hooks) {
  VIGIL_RETURN_IF_ERROR(config.Validate());
  std::unique_ptr<VigilServer> s(new VigilServer());
  s->config_ = std::move(config);
  s->hooks_ = std::move(hooks);
  s->fx_ = std::make_unique<FxRates>(std::move(fx));
  const ServeConfig& c = s->config_;
  RequestLogOptions log_options;
  log_options.path = c.log_path;
  log_options.sample_rate = c.log_sample_rate;
  VIGIL_ASSIGN_OR_RETURN(s->log_, RequestLog::Create(log_options));
  s->metrics_ = std::make_unique<MetricsRegistry>();
  s->workers_ = std::make_unique<WorkerPool>(c.worker_threads, c.worker_queue);
  ServeApiOptions api_options;
  api_options.before_scrape = [srv = s.get()] { srv->RefreshGauges(); };
  api_options.score_budget = c.score_budget;
  VIGIL_ASSIGN_OR_RETURN(s->api_, ServeApi::Create(std::move(api_options), s->workers_.get(),
                                                   s->metrics_.get(), s->log_.get()));

  HttpServerOptions http;
  http.host = c.host;
  http.port = c.port;
  http.io_threads = c.io_threads;
  http.limits = c.limits;
  http.on_refused = [api = s->api_.get()](int status, std::string_view code) {
    api->CountRefused(status, code);
  };
  // The API outlives the HTTP server (members are destroyed in reverse order).
  std::shared_ptr<HttpHandler> handler(s->api_.get(), [](HttpHandler*) {});
  VIGIL_ASSIGN_OR_RETURN(s->http_, HttpServer::Start(std::move(http), std::move(handler)));
  VIGIL_RETURN_IF_ERROR(s->Load());
  s->api_->SetReady({s->service_.get(), s->policies_.get(), s->deployment_.get()});
  s->checkpointer_ = std::thread([srv = s.get()] {
    while (!srv->stop_checkpoints_.WaitForNotificationWithTimeout(absl::Seconds(1))) {
      if (absl::Status st = srv->service_->Checkpoint(); !st.ok()) {
        srv->log_->Event("error", "feature checkpoint failed", {{"error", std::string(st.message())}});
      }
    }
  });
  const auto champion = s->deployment_->Current()->champion;
  s->log_->Event("info", "vigil serve ready",
                 {{"listen", absl::StrCat(c.host, ":", s->port())},
                  {"policy", s->policies_->Active()->tag()},
                  {"model", champion != nullptr ? champion->version : ""},
                  {"batcher", c.batcher_preset}});
  return s;
}

absl::Status VigilServer::Load() {
  const ServeConfig& c = config_;
  const PolicyInputLayout layout(FeatureExtractor::Schema());
  VIGIL_ASSIGN_OR_RETURN(ListLibrary library, LoadListLibrary(c.lists, c.policy));
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<PolicyStore> store,
                         OpenPolicyStore(c.data_dir, std::move(library), RealClock()));
  policies_ = std::move(store);
  if (!c.policy.empty()) {
    VIGIL_ASSIGN_OR_RETURN(std::string text, ReadFile(c.policy));
    VIGIL_ASSIGN_OR_RETURN(PolicyStore::Entry entry, policies_->Add(text, c.policy, "serve"));
    if (policies_->active_id() != entry.id) {
      VIGIL_RETURN_IF_ERROR(policies_->Activate(entry.id, "serve --policy"));
    }
  }
  if (policies_->Active() == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no active policy in ", c.data_dir, "/policies: give --policy FILE (or policy: in the "
        "configuration)"));
  }
  // Shared with the decision makers, which hold it for their lifetime.
  std::shared_ptr<const PolicySource> policy_source(policies_.get(), [](const PolicySource*) {});

  gauges_ = std::make_unique<Gauges>();
  Gauges& g = *gauges_;
  for (size_t r = 0; r < kQueuedRoles.size(); ++r) {
    for (int cls = 0; cls < 3; ++cls) {
      VIGIL_ASSIGN_OR_RETURN(
          g.queue_depth[r][cls],
          metrics_->AddGauge("vigil_batcher_queue_depth",
                             "Requests waiting in the dynamic batcher, by model role and class.",
                             {{"role", kQueuedRoles[r]},
                              {"class", std::string(PriorityName(static_cast<Priority>(cls)))}}));
    }
    VIGIL_ASSIGN_OR_RETURN(
        g.breaker_state[r],
        metrics_->AddGauge("vigil_breaker_state",
                           "The model's circuit breaker: 0 closed, 1 open (rules only), 2 "
                           "half-open (probing); -1 when no model holds the role.",
                           {{"role", kQueuedRoles[r]}}));
  }
  VIGIL_ASSIGN_OR_RETURN(g.breaker_openings,
                         metrics_->AddCounter("vigil_breaker_openings_total",
                                              "Times a model's circuit breaker opened."));
  VIGIL_ASSIGN_OR_RETURN(g.connections, metrics_->AddGauge("vigil_http_connections",
                                                           "Open HTTP connections."));
  VIGIL_ASSIGN_OR_RETURN(g.workers_busy,
                         metrics_->AddGauge("vigil_workers_busy", "Requests being handled now."));
  VIGIL_ASSIGN_OR_RETURN(g.workers_queued,
                         metrics_->AddGauge("vigil_workers_queued",
                                            "Requests waiting for a worker (bounded by "
                                            "workers.queue; beyond it, 503)."));
  std::vector<double> batch_bounds = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  VIGIL_ASSIGN_OR_RETURN(batch_sizes_,
                         metrics_->AddValueHistogram("vigil_batch_size",
                                                     "Rows per batch the model scored.", {},
                                                     batch_bounds));

  auto loader = [this, policy_source, layout](const ModelRegistry::Entry& entry)
      -> absl::StatusOr<std::shared_ptr<const ModelDeployment::Model>> {
    VIGIL_ASSIGN_OR_RETURN(std::shared_ptr<const TreeEnsemble> ensemble, LoadModelFile(entry.path));
    auto model = std::make_shared<ModelDeployment::Model>();
    model->ref = entry.ref;
    model->version = absl::StrCat("model@", entry.ref.substr(0, 12));
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<CpuScorer> cpu,
                           CpuScorer::Create(ensemble, *FeatureExtractor::Schema(), model->version));
    model->direct = std::move(cpu);
    std::shared_ptr<const Scorer> inner =
        hooks_.wrap_model ? hooks_.wrap_model(model->direct) : model->direct;
    auto breaker = std::make_shared<BreakerScorer>(
        std::move(inner), config_.breaker,
        [this, version = model->version](CircuitBreaker::State from, CircuitBreaker::State to) {
          if (to == CircuitBreaker::State::kOpen && from != to) gauges_->breaker_openings->Increment();
          log_->Event(to == CircuitBreaker::State::kOpen ? "warn" : "info",
                      "model circuit breaker changed state",
                      {{"model", version},
                       {"from", std::string(CircuitBreaker::StateName(from))},
                       {"to", std::string(CircuitBreaker::StateName(to))}});
        });
    model->breaker = breaker;
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<BatchingScorer> batcher,
                           BatchingScorer::Create(breaker, config_.batcher, batch_sizes_));
    model->batcher = std::move(batcher);
    VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<DecisionMaker> decider,
                           DecisionMaker::Create(policy_source, model->batcher, layout));
    model->decider = std::move(decider);
    return std::shared_ptr<const ModelDeployment::Model>(std::move(model));
  };
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<DecisionMaker> rules,
                         DecisionMaker::Create(policy_source, nullptr, layout));
  VIGIL_ASSIGN_OR_RETURN(ModelRegistry registry,
                         ModelRegistry::Open(absl::StrCat(c.data_dir, "/models")));
  std::string champion = c.model_ref;
  if (!c.model.empty()) {
    VIGIL_ASSIGN_OR_RETURN(ModelRegistry::Entry added, registry.Add(c.model));
    champion = added.ref;
  }
  deployment_ = std::make_unique<ModelDeployment>(std::move(registry), loader, std::move(rules));
  if (!champion.empty()) VIGIL_RETURN_IF_ERROR(deployment_->SetChampion(champion));

  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<FeatureStore> features,
                         FeatureStore::Open(c.data_dir, *fx_, FeatureConfig{}));
  ScoreServiceOptions options;
  options.idempotency_capacity = c.idempotency_capacity;
  options.score_budget = c.score_budget;
  options.max_batch = c.limits.batch_size;
  // The deployment is owned here; the service holds it without owning it.
  std::shared_ptr<const ModelDeployment> deployment(deployment_.get(),
                                                    [](const ModelDeployment*) {});
  service_ = std::make_unique<ScoreService>(std::move(features), options, std::move(deployment),
                                            RealClock());
  return service_->RegisterMetrics(*metrics_);
}

void VigilServer::RefreshGauges() {
  if (gauges_ == nullptr || deployment_ == nullptr) return;
  const Gauges& g = *gauges_;
  const auto snapshot = deployment_->Current();
  const std::array<const ModelDeployment::Model*, 2> models = {snapshot->champion.get(),
                                                               snapshot->challenger.get()};
  for (size_t r = 0; r < models.size(); ++r) {
    const ModelDeployment::Model* m = models[r];
    for (int cls = 0; cls < 3; ++cls) {
      g.queue_depth[r][cls]->Set(m != nullptr && m->batcher != nullptr
                                     ? static_cast<double>(m->batcher->queued(static_cast<Priority>(cls)))
                                     : 0);
    }
    double state = -1;
    if (m != nullptr && m->breaker != nullptr) state = static_cast<double>(m->breaker->state());
    g.breaker_state[r]->Set(state);
  }
  g.connections->Set(static_cast<double>(http_->stats().open));
  g.workers_busy->Set(static_cast<double>(workers_->busy()));
  g.workers_queued->Set(static_cast<double>(workers_->queued()));
}

absl::Status VigilServer::Shutdown() {
  if (shut_down_) return absl::OkStatus();
  shut_down_ = true;
  http_->StopAccepting();
  workers_->Shutdown();  // every accepted request is answered
  http_->Stop();
  stop_checkpoints_.Notify();
  if (checkpointer_.joinable()) checkpointer_.join();
  absl::Status status = service_ != nullptr ? service_->Checkpoint() : absl::OkStatus();
  log_->Event("info", "vigil serve stopped",
              {{"checkpoint", status.ok() ? "ok" : std::string(status.message())}});
  log_->Flush();
  return status;
}

VigilServer::~VigilServer() {
  if (http_ != nullptr) Shutdown().IgnoreError();
}

}  // namespace vigil
