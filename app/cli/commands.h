#pragma once
// descentlab-cli subcommands. Each `add_*` registers one subcommand on the CLI11 app; its callback sets the
// process exit code through `exit_code`.

#include <CLI/CLI.hpp>

namespace descentlab::cli {

// The exit codes (descentlab-cli --help and docs/cli.md say the same).
enum ExitCode : int {
  kOk = 0,
  kRunFailed = 1,     // the run itself failed: the loss or a metric became NaN or infinite
  kBadInput = 2,      // the command line, a config, or a file's content (missing, corrupt, out of range, checksum)
  kIoError = 3,       // the system would not read or write a file (permissions, a full disk, a lock held)
  kNoMemory = 4,      // the run does not fit in memory (refused before allocating, or an allocation failed)
  kInternal = 70,     // a bug: an error DescentLab did not expect (EX_SOFTWARE)
  kInterrupted = 130  // stopped by Ctrl-C or SIGTERM; the state is kept as "latest"
};

// The --help footer: every exit code and what it means.
const char* exit_code_help();

void add_data_commands(CLI::App& app, int& exit_code);
void add_inspect_command(CLI::App& app, int& exit_code);
void add_pack_command(CLI::App& app, int& exit_code);
void add_annotate_command(CLI::App& app, int& exit_code);
void add_train_command(CLI::App& app, int& exit_code);
void add_analysis_commands(CLI::App& app, int& exit_code);
void add_prune_command(CLI::App& app, int& exit_code);
void add_probe_command(CLI::App& app, int& exit_code);

}  // namespace descentlab::cli
