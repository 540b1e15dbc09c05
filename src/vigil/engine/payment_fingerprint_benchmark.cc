// What fingerprinting a payment costs per decision (DecisionService::Admit does it once per
// transaction). Run with a release build: build/src/vigil/engine/payment_fingerprint_benchmark.
#include "benchmark/benchmark.h"
#include "vigil/engine/payment_fingerprint.h"

namespace vigil {
namespace {

Transaction WirePayment() {
  Transaction tx;
  tx.id = "0f8e2a7c-1b4d-4c3e-9a5f-6d7e8f9a0b1c";
  tx.event_time = FromUnixMicros(1'700'000'000'000'000);
  tx.originator = {.account_id = "GB29NWBK60161331926819", .name = "Ann Example Trading Ltd",
                   .bank_id = "NWBKGB2L", .country = "GB", .address = {"1 Road", "London"}};
  tx.beneficiary = {.account_id = "DE89370400440532013000", .name = "Bob Beispiel GmbH",
                    .bank_id = "COBADEFF", .country = "DE", .address = {"2 Strasse", "Berlin"}};
  tx.amount = Money(950000, 2, *Currency::FromCode("EUR"));
  tx.remittance = "invoice 2026-1187";
  tx.message_type = "MT103";
  tx.uetr = tx.id;
  return tx;
}

void BM_PaymentFingerprinter_Of(benchmark::State& state) {
  const PaymentFingerprinter fingerprints = PaymentFingerprinter::Ephemeral();
  const Transaction tx = WirePayment();
  for (auto _ : state) {
    benchmark::DoNotOptimize(fingerprints.Of(tx, EventTimeSource::kSender));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PaymentFingerprinter_Of);

// The canonical bytes alone, without the HMAC.
void BM_CanonicalPaymentBytes(benchmark::State& state) {
  const Transaction tx = WirePayment();
  for (auto _ : state) {
    benchmark::DoNotOptimize(CanonicalPaymentBytes(tx, EventTimeSource::kSender));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CanonicalPaymentBytes);

}  // namespace
}  // namespace vigil

BENCHMARK_MAIN();
