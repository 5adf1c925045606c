// The docs against the tree they describe:
// - every repository path a docs/*.md names in backticks (`appliance/http/server.cc`,
//   `engine/include/kimi/sse_frame.h`, a folder's own `http/server.h`, `api/request_gate.*`,
//   `engine/include/kimi/{status,log}.h`, `engine/tools/serve_*`) names a file or folder that
//   exists, so a renamed file cannot leave a doc pointing at nothing.
//
// KIMI_DOCS_ROOT (a compile definition) is the source tree the test reads.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "layers_file.h"

namespace {

namespace fs = std::filesystem;

std::string Join(const std::vector<std::string>& words, const std::string& separator) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : separator) + w;
  return out;
}

// The repository's top-level names (folders and files), build outputs left out.
std::set<std::string> TopLevelNames(const fs::path& root) {
  std::set<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(root)) {
    std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.' || name == "build") continue;
    names.insert(name);
  }
  return names;
}

// `{a,b}` expanded, first group only (no doc nests them).
std::vector<std::string> ExpandBraces(const std::string& path) {
  size_t open = path.find('{');
  size_t close = path.find('}', open);
  if (open == std::string::npos || close == std::string::npos) return {path};
  std::vector<std::string> out;
  std::istringstream options(path.substr(open + 1, close - open - 1));
  std::string option;
  while (std::getline(options, option, ',')) {
    for (const std::string& rest : ExpandBraces(path.substr(close + 1))) {
      out.push_back(path.substr(0, open) + option + rest);
    }
  }
  return out;
}

// Whether `path` (relative to root) exists; a `*` in its last component matches any text.
bool PathExists(const fs::path& root, const std::string& path) {
  const size_t star = path.find('*');
  if (star == std::string::npos) return fs::exists(root / path);
  const size_t slash = path.rfind('/', star);
  const fs::path dir = root / path.substr(0, slash == std::string::npos ? 0 : slash);
  const std::string pattern = path.substr(slash == std::string::npos ? 0 : slash + 1);
  std::string re;
  for (char c : pattern) re += c == '*' ? std::string(".*") : (std::isalnum(static_cast<unsigned char>(c)) ? std::string(1, c) : std::string("\\") + c);
  const std::regex name(re);
  if (!fs::is_directory(dir)) return false;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (std::regex_match(e.path().filename().string(), name)) return true;
  }
  return false;
}

// The path a backticked span names, relative to the root, or "" when it names none: a span
// that starts with a top-level folder of the repository, or a source file (`.h`, `.cc`, `.*`)
// or a sub-folder (`api/request/`) of a folder of LAYERS written from inside its tree
// (`http/server.cc`, `kimi/status.h`).
std::string RepoPath(std::string span, const std::set<std::string>& top, const kimi_layers::Layers& layers) {
  if (span.empty() || span.find_first_of(" \t<>$=\"'") != std::string::npos) return "";
  if (std::smatch m; std::regex_match(span, m, std::regex(R"((.*\.[a-z]+):[0-9]+)"))) span = m[1];
  const size_t slash = span.find('/');
  if (slash == std::string::npos || slash == 0) return "";
  const std::string first = span.substr(0, slash);
  if (top.count(first) != 0) return span;
  static const std::regex source(R"(.*(\.(h|cc|cu|\*)|/)$)");
  if (!std::regex_match(span, source)) return "";
  if (first == "kimi") return "engine/include/" + span;
  if (std::find(layers.appliance.begin(), layers.appliance.end(), first) != layers.appliance.end()) {
    return "appliance/" + span;
  }
  if (std::find(layers.engine.begin(), layers.engine.end(), first) != layers.engine.end()) return "engine/" + span;
  return "";
}

