#include "kimi/loopback_host.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kimi {
namespace {

TEST(LoopbackHost, AddressesAndLocalhostAreTakenWithOrWithoutAPort) {
  for (const char* host : {"", "127.0.0.1", "127.0.0.1:8080", "10.0.0.5:1", "[::1]", "[::1]:8080", "localhost",
                           "LocalHost:8080", "console.localhost", "a-b.c.localhost:65535"}) {
    EXPECT_TRUE(IsLoopbackSafeHost(host)) << host;
  }
}

// What a DNS-rebinding page sends: its own name, which now resolves to the appliance.
TEST(LoopbackHost, OtherNamesAndMalformedValuesAreRefused) {
  for (const char* host : {"evil.example", "evil.example:8080", "127.0.0.1.nip.io", "localhost.evil.example",
                           "evillocalhost", "localhost.", ".localhost", "a..localhost", "a_b.localhost",
                           "127.0.0.1:", "127.0.0.1:80a", "127.0.0.1:123456", "2130706433", "0x7f.1", "::1",
                           "[::1", "[::1]x", "[::1]:", "[evil.example]", "127.0.0.1 evil.example",
                           "127.0.0.1@evil.example", "x"}) {
    EXPECT_FALSE(IsLoopbackSafeHost(host)) << host;
  }
}

// A reverse proxy on the machine that forwards its own Host: the operator names it.
TEST(LoopbackHost, NamesTheOperatorListsAreTakenWithOrWithoutAPort) {
  const std::vector<std::string> named = {"appliance.example", "Kimi.Internal"};
  for (const char* host : {"appliance.example", "APPLIANCE.example:443", "kimi.internal", "127.0.0.1"}) {
    EXPECT_TRUE(IsLoopbackSafeHost(host, named)) << host;
  }
  for (const char* host : {"evil.example", "x.appliance.example", "appliance.example.", "appliance.example:",
                           "appliance.example:x", ":443"}) {
    EXPECT_FALSE(IsLoopbackSafeHost(host, named)) << host;
  }
}

TEST(LoopbackHost, ListenAddressesOnLoopbackAreTold) {
  for (const char* address : {"127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"}) {
    EXPECT_TRUE(IsLoopbackListenAddress(address)) << address;
  }
  for (const char* address : {"0.0.0.0", "::", "10.0.0.5", "[::2]", "::ffff:127.0.0.1", "evil.example", ""}) {
    EXPECT_FALSE(IsLoopbackListenAddress(address)) << address;
  }
}

}  // namespace
}  // namespace kimi
