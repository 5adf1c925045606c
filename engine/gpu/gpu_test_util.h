// Test helpers for engine/gpu: a fixture that skips without a device, and host↔device copies
// of vectors that record a test failure instead of returning a Status.
// Thread safety: test-only, single-threaded.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "gpu/gpu_device.h"

namespace kimi::gpu::testing {

// Skips every test of the suite when no device is visible, so CPU machines pass by skipping.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (DeviceCount() == 0) GTEST_SKIP() << "no GPU device visible: the GPU comparison tests are skipped";
    auto info = UseDevice(0);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    auto stream = GpuStream::Create();
    ASSERT_TRUE(stream.ok()) << stream.status().ToString();
    stream_.emplace(std::move(stream).value());
  }
  const GpuStream& stream() const { return *stream_; }

 private:
  std::optional<GpuStream> stream_;
};

template <typename T>
DeviceBuffer ToDevice(const std::vector<T>& host) {
  auto buf = DeviceBuffer::Create(host.size() * sizeof(T));
  EXPECT_TRUE(buf.ok()) << buf.status().ToString();
  if (!buf.ok()) return DeviceBuffer();
  Status st = buf->CopyFromHost(host.data(), host.size() * sizeof(T));
  EXPECT_TRUE(st.ok()) << st.ToString();
  return std::move(buf).value();
}

template <typename T>
std::vector<T> ToHost(const DeviceBuffer& buf, size_t n) {
  std::vector<T> host(n);
  Status st = buf.CopyToHost(host.data(), n * sizeof(T));
  EXPECT_TRUE(st.ok()) << st.ToString();
  return host;
}

}  // namespace kimi::gpu::testing
