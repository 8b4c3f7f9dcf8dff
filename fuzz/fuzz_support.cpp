#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>

#include "fuzz/fuzz_targets.h"

namespace descentlab::fuzz {

namespace {

// Never destroyed: the exit handler that removes the files runs after static destructors may have run.
std::set<std::string>& scratch_files() {
  static auto* files = new std::set<std::string>;
  return *files;
}

void remove_scratch_files() {
  for (const auto& path : scratch_files()) {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
}

}  // namespace

std::string scratch_path(const std::string& name) {
  static std::once_flag once;
  std::call_once(once, [] { std::atexit(remove_scratch_files); });
  const char* tmp = std::getenv("TMPDIR");
  std::string path =
      std::string(tmp && *tmp ? tmp : "/tmp") + "/descentlab-fuzz-" + std::to_string(getpid()) + "-" + name;
  scratch_files().insert(path);
  return path;
}

void write_file(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) finding("could not write the scratch file " + path);
}

void finding(const std::string& what) {
  std::fprintf(stderr, "FUZZ FINDING: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace descentlab::fuzz
