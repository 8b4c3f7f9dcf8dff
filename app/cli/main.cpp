// descentlab-cli: the headless front end of DescentLab. Links only the core engine.

#include <CLI/CLI.hpp>

#include <iostream>

#include "app/cli/commands.h"
#include "core/runtime.h"
#include "core/util/error.h"

namespace {

std::string version_text() {
  // --version answers while the options are parsed, before the thread count is applied: apply the default (or
  // $DESCENTLAB_THREADS) first, so "threads:" says what a run would use, not LibTorch's own default (all cores).
  descentlab::configure_threads(descentlab::threads_from_environment(1));
  return "descentlab-cli " + descentlab::runtime_text(descentlab::runtime_info());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"DescentLab (headless): layerwise-descent and HORST experiments, datasets and run files.",
               "descentlab-cli"};
  app.require_subcommand(1);
  app.set_version_flag("--version", &version_text);
  int threads = 0;
  app.add_option("--threads", threads,
                 "Torch and BLAS threads (default: $DESCENTLAB_THREADS, else 1; see docs/performance.md)")
      ->check(CLI::Range(1, 1024));

  int exit_code = 0;
  descentlab::cli::add_data_commands(app, exit_code);
  descentlab::cli::add_inspect_command(app, exit_code);
  descentlab::cli::add_train_command(app, exit_code);
  descentlab::cli::add_analysis_commands(app, exit_code);
  descentlab::cli::add_prune_command(app, exit_code);
  app.parse_complete_callback(
      [&threads]() { descentlab::configure_process(threads > 0 ? threads : descentlab::threads_from_environment(1)); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const descentlab::Error& error) {
    std::cerr << "descentlab-cli: error: " << error.what() << "\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "descentlab-cli: internal error: " << error.what() << "\n";
    return 1;
  }
  return exit_code;
}
