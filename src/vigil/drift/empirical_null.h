// EmpiricalNull: a no-drift distribution of drift scores known by a sample of them — simulated
// windows (null_calibration.h) or the windows of a stream the model was trained on
// (drift_calibration.h) — turned into a survival function that reaches the small
// probabilities alarms are set at.
//
// Up to the (1 - tail_fraction) quantile u, P(score >= s) is the empirical (#{z >= s} + 1) /
// (R + 1), read at 256 equal steps between the smallest score and u and linear between them
// (within a step's share of the sample of the exact count: a p of at least P(score > u) is
// far from any alarm, and a monitor reads hundreds of these distributions per evaluation, so
// a kilobyte table that stays in cache beats a search through each sample). Beyond u it is
// a generalized Pareto tail fitted to the exceedances over u (peaks over threshold, method
// of moments), P(score > u) · (1 + xi (s - u) / scale)^(-1/xi), the shape xi kept in
// [0, 0.45]: real streams' window scores have heavier tails than any exponential (bursts),
// and a tail never assumed lighter than exponential keeps the false alarms at or below the
// target. With fewer than 10 exceedances (a nearly constant
// distribution) the tail is exponential with the caller's fallback scale.
//
// Thread safety: immutable after construction.
#ifndef VIGIL_DRIFT_EMPIRICAL_NULL_H_
#define VIGIL_DRIFT_EMPIRICAL_NULL_H_

#include <vector>

namespace vigil::drift {

class EmpiricalNull {
 public:
  // REQUIRES: "scores" non-empty, finite; 0 < tail_fraction < 1; fallback_scale > 0.
  EmpiricalNull(std::vector<double> scores, double tail_fraction, double fallback_scale);

  // P(score >= s) under no drift, in (0, 1] (may underflow to 0 far in the tail).
  double Sf(double score) const;

  double lowest() const { return lowest_; }
  double mean() const { return mean_; }
  double tail_threshold() const { return u_; }
  double tail_scale() const { return beta_; }
  double tail_shape() const { return xi_; }

 private:
  double lowest_ = 0;
  double mean_ = 0;
  double u_ = 0;     // tail threshold
  double beta_ = 1;  // tail scale
  double xi_ = 0;    // tail shape (0: exponential)
  double p_u_ = 1;   // P(score > u)
  // The empirical survival at lowest_ + b / body_inverse_step_, b = 0..256. Empty
  // when the body is a point.
  std::vector<float> body_;
  double body_inverse_step_ = 0;
};

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_EMPIRICAL_NULL_H_
