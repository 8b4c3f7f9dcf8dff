#include "core/util/user_folders.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/generated/build_info.h"
#include "core/util/error.h"

namespace descentlab {
namespace fs = std::filesystem;
namespace {

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// `path` with symbolic links and ".." resolved where it exists, else as given, made absolute.
fs::path resolved(const std::string& path) {
  std::error_code error;
  fs::path result = fs::weakly_canonical(fs::path(path), error);
  return error ? fs::absolute(fs::path(path), error) : result;
}

bool lies_under(const fs::path& inner, const fs::path& outer) {
  if (outer.empty()) return false;
  auto inner_part = inner.begin();
  for (const auto& outer_part : outer) {
    if (inner_part == inner.end() || *inner_part != outer_part) return false;
    ++inner_part;
  }
  return true;
}

}  // namespace

FolderContext process_folder_context() {
  FolderContext context;
  context.data_override = environment("DESCENTLAB_DATA");
  context.xdg_data_home = environment("XDG_DATA_HOME");
  context.home = environment("HOME");
  std::error_code error;
  context.executable = fs::read_symlink("/proc/self/exe", error).string();
  context.build_root = build_info::kBuildRoot;
  context.source_data_root = build_info::kDefaultDataRoot;
  return context;
}

bool running_from_build_tree(const FolderContext& context) {
  if (context.executable.empty() || context.build_root.empty()) return false;
  return lies_under(resolved(context.executable), resolved(context.build_root));
}

std::string user_data_folder(const FolderContext& context) {
  if (!context.xdg_data_home.empty() && fs::path(context.xdg_data_home).is_absolute()) {
    return (fs::path(context.xdg_data_home) / "descentlab").string();
  }
  if (context.home.empty()) {
    throw Error(
        "neither XDG_DATA_HOME nor HOME is set: DescentLab cannot tell where to keep its data (set "
        "DESCENTLAB_DATA for the datasets, or HOME)");
  }
  return (fs::path(context.home) / ".local" / "share" / "descentlab").string();
}

std::string dataset_folder(const FolderContext& context) {
  if (!context.data_override.empty()) return context.data_override;
  if (running_from_build_tree(context)) return context.source_data_root;
  return (fs::path(user_data_folder(context)) / "datasets").string();
}

std::string example_scripts_folder(const FolderContext& context) {
  const std::string given = environment("DESCENTLAB_EXAMPLES");
  if (!given.empty()) return given;
  if (running_from_build_tree(context)) {
    // The source tree's datasets/cache is <source>/datasets/cache.
    return (fs::path(context.source_data_root).parent_path().parent_path() / "examples").string();
  }
  return (fs::path(context.executable).parent_path().parent_path() / "share" / "descentlab" / "examples").string();
}

std::string example_files_folder(const FolderContext& context, const std::string& example) {
  return (fs::path(dataset_folder(context)) / "examples" / example).string();
}

std::string runs_folder(const FolderContext& context) {
  if (running_from_build_tree(context)) return "runs";
  return (fs::path(user_data_folder(context)) / "runs").string();
}

}  // namespace descentlab
