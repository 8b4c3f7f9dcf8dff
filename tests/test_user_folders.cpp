// Where the programs keep their files (core/util/user_folders.h): from the build tree as before, installed in the
// user's XDG folders, DESCENTLAB_DATA first in both.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/util/error.h"
#include "core/util/user_folders.h"

namespace descentlab {
namespace {

FolderContext installed() {
  FolderContext context;
  context.home = "/home/ada";
  context.executable = "/usr/bin/descentlab-cli";
  context.build_root = "/src/descentlab/build";
  context.source_data_root = "/src/descentlab/datasets/cache";
  return context;
}

TEST(UserFolders, FromTheBuildTreeTheSourceTreesDatasetsAndRunsHere) {
  FolderContext context = installed();
  context.executable = "/src/descentlab/build/app/descentlab-cli";
  EXPECT_TRUE(running_from_build_tree(context));
  EXPECT_EQ(dataset_folder(context), "/src/descentlab/datasets/cache");
  EXPECT_EQ(runs_folder(context), "runs");
  context.executable = "/src/descentlab/build-other/app/descentlab-cli";  // a neighbour, not the build folder
  EXPECT_FALSE(running_from_build_tree(context));
}

TEST(UserFolders, InstalledTheUsersXdgDataFolder) {
  FolderContext context = installed();
  EXPECT_FALSE(running_from_build_tree(context));
  EXPECT_EQ(dataset_folder(context), "/home/ada/.local/share/descentlab/datasets");
  EXPECT_EQ(runs_folder(context), "/home/ada/.local/share/descentlab/runs");
  context.xdg_data_home = "/data/ada";
  EXPECT_EQ(dataset_folder(context), "/data/ada/descentlab/datasets");
  context.xdg_data_home = "relative/is/ignored";  // the XDG spec: a relative path is invalid and ignored
  EXPECT_EQ(runs_folder(context), "/home/ada/.local/share/descentlab/runs");
}

TEST(UserFolders, DescentlabDataOverridesBothAndNoHomeIsNamed) {
  FolderContext context = installed();
  context.data_override = "/scratch/data";
  EXPECT_EQ(dataset_folder(context), "/scratch/data");
  context.executable = "/src/descentlab/build/app/descentlab";
  EXPECT_EQ(dataset_folder(context), "/scratch/data");

  FolderContext homeless = installed();
  homeless.home.clear();
  try {
    runs_folder(homeless);
    FAIL() << "no HOME and no XDG_DATA_HOME should be refused";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("HOME"), std::string::npos) << error.what();
  }
}

TEST(UserFolders, ThisTestRunsFromItsBuildTree) {
  const FolderContext context = process_folder_context();
  EXPECT_TRUE(running_from_build_tree(context)) << context.executable << " not under " << context.build_root;
}

}  // namespace
}  // namespace descentlab
