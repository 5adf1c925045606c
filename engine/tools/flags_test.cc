#include "tools/flags.h"

#include <gtest/gtest.h>

namespace kimi::tools {
namespace {

const std::vector<FlagSpec> kSpecs = {
    {"out", true, "DIR"}, {"seed", true, "N"}, {"help", false, ""}};

TEST(Flags, ParsesSeparateAndInlineValuesAndSwitches) {
  auto f = Flags::Parse({"--out", "/tmp/x", "--seed=42", "--help"}, kSpecs);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(*f->Get("out"), "/tmp/x");
  EXPECT_EQ(*f->GetUint("seed", 0), 42u);
  EXPECT_TRUE(f->Has("help"));
  EXPECT_EQ(*Flags::Parse({}, kSpecs)->GetUint("seed", 9), 9u);
}

TEST(Flags, RejectsWhatItDoesNotKnow) {
  EXPECT_NE(Flags::Parse({"--nope"}, kSpecs).status().message().find("--nope"), std::string::npos);
  EXPECT_NE(Flags::Parse({"--out"}, kSpecs).status().message().find("needs a value"), std::string::npos);
  EXPECT_NE(Flags::Parse({"stray"}, kSpecs).status().message().find("stray"), std::string::npos);
  EXPECT_FALSE(Flags::Parse({"--help=1"}, kSpecs).ok());
  auto f = Flags::Parse({"--seed", "-3"}, kSpecs);
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->GetUint("seed", 0).ok());
  EXPECT_NE(f->Require("out").status().message().find("--out is required"), std::string::npos);
}

TEST(Flags, ParseCommandLineAnswersHelpAndBadFlagsItself) {
  testing::internal::CaptureStdout();
  const CommandLine help = ParseCommandLine("synth", {"--help"}, kSpecs, "synth --out DIR\nmore");
  const std::string usage = testing::internal::GetCapturedStdout();
  EXPECT_FALSE(help.flags.has_value());
  EXPECT_EQ(help.exit_status, kExitOk);
  EXPECT_EQ(usage.rfind("usage: kimi-engine synth --out DIR\nmore\n", 0), 0u) << usage;
  EXPECT_NE(usage.find("--seed"), std::string::npos) << usage;

  testing::internal::CaptureStderr();
  const CommandLine bad = ParseCommandLine("synth", {"--nope"}, kSpecs, "synth");
  const std::string error = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(bad.flags.has_value());
  EXPECT_EQ(bad.exit_status, kExitUsage);
  EXPECT_EQ(error.rfind("kimi-engine synth: InvalidArgument: ", 0), 0u) << error;
  EXPECT_NE(error.find("--nope"), std::string::npos) << error;

  const CommandLine good = ParseCommandLine("synth", {"--out", "/tmp/x"}, kSpecs, "synth");
  ASSERT_TRUE(good.flags.has_value());
  EXPECT_EQ(*good.flags->Get("out"), "/tmp/x");
}

}  // namespace
}  // namespace kimi::tools
