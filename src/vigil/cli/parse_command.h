// `vigil parse FILE...`: reads payment files (SWIFT MT, ISO 20022, JSON Lines, AMLworld CSV;
// the format detected from the content) and prints each normalized Transaction as one JSON line,
// the schema of docs/ingest.md. For analysts checking what vigil reads from a message, and for
// scripts converting messages to JSON.
//
// Output: the transactions on stdout; each refused record on stderr as
//   FILE:LINE: MESSAGE [reason]
// Exit: 0 when every record was read; 2 when a record or a file was refused as invalid (or a file
// cannot be read); 1 when the only refusals are messages of a type vigil does not read
// ("unsupported_message_type": an MT205, a pacs.002).
#ifndef VIGIL_CLI_PARSE_COMMAND_H_
#define VIGIL_CLI_PARSE_COMMAND_H_

#include "vigil/cli/command.h"

namespace vigil::cli {

Command AddParseCommand(CLI::App& vigil);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_PARSE_COMMAND_H_
