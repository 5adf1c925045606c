// The include graph of appliance/ and engine/ against the layer order of LAYERS (the file at
// the root of the source tree): every #include "folder/..." must point to the including
// file's own folder or to one listed above it, and the appliance may include of the engine
// only kimi/ (engine/include/kimi). A new back-arrow fails here, naming file, line and the
// two folders; so does a pending exception in LAYERS that no longer matches an arrow.
//
// Across appliance folders only the headers a folder marks public ("// Public header of
// <folder>/" in their leading comment) may be included; a marked header no other folder
// includes is reported, so the public set stays the used one.
//
// The CMake side too: each library of appliance/ compiles sources of one folder only, and each
// folder is one library named after it (kimi_<folder>) unless a second one says why above it.
//
// KIMI_INCLUDE_GRAPH_ROOT (a compile definition) is the source tree the test reads.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "layers_file.h"

namespace {

namespace fs = std::filesystem;
using kimi_layers::Layers;
using kimi_layers::ParseLayers;
using kimi_layers::Trim;

// The folder a source file belongs to, from its path relative to the root.
std::string FolderOfFile(const fs::path& relative) {
  std::vector<std::string> parts;
  for (const fs::path& p : relative) parts.push_back(p.string());
  if (parts[0] == "engine" && parts.size() > 2 && parts[1] == "include") return parts[2];
  if (parts.size() == 2) return parts[0] == "appliance" ? "daemon" : parts[0];
  return parts[1];
}

struct Include {
  int line;
  std::string path;
};

std::vector<Include> QuotedIncludes(const fs::path& file) {
  std::vector<Include> out;
  std::ifstream in(file);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string text = Trim(line);
    if (text.rfind("#", 0) != 0) continue;
    text = Trim(text.substr(1));
    if (text.rfind("include", 0) != 0) continue;
    size_t open = text.find('"');
    if (open == std::string::npos) continue;  // <system> headers
    size_t close = text.find('"', open + 1);
    if (close == std::string::npos) continue;
    out.push_back({number, text.substr(open + 1, close - open - 1)});
  }
  return out;
}

// The folder an include names: its first component ("generated/policy/x.h", a header the
// build writes for policy/, is policy's). Empty for a bare name (the file's own folder or
// a generated header of its own).
std::string FolderOfInclude(const std::string& include) {
  std::vector<std::string> parts;
  std::istringstream in(include);
  for (std::string part; std::getline(in, part, '/');) parts.push_back(part);
  if (parts.size() < 2) return "";
  if (parts[0] == "generated" && parts.size() > 2) return parts[1];
  return parts[0];
}

int IndexOf(const std::vector<std::string>& order, const std::string& folder) {
  auto it = std::find(order.begin(), order.end(), folder);
  return it == order.end() ? -1 : static_cast<int>(it - order.begin());
}

// Every arrow that breaks `layers` in the tree at `root`, as "file:line: A -> B (why)";
// pending exceptions that matched nothing are reported too.
std::vector<std::string> Violations(const fs::path& root, const Layers& layers) {
  std::vector<std::string> out;
  std::set<std::pair<std::string, std::string>> used;
  std::vector<fs::path> files;
  for (const char* top : {"engine", "appliance"}) {
    if (!fs::is_directory(root / top)) continue;
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(root / top)) {
      if (!entry.is_regular_file()) continue;
      std::string ext = entry.path().extension().string();
      if (ext == ".h" || ext == ".cc" || ext == ".cu" || ext == ".cuh") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    fs::path relative = fs::relative(file, root);
    bool in_engine = *relative.begin() == "engine";
    const std::vector<std::string>& own = in_engine ? layers.engine : layers.appliance;
    std::string from = FolderOfFile(relative);
    int from_index = IndexOf(own, from);
    for (const Include& inc : QuotedIncludes(file)) {
      std::string to = FolderOfInclude(inc.path);
      if (to.empty() || to == from) continue;
      std::string why;
      if (from_index < 0) {
        why = from + " is not in LAYERS";
      } else if (IndexOf(own, to) >= 0) {
        if (IndexOf(own, to) > from_index) why = to + " is above " + from;
      } else if (IndexOf(layers.engine, to) >= 0) {
        if (to != "kimi") why = "the appliance includes of the engine only kimi/";
      } else if (IndexOf(layers.appliance, to) >= 0) {
        why = "the engine includes nothing of the appliance";
      } else {
        why = to + " is not in LAYERS";
      }
      if (why.empty()) continue;
      std::pair<std::string, std::string> key{relative.string(), to};
      if (layers.pending.count(key) != 0) {
        used.insert(key);
        continue;
      }
      out.push_back(relative.string() + ":" + std::to_string(inc.line) + ": " + from + " -> " + to + " (" + why + ")");
    }
  }
  for (const auto& [key, reason] : layers.pending) {
    if (used.count(key) == 0) {
      out.push_back("LAYERS [pending]: " + key.first + " -> " + key.second + " matches no arrow any more; remove it");
    }
  }
  return out;
}