// "docs/x.md:line: `span` (path) does not exist" for every missing path named in `doc`.
std::vector<std::string> MissingPaths(const fs::path& root, const fs::path& doc, const std::set<std::string>& top,
                                      const kimi_layers::Layers& layers) {
  std::vector<std::string> missing;
  std::ifstream in(doc);
  std::string line;
  int number = 0;
  bool fenced = false;
  static const std::regex code("`([^`]+)`");
  while (std::getline(in, line)) {
    ++number;
    if (kimi_layers::Trim(line).rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    for (std::sregex_iterator it(line.begin(), line.end(), code), done; it != done; ++it) {
      const std::string span = (*it)[1];
      const std::string path = RepoPath(span, top, layers);
      if (path.empty()) continue;
      for (const std::string& one : ExpandBraces(path)) {
        if (!PathExists(root, one)) {
          missing.push_back("docs/" + doc.filename().string() + ":" + std::to_string(number) + ": `" + span + "` (" +
                            one + ") does not exist");
        }
      }
    }
  }
  return missing;
}

kimi_layers::Layers ReadLayers(const fs::path& root) {
  std::ifstream in(root / "LAYERS");
  std::vector<std::string> errors;
  return kimi_layers::ParseLayers(in, &errors);
}

TEST(DocsPathTest, EveryBacktickedRepositoryPathExists) {
  const fs::path root = KIMI_DOCS_ROOT;
  const std::set<std::string> top = TopLevelNames(root);
  const kimi_layers::Layers layers = ReadLayers(root);
  std::vector<fs::path> docs;
  for (const fs::directory_entry& e : fs::directory_iterator(root / "docs")) {
    if (e.path().extension() == ".md") docs.push_back(e.path());
  }
  std::sort(docs.begin(), docs.end());
  ASSERT_FALSE(docs.empty());
  std::vector<std::string> missing;
  for (const fs::path& doc : docs) {
    std::vector<std::string> in_doc = MissingPaths(root, doc, top, layers);
    missing.insert(missing.end(), in_doc.begin(), in_doc.end());
  }
  EXPECT_TRUE(missing.empty()) << Join(missing, "\n");
}

TEST(DocsPathTest, PathsAreReadFromTheirFolders) {
  const std::set<std::string> top = {"appliance", "engine", "docs"};
  kimi_layers::Layers layers;
  layers.engine = {"kimi", "core", "chat"};
  layers.appliance = {"http", "models"};
  EXPECT_EQ(RepoPath("appliance/http/server.cc", top, layers), "appliance/http/server.cc");
  EXPECT_EQ(RepoPath("http/server.cc", top, layers), "appliance/http/server.cc");
  EXPECT_EQ(RepoPath("http/server.cc:12", top, layers), "appliance/http/server.cc");
  EXPECT_EQ(RepoPath("kimi/sse_frame.h", top, layers), "engine/include/kimi/sse_frame.h");
  EXPECT_EQ(RepoPath("chat/python_text.h", top, layers), "engine/chat/python_text.h");
  EXPECT_EQ(RepoPath("http/tls/", top, layers), "appliance/http/tls/");
  EXPECT_EQ(RepoPath("models/.lock", top, layers), "");  // a runtime path, not a source
  EXPECT_EQ(RepoPath("POST /v1/chat/completions", top, layers), "");
  EXPECT_EQ(RepoPath("tools/x.cc", top, layers), "");  // not a folder of LAYERS here
  EXPECT_EQ(ExpandBraces("kimi/{status,log}.h"), (std::vector<std::string>{"kimi/status.h", "kimi/log.h"}));
}

TEST(DocsPathTest, AMissingFileIsFound) {
  const fs::path root = KIMI_DOCS_ROOT;
  EXPECT_TRUE(PathExists(root, "engine/include/kimi/sse_frame.h"));
  EXPECT_TRUE(PathExists(root, "appliance/api/request_gate.*"));
  EXPECT_FALSE(PathExists(root, "appliance/http/metrics.*"));
  EXPECT_FALSE(PathExists(root, "appliance/http/no_such_file.cc"));
}

}  // namespace
