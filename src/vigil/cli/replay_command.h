// `vigil replay FILE`: streams a transaction file (AMLworld CSV or JSON Lines) through ingest and
// features in event-time order, prints progress and a summary; see engine/replay.h.
//
//   vigil replay tx.csv --features-out features.csv --summary-json summary.json
//
// Exit codes: 0 replayed (rejected records are counted, not failures); 1 --fail-on-reject was
// given and some record was rejected; 2 usage or environment error (missing file, unusable data
// dir, unwritable output).
#ifndef VIGIL_CLI_REPLAY_COMMAND_H_
#define VIGIL_CLI_REPLAY_COMMAND_H_

#include "CLI/CLI.hpp"
#include "vigil/cli/command.h"

namespace vigil::cli {

Command AddReplayCommand(CLI::App& vigil);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_REPLAY_COMMAND_H_
