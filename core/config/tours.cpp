#include "core/config/tours.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/config/experiment_config.h"
#include "core/config/json_reader.h"
#include "core/generated/tours.h"
#include "core/record/metrics.h"

namespace descentlab::config {
namespace {

std::string text_of(const nlohmann::json& object, const char* key, const std::string& source, bool required) {
  const auto found = object.find(key);
  if (found == object.end()) {
    if (required) throw ConfigError(source, key, "missing");
    return {};
  }
  if (!found->is_string()) throw ConfigError(source, key, "expected text, got " + found->dump());
  return found->get<std::string>();
}

}  // namespace

const std::vector<std::string>& tour_view_ids() {
  static const std::vector<std::string> ids = {"training_curves", "test_metric", "layer_loss", "lambda",
                                               "weight_geometry", "robustness",  "frontier",   "playground"};
  return ids;
}

namespace {

// The document as a JSON object whose every key is one a tour knows.
nlohmann::json tour_document(const std::string& json_text, const std::string& source) {
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& error) {
    throw ConfigError(source, "", std::string("not valid JSON: ") + error.what());
  }
  if (!document.is_object()) throw ConfigError(source, "", "expected a JSON object");
  for (const auto& item : document.items()) {
    // A copy, not a structured binding: Clang 14 (the sanitizer builds) cannot capture those in a lambda.
    const std::string key = item.key();
    static const char* known[] = {"name", "title", "watch",  "caption",    "effect",
                                  "runs", "views", "curves", "layer_loss", "seeds"};
    if (std::none_of(std::begin(known), std::end(known), [&](const char* name) { return key == name; })) {
      throw ConfigError(source, key,
                        "unknown key (known here: name, title, watch, caption, effect, runs, views, curves, "
                        "layer_loss, seeds)");
    }
  }
  return document;
}

// "watch": one sentence, counted in characters, not bytes (λ is two bytes of UTF-8: every byte but a continuation
// byte starts one).
void check_watch(const std::string& watch, const std::string& source) {
  const auto characters = static_cast<size_t>(std::count_if(
      watch.begin(), watch.end(), [](char byte) { return (static_cast<unsigned char>(byte) & 0xC0) != 0x80; }));
  if (characters > kTourWatchMaxLength) {
    throw ConfigError(source, "watch",
                      std::to_string(characters) + " characters; at most " + std::to_string(kTourWatchMaxLength) +
                          " (one sentence: the caption holds the rest)");
  }
}

// "curves", "seeds" and "layer_loss": what the views show first.
void read_view_settings(const nlohmann::json& document, const std::string& source, Tour& tour) {
  tour.curves = text_of(document, "curves", source, false);
  if (!tour.curves.empty()) {
    const record::MetricInfo* info = record::find_metric(tour.curves);
    if (!info || info->shape != record::SeriesShape::Scalar) {
      throw ConfigError(source, "curves", "\"" + tour.curves + "\" is not a scalar series of the metric vocabulary");
    }
  }
  if (document.contains("seeds")) {
    const nlohmann::json& seeds = document.at("seeds");
    if (!seeds.is_array() || seeds.empty()) throw ConfigError(source, "seeds", "expected a list of seeds");
    tour.seeds.clear();
    for (const auto& seed : seeds) {
      if (!seed.is_number_integer() || seed.get<int64_t>() < 0 || seed.get<int64_t>() > 1000000) {
        throw ConfigError(source, "seeds", seed.dump() + " is not a seed (a whole number from 0)");
      }
      tour.seeds.push_back(seed.get<int>());
    }
  }
  tour.layer_loss = text_of(document, "layer_loss", source, false);
  if (!tour.layer_loss.empty() && tour.layer_loss != "value" && tour.layer_loss != "change") {
    throw ConfigError(source, "layer_loss",
                      "\"" + tour.layer_loss + "\" is not a per-layer loss mode (known: value, change)");
  }
}

std::vector<std::string> read_views(const nlohmann::json& document, const std::string& source) {
  const nlohmann::json views = document.value("views", nlohmann::json::array());
  if (!views.is_array()) throw ConfigError(source, "views", "expected a list of view ids");
  std::vector<std::string> read;
  for (const auto& view : views) {
    const std::string id = view.is_string() ? view.get<std::string>() : view.dump();
    const auto& ids = tour_view_ids();
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) {
      std::string known;
      for (const auto& name : ids) known += (known.empty() ? "" : ", ") + name;
      throw ConfigError(source, "views", "unknown view \"" + id + "\" (known: " + known + ")");
    }
    read.push_back(id);
  }
  return read;
}

