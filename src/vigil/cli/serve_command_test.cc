// `vigil serve` and its GPU keys end to end: --gpu and a configuration's gpu section reach the
// server, which refuses to start without a usable GPU (exit 2, the key and the reason on
// standard error), and bad gpu values are reported naming their key.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/model/cuda/cuda_scorer.h"
#include "vigil/testing/files.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

class ServeCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/serve_command_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "_",
                        getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // `vigil serve` on a loopback port with the test model and the default policy, plus "args";
  // its exit code, with standard output and error in *out.
  int Serve(const std::vector<std::string>& args, std::string* out) const {
    const std::string source = testing::SourceDir();
    std::vector<std::string> argv = {"serve",
                                     "--listen",
                                     "127.0.0.1:0",
                                     "--data-dir",
                                     dir_ + "/data",
                                     "--model",
                                     testing::TestDataPath("models/serve_model.json"),
                                     "--policy",
                                     source + "/policies/default.yaml",
                                     "--lists",
                                     source + "/policies/lists",
                                     "--fx-rates",
                                     source + "/data/fx_rates.csv",
                                     "--log",
                                     dir_ + "/serve.log",
                                     "--plaintext",
                                     "--auth",
                                     "none"};
    argv.insert(argv.end(), args.begin(), args.end());
    const int code = testing::RunProcess(VIGIL_BINARY, argv, dir_ + "/out");
    *out = testing::ReadFile(dir_ + "/out");
    return code;
  }
  std::string WriteConfig(const std::string& text) const {
    const std::string path = dir_ + "/serve.yaml";
    std::ofstream(path) << text;
    return path;
  }

  std::string dir_;
};

TEST_F(ServeCommandTest, GpuFlagWithoutAUsableGpuRefusesToStart) {
  // With a usable GPU this server would start and run until stopped (the GPU path is covered
  // by the server's own tests).
  if (ProbeCudaDevice(0).ok()) GTEST_SKIP() << "a usable GPU is present";
  std::string out;
  EXPECT_EQ(Serve({"--gpu"}, &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("vigil serve: gpu.enabled: the CUDA backend cannot start: "));
  EXPECT_THAT(out, AnyOf(HasSubstr("no CUDA device"), HasSubstr("VIGIL_ENABLE_CUDA")));
  EXPECT_THAT(out, Not(HasSubstr("listening on")));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/data"));
}

TEST_F(ServeCommandTest, GpuSectionWithoutAUsableGpuRefusesToStart) {
  // With a usable GPU this server would start and run until stopped (the GPU path is covered
  // by the server's own tests).
  if (ProbeCudaDevice(0).ok()) GTEST_SKIP() << "a usable GPU is present";
  const std::string config =
      WriteConfig("gpu:\n  enabled: true\n  device: 0\n  min_rows: {P0: never, P1: 256, P2: 64}\n"
                  "  timeout_ms: 5\n");
  std::string out;
  EXPECT_EQ(Serve({"--config", config}, &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("vigil serve: gpu.enabled: the CUDA backend cannot start: "));
  // --gpu-device is merged into the file's section (and the refusal is the same).
  EXPECT_EQ(Serve({"--config", config, "--gpu-device", "1"}, &out), 2) << out;
  EXPECT_THAT(out, AnyOf(HasSubstr("vigil serve: gpu.enabled: "),
                         HasSubstr("vigil serve: gpu.device: ")));
}

TEST_F(ServeCommandTest, BadGpuValuesAreNamed) {
  std::string out;
  const std::string bad = WriteConfig("gpu:\n  enabled: true\n  min_rows: {P1: 0}\n");
  EXPECT_EQ(Serve({"--config", bad}, &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("serve.yaml:3:18: gpu.min_rows.P1: must be a positive integer or "
                             "never"));
  EXPECT_EQ(Serve({"--gpu", "--gpu-device", "-1"}, &out), 2) << out;
  EXPECT_THAT(out, HasSubstr("--gpu-device (gpu.device): must be a whole number from 0 to 1023"));
}

}  // namespace
}  // namespace vigil
