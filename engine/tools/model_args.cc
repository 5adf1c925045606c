#include "tools/model_args.h"

#include <charconv>
#include <cstdio>

#include "tools/command.h"

namespace kimi::tools {

Result<std::vector<int32_t>> ParseTokenIds(const std::string& text) {
  std::vector<int32_t> ids;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    int32_t id = 0;
    const char* first = text.data() + pos;
    const char* last = text.data() + end;
    auto [ptr, ec] = std::from_chars(first, last, id);
    if (first == last || ec != std::errc() || ptr != last || id < 0) {
      return Status::InvalidArgument("--token-ids: '" + text.substr(pos, end - pos) + "' is not a token id");
    }
    ids.push_back(id);
    pos = end + 1;
  }
  return ids;
}

int ReportFailure(const char* command, const Status& status) {
  return ReportError(command, status, status.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure);
}

int RunWithFlags(const char* command, const Args& args, const std::vector<FlagSpec>& specs, const char* synopsis,
                 Status (*run)(const Flags& flags)) {
  const CommandLine line = ParseCommandLine(command, args, specs, synopsis);
  if (!line.flags) return line.exit_status;
  const Status s = run(*line.flags);
  return s.ok() ? kExitOk : ReportFailure(command, s);
}

}  // namespace kimi::tools
