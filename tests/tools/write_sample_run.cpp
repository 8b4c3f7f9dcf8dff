// Writes a complete sample run file (every group, a real LibTorch module checkpoint) for the CLI and Python checks.
// Usage: descentlab_write_sample_run PATH [--unfolded]

#include <torch/torch.h>

#include <cstdlib>
#include <iostream>
#include <string>

#include "../run_file_samples.h"
#include "core/store/run_writer.h"
#include "core/train/checkpoint_tensors.h"

int main(int argc, char** argv) {
  const bool unfolded = argc == 3 && std::string(argv[2]) == "--unfolded";
  if (argc != 2 && !unfolded) {
    std::cerr << "usage: descentlab_write_sample_run PATH [--unfolded]\n";
    return 2;
  }
  using namespace descentlab;
  try {
    store::RunWriterOptions options;
    options.flush_interval_seconds = 0;
    options.overwrite = true;
    auto writer = store::RunWriter::create(argv[1], testing::sample_header(), options);
    const auto save_checkpoints = [&] {
      torch::manual_seed(0);
      torch::nn::Sequential model(torch::nn::Linear(4, 3), torch::nn::ReLU(), torch::nn::Linear(3, 2));
      record::CheckpointData checkpoint = testing::sample_checkpoint(100);
      checkpoint.sections["model"] = train::module_state(*model);
      writer->save_checkpoint("latest", checkpoint);
      writer->save_checkpoint("best", testing::sample_checkpoint(80));
    };
    // --unfolded: the checkpoints first, then every row, snapshot and sweep committed to the run log (RUN.h5.log),
    // and the writer dies before it folds them in, as a run being written (or killed) leaves its files.
    if (unfolded) save_checkpoints();
    for (int64_t step = 1; step <= 100; ++step) {
      const double wall = 1.8e9 + static_cast<double>(step);
      writer->scalar("loss", step, wall, 2.0 / static_cast<double>(step));
      writer->vector("layer_loss", step, wall, {0.69, 0.5, 0.25 + 1.0 / static_cast<double>(step)});
      if (step % 25 == 0) writer->histogram(testing::sample_histogram(step));
      if (unfolded && step % 20 == 0) writer->flush();
    }
    writer->sweep(testing::sample_sweep());
    if (unfolded) {
      writer->flush();
      std::cout.flush();
      std::_Exit(0);
    }
    save_checkpoints();
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
