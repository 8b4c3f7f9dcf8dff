#pragma once
// Fuzz entry points (fuzz/README.md): one function per reader of outside input. Each takes one input and returns
// 0. Bad input must end in a descentlab::Error, which the entry catches; anything else (another exception, a
// crash, a sanitizer report, a broken invariant, which aborts) is a finding. The same functions run under
// libFuzzer (scripts/fuzz.sh) and, built with the normal compiler, over the committed corpus and every kept crash
// in ctest (fuzz.replay.*).

#include <cstddef>
#include <cstdint>
#include <string>

namespace descentlab::fuzz {

using Entry = int (*)(const uint8_t* data, size_t size);

int config(const uint8_t* data, size_t size);        // an experiment config: JSON, or --set lines on a preset
int run_file(const uint8_t* data, size_t size);      // a run file: edits made with HDF5 to a valid one, then read back
int idx(const uint8_t* data, size_t size);           // IDX arrays (plain or gzip) and image sets
int reviews(const uint8_t* data, size_t size);       // the IMDb reviews JSON, then normalize, tokenize, encode
int corpus(const uint8_t* data, size_t size);        // UTF-8 chapter text, its vocabulary and split
int catalog(const uint8_t* data, size_t size);       // the SHA256SUMS manifest
int sprites(const uint8_t* data, size_t size);       // sprite-video options, then the generator when they are valid
int run_log(const uint8_t* data, size_t size);       // a run log (RUN.h5.log) beside a valid run file, read every way
int study_folder(const uint8_t* data, size_t size);  // a folder of runs, damaged and foreign files, read as a study

struct Target {
  const char* name;
  Entry entry;
};
inline constexpr Target kTargets[] = {{"config", config},   {"run_file", run_file}, {"idx", idx},
                                      {"reviews", reviews}, {"corpus", corpus},     {"catalog", catalog},
                                      {"sprites", sprites}, {"run_log", run_log},   {"study_folder", study_folder}};

// A file or folder of this process for inputs that readers take by path (removed at exit, with what is inside).
std::string scratch_path(const std::string& name);
void write_file(const std::string& path, const uint8_t* data, size_t size);

// A broken invariant: prints what and aborts, so libFuzzer and the replay test both report it.
[[noreturn]] void finding(const std::string& what);

}  // namespace descentlab::fuzz