// A folder of appliance/ shows other folders a few headers, each saying so in its leading
// comment with a line "// Public header of <folder>/..."; the others are the folder's own.
bool MarkedPublic(const fs::path& header, const std::string& folder) {
  std::ifstream in(header);
  const std::string marker = "// Public header of " + folder + "/";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("//", 0) != 0) return false;  // the leading comment has ended
    if (line.rfind(marker, 0) == 0) return true;
  }
  return false;
}

// Every include of appliance/ that reaches into another appliance folder's header not marked
// public ("file:line: includes folder/x.h, a header of folder/ alone"), and every header marked
// public that no other folder includes.
std::vector<std::string> PrivateHeadersIncludedAcrossFolders(const fs::path& root, const Layers& layers) {
  std::vector<std::string> out;
  const fs::path appliance = root / "appliance";
  if (!fs::is_directory(appliance)) return out;
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(appliance)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".h" || ext == ".cc")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::set<std::string> included;  // headers, relative to appliance/, that another folder includes
  for (const fs::path& file : files) {
    const fs::path relative = fs::relative(file, root);
    const std::string from = FolderOfFile(relative);
    for (const Include& inc : QuotedIncludes(file)) {
      const std::string to = FolderOfInclude(inc.path);
      if (to.empty() || to == from || IndexOf(layers.appliance, to) < 0) continue;
      std::string header = inc.path;
      if (header.rfind("generated/", 0) == 0) header = header.substr(10);
      fs::path path = appliance / header;
      if (!fs::exists(path)) path += ".in";  // written by the build from its template
      if (!fs::exists(path)) continue;       // the compiler names a missing header
      included.insert(header);
      if (!MarkedPublic(path, to)) {
        out.push_back(relative.string() + ":" + std::to_string(inc.line) + ": includes " + header + ", a header of " + to +
                      "/ alone (not marked \"// Public header of " + to + "/\")");
      }
    }
  }
  for (const fs::path& file : files) {
    if (file.extension() != ".h") continue;
    const fs::path relative = fs::relative(file, appliance);
    const std::string folder = FolderOfFile(fs::path("appliance") / relative);
    if (MarkedPublic(file, folder) && included.count(relative.string()) == 0) {
      out.push_back("appliance/" + relative.string() + ": marked public, but no other folder includes it; unmark it");
    }
  }
  return out;
}

// One add_library() of a CMakeLists.txt under appliance/: its name, the folders of its .cc
// sources (folder -> one source in it) and the comment lines right above it.
struct Library {
  std::string list;  // the CMakeLists.txt, relative to the root
  std::string name;
  std::map<std::string, std::string> folders;
  std::string comment;
};