// A run that branches from an earlier one of `earlier`: the parent's preset, size and overrides, then its own.
TourRun read_branch(const nlohmann::json& entry, TourRun run, const std::vector<TourRun>& earlier,
                    const std::string& source, const std::string& where) {
  const auto parent = std::find_if(earlier.begin(), earlier.end(),
                                   [&](const TourRun& candidate) { return candidate.label == run.branch_of; });
  if (parent == earlier.end() || !parent->example.empty()) {
    throw ConfigError(source, where + ".branch_of",
                      "\"" + run.branch_of + "\" is not the label of an earlier preset run of this tour");
  }
  const nlohmann::json step = entry.value("branch_step", nlohmann::json());
  if (!step.is_number_integer() || step.get<int64_t>() < 0) {
    throw ConfigError(source, where + ".branch_step", "expected the step (0 or more) of the parent's kept state");
  }
  run.branch_step = step.get<int64_t>();
  run.preset = parent->preset;
  run.size = parent->size;
  run.overrides = parent->overrides;
  const nlohmann::json set = entry.value("set", nlohmann::json::object());
  if (!set.is_object()) throw ConfigError(source, where + ".set", "expected an object of key: value");
  for (const auto& [key, value] : set.items()) run.overrides.push_back(key + "=" + value.dump());
  tour_run_config(run, "");
  return run;
}

std::vector<TourRun> read_runs(const nlohmann::json& document, const std::string& source) {
  const nlohmann::json runs = document.value("runs", nlohmann::json::array());
  if (!runs.is_array()) throw ConfigError(source, "runs", "expected a list of runs");
  std::vector<TourRun> read;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string where = "runs[" + std::to_string(i) + "]";
    const auto& entry = runs[i];
    if (!entry.is_object()) throw ConfigError(source, where, "expected an object");
    TourRun run;
    run.label = text_of(entry, "label", source + " " + where, true);
    run.branch_of = text_of(entry, "branch_of", source + " " + where, false);
    if (!run.branch_of.empty()) {
      read.push_back(read_branch(entry, run, read, source, where));
      continue;
    }
    run.example = text_of(entry, "example", source + " " + where, false);
    run.preset = text_of(entry, "preset", source + " " + where, run.example.empty());
    if (!run.example.empty() && !find_tour_example(run.example)) {
      throw ConfigError(source, where + ".example",
                        "unknown example \"" + run.example + "\" (known: cnn_fashion_mnist)");
    }
    const std::string size = text_of(entry, "size", source + " " + where, false);
    if (!size.empty()) run.size = size;
    const nlohmann::json set = entry.value("set", nlohmann::json::object());
    if (!set.is_object()) throw ConfigError(source, where + ".set", "expected an object of key: value");
    for (const auto& [key, value] : set.items()) run.overrides.push_back(key + "=" + value.dump());
    // The run's config must load exactly as the window and the CLI would load it (an example's in any folder).
    tour_run_config(run, "/examples/" + run.example);
    read.push_back(std::move(run));
  }
  return read;
}

}  // namespace

const TourExample* find_tour_example(const std::string& name) {
  // Few enough rows that a tour writes them in seconds and trains an epoch in under a minute on two cores.
  static const TourExample examples[] = {
      {"cnn_fashion_mnist", "cnn_fashion_mnist.py", "cnn.pt", "fashion-mnist.h5", "classification",
       "--train-rows 4096 --test-rows 1024"},
  };
  for (const auto& example : examples) {
    if (name == example.name) return &example;
  }
  return nullptr;
}

ExperimentConfig tour_run_config(const TourRun& run, const std::string& example_folder) {
  if (run.example.empty()) return load_experiment(run.preset, run.size, "", run.overrides);
  const TourExample* example = find_tour_example(run.example);
  if (!example) throw ConfigError("tour run " + run.label, "example", "unknown example \"" + run.example + "\"");
  nlohmann::json document = {{"name", run.example},
                             {"task", "torchscript"},
                             {"model", {{"file", example_folder + "/" + example->module}}},
                             {"data", {{"file", example_folder + "/" + example->data}, {"target", example->target}}}};
  for (const auto& assignment : run.overrides) apply_assignment(document, assignment);
  return ExperimentConfig::from_json(document, "tour run " + run.label);
}

Tour parse_tour(const std::string& json_text, const std::string& source) {
  const nlohmann::json document = tour_document(json_text, source);
  Tour tour;
  tour.name = text_of(document, "name", source, true);
  tour.title = text_of(document, "title", source, true);
  tour.caption = text_of(document, "caption", source, true);
  tour.watch = text_of(document, "watch", source, false);
  check_watch(tour.watch, source);
  tour.effect = text_of(document, "effect", source, false);
  read_view_settings(document, source, tour);
  tour.views = read_views(document, source);
  tour.runs = read_runs(document, source);
  return tour;
}

std::vector<Tour> tours() {
  std::vector<Tour> out;
  for (const auto* entry = generated::kTours; entry->name; ++entry) {
    out.push_back(parse_tour(entry->json, std::string("tour ") + entry->name));
  }
  return out;
}

Tour find_tour(const std::string& name) {
  std::string known;
  for (const auto* entry = generated::kTours; entry->name; ++entry) {
    if (name == entry->name) return parse_tour(entry->json, std::string("tour ") + entry->name);
    known += (known.empty() ? "" : ", ") + std::string(entry->name);
  }
  throw ConfigError("--tour", "", "unknown tour \"" + name + "\" (known: " + known + ")");
}

}  // namespace descentlab::config
