// kimictl's one option parser (options.h); commands_test.cc runs every kind of command through it.
#include "cli/options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kimi::cli {
namespace {

TEST(ParseArgsTest, ValuesEitherWayFlagsAndWordsAnywhere) {
  const ParsedArgs a = ParseArgs({"MODEL", "--key=a.pem", "--quiet", "--key", "b.pem", "--out=", "LAST"},
                                 {"--key", "--out"}, {"--quiet"}, 2);
  ASSERT_EQ(a.error, "");
  EXPECT_EQ(a.All("--key"), (std::vector<std::string>{"a.pem", "b.pem"}));
  EXPECT_EQ(a.One("--key"), "b.pem");
  EXPECT_TRUE(a.Gives("--out"));
  EXPECT_EQ(a.One("--out"), "");
  EXPECT_FALSE(a.Gives("--missing"));
  EXPECT_TRUE(a.Has("--quiet"));
  EXPECT_EQ(a.positional, (std::vector<std::string>{"MODEL", "LAST"}));
  // A value that starts with -- is written --name=VALUE; one that is not an option of the command
  // may follow the name.
  EXPECT_EQ(ParseArgs({"--out=--quiet"}, {"--out"}, {"--quiet"}, 0).One("--out"), "--quiet");
  EXPECT_EQ(ParseArgs({"--out", "--other"}, {"--out"}, {"--quiet"}, 0).One("--out"), "--other");
}

TEST(ParseArgsTest, WhatIsNotAnOptionOfTheCommandIsAnError) {
  EXPECT_EQ(ParseArgs({"--colour", "x"}, {"--out"}, {}, 1).error, "unknown argument \"--colour\"");
  EXPECT_EQ(ParseArgs({"--colour=x"}, {"--out"}, {}, 1).error, "unknown argument \"--colour=x\"");
  EXPECT_EQ(ParseArgs({"--out"}, {"--out"}, {}, 1).error, "--out needs a value");
  // A forgotten value: the next option was taken as it ("audit export --since --format jsonl"
  // read --since "--format", then refused "jsonl" as an unknown argument).
  EXPECT_EQ(ParseArgs({"--since", "--format", "jsonl"}, {"--since", "--format"}, {}, 0).error,
            "--since needs a value (it is followed by the option --format; write --since=VALUE for a value that "
            "starts with --)");
  EXPECT_EQ(ParseArgs({"--out", "--quiet"}, {"--out"}, {"--quiet"}, 0).error.substr(0, 19), "--out needs a value");
  EXPECT_EQ(ParseArgs({"--out", "--out=x"}, {"--out"}, {}, 0).error.substr(0, 19), "--out needs a value");
  EXPECT_EQ(ParseArgs({"--quiet=yes"}, {}, {"--quiet"}, 1).error, "--quiet takes no value");
  // A prefix of a known option is not that option.
  EXPECT_EQ(ParseArgs({"--ou=x"}, {"--out"}, {}, 1).error, "unknown argument \"--ou=x\"");
  // One word more than the command takes.
  EXPECT_EQ(ParseArgs({"A", "--out", "o", "B"}, {"--out"}, {}, 1).error, "unknown argument \"B\"");
  EXPECT_EQ(ParseArgs({"A"}, {}, {}, 0).error, "unknown argument \"A\"");
}

}  // namespace
}  // namespace kimi::cli
