#pragma once
// Where the programs keep their files. Run from the build tree they were built in, they keep today's places: the
// datasets in the source tree's datasets/cache, new runs in runs/ of the working folder. Installed (anywhere else),
// they keep them in the user's XDG folders, as desktop programs on Debian do:
//   datasets  $DESCENTLAB_DATA, else $XDG_DATA_HOME/descentlab/datasets (XDG_DATA_HOME: ~/.local/share)
//   runs      $XDG_DATA_HOME/descentlab/runs (the window's new runs; the CLI writes where --out says)
//   settings  $XDG_CONFIG_HOME/DescentLab/DescentLab.conf (Qt's QSettings; XDG_CONFIG_HOME: ~/.config)
// docs/build.md ("Installed") lists the same.

#include <string>

namespace descentlab {

// What decides the folders, read from the process (the environment, /proc/self/exe) or given by a test.
struct FolderContext {
  std::string data_override;     // $DESCENTLAB_DATA
  std::string xdg_data_home;     // $XDG_DATA_HOME (ignored unless absolute, as the XDG spec says)
  std::string home;              // $HOME
  std::string executable;        // this program's path
  std::string build_root;        // the build folder it was built in
  std::string source_data_root;  // the source tree's dataset cache
};
FolderContext process_folder_context();

// True when `context.executable` lies in the build folder it was built in.
bool running_from_build_tree(const FolderContext& context);
// $XDG_DATA_HOME/descentlab, else ~/.local/share/descentlab. Throws descentlab::Error when neither is known.
std::string user_data_folder(const FolderContext& context);
std::string dataset_folder(const FolderContext& context);
// Where the window writes new runs: "runs" (relative to the working folder) from a build tree, else
// user_data_folder()/runs.
std::string runs_folder(const FolderContext& context);
// The example scripts (examples/*.py: a user's model and data, docs/your-model.md): $DESCENTLAB_EXAMPLES, else the
// source tree's examples/ from a build tree, else <prefix>/share/descentlab/examples beside the installed program.
std::string example_scripts_folder(const FolderContext& context);
// Where the files an example script writes for a tour are kept: <datasets>/examples/<example>.
std::string example_files_folder(const FolderContext& context, const std::string& example);

}  // namespace descentlab
