#pragma once
// The fixtures of a user's model (issue 53): TorchScript modules and HDF5 data files written by
// tests/python/make_script_models.py with Debian's python3-torch, once per test binary, into a scratch folder.

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "test_support.h"

namespace descentlab::models {

// The fixtures, written once per test binary into a scratch folder.
class ScriptModelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    folder_ = new descentlab::testing::ScratchFolder();
    const std::string command = std::string(DESCENTLAB_PYTHON3) + " " + DESCENTLAB_SOURCE_DIR +
                                "/tests/python/make_script_models.py " + folder_->path().string();
    written_ = std::system(command.c_str()) == 0;
  }
  static void TearDownTestSuite() {
    delete folder_;
    folder_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(written_) << "tests/python/make_script_models.py failed (python3-torch?)"; }
  static std::string fixture(const std::string& name) { return (folder_->path() / name).string(); }

  static inline descentlab::testing::ScratchFolder* folder_ = nullptr;
  static inline bool written_ = false;
};

}  // namespace descentlab::models
