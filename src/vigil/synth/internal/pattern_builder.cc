#include "vigil/synth/internal/pattern_builder.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "vigil/common/check.h"
#include "vigil/synth/internal/samplers.h"

namespace vigil::synth::internal {
namespace {

constexpr double kHour = 60.0;
constexpr double kDay = 1440.0;

double Clamp(double x, double lo, double hi) { return std::min(std::max(x, lo), hi); }

// Layering payments are mostly ACH, as in AMLworld; an attempt keeps one format throughout.
PaymentFormat LayeringFormat(Rng& rng) {
  const double u = rng.Uniform();
  if (u < 0.72) return PaymentFormat::kAch;
  if (u < 0.84) return PaymentFormat::kWire;
  if (u < 0.92) return PaymentFormat::kCheque;
  if (u < 0.96) return PaymentFormat::kCash;
  if (u < 0.97) return PaymentFormat::kCreditCard;
  return PaymentFormat::kBitcoin;
}

// Structuring moves cash, mostly: deposits or withdrawals just under the reporting threshold.
PaymentFormat StructuringFormat(Rng& rng) {
  const double u = rng.Uniform();
  if (u < 0.50) return PaymentFormat::kCash;
  if (u < 0.85) return PaymentFormat::kAch;
  return PaymentFormat::kCheque;
}

}  // namespace

struct PatternBuilder::Attempt {
  Typology typology;
  PaymentFormat format;
  std::vector<SynthRow>* rows;
};

PatternBuilder::PatternBuilder(const Population* population, const FxConverter* fx,
                               double structuring_threshold_usd)
    : population_(*population), fx_(*fx), threshold_usd_(structuring_threshold_usd) {
  VIGIL_CHECK(population_.launderers().size() >= static_cast<size_t>(kMinLaunderers));
  VIGIL_CHECK(threshold_usd_ > 0.0);
}

int PatternBuilder::Build(Typology typology, Rng& rng, std::vector<SynthRow>* rows) const {
  const size_t before = rows->size();
  Attempt a{typology, LayeringFormat(rng), rows};
  if (a.format == PaymentFormat::kBitcoin && !fx_.available(kXbt)) a.format = PaymentFormat::kAch;
  switch (typology) {
    case Typology::kFanOut:
      FanOut(a, rng);
      break;
    case Typology::kFanIn:
      FanIn(a, rng);
      break;
    case Typology::kCycle:
      Cycle(a, rng);
      break;
    case Typology::kScatterGather:
      ScatterGather(a, rng);
      break;
    case Typology::kGatherScatter:
      GatherScatter(a, rng);
      break;
    case Typology::kBipartite:
      Bipartite(a, rng);
      break;
    case Typology::kStack:
      Stack(a, rng);
      break;
    case Typology::kStructuring:
      Structuring(a, rng);
      break;
    case Typology::kPassThrough:
      PassThrough(a, rng);
      break;
    case Typology::kNone:
      VIGIL_BUG("PatternBuilder::Build called with Typology::kNone");
      break;
  }
  return static_cast<int>(rows->size() - before);
}

void PatternBuilder::FanOut(Attempt& a, Rng& rng) const {
  const int degree = static_cast<int>(rng.UniformRange(kFanMinDegree, kFanMaxDegree));
  const std::vector<int32_t> acc = Launderers(degree + 1, rng);
  double t = 0;
  for (int i = 1; i <= degree; ++i) {
    Pay(a, acc[0], acc[i], LogNormal(rng, 7000, 0.5), t, a.format);
    t += Exponential(rng, 5 * kHour);
  }
}

void PatternBuilder::FanIn(Attempt& a, Rng& rng) const {
  const int degree = static_cast<int>(rng.UniformRange(kFanMinDegree, kFanMaxDegree));
  const std::vector<int32_t> acc = Launderers(degree + 1, rng);
  double t = 0;
  for (int i = 1; i <= degree; ++i) {
    Pay(a, acc[i], acc[0], LogNormal(rng, 7000, 0.5), t, a.format);
    t += Exponential(rng, 5 * kHour);
  }
}

void PatternBuilder::Cycle(Attempt& a, Rng& rng) const {
  const int hops = static_cast<int>(rng.UniformRange(kCycleMinHops, kCycleMaxHops));
  const std::vector<int32_t> acc = Launderers(hops, rng);
  double usd = LogNormal(rng, 15000, 0.6);
  double t = 0;
  for (int i = 0; i < hops; ++i) {
    Pay(a, acc[i], acc[(i + 1) % hops], usd, t, a.format);
    usd *= 1.0 - rng.Uniform(0.01, 0.05);  // the fee each hop keeps
    t += Clamp(LogNormal(rng, 10 * kHour, 0.9), 30.0, 4 * kDay);
  }
}

void PatternBuilder::ScatterGather(Attempt& a, Rng& rng) const {
  const int width = static_cast<int>(rng.UniformRange(kScatterMinWidth, kScatterMaxWidth));
  const std::vector<int32_t> acc = Launderers(width + 2, rng);
  const int32_t source = acc[0];
  const int32_t destination = acc[1];
  double t = 0;
  for (int i = 0; i < width; ++i) {
    const double usd = LogNormal(rng, 6000, 0.5);
    Pay(a, source, acc[2 + i], usd, t, a.format);
    const double hold = Clamp(LogNormal(rng, 20 * kHour, 0.7), kHour, 5 * kDay);
    Pay(a, acc[2 + i], destination, usd * (1.0 - rng.Uniform(0.0, 0.05)), t + hold, a.format);
    t += Exponential(rng, 4 * kHour);
  }
}

void PatternBuilder::GatherScatter(Attempt& a, Rng& rng) const {
  const int in = static_cast<int>(rng.UniformRange(kGatherMinWidth, kGatherMaxWidth));
  const int out = static_cast<int>(rng.UniformRange(kGatherMinWidth, kGatherMaxWidth));
  const std::vector<int32_t> acc = Launderers(1 + in + out, rng);
  const int32_t hub = acc[0];
  double t = 0;
  double total = 0;
  for (int i = 0; i < in; ++i) {
    if (i > 0) t += Exponential(rng, 4 * kHour);
    const double usd = LogNormal(rng, 6000, 0.5);
    total += usd;
    Pay(a, acc[1 + i], hub, usd, t, a.format);
  }
  t += Clamp(LogNormal(rng, 6 * kHour, 0.7), 30.0, 3 * kDay);
  const double kept = total * (1.0 - rng.Uniform(0.01, 0.05));
  for (int i = 0; i < out; ++i) {
    Pay(a, hub, acc[1 + in + i], kept / out * LogNormal(rng, 1.0, 0.25), t, a.format);
    t += Exponential(rng, 3 * kHour);
  }
}

void PatternBuilder::Bipartite(Attempt& a, Rng& rng) const {
  const int left = static_cast<int>(rng.UniformRange(kBipartiteMinSide, kBipartiteMaxSide));
  const int right = static_cast<int>(rng.UniformRange(kBipartiteMinSide, kBipartiteMaxSide));
  const std::vector<int32_t> acc = Launderers(left + right, rng);
  for (const auto& [i, j] : BipartiteEdges(left, right, rng)) {
    Pay(a, acc[i], acc[left + j], LogNormal(rng, 8000, 0.6), rng.Uniform(0.0, 2 * kDay), a.format);
  }
}

void PatternBuilder::Stack(Attempt& a, Rng& rng) const {
  const int layers = static_cast<int>(rng.UniformRange(kStackMinLayers, kStackMaxLayers));
  std::vector<int> first(layers + 1, 0);  // layer l is acc[first[l], first[l + 1])
  for (int l = 0; l < layers; ++l) {
    first[l + 1] =
        first[l] + static_cast<int>(rng.UniformRange(kStackMinLayerSize, kStackMaxLayerSize));
  }
  const std::vector<int32_t> acc = Launderers(first[layers], rng);
  double base = 0;
  double usd_median = LogNormal(rng, 8000, 0.4);
  for (int l = 0; l + 1 < layers; ++l) {
    const int left = first[l + 1] - first[l];
    const int right = first[l + 2] - first[l + 1];
    double latest = base;
    for (const auto& [i, j] : BipartiteEdges(left, right, rng)) {
      const double t = base + rng.Uniform(0.0, 18 * kHour);
      latest = std::max(latest, t);
      Pay(a, acc[first[l] + i], acc[first[l + 1] + j], LogNormal(rng, usd_median, 0.3), t,
          a.format);
    }
    // The next layer pays on only after this one has been paid.
    base = latest + Clamp(LogNormal(rng, 10 * kHour, 0.6), kHour, 3 * kDay);
    usd_median *= 0.97;
  }
}

void PatternBuilder::Structuring(Attempt& a, Rng& rng) const {
  const int n =
      static_cast<int>(rng.UniformRange(kStructuringMinPayments, kStructuringMaxPayments));
  const double span = rng.Bernoulli(0.5) ? kDay : 2 * kDay;
  // Half the attempts split one sum into several payments; the other half use "smurfs", several
  // people each paying in just under the threshold into one account.
  const bool smurfs = rng.Bernoulli(0.5);
  const std::vector<int32_t> acc = Launderers(smurfs ? n + 1 : 3, rng);
  // Stay a few cents inside the band, so rounding to the payer's minor unit cannot leave it.
  const double low = kStructuringLow * threshold_usd_ + 0.05;
  const double high = kStructuringHigh * threshold_usd_ - 0.05;
  for (int i = 0; i < n; ++i) {
    const int32_t from = smurfs ? acc[1 + i] : acc[0];
    const int32_t to = smurfs ? acc[0] : acc[1 + rng.UniformInt(2)];
    Pay(a, from, to, rng.Uniform(low, high), rng.Uniform(0.0, span), StructuringFormat(rng));
  }
}

void PatternBuilder::PassThrough(Attempt& a, Rng& rng) const {
  const int in = static_cast<int>(rng.UniformRange(1, kPassThroughMaxIn));
  const int out = static_cast<int>(rng.UniformRange(1, kPassThroughMaxOut));
  const std::vector<int32_t> acc = Launderers(in + out + 1, rng);
  // A recruited mule: an ordinary individual when the population has one, else a launderer.
  const std::vector<int32_t>& mules = population_.mules();
  int32_t mule = acc[in + out];
  for (int attempt = 0; attempt < 4 && !mules.empty(); ++attempt) {
    mule = mules[rng.UniformInt(mules.size())];
    if (population_.currency(mule) == population_.currency(acc[0])) break;
  }
  double total = 0;
  double last_in = 0;
  for (int i = 0; i < in; ++i) {
    const double usd = LogNormal(rng, 9000, 0.6);
    const double t = i == 0 ? 0.0 : rng.Uniform(0.0, 6 * kHour);
    total += usd;
    last_in = std::max(last_in, t);
    Pay(a, acc[i], mule, usd, t, a.format);
  }
  std::vector<double> share(out);
  double share_sum = 0;
  for (double& s : share) share_sum += (s = rng.Uniform(0.5, 1.5));
  const double kept = total * (1.0 - rng.Uniform(0.01, 0.08));
  for (int i = 0; i < out; ++i) {
    const double hold =
        Clamp(Exponential(rng, 3 * kHour), 15.0, static_cast<double>(kPassThroughMaxHoldMinutes));
    Pay(a, mule, acc[in + i], kept * share[i] / share_sum, last_in + hold, a.format);
  }
}

std::vector<int32_t> PatternBuilder::Launderers(int n, Rng& rng) const {
  const std::vector<int32_t>& pool = population_.launderers();
  VIGIL_CHECK(n <= static_cast<int>(pool.size()));
  std::vector<int32_t> picked;
  picked.reserve(n);
  picked.push_back(pool[rng.UniformInt(pool.size())]);
  // Most of a ring banks in one currency area: without this, a random pool member would bank in
  // another currency half the time and cross-currency payments alone would give laundering away.
  const std::vector<int32_t>& local = population_.launderers_in(population_.currency(picked[0]));
  const bool local_is_large = local.size() >= 2 * static_cast<size_t>(n);
  while (static_cast<int>(picked.size()) < n) {
    const std::vector<int32_t>& from =
        local_is_large && rng.Bernoulli(kLocalParticipantShare) ? local : pool;
    const int32_t c = from[rng.UniformInt(from.size())];
    if (std::find(picked.begin(), picked.end(), c) == picked.end()) picked.push_back(c);
  }
  return picked;
}

std::vector<std::pair<int, int>> PatternBuilder::BipartiteEdges(int left, int right, Rng& rng) {
  std::vector<std::pair<int, int>> edges;
  std::vector<bool> paid_in(right, false);
  for (int i = 0; i < left; ++i) {
    bool pays = false;
    for (int j = 0; j < right; ++j) {
      if (rng.Bernoulli(0.5)) {
        edges.emplace_back(i, j);
        pays = true;
        paid_in[j] = true;
      }
    }
    if (!pays) {
      const int j = static_cast<int>(rng.UniformInt(right));
      edges.emplace_back(i, j);
      paid_in[j] = true;
    }
  }
  for (int j = 0; j < right; ++j) {
    if (!paid_in[j]) edges.emplace_back(static_cast<int>(rng.UniformInt(left)), j);
  }
  return edges;
}

void PatternBuilder::Pay(Attempt& a, int32_t from, int32_t to, double usd, double minute,
                         PaymentFormat format) const {
  SynthRow r;
  r.minute = static_cast<int32_t>(minute);
  r.from = from;
  r.to = to;
  r.format = format;
  r.typology = a.typology;
  if (format == PaymentFormat::kBitcoin) {
    r.paid_ccy = r.received_ccy = kXbt;
  } else {
    r.paid_ccy = population_.currency(from);
    r.received_ccy = population_.currency(to);
  }
  r.paid_minor = fx_.FromUsd(usd, r.paid_ccy);
  r.received_minor = fx_.Convert(r.paid_minor, r.paid_ccy, r.received_ccy);
  a.rows->push_back(r);
}

}  // namespace vigil::synth::internal
