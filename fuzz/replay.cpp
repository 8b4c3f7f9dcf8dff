// Replays files through a fuzz entry with the normal compiler: the committed seed corpus and every kept crash
// (fuzz/corpus/TARGET, fuzz/regressions/TARGET), so a regression fails the ordinary suite too.
// Usage: descentlab_fuzz_replay TARGET PATH... (files, or folders read recursively)

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

#include "fuzz/fuzz_targets.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  using namespace descentlab::fuzz;
  if (argc < 3) {
    std::cerr << "usage: descentlab_fuzz_replay TARGET PATH...\n";
    return 2;
  }
  Entry entry = nullptr;
  for (const auto& target : kTargets) {
    if (std::strcmp(target.name, argv[1]) == 0) entry = target.entry;
  }
  if (!entry) {
    std::cerr << "unknown fuzz target " << argv[1] << "\n";
    return 2;
  }
  std::vector<fs::path> files;
  for (int i = 2; i < argc; ++i) {
    const fs::path path = argv[i];
    if (fs::is_directory(path)) {
      for (const auto& item : fs::recursive_directory_iterator(path)) {
        if (item.is_regular_file() && item.path().filename() != "README.md") files.push_back(item.path());
      }
    } else if (fs::exists(path)) {
      files.push_back(path);
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::cout << file.string() << " (" << bytes.size() << " bytes)" << std::endl;
    entry(bytes.data(), bytes.size());
  }
  std::cout << "replayed " << files.size() << " inputs through " << argv[1] << "\n";
  return files.empty() ? 1 : 0;
}
