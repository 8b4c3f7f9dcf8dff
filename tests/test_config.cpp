// The experiment config's one field list (read and write), its closed choices, the metric vocabulary and the sweep
// statistics shared by the CLI and the window.
#include <gtest/gtest.h>

#include <cmath>

#include "core/config/experiment_config.h"
#include "core/config/json_reader.h"
#include "core/config/tours.h"
#include "core/record/metrics.h"
#include "core/record/noise.h"
#include "core/record/sweep_statistics.h"
#include "test_support.h"

namespace descentlab {
namespace {

using config::ConfigError;
using config::ExperimentConfig;
using config::find_tour;
using config::parse_tour;
using config::Tour;
using config::tours;

std::string error_of(const nlohmann::json& document) {
  try {
    ExperimentConfig::from_json(document, "test.json");
  } catch (const config::ConfigError& error) {
    return error.what();
  }
  return "";
}

TEST(Config, EveryPresetRoundTripsThroughItsJson) {
  for (const auto& name : config::preset_names()) {
    for (const char* size : {"quick", "full", "large"}) {
      const ExperimentConfig read = ExperimentConfig::from_json(config::preset_document(name, size), name);
      const nlohmann::json written = read.to_json();
      EXPECT_EQ(ExperimentConfig::from_json(written, name).to_json(), written) << name << " " << size;
      // Every key of the preset is in the written config with the preset's value.
      nlohmann::json preset = config::preset_document(name, size);
      nlohmann::json merged = written;
      merged.merge_patch(preset);
      EXPECT_EQ(merged, written) << name << " " << size;
    }
  }
}

TEST(Config, WrittenConfigHasEverySectionAndChoiceAsWords) {
  const nlohmann::json written = ExperimentConfig().to_json();
  for (const char* section : {"data", "model", "train", "constraints", "optimizer", "sparsity"}) {
    EXPECT_TRUE(written.contains(section)) << section;
  }
  EXPECT_EQ(written["task"], "text");
  EXPECT_EQ(written["train"]["device"], "auto");
  EXPECT_EQ(written["data"]["dataset"], "fashion-mnist");
  EXPECT_EQ(written["model"]["readout"], "shared");
  EXPECT_EQ(written["constraints"]["dual_update"], "batch");
  EXPECT_EQ(written["data"]["split_seed"], 0u);
  EXPECT_EQ(written["data"]["patch"], nlohmann::json::array({2, 4, 4}));
}

TEST(Config, ChoicesAreParsedOnceIntoEnums) {
  const auto config = ExperimentConfig::from_json(
      {{"task", "video"},
       {"model", {{"readout", "per_layer"}}},
       {"constraints", {{"enabled", true}, {"dual_update", "epoch"}, {"alpha_schedule", "linear"}}},
       {"train", {{"device", "cpu"}}}},
      "test.json");
  EXPECT_EQ(config.task, config::Task::video);
  EXPECT_EQ(config.model.readout, config::Readout::per_layer);
  EXPECT_EQ(config.constraints.dual_update, config::DualUpdate::epoch);
  EXPECT_EQ(config.constraints.alpha_schedule, config::AlphaSchedule::linear);
  EXPECT_EQ(config.train.device, config::Device::cpu);
  EXPECT_TRUE(config.is_layerwise());
  const auto vit = ExperimentConfig::from_json(
      {{"task", "vit"}, {"data", {{"dataset", "mnist"}}}, {"sparsity", {{"method", "acdc"}, {"units", "epochs"}}}},
      "test.json");
  EXPECT_EQ(vit.data.dataset, config::ImageDataset::mnist);
  EXPECT_EQ(vit.sparsity.method, config::SparsityMethod::acdc);
  EXPECT_EQ(vit.sparsity.units, config::PhaseUnits::epochs);
  EXPECT_FALSE(vit.is_layerwise());
}

TEST(Config, AWrongChoiceNamesTheKeyTheValueAndTheWords) {
  const std::string message = error_of({{"model", {{"readout", "perlayer"}}}});
  EXPECT_NE(message.find("test.json"), std::string::npos) << message;
  EXPECT_NE(message.find("model.readout"), std::string::npos) << message;
  EXPECT_NE(message.find("\"perlayer\""), std::string::npos) << message;
  EXPECT_NE(message.find("shared, per_layer"), std::string::npos) << message;
  EXPECT_NE(error_of({{"task", "audio"}}).find("text, video, vit, gpt"), std::string::npos);
  EXPECT_NE(error_of({{"train", {{"devcie", "cpu"}}}}).find("train.devcie"), std::string::npos);
  EXPECT_NE(error_of({{"model", {{"width", 10}, {"heads", 4}}}}).find("model.heads"), std::string::npos);
  EXPECT_THROW(config::require_choice<config::Device>("gpu", "--device"), Error);
  // What the video model would refuse at start is refused by the config, so the form's check is Start's.
  const std::string patch = error_of({{"task", "video"}, {"data", {{"patch", {2, 4, 5}}}}});
  EXPECT_NE(patch.find("data.patch: patch 5 must divide data.width (32)"), std::string::npos) << patch;
}

TEST(Config, DefaultsThatFollowOtherKeys) {
  const auto constraints = ExperimentConfig::from_json({{"constraints", {{"alpha", 0.2}}}}, "test.json");
  EXPECT_DOUBLE_EQ(constraints.constraints.alpha_final, 0.2);  // absent alpha_final: alpha
  const auto explicit_final =
      ExperimentConfig::from_json({{"constraints", {{"alpha", 0.2}, {"alpha_final", 0.4}}}}, "test.json");
  EXPECT_DOUBLE_EQ(explicit_final.constraints.alpha_final, 0.4);
  const auto horst = ExperimentConfig::from_json({{"task", "vit"}, {"optimizer", {{"name", "horst"}}}}, "test.json");
  EXPECT_DOUBLE_EQ(horst.optimizer.alpha, 5.0);
  EXPECT_DOUBLE_EQ(horst.optimizer.beta, 0.0);
  const auto ham =
      ExperimentConfig::from_json({{"task", "gpt"}, {"optimizer", {{"name", "ham"}, {"alpha", 50}}}}, "test.json");
  EXPECT_DOUBLE_EQ(ham.optimizer.alpha, 50.0);
  EXPECT_DOUBLE_EQ(ham.optimizer.beta, 1e-3);
}

// Issue 16: every number is read in a sane, finite range; the message names the key and the value as written.
TEST(Config, NumbersAreReadStrictlyNamingTheKeyAndTheValue) {
  // 2^64 - 1 was read through int64 and reported as -1.
  const std::string huge = error_of(nlohmann::json::parse(R"({"model": {"layers": 18446744073709551615}})"));
  EXPECT_NE(huge.find("model.layers: expected an integer in [1, 256], got 18446744073709551615"), std::string::npos)
      << huge;
  EXPECT_EQ(huge.find("-1"), std::string::npos) << huge;
  const std::string vector = error_of(nlohmann::json::parse(R"({"data": {"patch": [1, 18446744073709551615, 1]}})"));
  EXPECT_NE(vector.find("data.patch"), std::string::npos) << vector;
  // A seed is any unsigned 64-bit value, 2^64 - 1 included; a negative one is refused naming it.
  const auto seeded =
      ExperimentConfig::from_json(nlohmann::json::parse(R"({"train": {"seed": 18446744073709551615}})"), "test.json");
  EXPECT_EQ(seeded.train.seed, 18446744073709551615ull);
  EXPECT_EQ(seeded.to_json()["train"]["seed"].dump(), "18446744073709551615");
  EXPECT_NE(error_of({{"train", {{"seed", -1}}}}).find("train.seed: expected an integer in [0, 2^64 - 1], got -1"),
            std::string::npos);
  // dual_lr = 1e300 passed and overflowed in the dual step; the step sizes and costs now have finite bounds.
  const std::string dual = error_of({{"constraints", {{"dual_lr", 1e300}}}});
  EXPECT_NE(dual.find("constraints.dual_lr: expected a number in [0, 100], got 1e+300"), std::string::npos) << dual;
  for (const char* key : {"resilient_lr", "resilient_cost"}) {
    EXPECT_NE(error_of({{"constraints", {{key, 1e300}}}}).find(std::string("constraints.") + key), std::string::npos);
  }
  EXPECT_NE(error_of({{"train", {{"grad_clip", 1e300}}}}).find("train.grad_clip"), std::string::npos);
  // The live frontier's sparsities: numbers in [0, 1], ascending, at least one while it is on.
  const std::string outside = error_of(nlohmann::json::parse(R"({"sparsity": {"frontier_sparsities": [0.5, 1.5]}})"));
  EXPECT_NE(outside.find("sparsity.frontier_sparsities: expected numbers in [0, 1], got [0.5,1.5]"), std::string::npos)
      << outside;
  EXPECT_NE(error_of(nlohmann::json::parse(R"({"sparsity": {"frontier_sparsities": [0.9, 0.5]}})"))
                .find("sparsity.frontier_sparsities: must be ascending"),
            std::string::npos);
  EXPECT_NE(error_of(nlohmann::json::parse(R"({"sparsity": {"frontier_sparsities": []}})")).find("at least one"),
            std::string::npos);
  EXPECT_NO_THROW(ExperimentConfig::from_json(
      nlohmann::json::parse(R"({"sparsity": {"frontier_sparsities": [], "frontier_interval": 0}})"), "test.json"));
  // Issue 18: the schedule's shape is one of three words, the warm-up a fraction below 1 or whole steps.
  const std::string shape = error_of({{"train", {{"lr_schedule", "step"}}}});
  EXPECT_NE(shape.find("train.lr_schedule: expected one of constant, cosine, linear, got \"step\""), std::string::npos)
      << shape;
  const std::string fraction = error_of({{"train", {{"warmup", 1.5}}}});
  EXPECT_NE(fraction.find("train.warmup: a fraction of the run must be below 1, a number of steps whole"),
            std::string::npos)
      << fraction;
  EXPECT_NE(error_of({{"train", {{"warmup", -0.1}}}}).find("train.warmup"), std::string::npos);
  const auto scheduled = ExperimentConfig::from_json(
      nlohmann::json::parse(R"({"train": {"lr_schedule": "cosine", "warmup": 0.05}})"), "test.json");
  EXPECT_EQ(scheduled.train.lr_schedule, config::LrShape::cosine);
  EXPECT_EQ(scheduled.train.warmup, 0.05);
  EXPECT_EQ(scheduled.to_json()["train"]["lr_schedule"], "cosine");
  // Without the keys (every run file written before them): a constant rate, no warm-up.
  const auto old = ExperimentConfig::from_json(nlohmann::json::parse(R"({"train": {"lr": 0.01}})"), "old.h5");
  EXPECT_EQ(old.train.lr_schedule, config::LrShape::constant);
  EXPECT_EQ(old.train.warmup, 0.0);
}

// Issue 16: `--config DIR` gave a raw stream error; a missing file, a folder and bad JSON each name the file.
TEST(Config, AConfigFileThatCannotBeReadIsNamed) {
  testing::ScratchFolder folder;
  const auto message = [](const std::string& path) {
    try {
      config::load_experiment("", "quick", path, {});
    } catch (const config::ConfigError& error) {
      return std::string(error.what());
    }
    return std::string("no ConfigError");
  };
  const std::string directory = message(folder.path().string());
  EXPECT_NE(directory.find(folder.path().string() + ": is a folder"), std::string::npos) << directory;
  const std::string missing = message((folder / "absent.json").string());
  EXPECT_NE(missing.find("absent.json: no such config file"), std::string::npos) << missing;
  testing::write_bytes(folder / "bad.json", "{\"task\": \"video\",\n");
  const std::string bad = message((folder / "bad.json").string());
  EXPECT_NE(bad.find("bad.json: not valid JSON: "), std::string::npos) << bad;
  EXPECT_NE(bad.find("line 2"), std::string::npos) << bad;
  testing::write_bytes(folder / "good.json", R"({"task": "video", "model": {"layers": 2}})");
  EXPECT_EQ(config::load_experiment("", "quick", (folder / "good.json").string(), {}).model.layers, 2);
}

// Issue 16: sweep, prune and resume printed a bare JSON parse error for a damaged stored configuration.
TEST(Config, AStoredConfigThatIsNotJsonNamesTheRunFile) {
  try {
    config::stored_config("{\"task\": ", "runs/a.h5");
    FAIL() << "expected DataError";
  } catch (const DataError& error) {
    EXPECT_EQ(error.path(), "runs/a.h5");
    EXPECT_NE(std::string(error.what())
                  .find("runs/a.h5: the stored configuration (attribute \"config\") is not "
                        "valid JSON"),
              std::string::npos)
        << error.what();
  }
  try {
    config::stored_config(R"({"model": {"layers": 0}})", "runs/a.h5");
    FAIL() << "expected ConfigError";
  } catch (const config::ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("runs/a.h5 (stored configuration): model.layers"), std::string::npos)
        << error.what();
  }
}

TEST(Config, ChoiceKeysListEveryClosedChoiceForTheWindow) {
  const auto keys = config::choice_keys();
  EXPECT_EQ(keys.size(), 14u);  // task and thirteen in the sections
  EXPECT_EQ(keys.at("train.lr_schedule"), (std::vector<std::string>{"constant", "cosine", "linear"}));
  EXPECT_EQ(keys.at("data.dataset"), (std::vector<std::string>{"fashion-mnist", "mnist"}));
  EXPECT_EQ(keys.at("optimizer.name"), (std::vector<std::string>{"adamw", "ham", "horst"}));
  EXPECT_EQ(keys.at("train.device"), (std::vector<std::string>{"auto", "cpu", "cuda"}));
  EXPECT_EQ(keys.at("task"),
            (std::vector<std::string>{"text", "video", "vit", "gpt", "torchscript", "torchscript-layerwise"}));
  EXPECT_EQ(keys.at("data.target"), (std::vector<std::string>{"classification", "regression", "next-token"}));
}

// Issue 53: the torchscript task names both files, and refuses a config that leaves either out.
TEST(Config, TheTorchscriptTaskNeedsItsModuleAndDataFiles) {
  const auto loaded = config::ExperimentConfig::from_json(
      {{"task", "torchscript"}, {"model", {{"file", "m.pt"}}}, {"data", {{"file", "d.h5"}, {"target", "regression"}}}},
      "mine.json");
  EXPECT_STREQ(config::metric_of(loaded), "rmse");
  try {
    config::ExperimentConfig::from_json({{"task", "torchscript"}, {"model", {{"file", "m.pt"}}}}, "mine.json");
    FAIL() << "expected ConfigError";
  } catch (const config::ConfigError& error) {
    EXPECT_NE(std::string(error.what())
                  .find("mine.json: data.file: the torchscript task trains a module file on a "
                        "data file"),
              std::string::npos)
        << error.what();
  }
}

// Issue 17: every built-in tour loads (its runs' configs included), and a wrong tour is named with its key.
TEST(Tours, EveryBuiltInTourLoadsAndAWrongOneIsNamed) {
  for (const Tour& tour : tours()) {
    EXPECT_FALSE(tour.title.empty()) << tour.name;
    EXPECT_FALSE(tour.caption.empty()) << tour.name;
    EXPECT_FALSE(tour.watch.empty()) << tour.name;  // the caption bar's one sentence (its length is checked)
    EXPECT_FALSE(tour.views.empty()) << tour.name;
    EXPECT_EQ(find_tour(tour.name).title, tour.title);
  }
  const Tour pair = parse_tour(
      R"({"name": "t", "title": "T", "caption": "c", "views": ["layer_loss"],
          "runs": [{"label": "ERM", "preset": "video-erm", "set": {"model.layers": 6, "train.epochs": 1}}]})",
      "test tour");
  ASSERT_EQ(pair.runs.size(), 1u);
  EXPECT_EQ(pair.runs[0].size, "quick");
  EXPECT_EQ(pair.runs[0].overrides, (std::vector<std::string>{"model.layers=6", "train.epochs=1"}));
  const auto error_of_tour = [](const std::string& text) {
    try {
      parse_tour(text, "test tour");
    } catch (const ConfigError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of_tour(R"({"name": "t", "title": "T", "caption": "c", "views": ["nowhere"]})")
                .find("test tour: views: unknown view \"nowhere\""),
            std::string::npos);
  EXPECT_NE(error_of_tour(R"({"name": "t", "title": "T", "caption": "c", "views": [],
                             "runs": [{"label": "a", "preset": "video-erm", "set": {"model.layerz": 2}}]})")
                .find("model.layerz"),
            std::string::npos);
  EXPECT_NE(error_of_tour(R"({"name": "t", "title": "T", "caption": "c", "views": [], "curves": "lambda"})")
                .find("test tour: curves: \"lambda\" is not a scalar series"),
            std::string::npos);
  EXPECT_EQ(find_tour("masks-settle").curves, "mask_churn");
  // The per-layer view's mode: descent-breaks shows the change from the layer before, where ERM's rise is visible.
  EXPECT_EQ(find_tour("descent-breaks").layer_loss, "change");
  EXPECT_NE(error_of_tour(R"({"name": "t", "title": "T", "caption": "c", "views": [], "layer_loss": "delta"})")
                .find("test tour: layer_loss: \"delta\" is not a per-layer loss mode (known: value, change)"),
            std::string::npos);
  // 160 characters (λ counts as one) load; 161 are named with their count.
  std::string watch = "λ";
  watch += std::string(159, 'w');
  EXPECT_EQ(
      parse_tour(R"({"name": "t", "title": "T", "caption": "c", "watch": ")" + watch + R"("})", "test tour").watch,
      watch);
  EXPECT_NE(error_of_tour(R"({"name": "t", "title": "T", "caption": "c", "watch": ")" + watch + R"(w"})")
                .find("test tour: watch: 161 characters; at most 160"),
            std::string::npos);
  EXPECT_NE(error_of_tour(R"({"title": "T", "caption": "c"})").find("test tour: name: missing"), std::string::npos);
  EXPECT_NE(error_of_tour("{").find("not valid JSON"), std::string::npos);
  EXPECT_THROW(find_tour("no-such-tour"), ConfigError);
}

