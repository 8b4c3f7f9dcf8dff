#pragma once
// descentlab-cli subcommands. Each `add_*` registers one subcommand on the CLI11 app; its callback sets the
// process exit code through `exit_code`.

#include <CLI/CLI.hpp>

namespace descentlab::cli {

void add_data_commands(CLI::App& app, int& exit_code);
void add_inspect_command(CLI::App& app, int& exit_code);
void add_train_command(CLI::App& app, int& exit_code);
void add_analysis_commands(CLI::App& app, int& exit_code);
void add_prune_command(CLI::App& app, int& exit_code);

}  // namespace descentlab::cli
