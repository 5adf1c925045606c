// kimi-engine quantize: rewrites a BF16 model directory with its dense projections quantised
// (io/k3_quantize.h has the schemes and the guarantees: atomic output, nothing signed).
#include <cstdio>

#include "io/k3_quantize.h"
#include "tools/command.h"
#include "tools/flags.h"

namespace kimi::tools {
namespace {

const std::vector<FlagSpec>& QuantizeFlags() {
  static const std::vector<FlagSpec> flags = {
      {"in", true, "DIR     the BF16 model directory to read"},
      {"out", true, "DIR     the directory to write (must not exist)"},
      {"scheme", true, "NAME    int8 (per-channel int8, compressed-tensors pack-quantized) or\n"
                       "                mxfp4-dense (compressed-tensors mxfp4-pack-quantized)"},
      {"help", false, "        this text"},
  };
  return flags;
}

// A bad command line exits 2 and a model that cannot be quantised 1, whatever the status's code.
int Usage(const Status& s) { return ReportError("quantize", s, kExitUsage); }

}  // namespace

int RunQuantize(const Args& args) {
  const CommandLine line =
      ParseCommandLine("quantize", args, QuantizeFlags(),
                       "quantize --in DIR --out DIR --scheme int8|mxfp4-dense");
  if (!line.flags) return line.exit_status;
  const Flags& flags = *line.flags;
  auto in = flags.Require("in");
  if (!in.ok()) return Usage(in.status());
  auto out = flags.Require("out");
  if (!out.ok()) return Usage(out.status());
  auto scheme_name = flags.Require("scheme");
  if (!scheme_name.ok()) return Usage(scheme_name.status());
  auto scheme = ParseQuantScheme(*scheme_name);
  if (!scheme.ok()) return Usage(Status::InvalidArgument("--scheme: " + scheme.status().message()));
  auto summary = QuantizeModelDir(*in, *out, *scheme);
  if (!summary.ok()) return ReportError("quantize", summary.status(), kExitFailure);
  std::printf("wrote %s: %lld dense matrices quantised (%s), %.1f MiB -> %.1f MiB; sign it with kimictl model sign\n",
              out->c_str(), static_cast<long long>(summary->matrices), scheme_name->c_str(),
              summary->bytes_before / 1048576.0, summary->bytes_after / 1048576.0);
  return kExitOk;
}

}  // namespace kimi::tools
