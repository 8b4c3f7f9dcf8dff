// descentlab-cli: the headless front end of DescentLab. Links only the core engine.

#include <algorithm>

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

#include "app/cli/commands.h"
#include "app/cli/launcher.h"
#include "core/runtime.h"
#include "core/session/failure.h"

namespace descentlab::cli {

const char* exit_code_help() {
  return "Exit codes:\n"
         "  0    done\n"
         "  1    the run failed: the loss or a metric became NaN or infinite\n"
         "  2    bad input: the command line, a config key or value, or a file's content (missing, not a run file,\n"
         "       corrupt, a dataset checksum that differs, values out of range)\n"
         "  3    I/O: the system would not read or write a file (permissions, a full disk, a failed write),\n"
         "       or another writer holds the run file's lock\n"
         "  4    not enough memory: the run was refused before allocating (the message gives the estimate and\n"
         "       what is available), or an allocation failed\n"
         "  70   internal error: a bug; please report it with the command\n"
         "  130  stopped by Ctrl-C or SIGTERM; a training keeps its state as \"latest\" (train --resume continues),\n"
         "       a data fetch keeps nothing partial\n"
         "Every error is one line on stderr naming the file, key or value at fault.\n";
}

namespace {

// The one place where an error becomes an exit code (the line for the user is the engine's: core/session/failure.h).
int exit_code_of(session::FailureKind kind) {
  switch (kind) {
    case session::FailureKind::RunFailed: return kRunFailed;
    case session::FailureKind::BadInput: return kBadInput;
    case session::FailureKind::Io: return kIoError;
    case session::FailureKind::NoMemory: return kNoMemory;
    case session::FailureKind::Internal: return kInternal;
  }
  return kInternal;
}

// What CLI11 would answer vaguely, said with what was given (issue 38): an unknown command ("A subcommand is
// required") and an empty argument (`--resume ""` read as no --resume, `inspect ""` as ": no such run file").
// Returns the message, or "" when the command line is for CLI11 to judge.
std::string vague_command_line(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> commands;
  for (const CLI::App* command : app.get_subcommands([](const CLI::App*) { return true; })) {
    commands.push_back(command->get_name());
  }
  bool command_seen = false;
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (argument.empty()) {
      const std::string after = i > 1 ? std::string(argv[i - 1]) : std::string();
      return "an empty argument was given" + (after.empty() ? std::string() : " after '" + after + "'") +
             "; name a file or a value there";
    }
    if (command_seen || argument[0] == '-') {
      if (!command_seen && argument == "--threads") ++i;  // its value
      continue;
    }
    command_seen = true;
    if (std::find(commands.begin(), commands.end(), argument) == commands.end()) {
      std::string list;
      for (const auto& name : commands) list += (list.empty() ? "" : ", ") + name;
      return "'" + argument + "' is not a command; the commands are " + list + " (descentlab-cli COMMAND --help)";
    }
  }
  return "";
}

// A parse error said with the command it concerns and what that command takes (issue 52: "pack RUN" said only "out
// is required", "data frob" only "A subcommand is required").
std::string described_parse_error(const CLI::App& app, const CLI::ParseError& error) {
  const CLI::App* command = &app;
  std::string name = "descentlab-cli";
  std::string where;  // the command's words after the program's name ("data fetch"); "" for the program itself
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const CLI::App* sub : command->get_subcommands([](const CLI::App*) { return true; })) {
      if (!sub->parsed()) continue;
      command = sub;
      name += " " + sub->get_name();
      where += (where.empty() ? "" : " ") + sub->get_name();
      deeper = true;
      break;
    }
  }
  const auto subcommands = command->get_subcommands([](const CLI::App*) { return true; });
  if (!subcommands.empty()) {  // a command of commands ("data"): name what was given and what it has
    std::string list;
    for (const CLI::App* sub : subcommands) list += (list.empty() ? "" : ", ") + sub->get_name();
    const std::vector<std::string> extra = command->remaining();
    const std::string given = extra.empty()             ? "no command was given"
                              : extra.front()[0] == '-' ? "'" + extra.front() + "' is not one of its options"
                                                        : "'" + extra.front() + "' is not one of them";
    return (where.empty() ? "" : where + ": ") + "its commands are " + list + "; " + given + " (" + name +
           " COMMAND --help)";
  }
  std::string usage;
  for (const CLI::Option* option : command->get_options([](const CLI::Option*) { return true; })) {
    if (option->get_positional() && option->get_name() != "help") usage += " " + option->get_name();
  }
  return (where.empty() ? "" : where + ": ") + error.what() + " (usage: " + name + usage + " [OPTIONS]; " + name +
         " --help)";
}

std::string version_text() {
  // --version answers while the options are parsed, before the thread count is applied: apply the default (or
  // $DESCENTLAB_THREADS) first, so "threads:" says what a run would use, not LibTorch's own default (all cores).
  descentlab::configure_threads(descentlab::threads_from_environment(1));
  return "descentlab-cli " + descentlab::runtime_text(descentlab::runtime_info());
}

}  // namespace
}  // namespace descentlab::cli

int main(int argc, char** argv) {
  using namespace descentlab::cli;
  remember_command_line(argc, argv);
  CLI::App app{"DescentLab (headless): layerwise-descent and HORST experiments, datasets and run files.",
               "descentlab-cli"};
  app.require_subcommand(1);
  app.set_version_flag("--version", &version_text);
  app.footer(exit_code_help());
  int threads = 0;
  app.add_option(
         "--threads", threads,
         "Torch and BLAS threads (default: $DESCENTLAB_THREADS, else 1; with several processes see docs/scale-out.md)")
      ->check(CLI::Range(1, 1024));

  int exit_code = kOk;
  add_data_commands(app, exit_code);
  add_inspect_command(app, exit_code);
  add_pack_command(app, exit_code);
  add_annotate_command(app, exit_code);
  add_train_command(app, exit_code);
  add_analysis_commands(app, exit_code);
  add_prune_command(app, exit_code);
  add_probe_command(app, exit_code);
  app.parse_complete_callback(
      [&threads]() { descentlab::configure_process(threads > 0 ? threads : descentlab::threads_from_environment(1)); });

  if (const std::string vague = vague_command_line(app, argc, argv); !vague.empty()) {
    std::cerr << "descentlab-cli: error: " << vague << "\n";
    return kBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // --help and --version are "errors" of exit code 0 to CLI11; every real one is bad input, said with its command.
    if (error.get_exit_code() == 0) return app.exit(error);
    std::cerr << "descentlab-cli: error: " << described_parse_error(app, error) << "\n";
    return kBadInput;
  } catch (...) {
    const descentlab::session::Failure failure = descentlab::session::describe_failure(std::current_exception());
    const int code = exit_code_of(failure.kind);
    // A rank of a data-parallel launch says which one it is (every rank reports its own error).
    const char* rank = std::getenv("RANK");
    const char* world = std::getenv("WORLD_SIZE");
    const std::string who = rank && world && std::string(world) != "1" ? " [rank " + std::string(rank) + "]" : "";
    std::cerr << "descentlab-cli" << who << ": " << (code == kInternal ? "" : "error: ") << failure.message << "\n";
    return code;
  }
  return exit_code;
}
