// The device wrappers: arena alignment and exhaustion, buffer round trips, and the weight upload
// through the staging buffers (chunked, with progress). Skipped without a device.
#include <numeric>

#include "gpu/gpu_device.h"
#include "gpu/gpu_test_util.h"
#include "gpu/weight_upload.h"

namespace kimi::gpu {
namespace {

using GpuDeviceTest = testing::GpuTest;

TEST_F(GpuDeviceTest, ArenaHandsOutAlignedSlicesUntilFull) {
  auto arena = DeviceArena::Create(4096);
  ASSERT_TRUE(arena.ok()) << arena.status().ToString();
  auto a = (*arena)->Allocate(1);
  auto b = (*arena)->Allocate(100);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*a) % DeviceArena::kAlignment, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(*b) % DeviceArena::kAlignment, 0u);
  EXPECT_EQ(static_cast<char*>(*b) - static_cast<char*>(*a), int64_t(DeviceArena::kAlignment));
  auto too_big = (*arena)->Allocate(4096);
  EXPECT_EQ(too_big.status().code(), Status::Code::kResourceExhausted);
  (*arena)->Reset();
  EXPECT_TRUE((*arena)->Allocate(4096).ok());
}

TEST_F(GpuDeviceTest, BufferRoundTripAndBoundsCheck) {
  std::vector<float> host(1000);
  std::iota(host.begin(), host.end(), 0.5f);
  DeviceBuffer buf = testing::ToDevice(host);
  EXPECT_EQ(testing::ToHost<float>(buf, host.size()), host);
  std::vector<float> big(2000);
  EXPECT_EQ(buf.CopyFromHost(big.data(), big.size() * sizeof(float)).code(), Status::Code::kInvalidArgument);
}

TEST_F(GpuDeviceTest, UploadCopiesEveryTensorInChunksWithProgress) {
  std::vector<uint8_t> a(10000), b(37), c(0);
  for (size_t i = 0; i < a.size(); ++i) a[i] = uint8_t(i * 7);
  for (size_t i = 0; i < b.size(); ++i) b[i] = uint8_t(200 - i);
  std::vector<TensorView> views = {
      {"a", DType::kU8, {int64_t(a.size())}, a.data(), a.size()},
      {"b", DType::kU8, {int64_t(b.size())}, b.data(), b.size()},
      {"c", DType::kU8, {0}, c.data(), 0},
  };
  std::vector<const TensorView*> ptrs = {&views[0], &views[1], &views[2]};
  auto arena = DeviceArena::Create(1 << 20);
  ASSERT_TRUE(arena.ok());
  std::vector<uint64_t> reports;
  auto uploaded = UploadTensors(
      ptrs, **arena, stream(),
      [&](uint64_t done, uint64_t total) {
        EXPECT_EQ(total, a.size() + b.size());
        reports.push_back(done);
      },
      /*chunk_bytes=*/1000);
  ASSERT_TRUE(uploaded.ok()) << uploaded.status().ToString();
  ASSERT_EQ(uploaded->size(), 3u);
  EXPECT_EQ(reports.size(), 11u);  // 10 chunks of a, 1 of b
  EXPECT_EQ(reports.back(), a.size() + b.size());
  for (size_t t = 0; t < 2; ++t) {
    const auto& src = t == 0 ? a : b;
    std::vector<uint8_t> back(src.size());
    ASSERT_TRUE(CopyToHostAsync(back.data(), (*uploaded)[t].data, src.size(), stream()).ok());
    ASSERT_TRUE(stream().Synchronize().ok());
    EXPECT_EQ(back, src) << (*uploaded)[t].name;
  }
}

TEST_F(GpuDeviceTest, UploadReportsAnArenaTooSmall) {
  std::vector<uint8_t> a(5000);
  TensorView v{"a", DType::kU8, {5000}, a.data(), a.size()};
  const TensorView* ptr = &v;
  auto arena = DeviceArena::Create(1024);
  ASSERT_TRUE(arena.ok());
  auto uploaded = UploadTensors({&ptr, 1}, **arena, stream(), nullptr);
  EXPECT_EQ(uploaded.status().code(), Status::Code::kResourceExhausted);
}

}  // namespace
}  // namespace kimi::gpu