std::vector<Library> ApplianceLibraries(const fs::path& root) {
  std::vector<Library> out;
  const fs::path appliance = root / "appliance";
  if (!fs::is_directory(appliance)) return out;
  std::vector<fs::path> lists;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(appliance)) {
    if (entry.path().filename() == "CMakeLists.txt") lists.push_back(entry.path());
  }
  std::sort(lists.begin(), lists.end());
  for (const fs::path& list : lists) {
    std::ifstream in(list);
    std::stringstream text;
    text << in.rdbuf();
    const std::string cmake = text.str();
    for (size_t at = cmake.find("add_library("); at != std::string::npos; at = cmake.find("add_library(", at + 1)) {
      Library library;
      library.list = fs::relative(list, root).string();
      const size_t end = cmake.find(')', at);
      std::istringstream words(cmake.substr(at + 12, end - at - 12));
      words >> library.name;
      for (std::string word; words >> word;) {
        if (word.size() < 3 || word.substr(word.size() - 3) != ".cc") continue;
        fs::path source = fs::relative((list.parent_path() / word).lexically_normal(), appliance);
        library.folders.emplace(FolderOfFile(fs::path("appliance") / source), source.string());
      }
      // The comment block ends on the line before add_library(; read it upwards.
      size_t line_end = cmake.rfind('\n', at);
      while (line_end != std::string::npos && line_end > 0) {
        const size_t line_start = cmake.rfind('\n', line_end - 1);
        const size_t from = line_start == std::string::npos ? 0 : line_start + 1;
        const std::string line = Trim(cmake.substr(from, line_end - from));
        if (line.empty() || line[0] != '#') break;
        library.comment = line + "\n" + library.comment;
        if (line_start == std::string::npos) break;
        line_end = line_start;
      }
      out.push_back(library);
    }
  }
  return out;
}

// Every library of appliance/ whose sources lie in more than one folder, as
// "CMakeLists: library compiles A/x.cc and B/y.cc".
std::vector<std::string> LibrariesAcrossFolders(const fs::path& root) {
  std::vector<std::string> out;
  for (const Library& library : ApplianceLibraries(root)) {
    if (library.folders.size() > 1) {
      std::string line = library.list + ": " + library.name + " compiles";
      for (const auto& [folder, source] : library.folders) line += " " + source;
      out.push_back(line);
    }
  }
  return out;
}

