#include "core/illegal_instruction.h"

#include <gtest/gtest.h>

#include <csignal>
#include <thread>

namespace kimi {
namespace {

// ud2 on x86-64, brk on AArch64: the instruction the CPU refuses.
[[gnu::noinline]] void Refused(int* reached) {
  *reached = 1;
  __builtin_trap();
}

struct sigaction Disposition() {
  struct sigaction now {};
  sigaction(SIGILL, nullptr, &now);
  return now;
}

TEST(IllegalInstruction, ReturnsTrueWhenTheFunctionCompletes) {
  int calls = 0;
  EXPECT_TRUE(RunUnlessIllegalInstruction([&] { ++calls; }));
  EXPECT_EQ(calls, 1);
}

TEST(IllegalInstruction, ReturnsFalseAndRestoresTheHandlerAfterSigill) {
  const struct sigaction before = Disposition();
  int reached = 0;
  EXPECT_FALSE(RunUnlessIllegalInstruction([&] { Refused(&reached); }));
  EXPECT_EQ(reached, 1);
  EXPECT_EQ(Disposition().sa_handler, before.sa_handler);
  // And again: nothing of the first call is left armed.
  EXPECT_FALSE(RunUnlessIllegalInstruction([&] { Refused(&reached); }));
  EXPECT_TRUE(RunUnlessIllegalInstruction([] {}));
}

TEST(IllegalInstruction, EachThreadCatchesOnlyItsOwn) {
  bool refused_completed = true, other_completed = false;
  int reached = 0;
  std::thread refused([&] { refused_completed = RunUnlessIllegalInstruction([&] { Refused(&reached); }); });
  std::thread other([&] {
    other_completed = RunUnlessIllegalInstruction([] {
      volatile double sum = 0;
      for (int i = 0; i < 1000000; ++i) sum = sum + i;
    });
  });
  refused.join();
  other.join();
  EXPECT_FALSE(refused_completed);
  EXPECT_TRUE(other_completed);
}

}  // namespace
}  // namespace kimi
