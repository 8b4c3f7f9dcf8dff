#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>

#include "core/runtime.h"
#include "core/tasks/dataset_tensors.h"
#include "core/util/error.h"
#include "test_support.h"

namespace descentlab {
namespace {

using descentlab::testing::fixture;

TEST(Tensors, ImageSetBecomesScaledFloatImagesAndLongLabels) {
  const auto set = data::read_image_set(fixture("idx/images-3x4x5-idx3-ubyte").string(),
                                        fixture("idx/labels-3-idx1-ubyte").string());
  const auto tensors = tasks::to_tensors(set);
  EXPECT_EQ(tensors.images.sizes(), (std::vector<int64_t>{3, 1, 4, 5}));
  EXPECT_EQ(tensors.images.scalar_type(), torch::kFloat32);
  EXPECT_FLOAT_EQ(tensors.images[1][0][1][0].item<float>(), static_cast<float>((37 + 5 * 11) % 256) / 255.0f);
  EXPECT_EQ(tensors.labels.scalar_type(), torch::kInt64);
  EXPECT_EQ(tensors.labels[2].item<int64_t>(), 9);
}

TEST(Tensors, EncodedReviewsKeepTheirShape) {
  data::EncodedReviews reviews;
  reviews.count = 2;
  reviews.max_length = 3;
  reviews.token_ids = {5, 6, 0, 7, 1, 1};
  reviews.lengths = {2, 3};
  reviews.labels = {1, 0};
  const auto tensors = tasks::to_tensors(reviews);
  EXPECT_EQ(tensors.token_ids.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(tensors.token_ids[1][0].item<int64_t>(), 7);
  EXPECT_EQ(tensors.lengths[1].item<int64_t>(), 3);
  reviews.token_ids[0] = 99;  // the tensor owns a copy
  EXPECT_EQ(tensors.token_ids[0][0].item<int64_t>(), 5);
}

TEST(Tensors, SpriteBatchMatchesTheGenerator) {
  data::SpriteVideoOptions options;
  options.frames = 4;
  options.height = options.width = 12;
  options.max_size = 6;
  const auto batch = tasks::sprite_video_batch(options, 2, 2);
  EXPECT_EQ(batch.sizes(), (std::vector<int64_t>{2, 4, 12, 12}));
  const auto clip = data::generate_sprite_video(options, 3);
  EXPECT_FLOAT_EQ(batch[1][2][5][6].item<float>(), clip.at(2, 5, 6));
}

TEST(Runtime, ThreadCountComesFromTheEnvironmentOrTheFallback) {
  unsetenv("DESCENTLAB_THREADS");
  EXPECT_EQ(threads_from_environment(3), 3);
  setenv("DESCENTLAB_THREADS", "2", 1);
  EXPECT_EQ(threads_from_environment(1), 2);
  setenv("DESCENTLAB_THREADS", "two", 1);
  EXPECT_THROW(threads_from_environment(1), Error);
  unsetenv("DESCENTLAB_THREADS");
}

TEST(Runtime, ConfigureThreadsSetsTorchThreadsAndReportsTheBackEnd) {
  configure_threads(2);
  EXPECT_EQ(at::get_num_threads(), 2);
  configure_threads(1);
  const auto info = runtime_info();
  EXPECT_EQ(info.threads, 1);
  EXPECT_FALSE(info.torch_version.empty());
  EXPECT_FALSE(info.blas.empty());
  EXPECT_THROW(configure_threads(0), Error);
  // A GPU in use implies a CUDA build of LibTorch, with its runtime named.
  if (info.cuda_available) {
    EXPECT_FALSE(info.cuda_runtime.empty());
  }
  const std::string text = runtime_text(info);
  for (const char* line : {"LibTorch: ", "CUDA runtime: ", "cuDNN: ", "CUDA devices: ", "BLAS: "})
    EXPECT_NE(text.find(line), std::string::npos) << line << " missing from\n" << text;
}

// The two shapes of at::show_config() a CUDA LibTorch prints (1.13 and 2.x put the loaded runtime on its own line
// and the build settings on one comma-separated line); a CPU build has neither.
TEST(Runtime, CudaAndCudnnVersionsAreReadFromLibTorchsConfiguration) {
  const std::string cuda_config =
      "PyTorch built with:\n  - GCC 11.2\n  - CUDA Runtime 12.8\n  - NVCC architecture flags: "
      "-gencode;arch=compute_90\n"
      "  - CuDNN 91.0.2  (built against CUDA 12.9)\n  - Build settings: BLAS_INFO=mkl, BUILD_TYPE=Release, "
      "CUDA_VERSION=12.8, CUDNN_VERSION=9.10.2, CXX_COMPILER=/opt/rh/gcc-toolset-11/root/usr/bin/c++, \n";
  EXPECT_EQ(config_value(cuda_config, "CUDA Runtime"), "12.8");
  EXPECT_EQ(config_value(cuda_config, "CUDA_VERSION="), "12.8");
  EXPECT_EQ(config_value(cuda_config, "CUDNN_VERSION="), "9.10.2");
  const std::string cpu_config =
      "PyTorch built with:\n  - GCC 12.2\n  - Build settings: BLAS_INFO=open, USE_CUDA=OFF,\n";
  EXPECT_EQ(config_value(cpu_config, "CUDA Runtime"), "");
  EXPECT_EQ(config_value(cpu_config, "CUDNN_VERSION="), "");
  EXPECT_EQ(config_value("x CUDA_VERSION=11.7", "CUDA_VERSION="), "11.7");  // at the very end
}

}  // namespace
}  // namespace descentlab
