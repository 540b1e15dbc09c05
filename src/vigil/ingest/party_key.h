// The account key of a party in a payment message (SWIFT MT or ISO 20022). Features and state
// are kept per account key, so the same party must get the same key whichever format its
// payment arrived in; both message parsers call PartyAccountKey.
//
// The key is, in order of preference:
//  1. the account the message names for the party (IBAN, other identification, the "/account"
//     line of an MT party field), as given: upper case kept, surrounding spaces removed;
//     "NOTPROVIDED" (what MT-to-MX translations write for a missing account) counts as none;
//  2. the party's own BIC, when the party is a bank (MT202 58a, pacs.009 Cdtr);
//  3. "<bank BIC>:<NAME>": the party's bank and its name upper-cased with runs of spaces
//     collapsed, when the message names neither an account nor a BIC for the party;
//  4. the name alone, normalized the same way, when no bank is known either.
// Empty only when the message names nothing at all; the parsers refuse such a party.
#ifndef VIGIL_INGEST_PARTY_KEY_H_
#define VIGIL_INGEST_PARTY_KEY_H_

#include <string>
#include <string_view>

namespace vigil {

std::string PartyAccountKey(std::string_view account, std::string_view party_bic,
                            std::string_view bank_bic, std::string_view name);

}  // namespace vigil

#endif  // VIGIL_INGEST_PARTY_KEY_H_
