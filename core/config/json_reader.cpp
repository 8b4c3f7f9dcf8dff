#include "core/config/json_reader.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace descentlab::config {

JsonReader::JsonReader(const nlohmann::json& object, std::string source, std::string prefix)
    : object_(object.is_null() ? nlohmann::json::object() : object),
      source_(std::move(source)),
      prefix_(std::move(prefix)) {
  if (!object_.is_object())
    throw ConfigError(
        source_, prefix_,
        "expected an object, got " + object_.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

const nlohmann::json* JsonReader::find(const std::string& key) {
  known_.insert(key);
  const auto found = object_.find(key);
  return found == object_.end() ? nullptr : &*found;
}

void JsonReader::fail(const std::string& key, const std::string& message) const {
  throw ConfigError(source_, path(key), message);
}

void JsonReader::read(const std::string& key, bool& value) {
  if (const auto* item = find(key)) {
    if (!item->is_boolean())
      fail(key, "expected true or false, got " + item->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    value = item->get<bool>();
  }
}

void JsonReader::read(const std::string& key, int64_t& value, int64_t minimum, int64_t maximum) {
  if (const auto* item = find(key)) {
    if (!item->is_number_integer())
      fail(key, "expected an integer, got " + item->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    // An unsigned JSON number above 2^63 - 1 would wrap to a negative int64 (2^64 - 1 read as -1): compare it as
    // unsigned, and name the value as it was written.
    const bool too_large = item->is_number_unsigned() &&
                           item->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    const auto parsed = too_large ? std::numeric_limits<int64_t>::max() : item->get<int64_t>();
    if (too_large || parsed < minimum || parsed > maximum) {
      fail(key, "expected an integer in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "], got " +
                    item->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    value = parsed;
  }
}

void JsonReader::read(const std::string& key, uint64_t& value) {
  if (const auto* item = find(key)) {
    // Any unsigned 64-bit value (2^64 - 1 included, which get<int64_t>() would read as -1); a negative one is not.
    // (Parsed text holds non-negative integers as unsigned; JSON built in C++ may hold them as signed.)
    if (!item->is_number_unsigned() && !(item->is_number_integer() && item->get<int64_t>() >= 0)) {
      fail(key, "expected an integer in [0, 2^64 - 1], got " +
                    item->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    value = item->get<uint64_t>();
  }
}

void JsonReader::read(const std::string& key, double& value, double minimum, double maximum) {
  if (const auto* item = find(key)) {
    if (!item->is_number())
      fail(key, "expected a number, got " + item->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    const double parsed = item->get<double>();
    if (!std::isfinite(parsed) || parsed < minimum || parsed > maximum) {
      std::ostringstream range;
      range << "expected a number in [" << minimum << ", " << maximum << "], got "
            << item->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      fail(key, range.str());
    }
    value = parsed;
  }
}

void JsonReader::read(const std::string& key, std::string& value, const std::vector<std::string>& allowed) {
  if (const auto* item = find(key)) {
    if (!item->is_string())
      fail(key, "expected a string, got " + item->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    const auto parsed = item->get<std::string>();
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), parsed) == allowed.end()) {
      std::string options;
      for (const auto& option : allowed) options += (options.empty() ? "" : ", ") + option;
      fail(key, "expected one of " + options + ", got \"" + parsed + "\"");
    }
    value = parsed;
  }
}

void JsonReader::read(const std::string& key, std::vector<int64_t>& value, int64_t minimum, int64_t maximum) {
  if (const auto* item = find(key)) {
    if (!item->is_array())
      fail(key, "expected an array of integers, got " +
                    item->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    std::vector<int64_t> parsed;
    for (const auto& element : *item) {
      const bool too_large = element.is_number_unsigned() && element.get<uint64_t>() > static_cast<uint64_t>(maximum);
      if (!element.is_number_integer() || too_large || element.get<int64_t>() < minimum ||
          element.get<int64_t>() > maximum) {
        fail(key, "expected integers in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "], got " +
                      item->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
      }
      parsed.push_back(element.get<int64_t>());
    }
    value = parsed;
  }
}

void JsonReader::read(const std::string& key, std::vector<double>& value, double minimum, double maximum) {
  if (const auto* item = find(key)) {
    const auto shown = [&] { return item->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
    if (!item->is_array()) fail(key, "expected an array of numbers, got " + shown());
    std::vector<double> parsed;
    for (const auto& element : *item) {
      if (!element.is_number() || !(element.get<double>() >= minimum && element.get<double>() <= maximum)) {
        std::ostringstream bounds;
        bounds << "[" << minimum << ", " << maximum << "]";
        fail(key, "expected numbers in " + bounds.str() + ", got " + shown());
      }
      parsed.push_back(element.get<double>());
    }
    value = parsed;
  }
}

JsonReader JsonReader::child(const std::string& key) {
  const auto* item = find(key);
  if (item && !item->is_object())
    fail(key, "expected an object, got " + item->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  return JsonReader(item ? *item : nlohmann::json::object(), source_, path(key));
}

void JsonReader::reject_unknown_keys() const {
  for (const auto& [key, unused] : object_.items()) {
    if (!known_.count(key)) {
      std::string known;
      for (const auto& name : known_) known += (known.empty() ? "" : ", ") + name;
      fail(key, "unknown key (known here: " + known + ")");
    }
  }
}

void apply_assignment(nlohmann::json& document, const std::string& assignment) {
  const size_t equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0) {
    throw ConfigError("--set", assignment, "expected key=value, e.g. model.layers=6");
  }
  const std::string key = assignment.substr(0, equals);
  const std::string text = assignment.substr(equals + 1);
  nlohmann::json value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    // Kept as a string; it must be text: invalid UTF-8 would surface later as nlohmann's type_error when the config
    // is written to the run file.
    value = text;
    try {
      (void)value.dump();
    } catch (const nlohmann::json::type_error&) {
      throw ConfigError("--set", key, "the value is not valid UTF-8 text");
    }
  }
  nlohmann::json* node = &document;
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty()) throw ConfigError("--set", key, "empty key component");
    if (!node->is_object()) throw ConfigError("--set", key, "cannot set a field inside a non-object");
    if (dot == std::string::npos) {
      (*node)[part] = value;
      return;
    }
    node = &(*node)[part];
    if (node->is_null()) *node = nlohmann::json::object();
    start = dot + 1;
  }
}

}  // namespace descentlab::config
