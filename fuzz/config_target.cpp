// The experiment config reader (core/config) through load_experiment, as the CLI and the GUI call it: the input as a
// config file, and, when it is not JSON, as a preset name and "key=value" lines applied as `--set` does. Whatever
// the reader accepts must survive a round trip through to_json.

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "core/config/experiment_config.h"
#include "core/config/json_reader.h"
#include "fuzz/fuzz_targets.h"

namespace descentlab::fuzz {

namespace {

// What the reader accepts, the writer writes and the reader reads back the same.
void check_round_trip(const config::ExperimentConfig& read) {
  const nlohmann::json written = read.to_json();
  const auto reread = config::ExperimentConfig::from_json(written, "fuzz (round trip)");
  if (reread.to_json() != written) finding("the config changed in a round trip: " + written.dump());
}

}  // namespace

int config(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // As a config file (descentlab-cli train --config FILE, the GUI's Open config).
  static const std::string path = scratch_path("config.json");
  write_file(path, data, size);
  try {
    check_round_trip(config::load_experiment("", "", path, {}));
  } catch (const Error&) {
    // Refused with a typed error naming the file and key: what bad input must get.
  }
  if (!nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false).is_discarded()) return 0;
  // Not JSON: the first line names a preset ("text-erm quick"), every further line is one --set assignment.
  std::istringstream lines(text);
  std::string first, line;
  std::getline(lines, first);
  std::istringstream words(first);
  std::string preset = "text-erm", preset_size = "quick";
  words >> preset >> preset_size;
  std::vector<std::string> assignments;
  while (std::getline(lines, line)) assignments.push_back(line);
  try {
    check_round_trip(config::load_experiment(preset, preset_size, "", assignments));
  } catch (const Error&) {
  }
  return 0;
}

}  // namespace descentlab::fuzz
