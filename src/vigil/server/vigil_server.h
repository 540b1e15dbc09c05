// VigilServer: `vigil serve` assembled and running. Start() binds the HTTP server first (so
// /healthz and /readyz answer while loading), then loads the parts (the policy versions, the
// model registry and the champion, the accounts' feature state) and turns ready. Decisions are
// made by the champion (and a canary challenger or shadow once activated), each behind
//
//   DecisionMaker → BatchingScorer (priority classes, deadlines) → BreakerScorer → CpuScorer,
//
// and the feature state is checkpointed to the data dir every second and at shutdown.
//
// Thread safety: Start and Shutdown from one controlling thread; the accessors from any.
#ifndef VIGIL_SERVER_VIGIL_SERVER_H_
#define VIGIL_SERVER_VIGIL_SERVER_H_

#include <functional>
#include <memory>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "vigil/core/fx_rates.h"
#include "vigil/engine/model_deployment.h"
#include "vigil/engine/score_service.h"
#include "vigil/metrics/metrics_registry.h"
#include "vigil/model/scorer.h"
#include "vigil/rules/policy_store.h"
#include "vigil/server/http_server.h"
#include "vigil/server/request_log.h"
#include "vigil/server/serve_api.h"
#include "vigil/server/serve_config.h"
#include "vigil/server/worker_pool.h"

namespace vigil {

// Fault injection for tests and drills: wraps each loaded model's scorer (say, to make it
// slow) before the breaker and batcher are put around it.
struct ServeHooks {
  std::function<std::shared_ptr<const Scorer>(std::shared_ptr<const Scorer>)> wrap_model;
};

class VigilServer {
 public:
  // Errors: the configuration does not validate, the port cannot be bound, the data dir or
  // the policy or model cannot be loaded (each message names the file and the problem).
  static absl::StatusOr<std::unique_ptr<VigilServer>> Start(ServeConfig config, FxRates fx,
                                                            ServeHooks hooks = {});
  ~VigilServer();  // Shutdown()

  uint16_t port() const { return http_->port(); }
  MetricsRegistry& metrics() { return *metrics_; }
  ScoreService& service() { return *service_; }
  ModelDeployment& deployment() { return *deployment_; }
  RequestLog& log() { return *log_; }

  // Stops accepting, answers what is in flight, writes a last checkpoint, stops. Idempotent.
  absl::Status Shutdown();

 private:
  VigilServer() = default;
  absl::Status Load();
  void RefreshGauges();

  ServeConfig config_;
  ServeHooks hooks_;
  std::unique_ptr<FxRates> fx_;
  std::unique_ptr<RequestLog> log_;
  std::unique_ptr<MetricsRegistry> metrics_;
  std::unique_ptr<WorkerPool> workers_;
  std::unique_ptr<ServeApi> api_;
  std::unique_ptr<PolicyStore> policies_;
  std::unique_ptr<ModelDeployment> deployment_;
  std::unique_ptr<ScoreService> service_;
  std::unique_ptr<HttpServer> http_;
  ValueHistogram* batch_sizes_ = nullptr;
  struct Gauges;
  std::unique_ptr<Gauges> gauges_;
  absl::Notification stop_checkpoints_;
  std::thread checkpointer_;
  bool shut_down_ = false;
};

}  // namespace vigil

#endif  // VIGIL_SERVER_VIGIL_SERVER_H_
