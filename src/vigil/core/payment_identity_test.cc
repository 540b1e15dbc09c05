#include "vigil/core/payment_identity.h"

#include "gtest/gtest.h"

namespace vigil {
namespace {

Transaction Payment() {
  Transaction tx;
  tx.id = "tx-1";
  tx.event_time = FromUnixMicros(1'700'000'000'000'000);
  tx.originator = {.account_id = "A1", .name = "Ann", .bank_id = "BANKGB2L", .country = "GB"};
  tx.beneficiary = {.account_id = "B1", .name = "Bob", .bank_id = "BANKDEFF", .country = "DE"};
  tx.amount = Money(50000, 2, *Currency::FromCode("USD"));
  tx.remittance = "invoice 7";
  return tx;
}

TEST(PaymentIdentity, SameTransactionSameBytes) {
  EXPECT_EQ(CanonicalPaymentBytes(Payment(), EventTimeSource::kSender),
            CanonicalPaymentBytes(Payment(), EventTimeSource::kSender));
}

TEST(PaymentIdentity, AmountComparesByValueNotScale) {
  Transaction a = Payment();
  Transaction b = Payment();
  b.amount = Money(500, 0, *Currency::FromCode("USD"));  // 500 == 500.00
  EXPECT_EQ(CanonicalPaymentBytes(a, EventTimeSource::kSender),
            CanonicalPaymentBytes(b, EventTimeSource::kSender));
}

TEST(PaymentIdentity, EveryPaymentMemberCounts) {
  const std::string base = CanonicalPaymentBytes(Payment(), EventTimeSource::kSender);
  // Each change makes another payment (the reason in the comment).
  const std::vector<void (*)(Transaction&)> changes = {
      [](Transaction& t) { t.amount = Money(90000000, 2, t.amount.currency()); },  // amount
      [](Transaction& t) { t.amount = Money(50000, 2, *Currency::FromCode("EUR")); },  // currency
      [](Transaction& t) { t.beneficiary.account_id = "MULE"; },  // where the money goes
      [](Transaction& t) { t.beneficiary.name = "Bobby"; },
      [](Transaction& t) { t.originator.address = {"1 Road"}; },
      [](Transaction& t) { t.remittance = "invoice 8"; },
      [](Transaction& t) { t.event_time += std::chrono::seconds(1); },  // the sender's time
      [](Transaction& t) { t.settled_amount = t.amount; },  // present differs from absent
      [](Transaction& t) { t.agents.push_back({.role = AgentRole::kIntermediary}); },
      [](Transaction& t) { t.ultimate_beneficiary = Party{}; },
      [](Transaction& t) { t.payment_format = PaymentFormat::kWire; },
      [](Transaction& t) { t.uetr = "0f8e2a7c-1b4d-4c3e-9a5f-6d7e8f9a0b1c"; },
      [](Transaction& t) { t.id = "tx-2"; },
  };
  for (size_t i = 0; i < changes.size(); ++i) {
    Transaction t = Payment();
    changes[i](t);
    EXPECT_NE(CanonicalPaymentBytes(t, EventTimeSource::kSender), base) << "change " << i;
  }
}

TEST(PaymentIdentity, SchedulingAndLabelsAreNotThePayment) {
  const std::string base = CanonicalPaymentBytes(Payment(), EventTimeSource::kSender);
  Transaction t = Payment();
  t.priority = Priority::kP0;
  t.label = Label{.is_laundering = true, .typology = "cycle"};
  EXPECT_EQ(CanonicalPaymentBytes(t, EventTimeSource::kSender), base);
}

TEST(PaymentIdentity, ArrivalTimeIsNotThePayment) {
  Transaction a = Payment();
  Transaction b = Payment();
  b.event_time += std::chrono::minutes(3);  // a resend, received later
  EXPECT_EQ(CanonicalPaymentBytes(a, EventTimeSource::kArrival),
            CanonicalPaymentBytes(b, EventTimeSource::kArrival));
  EXPECT_NE(CanonicalPaymentBytes(a, EventTimeSource::kSender),
            CanonicalPaymentBytes(b, EventTimeSource::kSender));
}

// One payment in two syntaxes (the MT/MX coexistence: one UETR) is one payment; a customer
// transfer and a bank-to-bank transfer are not.
TEST(PaymentIdentity, TheMessageSyntaxIsNotThePaymentButItsKindIs) {
  Transaction mt = Payment(), mx = Payment(), cover = Payment();
  mt.message_type = "MT103";
  mx.message_type = "pacs.008.001.08";
  cover.message_type = "MT202COV";
  EXPECT_EQ(CanonicalPaymentBytes(mt, EventTimeSource::kArrival),
            CanonicalPaymentBytes(mx, EventTimeSource::kArrival));
  EXPECT_NE(CanonicalPaymentBytes(mt, EventTimeSource::kArrival),
            CanonicalPaymentBytes(cover, EventTimeSource::kArrival));
  Transaction pacs009 = Payment();
  pacs009.message_type = "pacs.009.001.08";
  EXPECT_EQ(CanonicalPaymentBytes(cover, EventTimeSource::kArrival),
            CanonicalPaymentBytes(pacs009, EventTimeSource::kArrival));
}

TEST(PaymentIdentity, LengthPrefixesKeepMembersApart) {
  // "AB" + "" and "A" + "B" must not collide.
  Transaction a = Payment();
  Transaction b = Payment();
  a.originator.name = "AB";
  a.originator.bank_id = "";
  b.originator.name = "A";
  b.originator.bank_id = "B";
  EXPECT_NE(CanonicalPaymentBytes(a, EventTimeSource::kSender),
            CanonicalPaymentBytes(b, EventTimeSource::kSender));
}

}  // namespace
}  // namespace vigil
