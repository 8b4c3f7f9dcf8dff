// The experiment config reader (core/config): a JSON document, or, when the input is not JSON, "key=value" lines
// applied to a preset as `--set` does. Whatever the reader accepts must survive a round trip through to_json.

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>

#include "core/config/experiment_config.h"
#include "core/config/json_reader.h"
#include "fuzz/fuzz_targets.h"

namespace descentlab::fuzz {

int config(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    nlohmann::json document = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (document.is_discarded()) {
      // The first line names a preset ("text-erm quick"); every further line is one --set assignment.
      std::istringstream lines(text);
      std::string first, line;
      std::getline(lines, first);
      std::istringstream words(first);
      std::string preset = "text-erm", preset_size = "quick";
      words >> preset >> preset_size;
      document = config::preset_document(preset, preset_size);
      while (std::getline(lines, line)) config::apply_assignment(document, line);
    }
    const auto read = config::ExperimentConfig::from_json(document, "fuzz");
    const nlohmann::json written = read.to_json();
    const auto reread = config::ExperimentConfig::from_json(written, "fuzz (round trip)");
    if (reread.to_json() != written) finding("the config changed in a round trip: " + written.dump());
  } catch (const Error&) {
    // Refused with a typed error naming the key: what bad input must get.
  }
  return 0;
}

}  // namespace descentlab::fuzz
