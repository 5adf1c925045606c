#include "kimi/quantization.h"

#include <regex>

#include "kimi/k3_tensors.h"

namespace kimi {
namespace {

constexpr std::string_view kRegexPrefix = "re:";

bool IsRegex(const std::string& target) { return target.rfind(kRegexPrefix, 0) == 0; }

// A regex target matches from the start of the name (Python's re.match).
bool MatchesFromStart(const std::regex& re, const std::string& name) {
  return std::regex_search(name, re, std::regex_constants::match_continuous);
}

}  // namespace

std::string_view MatrixFormatName(MatrixFormat format) {
  switch (format) {
    case MatrixFormat::kBf16: return "bf16";
    case MatrixFormat::kInt8Channel: return "int8";
    case MatrixFormat::kMxfp4: return "mxfp4";
  }
  return "?";
}

std::vector<QuantizationGroup> QuantizationConfig::EffectiveGroups() const {
  if (!present) return {};
  if (!groups.empty()) return groups;
  QuantizationGroup experts;
  experts.name = "group_0";
  experts.targets = {std::string(kRoutedExpertsTarget)};
  return {experts};
}

bool QuantizationConfig::HasMxfp4() const {
  if (!present) return false;
  if (groups.empty()) return format == kMxfp4PackFormat;
  for (const QuantizationGroup& g : groups) {
    if ((g.format.empty() ? format : g.format) == kMxfp4PackFormat) return true;
  }
  return false;
}

Result<MatrixFormat> GroupFormat(const QuantizationConfig& q, const QuantizationGroup& g) {
  const std::string& format = g.format.empty() ? q.format : g.format;
  const std::string where = "config_groups." + g.name + ": ";
  if (format == kMxfp4PackFormat) {
    if (g.num_bits != 4 || g.group_size != 32 || g.type != "float") {
      return Status::InvalidArgument(where + "MXFP4 needs num_bits 4, type float and group_size 32");
    }
    return MatrixFormat::kMxfp4;
  }
  if (format == kIntPackFormat) {
    if (g.num_bits != 8 || g.type != "int" || g.strategy != "channel" || !g.symmetric) {
      return Status::Unimplemented(where + "pack-quantized is supported as 8-bit symmetric int per channel only");
    }
    return MatrixFormat::kInt8Channel;
  }
  return Status::Unimplemented(where + "format: only \"mxfp4-pack-quantized\" and \"pack-quantized\" are supported, got \"" +
                               format + "\"");
}

struct QuantizationMatcher::Compiled {
  struct Target {
    bool regex;
    std::string name;
    std::regex re;
  };
  std::vector<Target> ignore;
  // Per group: its targets and its format.
  std::vector<std::pair<std::vector<Target>, MatrixFormat>> groups;

  static Target Compile(const std::string& t) {
    if (IsRegex(t)) return {true, t, std::regex(t.substr(kRegexPrefix.size()))};
    return {false, t, {}};
  }
};

QuantizationMatcher::QuantizationMatcher(const QuantizationConfig& q) : compiled_(std::make_unique<Compiled>()) {
  for (const std::string& t : q.ignore) compiled_->ignore.push_back(Compiled::Compile(t));
  for (const QuantizationGroup& g : q.EffectiveGroups()) {
    Result<MatrixFormat> f = GroupFormat(q, g);
    std::vector<Compiled::Target> targets;
    for (const std::string& t : g.targets) targets.push_back(Compiled::Compile(t));
    compiled_->groups.emplace_back(std::move(targets), f.ok() ? f.value() : MatrixFormat::kBf16);
  }
}

QuantizationMatcher::~QuantizationMatcher() = default;

MatrixFormat QuantizationMatcher::FormatOf(std::string_view module) const {
  std::string bare(module);
  if (bare.rfind(kPublishedPrefix, 0) == 0) bare.erase(0, kPublishedPrefix.size());
  const std::string full = std::string(kPublishedPrefix) + bare;
  auto exact = [&](const Compiled::Target& t) { return !t.regex && (t.name == bare || t.name == full); };
  auto regex = [&](const Compiled::Target& t) { return t.regex && (MatchesFromStart(t.re, full) || MatchesFromStart(t.re, bare)); };
  auto linear = [&](const Compiled::Target& t) { return !t.regex && t.name == "Linear"; };
  for (const Compiled::Target& t : compiled_->ignore) {
    if (exact(t) || regex(t)) return MatrixFormat::kBf16;
  }
  // Most specific rule first, as compressed-tensors orders its matches.
  for (int pass = 0; pass < 3; ++pass) {
    for (const auto& [targets, format] : compiled_->groups) {
      for (const Compiled::Target& t : targets) {
        const bool hit = pass == 0 ? exact(t) : pass == 1 ? regex(t) : linear(t);
        if (hit) return format;
      }
    }
  }
  return MatrixFormat::kBf16;
}

Status ValidateQuantization(const QuantizationConfig& q, const std::string& prefix) {
  if (!q.present) return Status::OK();
  if (q.quant_method != "compressed-tensors") {
    return Status::Unimplemented(prefix + "quant_method: only \"compressed-tensors\" is supported, got \"" + q.quant_method +
                                 "\"");
  }
  if (q.groups.empty() && q.format != kMxfp4PackFormat) {
    return Status::Unimplemented(prefix + "format: only \"mxfp4-pack-quantized\" is supported without config_groups, got \"" +
                                 q.format + "\"");
  }
  std::vector<std::string> all = q.ignore;
  for (const QuantizationGroup& g : q.EffectiveGroups()) {
    Result<MatrixFormat> f = GroupFormat(q, g);
    if (!f.ok()) {
      const std::string message = prefix + f.status().message();
      return f.status().code() == Status::Code::kUnimplemented ? Status::Unimplemented(message)
                                                              : Status::InvalidArgument(message);
    }
    all.insert(all.end(), g.targets.begin(), g.targets.end());
  }
  for (const std::string& t : all) {
    if (!IsRegex(t)) continue;
    try {
      std::regex re(t.substr(kRegexPrefix.size()));
    } catch (const std::regex_error&) {
      return Status::InvalidArgument(prefix + "'" + t + "' is not a valid regular expression");
    }
  }
  return Status::OK();
}

}  // namespace kimi
