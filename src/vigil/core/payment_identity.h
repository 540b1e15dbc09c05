// PaymentIdentity: what makes two arrivals under one transaction id the same payment.
//
// A transaction id is the idempotency key: a repeated id is answered with the first decision.
// That is right only when the repeat is the same payment; the same id with another amount or
// beneficiary is a different payment that must not ride on the first one's answer. "The same
// payment" is defined on the normalized Transaction, never on the raw bytes: the same MT103
// re-sent with other line endings, or the same JSON with its members in another order or other
// white space, normalizes to the same Transaction.
//
// CanonicalPaymentBytes encodes, length-prefixed and in a fixed order, every member that says
// what is paid, by whom, to whom and how: the id, both parties (account, name, bank, country,
// address lines), the amount and the settled amount (currency and the exact value: 500 and
// 500.00 are one amount), the payment format, channel, remittance text, the kind of transfer the
// message type carries (an MT103 and its pacs.008 are both a customer credit transfer),
// reference, UETR, value date, charges, purpose, agents and ultimate parties, and the event
// time when the sender gave it (docs/serve.md, "Idempotency"). Left out: the priority (how to
// schedule the decision, not what is paid), the label (ground truth for training), and the
// event time of a payment message, which is the time it arrived (so it differs between a send
// and its resend).
//
// Thread safety: pure function.
#ifndef VIGIL_CORE_PAYMENT_IDENTITY_H_
#define VIGIL_CORE_PAYMENT_IDENTITY_H_

#include <string>

#include "vigil/core/transaction.h"

namespace vigil {

// Where a transaction's event_time came from.
enum class EventTimeSource {
  kSender,   // the sender stated it (the JSON member "timestamp", a CSV column): part of the payment
  kArrival,  // the engine set it to the time received (SWIFT MT, ISO 20022): not part of it
};

// The canonical bytes of "tx" as a payment (see the file comment). Two transactions give the
// same bytes exactly when they are the same payment.
std::string CanonicalPaymentBytes(const Transaction& tx, EventTimeSource time);

}  // namespace vigil

#endif  // VIGIL_CORE_PAYMENT_IDENTITY_H_
