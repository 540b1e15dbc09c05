// `vigil bench http`: the latency–throughput curve of vigil serve over loopback.
#ifndef VIGIL_CLI_BENCH_COMMAND_H_
#define VIGIL_CLI_BENCH_COMMAND_H_

#include "vigil/cli/command.h"

namespace vigil::cli {

Command AddBenchCommand(CLI::App& vigil);

}  // namespace vigil::cli

#endif  // VIGIL_CLI_BENCH_COMMAND_H_
