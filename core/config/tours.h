#pragma once
// Tours (issue 17): one click in the lab (Help > Tours, `descentlab --tour NAME`) starts a prepared pair or trio of
// runs, brings the views that show the effect to the front, and shows a caption saying what to watch and what it
// means. Each tour is a JSON file in resources/tours/, compiled in; docs/tours.md gives each tour's effect as
// measured over seeds by scripts/tours.sh. Torch-free: the window's bridge reads these.
//
// File format:
//   {"name": "descent-breaks", "title": "...", "watch": "one sentence", "caption": "...",
//    "effect": "what the measurement checks",
//    "runs": [{"label": "ERM", "preset": "text-erm", "size": "quick", "set": {"model.layers": 8}}, ...],
//    "views": ["layer_loss", "lambda"], "curves": "mask_churn", "seeds": [0, 1, 2, 3, 4]}
// A run may be a branch of an earlier one: {"label": "constrained from step 32", "branch_of": "ERM",
// "branch_step": 32, "set": {"constraints.enabled": true}} (the parent keeps that step: its train.keep_interval).
// "curves" (optional) is the scalar series the central training-curves view shows (default: the training loss).
// "layer_loss" (optional): what the per-layer loss view plots, "value" (f_l, the default) or "change" (f_l - f_(l-1),
// the change from the layer before: a rise of a few thousandths of a nat is invisible on an axis spanning f_0's 2
// nats). A tour without runs (the playground's) only brings its views forward. "watch" (optional, at most
// kTourWatchMaxLength characters) is the one sentence the window's caption bar shows until the user asks for the whole
// caption: on a 1024x700 screen the whole caption filled the narrow middle column.

#include <cstddef>
#include <string>
#include <vector>

#include "core/config/experiment_config.h"

namespace descentlab::config {

struct TourRun {
  std::string label;   // what the window calls the run ("ERM", "constrained")
  std::string preset;  // a built-in preset, or "" for an example's run
  // An example of examples/ ("cnn_fashion_mnist", a user's model and data; docs/your-model.md): the run trains the
  // module and data file its script writes, as the "your-model" experiment of the window does (task torchscript).
  std::string example;
  std::string size = "quick";          // quick | full
  std::vector<std::string> overrides;  // "key=value" as --set takes them (values as JSON text)
  // A branch (issue 55): the label of an earlier run of the tour it continues, and the step of that run's kept state
  // it starts from ("branch_of", "branch_step" in the file). It takes the parent's preset, size and overrides, then
  // its own "set" (the settings a branch may change); it starts once the parent has kept that step.
  std::string branch_of;
  int64_t branch_step = -1;
};

inline constexpr size_t kTourWatchMaxLength = 160;

struct Tour {
  std::string name;
  std::string title;
  std::string watch;    // what to watch, one sentence ("" shows the whole caption)
  std::string caption;  // what to watch and what it means, in full
  std::string effect;
  std::vector<TourRun> runs;
  std::string curves;      // a scalar series of the metric vocabulary, or "" (training loss)
  std::string layer_loss;  // "value", "change" or "" (the view's choice stays)
  // The seeds docs/tours.md measured the effect over (scripts/tours.sh; "seeds" in the file, default 0 1 2): the
  // window can run a tour with all of them, each run a group of seeds.
  std::vector<int> seeds = {0, 1, 2};
  std::vector<std::string> views;  // training_curves, test_metric, layer_loss, lambda, weight_geometry, robustness,
                                   // frontier, playground
};

// An example script of examples/ that a tour trains: what it writes, and the arguments it is run with for a tour.
struct TourExample {
  const char* name;       // "cnn_fashion_mnist"
  const char* script;     // "cnn_fashion_mnist.py"
  const char* module;     // "cnn.pt"
  const char* data;       // "fashion-mnist.h5"
  const char* target;     // the data file's task
  const char* arguments;  // "--train-rows 4096 --test-rows 1024"
};
// The example called `name`; nullptr when there is none.
const TourExample* find_tour_example(const std::string& name);
// The config of a tour's run: its preset with the overrides, or for an example's run its files in `example_folder`
// (where the example's script wrote them) with the overrides. Throws ConfigError naming the key.
ExperimentConfig tour_run_config(const TourRun& run, const std::string& example_folder);

// The view ids a tour may name.
const std::vector<std::string>& tour_view_ids();

// Every built-in tour, in file-name order; each one checked: its keys, its views, and every run's config loads.
// Throws ConfigError naming the tour and the key when one is wrong (a test loads them all).
std::vector<Tour> tours();
// The tour called `name`; ConfigError listing the known names when there is none.
Tour find_tour(const std::string& name);
// Parses one tour document (`source` names it in errors); checks its runs' configs as tours() does.
Tour parse_tour(const std::string& json_text, const std::string& source);

}  // namespace descentlab::config
