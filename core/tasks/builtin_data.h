#pragma once
// A built-in dataset as the lab's own task feeds it to its model, for `descentlab-cli data export` (issue 53): the
// task is built from the config (its subsample, split and normalisation) and asked for every training row and the
// whole evaluation set through its own train_batch and test_batch, so the file holds exactly the tensors a run of the
// config trains and evaluates on:
//   vit (mnist, fashion-mnist): images float32 [N, 1, 28, 28] normalised with the training rows' mean and std,
//     labels int64 [N]; classification;
//   gpt (moby-dick): windows of data.context characters, x and y int64 [N, T] (y: the character after each of x's);
//     next-token, with the vocabulary and its characters;
//   text (imdb): token ids int64 [N, max_length] (0: padding), labels int64 [N]; classification.

#include <torch/types.h>

#include <cstdint>
#include <string>

#include "core/config/experiment_config.h"
#include "core/data/data_file.h"

namespace descentlab::tasks {

struct BuiltinData {
  data::DataTask task = data::DataTask::classification;
  int64_t classes = 0;
  int64_t vocabulary = 0;   // next-token: the characters' vocabulary; text: the words' (token inputs)
  std::string characters;   // next-token: the character of each token 1..V-1, UTF-8
  std::string description;  // the task's own description ("fashion-mnist: 6000 train / 2000 evaluation images...")
  torch::Tensor train_x, train_y, test_x, test_y;  // on the CPU, contiguous, float32 or int64
};

// The data of `config`'s task (vit, gpt or text) from the dataset cache at `data_root`. Throws MissingDataError
// naming the dataset and the fetch command when it is absent, and Error for a task without a dataset (video, a
// user's own).
BuiltinData builtin_data(const config::ExperimentConfig& config, const std::string& data_root);

}  // namespace descentlab::tasks
