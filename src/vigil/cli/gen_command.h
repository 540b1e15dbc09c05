// `vigil gen`: writes a deterministic, labelled synthetic transaction stream (AMLworld CSV layout
// plus a Typology column) with injected laundering typologies; see synth/generator.h and
// docs/generator.md.
//
//   vigil gen --accounts 100000 --days 20 --seed 7 --out tx.csv
//
// Exit codes: 0 written; 2 usage or environment error (bad flag value, FX table not found or
// invalid, output not writable or a failed write).
//
// Thread safety: the returned Command's run() is called once, from main's thread.
#ifndef VIGIL_CLI_GEN_COMMAND_H_
#define VIGIL_CLI_GEN_COMMAND_H_

#include "CLI/CLI.hpp"
#include "vigil/cli/command.h"

namespace vigil::cli {

Command AddGenCommand(CLI::App& vigil);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_GEN_COMMAND_H_