// Issue 33: a description stated values a tour's form did not hold (α 50 described, 5 set). Descriptions name the
// values by key; filled, every placeholder is a value.
TEST(Presets, DescriptionsStateTheirValuesByKey) {
  EXPECT_NE(config::preset_description_template("gpt-horst").find("{optimizer.alpha}"), std::string::npos);
  EXPECT_NE(config::preset_description("gpt-horst").find("α = 50, lr 0.001"), std::string::npos)
      << config::preset_description("gpt-horst");
  for (const auto& name : config::preset_names()) {
    const std::string filled = config::preset_description(name);
    EXPECT_FALSE(filled.empty()) << name;
    EXPECT_EQ(filled.find('{'), std::string::npos) << name << ": " << filled;
  }
  EXPECT_EQ(
      config::fill_description("a {x.y} b {unknown} c",
                               [](const std::string& key) { return key == "x.y" ? std::string("1") : std::string(); }),
      "a 1 b {unknown} c");
}

TEST(MetricVocabulary, KnowsEveryEngineSeriesOnce) {
  for (size_t i = 0; i < std::size(record::kMetricVocabulary); ++i) {
    for (size_t j = i + 1; j < std::size(record::kMetricVocabulary); ++j) {
      EXPECT_NE(record::kMetricVocabulary[i].name, record::kMetricVocabulary[j].name);
    }
    EXPECT_FALSE(record::kMetricVocabulary[i].display.empty());
    EXPECT_FALSE(record::kMetricVocabulary[i].meaning.empty());
  }
  for (auto task : {config::Task::text, config::Task::video, config::Task::vit, config::Task::gpt}) {
    const auto* info = record::find_metric(record::test_series(config::task_metric(task)));
    ASSERT_NE(info, nullptr) << config::word(task);
    EXPECT_NE(info->better, record::Direction::Neither);
  }
  EXPECT_EQ(record::find_metric("lambda")->shape, record::SeriesShape::PerLayer);
  EXPECT_EQ(record::display_name("loss"), "training loss");
  EXPECT_EQ(record::display_name("something_new"), "something new");
  record::SeriesShape shape{};
  EXPECT_TRUE(record::parse_shape_word("per_threshold", shape));
  EXPECT_EQ(shape, record::SeriesShape::PerThreshold);
  EXPECT_TRUE(record::parse_shape_word("per_sparsity", shape));
  EXPECT_EQ(shape, record::SeriesShape::PerSparsity);
  EXPECT_EQ(record::find_metric(record::frontier_series("perplexity"))->better, record::Direction::Lower);
  EXPECT_FALSE(record::parse_shape_word("matrix", shape));
}

