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

}  // namespace
}  // namespace kimi::tools
