// VigilServer: `vigil serve` assembled and running. Start() binds the HTTP server first (so
// /healthz and /readyz answer while loading), then loads the parts (the policy versions, the
// model registry and the champion, the accounts' feature state) and turns ready. Decisions are
// made by the champion (and a canary challenger or shadow once activated), each behind
//
//   DecisionMaker → BatchingScorer (priority classes, deadlines) → BreakerScorer → CpuScorer,
//
// or, with gpu.enabled, → BreakerScorer → BackendRouter → {CpuScorer, CudaScorer}: each model
// loaded gets its own CudaScorer, and the start fails when the CUDA backend cannot run (a build
// without it, no device or driver), never falling back to the CPU in silence.
//
// and the feature state is checkpointed to the data dir every second and at shutdown.
//
// The champion at start: the activation stored in the data dir (DeploymentRecord) when one
// was ever made through POST /v1/engine/activate, else --model / --model-ref, else none
// (rules only; with model.required the server then stays unready).
//
// Drift: with a reference profile (drift.profile, or reference_profile.json beside the model
// file) every decision is offered to a DriftMonitor through a dropping DriftTap; its events
// are kept in the feature store's RocksDB (column family drift_events), its state is served
// at GET /v1/drift and as vigil_drift_* gauges, and an L3 freezes the model (rules-only,
// degraded decisions) until the monitor releases it.
//
// Screening: with screening.lists every decision (champion, challenger and rules-only) is
// screened against the lists by one shared Screener, loaded before the server turns ready. A
// background thread checks the lists' files every screening.reload_seconds and swaps changed
// lists in (a list that no longer reads is logged, counted, and the lists in force stay); the
// versions in force are listed by /readyz and in every screened decision.
//
// Thread safety: Start and Shutdown from one controlling thread; the accessors from any.
#ifndef VIGIL_SERVER_VIGIL_SERVER_H_
#define VIGIL_SERVER_VIGIL_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "vigil/core/fx_rates.h"
#include "vigil/decision/model_deployment.h"
#include "vigil/metrics/metrics_registry.h"
#include "vigil/model/scorer.h"
#include "vigil/rules/policy_store.h"
#include "vigil/screening/screening_clearances.h"
#include "vigil/server/api_access.h"
#include "vigil/server/decision_service.h"
#include "vigil/server/http_server.h"
#include "vigil/server/request_log.h"
#include "vigil/server/serve_api.h"
#include "vigil/server/serve_config.h"
#include "vigil/server/worker_pool.h"

namespace vigil {

class KvFaults;
class KvStore;
class TreeEnsemble;
namespace drift {
class DriftEventLog;
class DriftMonitor;
class DriftTap;
class ReferenceProfile;
}  // namespace drift
namespace screening {
class Screener;
}  // namespace screening
namespace cluster {
class ClusterNode;
class NatsConnection;
}  // namespace cluster
class ClusterScoring;
class FeatureExtractor;
class FeatureStore;

// Fault injection for tests and drills. Production leaves every hook empty.
struct ServeHooks {
  // Wraps each loaded model's scorer (say, to make it slow) before the breaker and batcher are
  // put around it (with gpu.enabled: the backend router, CPU and GPU together).
  std::function<std::shared_ptr<const Scorer>(std::shared_ptr<const Scorer>)> wrap_model;
  // Consulted by the files of the data dir's feature store, which also holds the audit log
  // (store/kv_faults.h): while it says so, their writes or syncs fail like a failing disk's.
  std::shared_ptr<KvFaults> store_faults;
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
  DecisionService& service() { return *service_; }  // REQUIRES: not in cluster mode
  // Cluster mode (cluster.nats set): the node; null otherwise.
  cluster::ClusterNode* cluster_node() { return cluster_node_.get(); }
  ModelDeployment& deployment() { return *deployment_; }
  RequestLog& log() { return *log_; }

