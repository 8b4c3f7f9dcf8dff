#pragma once
// Reads a JSON object into typed fields, naming the full key path in every error ("model.layers: expected an
// integer >= 1, got 0") and rejecting keys it does not know, so a typo in a preset never goes unnoticed.

#include <nlohmann/json.hpp>

#include <set>
#include <string>
#include <vector>

#include "core/config/choices.h"
#include "core/util/error.h"

namespace descentlab::config {

class ConfigError : public Error {
 public:
  ConfigError(const std::string& source, const std::string& key, const std::string& message)
      : Error(source + ": " + (key.empty() ? "" : key + ": ") + message), key_(key) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

class JsonReader {
 public:
  // `source` names where the JSON came from (a file, "preset text-erm", "--set"); `prefix` is the key path so far.
  JsonReader(const nlohmann::json& object, std::string source, std::string prefix = "");

  // Each read marks the key as known. Absent keys keep the default already in `value`.
  void read(const std::string& key, bool& value);
  void read(const std::string& key, int64_t& value, int64_t minimum, int64_t maximum);
  void read(const std::string& key, uint64_t& value);
  void read(const std::string& key, double& value, double minimum, double maximum);
  void read(const std::string& key, std::string& value, const std::vector<std::string>& allowed = {});
  void read(const std::string& key, std::vector<int64_t>& value, int64_t minimum, int64_t maximum);
  void read(const std::string& key, std::vector<double>& value, double minimum, double maximum);
  // A closed choice (core/config/choices.h): the word must be one of E's.
  template <typename E>
  void read_choice(const std::string& key, E& value) {
    std::string text = word(value);
    read(key, text, choice_words<E>());
    parse_choice(text, value);
  }
  // Whether the object holds `key` (without marking it known).
  bool has(const std::string& key) const { return object_.contains(key); }
  // A nested object; absent gives an empty reader.
  JsonReader child(const std::string& key);

  // Throws ConfigError for the first key that no read asked for.
  void reject_unknown_keys() const;

  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  std::string path(const std::string& key) const { return prefix_.empty() ? key : prefix_ + "." + key; }

 private:
  const nlohmann::json* find(const std::string& key);

  nlohmann::json object_;
  std::string source_;
  std::string prefix_;
  std::set<std::string> known_;
};

// Applies "a.b.c=value" to a JSON object; the value is parsed as JSON when it can be (numbers, true, false, null,
// arrays), else taken as a string. Throws ConfigError naming the assignment when it is malformed.
void apply_assignment(nlohmann::json& document, const std::string& assignment);

}  // namespace descentlab::config
