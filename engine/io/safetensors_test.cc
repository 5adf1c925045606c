#include "kimi/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "io/safetensors_writer.h"
#include "io/test_util.h"

namespace kimi {
namespace {

using testing_util::SafetensorsImage;

constexpr const char* kLabel = "shard.safetensors";

// Parses an image built from a header and `data_bytes` zero bytes of data.
Result<SafetensorsHeader> ParseImage(const std::string& header, size_t data_bytes) {
  auto image = SafetensorsImage(header, std::vector<uint8_t>(data_bytes, 0));
  return ParseSafetensors(image.data(), image.size(), kLabel);
}

// The status must be Corruption and name the file and, when given, the tensor.
void ExpectCorruption(const Status& s, const std::string& tensor, const std::string& fragment) {
  EXPECT_EQ(s.code(), Status::Code::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find(kLabel), std::string::npos) << s.ToString();
  if (!tensor.empty()) {
    EXPECT_NE(s.message().find("'" + tensor + "'"), std::string::npos) << s.ToString();
  }
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.ToString();
}

TEST(SafetensorsParse, AcceptsAWellFormedImage) {
  auto r = ParseImage(
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"BF16","shape":[2,3],"data_offsets":[16,28]},)"
      R"("a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"s":{"dtype":"U8","shape":[],"data_offsets":[28,29]}})",
      29);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->tensors.size(), 3u);
  EXPECT_EQ(r->metadata.at("format"), "pt");
  for (const auto& t : r->tensors) {
    if (t.name == "b") {
      EXPECT_EQ(t.dtype, DType::kBF16);
      EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
      EXPECT_EQ(t.offset, r->data_start + 16);
      EXPECT_EQ(t.bytes, 12u);
    }
    if (t.name == "s") {
      EXPECT_TRUE(t.shape.empty());  // a scalar holds one element
    }
  }
}

TEST(SafetensorsParse, AcceptsEmptyTensorsAndAnEmptyFile) {
  EXPECT_TRUE(ParseImage(R"({"e":{"dtype":"F32","shape":[0,5],"data_offsets":[0,0]}})", 0).ok());
  EXPECT_TRUE(ParseImage(R"({})", 0).ok());
}

TEST(SafetensorsParse, RejectsAFileShorterThanTheLengthField) {
  std::vector<uint8_t> bytes = {1, 0, 0};
  ExpectCorruption(ParseSafetensors(bytes.data(), bytes.size(), kLabel).status(), "", "shorter than the 8-byte");
  ExpectCorruption(ParseSafetensors(nullptr, 0, kLabel).status(), "", "shorter");
}

TEST(SafetensorsParse, RejectsAHeaderLengthPastTheEnd) {
  auto image = SafetensorsImage(R"({})", {});
  image[0] = 200;  // claims 200 header bytes, file has 2
  ExpectCorruption(ParseSafetensors(image.data(), image.size(), kLabel).status(), "", "runs past the end");
  image[0] = 0xff;
  image[7] = 0xff;  // ~2^64: must not overflow into "fits"
  ExpectCorruption(ParseSafetensors(image.data(), image.size(), kLabel).status(), "", "runs past the end");
}

TEST(SafetensorsParse, RejectsATruncatedHeader) {
  std::string header = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  auto image = SafetensorsImage(header, {0, 0, 0, 0});
  image.resize(8 + header.size() / 2);  // the file ends inside the JSON
  ExpectCorruption(ParseSafetensors(image.data(), image.size(), kLabel).status(), "", "runs past the end");
}

TEST(SafetensorsParse, RejectsInvalidJson) {
  ExpectCorruption(ParseImage(R"({"a":{"dtype":"F32",)", 0).status(), "", "not valid JSON");
  ExpectCorruption(ParseImage(R"([1,2,3])", 0).status(), "", "not an object");
  ExpectCorruption(ParseImage(std::string(100000, '[') + std::string(100000, ']'), 0).status(), "", "nests deeper");
}

TEST(SafetensorsParse, RejectsOffsetsPastTheDataRegion) {
  ExpectCorruption(ParseImage(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8).status(), "w",
                   "past the data region");
  ExpectCorruption(
      ParseImage(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[18446744073709551615,18446744073709551615]}})", 8)
          .status(),
      "w", "");
}

