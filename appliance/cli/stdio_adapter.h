// Lets a command written against std::ostream (the model-signing and audit commands, which
// their own tests drive with string streams) sit in kimictl's table, whose commands write to
// the FILE* pair of cli::Io.
//
// Thread safety: one adapter per call, used from the calling thread only.
#pragma once

#include <cstdio>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace kimi::cli {

// An unbuffered std::streambuf that forwards every byte to a FILE*.
class StdioStreambuf : public std::streambuf {
 public:
  explicit StdioStreambuf(std::FILE* file) : file_(file) {}

 protected:
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    return std::fputc(ch, file_) == EOF ? traits_type::eof() : ch;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    return static_cast<std::streamsize>(std::fwrite(s, 1, static_cast<size_t>(n), file_));
  }
  int sync() override { return std::fflush(file_) == 0 ? 0 : -1; }

 private:
  std::FILE* file_;
};

using StreamCommandFn = int (*)(const std::vector<std::string>&, std::ostream&, std::ostream&);

// OnStdio<RunModelVerify> has the CommandFn signature of kimictl's table.
template <StreamCommandFn F>
int OnStdio(const std::vector<std::string>& args, const Io& io) {
  StdioStreambuf out_buf(io.out), err_buf(io.err);
  std::ostream out(&out_buf), err(&err_buf);
  int rc = F(args, out, err);
  out.flush();
  err.flush();
  return rc;
}

}  // namespace kimi::cli