  // Stops accepting, answers what is in flight, lets the drift monitor observe every decision
  // made, writes a last checkpoint, stops. Idempotent.
  absl::Status Shutdown();

 private:
  VigilServer() = default;
  // Assembles the pipeline from config_, in order: the policies, screening, the metrics, the
  // models (each behind the production scorer chain), the feature state and the service, the
  // audit log and the drift monitor.
  absl::Status Load();
  // The policy store of the data dir, with --policy stored and activated unless a version was
  // activated since (that choice stays; a WARN says how to use the file). Sets policy_summary_.
  absl::Status LoadPolicies();
  // The server's own gauges and the batch-size histogram (and the GPU's, with gpu.enabled).
  absl::Status RegisterServerMetrics();
  // The model registry and deployment: every model loaded behind BuildModelChain with this
  // server's hooks, deciding under "policy_source"; the start's champion (DeployAtStart).
  absl::Status DeployModels(std::shared_ptr<const PolicySource> policy_source);
  // The feature store (one RocksDB for features, audit and drift events) and the service over
  // it; logs an event-time repair made at open.
  struct OpenedState {
    KvStore* kv = nullptr;      // the feature store's, owned by the service
    std::string drift_profile;  // empty: none found
    bool warm = false;          // the state held accounts: no drift warm-up
  };
  absl::StatusOr<OpenedState> OpenService();
  // Cluster mode, instead of OpenService, the audit log and drift: connects to cluster.nats,
  // joins the cluster as cluster.node_id (ClusterNode: the features built from the cluster's
  // log, this node's share of the partitions decided by the deployment's champion) and
  // answers the scoring routes through it (ClusterScoring); registers vigil_cluster_*.
  absl::Status StartCluster();
  absl::Status RegisterClusterMetrics();
  void RefreshClusterMetrics();
  // Deploys the stored activation (model registry's deployment.json) when there is one, else
  // "initial" (the ref of --model or --model-ref; empty: none) as champion for this process.
  // Sets model_summary_ and warns when the stored activation overrides the command line.
  absl::Status DeployAtStart(const std::string& initial, const std::string& record_path);
  // The start's WARN lines: plain HTTP beyond loopback, authentication off, a required model
  // missing.
  void WarnAboutExposure();
  // The drift monitor over "kv" (the feature store's, with the drift_events family open) when
  // a profile is found, attached to the service; else drift stays off. Sets drift_summary_.
  // "warm_state": the feature store held accounts at start (no drift warm-up).
  absl::Status StartDrift(const std::string& profile, KvStore* kv, bool warm_state);
  // Logs (WARN), counts and so reports every drift event as the monitor raises it.
  absl::Status ListenToDrift();
  // The audit log in "kv" (config_.audit), attached to the service.
  absl::Status StartAudit(KvStore* kv);
  // The screener over config_.screening.lists, with its metrics; none without lists. Errors
  // name the list that cannot be read.
  absl::Status StartScreening();
  // The body of screening_poller_: ReloadIfChanged every screening.reload_seconds until
  // stop_background_ is notified.
  void PollScreening();
  absl::Status RegisterDriftGauges();
  void RefreshGauges();
  void RefreshDriftGauges();
  // With gpu.enabled: probes gpu.device (an error naming gpu.enabled or gpu.device and the
  // CUDA runtime's reason when it cannot be used) and sets gpu_summary_. Without: nothing, and
  // no CUDA call.
  absl::Status StartGpu();
  // The case book over the decision log, unless the log seals personal fields.
  absl::Status StartCases(KvStore* kv);
  // The vigil_model_* and vigil_gpu_* metrics (gpu.enabled only).
  absl::Status RegisterGpuMetrics();
  void RefreshGpuMetrics();
  // Holds a model's BackendRouter (gpu.enabled) so that it is counted in the GPU metrics for as
  // long as it lives, and in their sums after.
  std::shared_ptr<const BackendRouter> AdoptRouter(std::unique_ptr<BackendRouter> router);

