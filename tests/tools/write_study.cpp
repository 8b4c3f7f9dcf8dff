// Writes the generated study of tests/study_samples.h (3 optimizers x 4 seeds of unequal lengths, and two files
// that are not runs) for the CLI and Python checks of `compare --group-by --pair`.
// Usage: descentlab_write_study FOLDER

#include <filesystem>
#include <iostream>

#include "../study_samples.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: descentlab_write_study FOLDER\n";
    return 2;
  }
  try {
    std::filesystem::remove_all(argv[1]);
    descentlab::testing::write_study(argv[1]);
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