// A folder of appliance/ is one library, kimi_<folder>. Another library of the folder's sources
// is allowed only with its reason written right above its add_library(), on a comment line
// "# Kept apart from kimi_<folder>: <reason>". Every other one is named here.
std::vector<std::string> LibrariesWithoutTheirFoldersName(const fs::path& root) {
  std::vector<std::string> out;
  for (const Library& library : ApplianceLibraries(root)) {
    if (library.folders.size() != 1) continue;  // LibrariesAcrossFolders names those
    const std::string& folder = library.folders.begin()->first;
    const std::string own = "kimi_" + folder;
    if (library.name == own) continue;
    const std::string marker = "# Kept apart from " + own + ":";
    const size_t at = library.comment.find(marker);
    if (at != std::string::npos) {
      const size_t eol = library.comment.find('\n', at);
      if (!Trim(library.comment.substr(at + marker.size(), eol - at - marker.size())).empty()) continue;
    }
    out.push_back(library.list + ": " + library.name + " is a library of " + folder + "/ other than " + own + "; merge it into it" +
                  " or say why not above it (\"" + marker + " <reason>\")");
  }
  return out;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

TEST(IncludeGraphTest, TheTreeKeepsTheOrderOfLayers) {
  const fs::path root = KIMI_INCLUDE_GRAPH_ROOT;
  std::ifstream in(root / "LAYERS");
  ASSERT_TRUE(in) << "cannot read " << (root / "LAYERS");
  std::vector<std::string> errors;
  Layers layers = ParseLayers(in, &errors);
  ASSERT_TRUE(errors.empty()) << Joined(errors);
  ASSERT_EQ(layers.engine.front(), "kimi");
  std::vector<std::string> violations = Violations(root, layers);
  EXPECT_TRUE(violations.empty()) << violations.size() << " arrows break LAYERS:\n" << Joined(violations);
}

TEST(IncludeGraphTest, OtherFoldersIncludeOnlyPublicHeaders) {
  const fs::path root = KIMI_INCLUDE_GRAPH_ROOT;
  std::ifstream in(root / "LAYERS");
  std::vector<std::string> errors;
  Layers layers = ParseLayers(in, &errors);
  ASSERT_TRUE(errors.empty()) << Joined(errors);
  std::vector<std::string> found = PrivateHeadersIncludedAcrossFolders(root, layers);
  EXPECT_TRUE(found.empty()) << Joined(found);
}

TEST(IncludeGraphTest, EachApplianceLibraryCompilesOneFolder) {
  std::vector<std::string> across = LibrariesAcrossFolders(KIMI_INCLUDE_GRAPH_ROOT);
  EXPECT_TRUE(across.empty()) << Joined(across);
}

TEST(IncludeGraphTest, EachApplianceFolderIsOneLibraryOrSaysWhyNot) {
  std::vector<std::string> second = LibrariesWithoutTheirFoldersName(KIMI_INCLUDE_GRAPH_ROOT);
  EXPECT_TRUE(second.empty()) << Joined(second);
}

// The checker itself, on a small tree written here: each kind of bad arrow is found, and a
// pending line is honoured once and reported when stale.
class IncludeGraphCheckerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("kimi-include-graph-" + std::to_string(getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    std::istringstream text(
        "[engine]\nkimi  api\ncore  base\n[appliance]\nstore  db\n    more words\nhttp  server\ndaemon  main\n[pending]\n");
    layers_ = ParseLayers(text, &errors_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const std::string& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }

  fs::path root_;
  Layers layers_;
  std::vector<std::string> errors_;
};

TEST_F(IncludeGraphCheckerTest, DownwardArrowsPass) {
  ASSERT_TRUE(errors_.empty()) << Joined(errors_);
  EXPECT_EQ(layers_.appliance, (std::vector<std::string>{"store", "http", "daemon"}));
  Write("engine/core/a.cc", "#include \"kimi/status.h\"\n#include \"core/a.h\"\n#include <vector>\n");
  Write("appliance/http/s.cc", "#include \"store/store.h\"\n#include \"kimi/status.h\"\n#include \"build_info.h\"\n");
  Write("appliance/main.cc", "#include \"http/s.h\"\n");
  EXPECT_TRUE(Violations(root_, layers_).empty()) << Joined(Violations(root_, layers_));
}

TEST_F(IncludeGraphCheckerTest, EveryKindOfBadArrowIsNamed) {
  Write("appliance/store/store.cc", "// x\n#include \"http/server.h\"\n");
  Write("appliance/http/s.cc", "#include \"core/thread_pool.h\"\n#include \"nowhere/x.h\"\n");
  Write("engine/include/kimi/a.h", "#include \"core/x.h\"\n");
  Write("engine/core/b.cc", "#include \"store/store.h\"\n");
  EXPECT_EQ(Violations(root_, layers_),
            (std::vector<std::string>{
                "appliance/http/s.cc:1: http -> core (the appliance includes of the engine only kimi/)",
                "appliance/http/s.cc:2: http -> nowhere (nowhere is not in LAYERS)",
                "appliance/store/store.cc:2: store -> http (http is above store)",
                "engine/core/b.cc:1: core -> store (the engine includes nothing of the appliance)",
                "engine/include/kimi/a.h:1: kimi -> core (core is above kimi)",
            }));
}

TEST_F(IncludeGraphCheckerTest, APendingLineIsHonouredAndAStaleOneReported) {
  layers_.pending[{"appliance/store/store.cc", "http"}] = "moves later";
  layers_.pending[{"appliance/store/gone.cc", "http"}] = "already fixed";
  Write("appliance/store/store.cc", "#include \"http/server.h\"\n");
  EXPECT_EQ(Violations(root_, layers_),
            (std::vector<std::string>{
                "LAYERS [pending]: appliance/store/gone.cc -> http matches no arrow any more; remove it"}));
}

TEST_F(IncludeGraphCheckerTest, AnotherFolderIncludesOnlyHeadersMarkedPublic) {
  Write("appliance/store/store.h", "// The store.\n//\n// Public header of store/: the database.\n#pragma once\n");
  Write("appliance/store/rows.h", "// Rows, the store's own.\n#pragma once\n");
  Write("appliance/store/late.h", "// Marked too late.\n#pragma once\n// Public header of store/\n");
  Write("appliance/store/wrong.h", "// Public header of http/\n#pragma once\n");
  Write("appliance/store/unused.h", "// Public header of store/, included by nobody.\n#pragma once\n");
  Write("appliance/store/store.cc", "#include \"store/rows.h\"\n#include \"store/store.h\"\n");
  Write("appliance/http/s.cc",
        "#include \"store/store.h\"\n#include \"store/rows.h\"\n#include \"store/late.h\"\n"
        "#include \"store/wrong.h\"\n#include \"store/generated.h\"\n#include \"kimi/status.h\"\n");
  Write("appliance/store/generated.h.in", "// Public header of store/: written by the build.\n");
  EXPECT_EQ(PrivateHeadersIncludedAcrossFolders(root_, layers_),
            (std::vector<std::string>{
                "appliance/http/s.cc:2: includes store/rows.h, a header of store/ alone (not marked \"// Public header of store/\")",
                "appliance/http/s.cc:3: includes store/late.h, a header of store/ alone (not marked \"// Public header of store/\")",
                "appliance/http/s.cc:4: includes store/wrong.h, a header of store/ alone (not marked \"// Public header of store/\")",
                "appliance/store/unused.h: marked public, but no other folder includes it; unmark it",
            }));
}

TEST_F(IncludeGraphCheckerTest, ALibraryThatCompilesAnotherFoldersSourcesIsNamed) {
  Write("appliance/CMakeLists.txt", "add_library(kimi_a STATIC a/x.cc a/y.cc)\n");
  Write("appliance/b/CMakeLists.txt", "add_library(kimi_b STATIC\n  x.cc\n  ../c/y.cc)\nadd_library(kimi_i INTERFACE)\n");
  EXPECT_EQ(LibrariesAcrossFolders(root_),
            (std::vector<std::string>{"appliance/b/CMakeLists.txt: kimi_b compiles b/x.cc c/y.cc"}));
}

TEST_F(IncludeGraphCheckerTest, ASecondLibraryOfAFolderNeedsItsReasonWrittenAboveIt) {
  Write("appliance/CMakeLists.txt", "add_library(kimi_a STATIC a/x.cc)\nadd_library(kimi_a_more STATIC a/y.cc)\n");
  Write("appliance/b/CMakeLists.txt",
        "# the library\nadd_library(kimi_b STATIC x.cc)\n"
        "# Kept apart from kimi_b: the standalone tool links only this.\n# more words\n"
        "add_library(kimi_b_tool STATIC y.cc)\n"
        "# Kept apart from kimi_b:\nadd_library(kimi_b_empty STATIC z.cc)\n"
        "# Kept apart from kimi_b: a reason, but a blank line between\n\nadd_library(kimi_b_far STATIC w.cc)\n");
  Write("appliance/c/CMakeLists.txt", "add_library(kimi_cee STATIC x.cc)\n");
  const std::string tail = " or say why not above it (\"# Kept apart from ";
  EXPECT_EQ(LibrariesWithoutTheirFoldersName(root_),
            (std::vector<std::string>{
                "appliance/CMakeLists.txt: kimi_a_more is a library of a/ other than kimi_a; merge it into it" + tail +
                    "kimi_a: <reason>\")",
                "appliance/b/CMakeLists.txt: kimi_b_empty is a library of b/ other than kimi_b; merge it into it" + tail +
                    "kimi_b: <reason>\")",
                "appliance/b/CMakeLists.txt: kimi_b_far is a library of b/ other than kimi_b; merge it into it" + tail +
                    "kimi_b: <reason>\")",
                "appliance/c/CMakeLists.txt: kimi_cee is a library of c/ other than kimi_c; merge it into it" + tail +
                    "kimi_c: <reason>\")",
            }));
}

TEST(IncludeGraphParseTest, MalformedLinesAreReported) {
  std::istringstream text("store db\n[appliance]\nstore db\nstore again\n[pending]\na.cc -> http\n");
  std::vector<std::string> errors;
  ParseLayers(text, &errors);
  EXPECT_EQ(errors, (std::vector<std::string>{"LAYERS:1: outside [engine], [appliance] or [pending]",
                                              "LAYERS:4: store is listed twice",
                                              "LAYERS:6: a pending line is `file -> folder  reason`"}));
}

}  // namespace
