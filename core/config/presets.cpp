#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/config/experiment_config.h"
#include "core/config/json_reader.h"
#include "core/generated/presets.h"

// The presets compiled in from resources/presets/ (core/generated/presets.h): their names, their documents at a
// size, and their descriptions with the config's values filled in.

namespace descentlab::config {

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& preset : generated::kPresets) names.emplace_back(preset.name);
  return names;
}

std::string fill_description(const std::string& text, const std::function<std::string(const std::string&)>& value_of) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t open = text.find('{', at);
    const size_t close = open == std::string::npos ? std::string::npos : text.find('}', open);
    if (close == std::string::npos) {
      out += text.substr(at);
      break;
    }
    out += text.substr(at, open - at);
    const std::string key = text.substr(open + 1, close - open - 1);
    const std::string value = value_of(key);
    out += value.empty() ? text.substr(open, close - open + 1) : value;
    at = close + 1;
  }
  return out;
}

std::string preset_description(const std::string& name) {
  const std::string text = preset_description_template(name);
  if (text.find('{') == std::string::npos) return text;
  const nlohmann::json document = preset_document(name, "quick");
  return fill_description(text, [&](const std::string& key) -> std::string {
    const size_t dot = key.find('.');
    if (dot == std::string::npos) return "";
    const auto section = document.find(key.substr(0, dot));
    if (section == document.end() || !section->is_object()) return "";
    const auto value = section->find(key.substr(dot + 1));
    if (value == section->end()) return "";
    if (value->is_number()) {
      std::ostringstream number;
      number << value->get<double>();  // 50, 0.05, 0.001: as the form writes them
      return number.str();
    }
    return value->is_string() ? value->get<std::string>() : value->dump();
  });
}

std::string preset_description_template(const std::string& name) {
  for (const auto& preset : generated::kPresets) {
    if (name != preset.name) continue;
    const nlohmann::json document = nlohmann::json::parse(preset.json, nullptr, false);
    if (document.is_object() && document.contains("description") && document["description"].is_string()) {
      return document["description"].get<std::string>();
    }
    return "";
  }
  return "";
}

nlohmann::json preset_document(const std::string& name, const std::string& size) {
  for (const auto& preset : generated::kPresets) {
    if (name != preset.name) continue;
    const std::string source = std::string("preset ") + preset.name;
    nlohmann::json document = nlohmann::json::parse(preset.json, nullptr, false);
    if (document.is_discarded() || !document.is_object()) throw ConfigError(source, "", "is not a JSON object");
    nlohmann::json sizes = document.value("sizes", nlohmann::json::object());
    document.erase("sizes");
    document.erase("description");
    if (!sizes.contains(size)) {
      std::string known;
      for (const auto& [key, unused] : sizes.items()) known += (known.empty() ? "" : ", ") + key;
      throw ConfigError(source, "sizes", "has no size \"" + size + "\" (known: " + known + ")");
    }
    document.merge_patch(sizes[size]);
    document["name"] = std::string(preset.name) + "-" + size;
    return document;
  }
  std::string known;
  for (const auto& preset_name : preset_names()) known += (known.empty() ? "" : ", ") + preset_name;
  throw ConfigError("--preset", "", "unknown preset \"" + name + "\" (known: " + known + ")");
}

}  // namespace descentlab::config
