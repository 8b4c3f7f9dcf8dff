#pragma once
// A small study of generated run files with known values, for the study tests, the CLI and the Python check:
// 3 optimizers x 4 seeds, of unequal lengths, with AC/DC's before/after-compression series, plus files that are not
// runs. Values are closed forms of (optimizer, seed, step), so the tests know every mean, band and difference.

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/store/run_writer.h"

namespace descentlab::testing {

inline const std::vector<std::string>& study_optimizers() {
  static const std::vector<std::string> names = {"adamw", "horst", "ham"};
  return names;
}
inline constexpr int kStudySeeds = 4;
inline constexpr int kStudyCompressions = 3;

// The number of evaluations of a run: seed 3 of each optimizer stops early (5 instead of 8), as a cut-short run.
inline int study_evaluations(int seed) {
  return seed == 3 ? 5 : 8;
}
// Test accuracy at evaluation e (step 10 e) of optimizer o and seed s.
inline double study_accuracy(int optimizer, int seed, int evaluation) {
  return 0.5 + 0.04 * evaluation + 0.01 * optimizer + 0.003 * seed - (optimizer == 1 && seed == 2 ? 0.02 : 0.0);
}
// The accuracy just before / right after compression k.
inline double study_compression(int optimizer, int seed, int k, bool after) {
  return 0.7 + 0.02 * k + 0.005 * optimizer * (after ? 2 : 1) - 0.001 * seed - (after ? 0.1 : 0.0);
}

inline std::string study_run_path(const std::string& folder, int optimizer, int seed) {
  return folder + "/" + study_optimizers()[static_cast<size_t>(optimizer)] + "/seed" + std::to_string(seed) + ".h5";
}

// Writes the study below `folder` (one sub-folder per optimizer), plus a JSON and a text file that are not runs.
inline void write_study(const std::string& folder) {
  std::filesystem::create_directories(folder);
  for (int o = 0; o < 3; ++o) {
    std::filesystem::create_directories(folder + "/" + study_optimizers()[static_cast<size_t>(o)]);
    for (int s = 0; s < kStudySeeds; ++s) {
      store::RunHeader header;
      header.app_version = "0.1.0-test";
      header.torch_version = "1.13.0";
      header.device = "cpu";
      header.config_json = R"({"name": "vit-study", "task": "vit", "train": {"seed": )" + std::to_string(s) +
                           R"(, "lr": 0.001}, "optimizer": {"name": ")" + study_optimizers()[static_cast<size_t>(o)] +
                           R"(", "alpha": 5}, "data": {"split_seed": )" + std::to_string(s) + "}}";
      store::RunWriterOptions options;
      options.flush_interval_seconds = 0;
      options.overwrite = true;
      auto writer = store::RunWriter::create(study_run_path(folder, o, s), header, options);
      for (int e = 1; e <= study_evaluations(s); ++e) {
        const int64_t step = 10 * e;
        writer->scalar("test_accuracy", step, 1.8e9 + static_cast<double>(step), study_accuracy(o, s, e));
        writer->scalar("loss", step, 1.8e9 + static_cast<double>(step), 2.0 / (e + o + 1.0));
      }
      for (int k = 0; k < kStudyCompressions; ++k) {
        const int64_t step = 15 + 20 * k;
        writer->scalar("test_accuracy_before_compression", step, 1.8e9, study_compression(o, s, k, false));
        writer->scalar("test_accuracy_after_compression", step, 1.8e9, study_compression(o, s, k, true));
      }
      writer->flush();
    }
  }
  std::FILE* notes = std::fopen((folder + "/notes.txt").c_str(), "w");
  if (notes) {
    std::fputs("not a run\n", notes);
    std::fclose(notes);
  }
  std::FILE* summary = std::fopen((folder + "/horst/summary.json").c_str(), "w");
  if (summary) {
    std::fputs("{}\n", summary);
    std::fclose(summary);
  }
}

}  // namespace descentlab::testing
