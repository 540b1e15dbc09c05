// ClusterScoring: `POST /v1/score` and `/v1/score/batch` on a node of a cluster
// (docs/cluster.md, "The answer"). The body is read as `vigil serve` reads it (ScoreBody), the
// same refusals answered the same way before anything reaches the log (400, 413, 422
// event_in_future); each payment is then published to its originator's partition and the
// request waits until this node has applied its decision, whichever node owns the partition.
//
// Replies, besides the 200 Decision (the owner's, byte for byte the same on every node):
//   409 idempotency_conflict  the transaction id was used by another payment;
//   422 features_refused      the features refuse the payment (the field named);
//   503 decision_pending      no decision within the request's budget plus answer_slack (the
//                             partition is changing owner): the payment is in the log and will
//                             be decided exactly once; a retry under its id gets that decision;
//   503 cluster_unavailable   the log did not acknowledge the payment (no quorum of servers):
//                             a retry under the same id is safe, it is never decided twice.
//
// The wait holds the calling thread (a ServeApi worker) until the decision is applied, so a
// node answers at most as many requests at once as it has workers.
//
// Thread safety: any number of concurrent calls.
#ifndef VIGIL_SERVER_CLUSTER_SCORING_H_
#define VIGIL_SERVER_CLUSTER_SCORING_H_

#include <chrono>
#include <cstddef>
#include <string_view>

#include "absl/status/status.h"
#include "vigil/common/clock.h"
#include "vigil/server/scoring_service.h"

namespace vigil {

namespace cluster {
class ClusterNode;
}  // namespace cluster

struct ClusterScoringOptions {
  std::chrono::microseconds score_budget{200'000};  // unless the request brings its own
  // Waited beyond the budget for the log's round trips (publish, the owner's batch, its apply
  // here) before the answer is 503 decision_pending.
  std::chrono::milliseconds answer_slack{1000};
  size_t max_batch = 1000;
  std::chrono::microseconds max_future_skew = std::chrono::minutes(5);
};

class ClusterScoring final : public ScoringService {
 public:
  // "node" and "clock" must outlive the service.
  ClusterScoring(cluster::ClusterNode* node, ClusterScoringOptions options, const Clock& clock);

  void ScoreThen(std::string_view body, const ScoreRequest& request, ReplyFn done) override;
  void ScoreBatchThen(std::string_view body, const ScoreRequest& request, ReplyFn done) override;
  absl::Status Congestion() const override { return absl::OkStatus(); }
  // kUnavailable while the node's connection to the NATS servers is down.
  absl::Status Health() const override;

 private:
  void Score(std::string_view body, const ScoreRequest& request, bool batch, ReplyFn done);

  cluster::ClusterNode* node_;
  ClusterScoringOptions options_;
  const Clock& clock_;
};

}  // namespace vigil

#endif  // VIGIL_SERVER_CLUSTER_SCORING_H_
