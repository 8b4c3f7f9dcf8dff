#pragma once
// A built-in dataset written as a user's data file (issue 53; docs/your-model.md), behind a torch-free door:
// `descentlab-cli data export NAME OUT` builds the task of a preset (its subsample, split and normalisation) and
// writes exactly the tensors that task feeds its model, so that a user starts from a working file and a user's
// module trains on the same rows as the preset (examples/export_builtin_vit.py, ctest examples.same_engine).

#include <string>
#include <vector>

namespace descentlab::session {

struct DataExportRequest {
  std::string dataset;      // "fashion-mnist", "mnist", "moby-dick" or "imdb"
  std::string out;          // the data file to write
  std::string preset;       // "" = the dataset's own preset (default_export_preset)
  std::string config_file;  // instead of a preset: an experiment config file (JSON)
  std::string size = "full";
  std::vector<std::string> overrides;  // "key=value", after the preset's or the file's
  bool overwrite = false;
  std::string data_root;  // "" = the default data folder ($DESCENTLAB_DATA, ...)
};

struct DataExportOutcome {
  std::string experiment;   // the config's name ("vit-adamw-full")
  std::string description;  // the task's description of what it holds
};

// The datasets export_dataset writes, and the preset each is exported with by default: fashion-mnist and mnist
// vit-adamw (its ViT's images), moby-dick gpt-adamw (its windows), imdb text-erm (its tokens).
const std::vector<std::string>& exportable_datasets();
std::string default_export_preset(const std::string& dataset);

// Writes the data of the request's config to request.out (data/data_file_writer.h: a temporary name, then a
// rename). For a vit preset the config's data.dataset is the request's dataset; any other preset must train on it.
// Refused before anything is read: an unknown dataset, a preset of another dataset (ConfigError naming both), an
// existing out without `overwrite` (DataError naming it). A dataset not fetched, or whose files differ from their
// checksums, gives the fetch command (MissingDataError, DataError); a failed write an IoError naming out.
DataExportOutcome export_dataset(const DataExportRequest& request);

}  // namespace descentlab::session