  ServeConfig config_;
  ServeHooks hooks_;
  std::unique_ptr<FxRates> fx_;
  std::unique_ptr<RequestLog> log_;
  std::unique_ptr<MetricsRegistry> metrics_;
  std::unique_ptr<WorkerPool> workers_;
  std::unique_ptr<ApiAccess> access_;  // null with auth: none
  std::unique_ptr<ServeApi> api_;
  std::unique_ptr<PolicyStore> policies_;
  // Shared with every DecisionMaker; null without screening.lists.
  std::shared_ptr<screening::Screener> screener_;
  // The screening hits analysts cleared (the case book keeps them; the decisions read them).
  std::shared_ptr<screening::ScreeningClearances> clearances_ =
      std::make_shared<screening::ScreeningClearances>();
  std::string screening_summary_;  // for the startup log
  std::unique_ptr<ModelDeployment> deployment_;
  std::unique_ptr<DecisionService> service_;  // null in cluster mode
  // Cluster mode only. Declared after the deployment (whose champion the node's decider reads)
  // and in this order, so that the node stops (and hands its leases back) before the features
  // and the connection it uses are gone.
  std::unique_ptr<cluster::NatsConnection> nats_;
  std::unique_ptr<FeatureStore> cluster_state_;  // declared before the node that uses it
  std::unique_ptr<cluster::ClusterNode> cluster_node_;
  std::unique_ptr<ClusterScoring> cluster_scoring_;
  struct ClusterMetrics;
  std::unique_ptr<ClusterMetrics> cluster_metrics_;
  // Drift (null when off). Declared after service_, so destroyed before it: the event log
  // writes to the KvStore that the service's feature store owns; the tap goes first (it
  // observes what it still holds), then the monitor, the log and the profile it points into.
  std::unique_ptr<drift::ReferenceProfile> drift_profile_;
  std::unique_ptr<drift::DriftEventLog> drift_events_;
  std::unique_ptr<drift::DriftMonitor> drift_monitor_;
  std::unique_ptr<drift::DriftTap> drift_tap_;
  std::string drift_summary_;  // for the startup log
  // The analysts' cases over the decision log; null when off, and cases_off_ says why.
  // Declared after service_ (whose store and log it uses), so destroyed before it.
  std::unique_ptr<cases::CaseBook> cases_;
  std::string cases_off_;
  std::string model_summary_;  // where the deployed model came from, for the startup log
  std::string policy_summary_;  // which policy decides and why ("policy_from")
  std::unique_ptr<HttpServer> http_;
  ValueHistogram* batch_sizes_ = nullptr;
  struct Gauges;
  std::unique_ptr<Gauges> gauges_;
  struct DriftGauges;
  std::unique_ptr<DriftGauges> drift_gauges_;
  // The cases' figures at scrape time (states, overdue, false-positive rate by score band and
  // by rule); null without cases.
  struct CaseGauges;
  std::unique_ptr<CaseGauges> case_gauges_;
  absl::Status RegisterCaseGauges();
  void RefreshCaseGauges();
  struct ScreeningMetrics;
  std::unique_ptr<ScreeningMetrics> screening_metrics_;  // null without screening
  // Null without gpu.enabled. Shared with the routers' deleters, which may run after the
  // server is gone (a request still holding a model).
  struct GpuMetrics;
  std::shared_ptr<GpuMetrics> gpu_metrics_;
  std::string gpu_summary_ = "off";  // for the startup log
  // Stops the background threads: the checkpointer and the screening poller.
  absl::Notification stop_background_;
  std::thread checkpointer_;
  std::thread screening_poller_;  // not started without screening or with reload_seconds 0
  bool shut_down_ = false;
};

}  // namespace vigil

#endif  // VIGIL_SERVER_VIGIL_SERVER_H_
