#include "core/tasks/builtin_data.h"

#include <torch/torch.h>

#include <numeric>

#include "core/data/catalog.h"
#include "core/data/corpus.h"
#include "core/tasks/layerwise_task.h"
#include "core/tasks/sparse_task.h"
#include "core/util/error.h"

namespace descentlab::tasks {
namespace {

std::vector<int64_t> every_row(int64_t rows) {
  std::vector<int64_t> indices(static_cast<size_t>(rows));
  std::iota(indices.begin(), indices.end(), int64_t{0});
  return indices;
}

// Every training row and the whole evaluation set, as the task hands them to its model.
template <typename Task>
void take_batches(Task& task, BuiltinData& out) {
  const Batch train = task.train_batch(every_row(task.train_size()));
  const Batch test = task.test_batch(0, task.test_size());
  out.train_x = train.input.contiguous();
  out.train_y = train.target.contiguous();
  out.test_x = test.input.contiguous();
  out.test_y = test.target.contiguous();
  out.description = task.describe();
}

// The characters of tokens 1..V-1 of the vocabulary the gpt task builds (token 0 stands for any unseen one).
std::string vocabulary_characters(const data::CharVocabulary& vocabulary) {
  std::u32string characters;
  for (int64_t id = 1; id < vocabulary.size(); ++id) characters += vocabulary.character(static_cast<int32_t>(id));
  return data::encode_utf8(characters);
}

}  // namespace

BuiltinData builtin_data(const config::ExperimentConfig& config, const std::string& data_root) {
  BuiltinData out;
  const torch::Device cpu(torch::kCPU);
  if (config.task == config::Task::vit) {
    const auto task = make_sparse_task(config, data_root, cpu);
    take_batches(*task, out);
    // The classes the ViT's head has (VitTask: the largest label of either split plus one).
    out.classes = std::max(out.train_y.max().item<int64_t>(), out.test_y.max().item<int64_t>()) + 1;
    return out;
  }
  if (config.task == config::Task::gpt) {
    const auto task = make_sparse_task(config, data_root, cpu);
    take_batches(*task, out);
    out.task = data::DataTask::next_token;
    // The vocabulary make_sparse_task builds: the training split's characters.
    const data::CharSplit split = data::split_corpus(data::load_moby_dick(data_root).text);
    const auto vocabulary = data::CharVocabulary::build(split.train);
    out.vocabulary = vocabulary.size();
    out.characters = vocabulary_characters(vocabulary);
    return out;
  }
  if (config.task == config::Task::text) {
    const auto task = make_task(config, data_root, cpu);
    auto& text = dynamic_cast<TextTask&>(*task);
    take_batches(text, out);
    out.classes = 2;  // negative, positive (TextTask's model has two outputs)
    out.vocabulary = text.vocabulary_size();
    return out;
  }
  throw Error("the task \"" + config::word(config.task) +
              "\" has no built-in dataset to export (known: vit, gpt, text)");
}

}  // namespace descentlab::tasks