TEST(SafetensorsParse, RejectsOverlappingTensors) {
  ExpectCorruption(ParseImage(R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                              R"("y":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                              16)
                       .status(),
                   "y", "overlap tensor 'x'");
}

TEST(SafetensorsParse, RejectsGapsAndUnownedTrailingBytes) {
  ExpectCorruption(ParseImage(R"({"x":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}})", 8).status(), "x", "gap");
  ExpectCorruption(ParseImage(R"({"x":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})", 8).status(), "",
                   "cover only 4");
}

TEST(SafetensorsParse, RejectsAnUnknownDtype) {
  ExpectCorruption(ParseImage(R"({"w":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}})", 1).status(), "w",
                   "unknown dtype \"F4\"");
  ExpectCorruption(ParseImage(R"({"w":{"dtype":7,"shape":[2],"data_offsets":[0,1]}})", 1).status(), "w", "dtype");
}

TEST(SafetensorsParse, RejectsAShapeThatDisagreesWithTheByteCount) {
  ExpectCorruption(ParseImage(R"({"w":{"dtype":"BF16","shape":[3,3],"data_offsets":[0,16]}})", 16).status(), "w",
                   "needs 9 x 2 bytes");
  ExpectCorruption(ParseImage(R"({"w":{"dtype":"BF16","shape":[-1,4],"data_offsets":[0,8]}})", 8).status(), "w",
                   "non-negative");
  ExpectCorruption(ParseImage(R"({"w":{"dtype":"BF16","shape":[1.5],"data_offsets":[0,2]}})", 2).status(), "w",
                   "non-negative");
  ExpectCorruption(
      ParseImage(R"({"w":{"dtype":"F64","shape":[4294967296,4294967296,16],"data_offsets":[0,8]}})", 8).status(), "w",
      "overflows");
}

TEST(SafetensorsParse, RejectsMalformedOffsetsAndEntries) {
  ExpectCorruption(ParseImage(R"({"w":{"dtype":"U8","shape":[2],"data_offsets":[2,0]}})", 2).status(), "w",
                   "backwards");
  ExpectCorruption(ParseImage(R"({"w":{"dtype":"U8","shape":[2],"data_offsets":[0]}})", 2).status(), "w",
                   "two non-negative integers");
  ExpectCorruption(ParseImage(R"({"w":{"dtype":"U8","shape":[2],"data_offsets":[-2,0]}})", 2).status(), "w",
                   "two non-negative integers");
  ExpectCorruption(ParseImage(R"({"w":{"dtype":"U8","shape":[2]}})", 2).status(), "w", "data_offsets");
  ExpectCorruption(ParseImage(R"({"w":[1,2]})", 0).status(), "w", "not an object");
  ExpectCorruption(ParseImage(R"({"w":{"dtype":"U8","data_offsets":[0,2]}})", 2).status(), "w", "shape");
}

TEST(SafetensorsParse, ValidatesMetadata) {
  ExpectCorruption(ParseImage(R"({"__metadata__":[1]})", 0).status(), "", "__metadata__");
  ExpectCorruption(ParseImage(R"({"__metadata__":{"k":1}})", 0).status(), "", "not a string");
}

TEST(SafetensorsFile, WriterOutputReadsBackThroughTheMapping) {
  std::string dir = testing_util::MakeTempDir("st_roundtrip");
  std::string path = dir + "/w.safetensors";
  std::vector<float> a = {1.5f, -2.0f, 3.25f};
  std::vector<uint16_t> b = {F32ToBf16(0.5f), F32ToBf16(-1.0f)};
  SafetensorsWriter w;
  w.SetMetadata("format", "pt");
  ASSERT_TRUE(w.Declare("a", DType::kF32, {3}).ok());
  ASSERT_TRUE(w.Declare("b", DType::kBF16, {1, 2}).ok());
  ASSERT_TRUE(w.Open(path).ok());
  ASSERT_TRUE(w.Append(a.data(), 8).ok());  // a tensor may arrive in pieces
  ASSERT_TRUE(w.Append(reinterpret_cast<const uint8_t*>(a.data()) + 8, 4).ok());
  EXPECT_FALSE(w.Append(b.data(), 6).ok());  // more than b holds
  ASSERT_TRUE(w.Append(b.data(), 4).ok());
  ASSERT_TRUE(w.Finish().ok());

  auto f = SafetensorsFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ((*f)->metadata().at("format"), "pt");
  const TensorView* va = (*f)->Find("a");
  ASSERT_NE(va, nullptr);
  EXPECT_EQ(va->Describe(), "F32[3]");
  float got[3];
  std::memcpy(got, va->data, sizeof got);
  EXPECT_EQ(got[2], 3.25f);
  const TensorView* vb = (*f)->Find("b");
  ASSERT_NE(vb, nullptr);
  uint16_t bits;
  std::memcpy(&bits, static_cast<const uint8_t*>(vb->data) + 2, 2);
  EXPECT_EQ(Bf16ToF32(bits), -1.0f);
  EXPECT_EQ((*f)->Find("c"), nullptr);
  // The data region starts on a 64-byte boundary.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(va->data) % 64, 0u);
  f->reset();
  std::filesystem::remove_all(dir);
}

TEST(SafetensorsFile, SkippedTensorsReadAsZerosUpToTheEnd) {
  std::string dir = testing_util::MakeTempDir("st_skip");
  std::string path = dir + "/w.safetensors";
  const float one = 1.0f;
  SafetensorsWriter w;
  ASSERT_TRUE(w.Declare("a", DType::kF32, {1}).ok());
  ASSERT_TRUE(w.Declare("hole", DType::kF32, {1000}).ok());
  ASSERT_TRUE(w.Declare("b", DType::kF32, {1}).ok());
  ASSERT_TRUE(w.Declare("tail", DType::kF32, {4}).ok());  // a hole at the very end
  ASSERT_TRUE(w.Open(path).ok());
  ASSERT_TRUE(w.Append(&one, 4).ok());
  EXPECT_FALSE(w.Skip(4004).ok());  // more than the tensor holds
  ASSERT_TRUE(w.Skip(4000).ok());
  ASSERT_TRUE(w.Append(&one, 4).ok());
  ASSERT_TRUE(w.Skip(16).ok());
  ASSERT_TRUE(w.Finish().ok());

  auto f = SafetensorsFile::Open(path);  // the reader checks the file length against the header
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  auto floats = [&](const char* name) {
    const TensorView* v = (*f)->Find(name);
    std::vector<float> out(v == nullptr ? 0 : v->numel());
    if (v != nullptr) std::memcpy(out.data(), v->data, out.size() * 4);
    return out;
  };
  EXPECT_EQ(floats("a"), std::vector<float>{1.0f});
  EXPECT_EQ(floats("hole"), std::vector<float>(1000, 0.0f));
  EXPECT_EQ(floats("b"), std::vector<float>{1.0f});
  EXPECT_EQ(floats("tail"), std::vector<float>(4, 0.0f));
  f->reset();
  std::filesystem::remove_all(dir);
}

TEST(SafetensorsFile, WriterRefusesAnIncompleteTensor) {
  std::string dir = testing_util::MakeTempDir("st_incomplete");
  SafetensorsWriter w;
  ASSERT_TRUE(w.Declare("a", DType::kF32, {2}).ok());
  EXPECT_EQ(w.Declare("a", DType::kF32, {2}).code(), Status::Code::kAlreadyExists);
  ASSERT_TRUE(w.Open(dir + "/x.safetensors").ok());
  float v = 1;
  ASSERT_TRUE(w.Append(&v, 4).ok());
  Status s = w.Finish();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'a'"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(SafetensorsFile, OpenReportsMissingAndCorruptFilesByPath) {
  std::string dir = testing_util::MakeTempDir("st_open");
  auto missing = SafetensorsFile::Open(dir + "/none.safetensors");
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  std::string path = dir + "/bad.safetensors";
  testing_util::WriteFile(path, SafetensorsImage(R"({"t":{"dtype":"F32","shape":[9],"data_offsets":[0,36]}})", {1, 2}));
  auto bad = SafetensorsFile::Open(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(path), std::string::npos);
  EXPECT_NE(bad.status().message().find("'t'"), std::string::npos);
  EXPECT_EQ(SafetensorsFile::Open(dir).status().code(), Status::Code::kInvalidArgument);  // a directory
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kimi
