// The docs against the tree they describe:
// - docs/architecture.md's block between <!-- LAYERS:begin --> and <!-- LAYERS:end --> is what
//   LayersBlock() makes of LAYERS (the layer order and every folder's job, the very lines the
//   include-graph test reads); `cmake --build build --target docs-layers` rewrites it.
// - every repository path a docs/*.md names in backticks (`appliance/http/server.cc`,
//   `engine/include/kimi/sse_frame.h`, a folder's own `http/server.h`, `api/request_gate.*`,
//   `engine/include/kimi/{status,log}.h`, `engine/tools/serve_*`) names a file or folder that
//   exists, so a renamed file cannot leave a doc pointing at nothing.
//
// KIMI_DOCS_ROOT (a compile definition) is the source tree the test reads. With
// KIMI_REGENERATE_DOCS=1 in the environment the layers test writes the block instead of
// comparing it.
#include <algorithm>
#include <cstdlib>
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

constexpr char kBegin[] = "<!-- LAYERS:begin";
constexpr char kEnd[] = "<!-- LAYERS:end -->";
constexpr char kRegenerate[] = "cmake --build build --target docs-layers";

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Join(const std::vector<std::string>& words, const std::string& separator) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : separator) + w;
  return out;
}

// The block docs/architecture.md carries, markers included: the layer order of each tree, then
// the [engine] and [appliance] sections of LAYERS line for line (their comments left out).
std::string LayersBlock(const std::string& layers_text) {
  std::istringstream in(layers_text);
  std::vector<std::string> errors;
  kimi_layers::Layers layers = kimi_layers::ParseLayers(in, &errors);
  std::string out = std::string(kBegin) + " generated from LAYERS by `" + kRegenerate +
                    "`: edit LAYERS, not this block -->\n";
  out += "| Tree | Layers, lowest first |\n|---|---|\n";
  out += "| engine | " + Join(layers.engine, " < ") + " |\n";
  out += "| appliance | " + Join(layers.appliance, " < ") + " |\n\n```text\n";
  std::istringstream lines(layers_text);
  std::string line, section, kept;
  while (std::getline(lines, line)) {
    std::string text = kimi_layers::Trim(line);
    if (text.size() > 2 && text.front() == '[' && text.back() == ']') section = text.substr(1, text.size() - 2);
    if (section != "engine" && section != "appliance") continue;
    if (!text.empty() && text[0] == '#') continue;
    if (text.empty() && (kept.empty() || kept.ends_with("\n\n"))) continue;
    kept += line + "\n";
  }
  while (kept.ends_with("\n\n")) kept.pop_back();
  return out + kept + "```\n" + kEnd;
}

// Splits `doc` around its generated block: [0, begin) and [end, size). False without markers.
bool FindBlock(const std::string& doc, size_t* begin, size_t* end) {
  *begin = doc.find(kBegin);
  size_t last = doc.find(kEnd);
  if (*begin == std::string::npos || last == std::string::npos || last < *begin) return false;
  *end = last + std::string(kEnd).size();
  return true;
}

TEST(ArchitectureDocTest, LayersBlockIsGeneratedFromLayers) {
  const fs::path root = KIMI_DOCS_ROOT;
  const fs::path doc_path = root / "docs" / "architecture.md";
  std::string doc = ReadFile(doc_path);
  const std::string want = LayersBlock(ReadFile(root / "LAYERS"));
  size_t begin = 0, end = 0;
  ASSERT_TRUE(FindBlock(doc, &begin, &end))
      << doc_path << " has no " << kBegin << " ... " << kEnd << " block; add the two markers and run `"
      << kRegenerate << "`";
  if (const char* regenerate = std::getenv("KIMI_REGENERATE_DOCS"); regenerate && std::string(regenerate) == "1") {
    doc.replace(begin, end - begin, want);
    std::ofstream(doc_path, std::ios::binary | std::ios::trunc) << doc;
    return;
  }
  EXPECT_EQ(doc.substr(begin, end - begin), want)
      << "docs/architecture.md's layers block differs from LAYERS; regenerate it with `" << kRegenerate << "`";
}

TEST(ArchitectureDocTest, TheBlockHasEveryFolderWithItsJob) {
  const std::string block = LayersBlock("[engine]\nkimi   the API\ncore   status,\n       logging\n\n"
                                        "[appliance]\n# a comment\nhttp   transport\n\n# Arrows\n[pending]\n"
                                        "appliance/x.cc -> http   a reason\n");
  EXPECT_NE(block.find("| engine | kimi < core |"), std::string::npos) << block;
  EXPECT_NE(block.find("| appliance | http |"), std::string::npos) << block;
  EXPECT_NE(block.find("```text\n[engine]\nkimi   the API\ncore   status,\n       logging\n\n[appliance]\n"
                       "http   transport\n```\n"),
            std::string::npos)
      << block;
  EXPECT_EQ(block.find("pending"), std::string::npos) << block;
  EXPECT_EQ(block.find("a comment"), std::string::npos) << block;
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
