// Runs the built kimi-engine binary the way other tests and scripts will: exit statuses, output,
// and a synth -> info round trip.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace {

struct CliRun {
  int status;
  std::string output;  // stdout and stderr
};

CliRun Engine(const std::string& args) {
  const char* build = std::getenv("KIMI_BUILD_DIR");
  std::string cmd = std::string(build ? build : ".") + "/engine/kimi-engine " + args + " 2>&1";
  CliRun r{-1, ""};
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int raw = pclose(p);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

TEST(KimiEngineCli, HelpAndUsageErrors) {
  CliRun help = Engine("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.output.find("synth"), std::string::npos);
  EXPECT_NE(help.output.find("info"), std::string::npos);
  EXPECT_EQ(Engine("").status, 2);
  CliRun unknown = Engine("frobnicate");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.output.find("unknown command 'frobnicate'"), std::string::npos);
  CliRun missing = Engine("synth --out /tmp/x");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.output.find("--preset is required"), std::string::npos);
  CliRun bad_preset = Engine("synth --preset k3-giant --out /tmp/x");
  EXPECT_EQ(bad_preset.status, 2);
  EXPECT_NE(bad_preset.output.find("k3-nano"), std::string::npos);  // lists the known presets
  EXPECT_EQ(Engine("info --model /nonexistent/dir").status, 1);
  EXPECT_EQ(Engine("info --preset k3-full-shape --bandwidth fast").status, 2);
  EXPECT_EQ(Engine("info --preset k3-full-shape --bandwidth -5").status, 2);
  CliRun full = Engine("info --preset k3-full-shape --bandwidth 600");
  EXPECT_EQ(full.status, 0) << full.output;
  EXPECT_NE(full.output.find("weight bytes read per decoded token, by part"), std::string::npos) << full.output;
  EXPECT_NE(full.output.find("decode at 600.0 GB/s: at most"), std::string::npos) << full.output;
  EXPECT_EQ(Engine("synth --help").status, 0);
  CliRun keep_alive = Engine("serve --model /nonexistent --port 0 --keep-alive-timeout 0");
  EXPECT_EQ(keep_alive.status, 2);
  EXPECT_NE(keep_alive.output.find("--keep-alive-timeout must be between 1 and 3600 seconds"), std::string::npos)
      << keep_alive.output;
}

TEST(KimiEngineCli, SynthThenInfo) {
  auto dir = std::filesystem::temp_directory_path() / ("kimi_cli_nano_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  CliRun synth = Engine("synth --preset k3-nano --out " + dir.string() + " --seed 3");
  ASSERT_EQ(synth.status, 0) << synth.output;
  EXPECT_NE(synth.output.find("636 tensors"), std::string::npos) << synth.output;
  CliRun info = Engine("info --model " + dir.string());
  ASSERT_EQ(info.status, 0) << info.output;
  EXPECT_NE(info.output.find("validated"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("KKKMKM"), std::string::npos) << info.output;
  // Damage a shard: info must fail, naming the file.
  auto shard = dir / "model-00003-of-00006.safetensors";
  std::filesystem::resize_file(shard, 20);
  CliRun broken = Engine("info --model " + dir.string());
  EXPECT_EQ(broken.status, 1);
  EXPECT_NE(broken.output.find("model-00003-of-00006.safetensors"), std::string::npos) << broken.output;
  std::filesystem::remove_all(dir);
}

// quantize: usage errors exit 2, models it cannot quantise exit 1 with the reason (printed with
// its code first, as every subcommand prints its errors), a good run
// writes a model that info validates and a second quantisation refuses.
TEST(KimiEngineCli, QuantizeErrorsAndRoundTrip) {
  auto dir = std::filesystem::temp_directory_path() / ("kimi_cli_quantize_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const std::string nano = (dir / "nano").string(), int8 = (dir / "int8").string();
  ASSERT_EQ(Engine("synth --preset k3-nano --out " + nano).status, 0);
  CliRun scheme = Engine("quantize --in " + nano + " --out " + int8 + " --scheme int4");
  EXPECT_EQ(scheme.status, 2);
  EXPECT_NE(scheme.output.find("kimi-engine quantize: InvalidArgument: --scheme: unknown scheme 'int4' (choose int8 or "
                               "mxfp4-dense)"),
            std::string::npos)
      << scheme.output;
  CliRun no_out = Engine("quantize --in " + nano + " --scheme int8");
  EXPECT_EQ(no_out.status, 2);
  EXPECT_NE(no_out.output.find("--out is required"), std::string::npos) << no_out.output;
  CliRun missing = Engine("quantize --in " + (dir / "absent").string() + " --out " + int8 + " --scheme int8");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.output.find("kimi-engine quantize: NotFound: "), std::string::npos) << missing.output;
  EXPECT_NE(missing.output.find("no such model directory"), std::string::npos) << missing.output;
  CliRun foreign = Engine("quantize --in " + dir.string() + " --out " + int8 + " --scheme int8");
  EXPECT_EQ(foreign.status, 1);
  EXPECT_NE(foreign.output.find("is not a Kimi K3 model directory"), std::string::npos) << foreign.output;
  CliRun exists = Engine("quantize --in " + nano + " --out " + nano + " --scheme int8");
  EXPECT_EQ(exists.status, 1);
  EXPECT_NE(exists.output.find("already exists"), std::string::npos) << exists.output;

  CliRun ok = Engine("quantize --in " + nano + " --out " + int8 + " --scheme int8");
  ASSERT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("dense matrices quantised (int8)"), std::string::npos) << ok.output;
  CliRun info = Engine("info --model " + int8);
  EXPECT_EQ(info.status, 0) << info.output;
  CliRun again = Engine("quantize --in " + int8 + " --out " + (dir / "again").string() + " --scheme mxfp4-dense");
  EXPECT_EQ(again.status, 1);
  EXPECT_NE(again.output.find("already quantised"), std::string::npos) << again.output;
  EXPECT_FALSE(std::filesystem::exists(dir / "again"));
  std::filesystem::remove_all(dir);
}

}  // namespace