TEST(NoiseVocabulary, EachModelTakesItsOwnKindsAndTheFirstIsItsDefault) {
  EXPECT_EQ(record::noise_kinds(false), (std::vector<std::string>{"gaussian", "uniform", "discrete"}));
  EXPECT_EQ(record::noise_kinds(true), (std::vector<std::string>{"video"}));
  EXPECT_EQ(record::all_noise_kinds().size(), 4u);
  EXPECT_EQ(record::default_noise(false), record::noise::kGaussian);
  EXPECT_EQ(record::default_noise(true), record::noise::kVideo);
  EXPECT_EQ(record::noise_list(false), "gaussian, uniform, discrete");
  EXPECT_TRUE(record::noise_applies("discrete", false));
  EXPECT_FALSE(record::noise_applies("discrete", true));
  EXPECT_FALSE(record::noise_applies("video", false));
  EXPECT_FALSE(record::noise_applies("salt", false));
}

TEST(SweepStatistics, MeanAndSampleStandardDeviationPerStrength) {
  record::SweepResult sweep;
  sweep.gamma = {0.0, 1.0};
  sweep.seeds = {0, 1, 2, 3};
  sweep.metric = {1, 2, 3, 4, 0.9, 0.9, 0.9, 0.9};
  sweep.layers = 2;
  sweep.layer_loss = {1, 2, 1, 2, 1, 2, 1, 2, 0, 4, 2, 4, 4, 4, 2, 4};
  const auto rows = record::sweep_statistics(sweep);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[0].metric.mean, 2.5);
  EXPECT_NEAR(rows[0].metric.std, std::sqrt(5.0 / 3.0), 1e-15);
  EXPECT_NEAR(rows[1].metric.mean, 0.9, 1e-15);
  // The sum-of-squares formula gives sqrt of a tiny negative or positive number here; deviations give 0.
  EXPECT_LT(rows[1].metric.std, 1e-15);
  EXPECT_EQ(rows[0].layer_loss_mean, (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(rows[1].layer_loss_mean, (std::vector<double>{2.0, 4.0}));
  const double one = 0.7;
  EXPECT_EQ(record::seed_statistics(&one, 1).std, 0.0);
  EXPECT_EQ(record::seed_statistics(&one, 1).mean, 0.7);
}

}  // namespace
}  // namespace descentlab
