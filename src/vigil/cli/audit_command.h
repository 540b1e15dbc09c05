// `vigil audit`: the examiner's side of the decision log (docs/audit-cli.md).
//
//   verify             check a data dir's log end to end and name the first damage
//   prove              a self-contained proof that one decision is in the log
//                      (format "vigil-audit-proof/v1", type "inclusion")
//   prove-consistency  a proof that an older signed tree head is a prefix of a newer one
//   check-proof        check either proof with nothing but the file and the public key
//   show               one decision, readable
//   export             decisions as JSON Lines, by decision time or transaction
//   open               an export's sealed personal fields opened, offline
//   rewrap             the log's data keys re-wrapped under a new key-encryption key
//   keygen             a new signing key
//
// Records whose personal fields are sealed (docs/audit.md, "Sealed fields") are verified and
// proven without any key; `show`, `export` and `open` open them with the key-encryption key's
// private half (--kek), and show them sealed without it.
//
// The log lives in the RocksDB store at <data dir>/features that `vigil serve` and `vigil
// replay` keep; these commands open it read-only in spirit (nothing is written) but RocksDB
// takes the store's lock, so they cannot run while a server holds it: use GET
// /v1/audit/verify on the server, or stop it first.
#ifndef VIGIL_CLI_AUDIT_COMMAND_H_
#define VIGIL_CLI_AUDIT_COMMAND_H_

#include "vigil/cli/command.h"

namespace vigil::cli {

Command AddAuditCommand(CLI::App& vigil);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_AUDIT_COMMAND_H_
