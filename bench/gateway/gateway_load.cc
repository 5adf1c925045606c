// kimi-bench-gateway-load: the load generator of the gateway overhead benchmark
// (bench/gateway/gateway_bench.py). Two sides, `--direct` (a worker) and `--gateway` (the
// appliance in front of it), get the same rounds of load in pairs (one round per side; with
// `--order alternate` every other pair runs the gateway first): in a round `--streams` client
// threads each send `--requests` streaming chat completions one after another. One warm-up
// round per side (`--warmup-requests` per stream) comes first and is not reported. Each stream keeps one
// keep-alive connection per side across rounds, so both sides are measured in the steady
// state rather than on connection set-up. Prints one JSON object: per measured round and
// side (tagged with its pair), the wall time, the completion tokens the streams' usage reported, and each request's
// latency (send to last byte) and time to its first answer or reasoning frame. The SSE is
// parsed with the appliance's own upstream::SseParser.
//
// Requests are identical (greedy, same prompt) unless `--max-tokens-spread S` is given: then
// each request's max_tokens is drawn uniformly from [max_tokens - S, max_tokens + S] (mean
// unchanged) by a hash of (--seed, round, stream, request index), so both rounds of a pair
// send exactly the same requests in the same order on each stream. With equal max_tokens all
// streams end in the same worker step and send their next request at the same instant, in
// lock-step waves of --streams requests; the spread lets them drift apart as independent
// clients would (each round still opens with one wave: every stream starts at once).
//
// Thread safety: in a round each client thread owns its connection and its result slot.
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/flags.h"
#include "upstream/sse_parser.h"

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

struct Side {
  std::string name;
  std::string url;      // http://host:port, no path
  std::string api_key;  // sent as a bearer token when not empty
};

struct Settings {
  std::vector<Side> sides;
  std::string model;
  int streams = 64;
  int requests = 1;
  int rounds = 3;
  int max_tokens = 32;
  // Half-width of the range each request's max_tokens is drawn from; 0: every request asks
  // for max_tokens. Less than max_tokens, so every request asks for at least one token.
  int max_tokens_spread = 0;
  uint64_t seed = 1;  // of the max_tokens draws
  // Order of the two sides within each measured pair of rounds: "fixed" runs the sides in
  // the order given (direct, gateway) every time; "alternate" reverses it every other pair
  // (direct-gateway, gateway-direct, ...), so a machine that speeds up or slows down over the
  // run favours neither side.
  bool alternate_order = false;
  // Requests per stream in the warm-up round of each side (it only opens the connections and
  // starts the servers' threads): never more than --requests.
  int warmup_requests = 2;
  std::string prompt = "Write a short story about a lighthouse keeper.";
};

struct RequestResult {
  bool ok = false;
  std::string error;
  double latency_ms = 0;
  double first_frame_ms = -1;  // first frame with content or reasoning; -1 when none came
  int64_t completion_tokens = 0;
  // The request could not be written on a kept-alive connection that the server had just
  // closed for idleness (5 s on both sides; a busy machine can stretch the other side's
  // round past it): nothing reached the server, so it is sent again on a new connection.
  bool unsent = false;
};

// The request bodies of a run: one per max_tokens value, and which one each request sends.
class RequestPlan {
 public:
  explicit RequestPlan(const Settings& s) : s_(s) {
    for (int t = s.max_tokens - s.max_tokens_spread; t <= s.max_tokens + s.max_tokens_spread; ++t) {
      bodies_.push_back(Json{{"model", s.model},
                             {"messages", Json::array({Json{{"role", "user"}, {"content", s.prompt}}})},
                             {"max_tokens", t},
                             {"temperature", 0.0},
                             // The form both a worker and the appliance accept.
                             {"chat_template_kwargs", Json{{"thinking", false}}},
                             {"stream", true},
                             {"stream_options", Json{{"include_usage", true}}}}
                            .dump());
    }
  }

  // max_tokens of request `index` of `stream` in measured round `round` (-1: the warm-up): a
  // pure function of its arguments and the seed, so the two sides get the same requests.
  int MaxTokens(int round, int stream, int index) const {
    if (s_.max_tokens_spread == 0) return s_.max_tokens;
    uint64_t x = Mix(s_.seed);
    for (int64_t v : {int64_t{round}, int64_t{stream}, int64_t{index}}) x = Mix(x ^ static_cast<uint64_t>(v));
    return s_.max_tokens - s_.max_tokens_spread + static_cast<int>(x % uint64_t(2 * s_.max_tokens_spread + 1));
  }

  const std::string& Body(int max_tokens) const {
    return bodies_[static_cast<size_t>(max_tokens - (s_.max_tokens - s_.max_tokens_spread))];
  }

 private:
  // SplitMix64's finaliser: every input bit reaches every output bit.
  static uint64_t Mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }

  const Settings& s_;
  std::vector<std::string> bodies_;
};

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

bool HasText(const Json& chunk) {
  if (!chunk.contains("choices") || !chunk["choices"].is_array() || chunk["choices"].empty()) return false;
  const Json& delta = chunk["choices"][0].value("delta", Json::object());
  for (const char* key : {"content", "reasoning_content", "reasoning"}) {
    auto it = delta.find(key);
    if (it != delta.end() && it->is_string() && !it->get<std::string>().empty()) return true;
  }
  return false;
}

RequestResult StreamOnce(httplib::Client& client, const Side& side, const std::string& body) {
  RequestResult r;
  const Clock::time_point start = Clock::now();
  bool done = false;
  kimi::upstream::SseParser parser([&](const kimi::upstream::SseEvent& e) -> kimi::Status {
    if (e.data == "[DONE]") {
      done = true;
      return kimi::Status::OK();
    }
    Json chunk = Json::parse(e.data, nullptr, false);
    if (chunk.is_discarded()) return kimi::Status::Corruption("a frame that is not JSON");
    if (chunk.contains("error")) return kimi::Status::Internal("error frame: " + chunk["error"].dump());
    if (r.first_frame_ms < 0 && HasText(chunk)) r.first_frame_ms = MillisSince(start);
    if (chunk.contains("usage") && chunk["usage"].is_object()) {
      r.completion_tokens = chunk["usage"].value("completion_tokens", int64_t{0});
    }
    return kimi::Status::OK();
  });

  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  req.set_header("Content-Type", "application/json");
  if (!side.api_key.empty()) req.set_header("Authorization", "Bearer " + side.api_key);
  req.body = body;
  int status = 0;
  std::string error_body;
  kimi::Status parsed;
  req.response_handler = [&](const httplib::Response& response) {
    status = response.status;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    if (status != 200) {
      error_body.append(data, size);
      return true;
    }
    parsed = parser.Feed(std::string_view(data, size));
    return parsed.ok();
  };
  httplib::Response response;
  httplib::Error error = httplib::Error::Success;
  const bool sent = client.send(req, response, error);
  r.latency_ms = MillisSince(start);
  if (!parsed.ok()) {
    r.error = parsed.ToString();
  } else if (!sent) {
    r.error = "transport: " + httplib::to_string(error);
    r.unsent = error == httplib::Error::Write && status == 0;
  } else if (status != 200) {
    r.error = "HTTP " + std::to_string(status) + ": " + error_body.substr(0, 300);
  } else if (!done) {
    r.error = "the stream ended without [DONE]";
  } else {
    r.ok = true;
  }
  return r;
}

// One round on one side: every stream sends its requests on its own connection. `round` is the
// measured round's index, -1 for the warm-up (it picks the requests' max_tokens).
Json RunRound(const Settings& s, const RequestPlan& plan, const Side& side, int round,
              std::vector<std::unique_ptr<httplib::Client>>& clients, int requests) {
  std::vector<std::vector<RequestResult>> results(static_cast<size_t>(s.streams));
  int64_t requested = 0;
  for (int i = 0; i < s.streams; ++i) {
    for (int k = 0; k < requests; ++k) requested += plan.MaxTokens(round, i, k);
  }
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < requests; ++k) {
        const std::string& body = plan.Body(plan.MaxTokens(round, static_cast<int>(i), k));
        RequestResult r = StreamOnce(*clients[i], side, body);
        if (r.unsent) r = StreamOnce(*clients[i], side, body);
        results[i].push_back(std::move(r));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double wall_s = MillisSince(start) / 1000.0;

  Json latencies = Json::array(), first_frames = Json::array(), errors = Json::array();
  int64_t tokens = 0;
  int64_t failed = 0;
  for (const auto& stream : results) {
    for (const RequestResult& r : stream) {
      if (!r.ok) {
        ++failed;
        if (errors.size() < 5) errors.push_back(r.error);
        continue;
      }
      tokens += r.completion_tokens;
      latencies.push_back(r.latency_ms);
      if (r.first_frame_ms >= 0) first_frames.push_back(r.first_frame_ms);
    }
  }
  return Json{{"side", side.name}, {"requests", int64_t{s.streams} * requests}, {"failed", failed},
              {"errors", errors}, {"wall_s", wall_s}, {"max_tokens_requested", requested}, {"completion_tokens", tokens},
              {"tokens_per_s", wall_s > 0 ? double(tokens) / wall_s : 0.0}, {"latency_ms", latencies},
              {"first_frame_ms", first_frames}};
}

int Run(const Settings& s) {
  const RequestPlan plan(s);
  // clients[side][stream]: one keep-alive connection each, kept across rounds.
  std::vector<std::vector<std::unique_ptr<httplib::Client>>> clients(s.sides.size());
  for (size_t k = 0; k < s.sides.size(); ++k) {
    for (int i = 0; i < s.streams; ++i) {
      auto client = std::make_unique<httplib::Client>(s.sides[k].url);
      client->set_keep_alive(true);
      client->set_read_timeout(600, 0);
      client->set_connection_timeout(60, 0);
      clients[k].push_back(std::move(client));
    }
  }
  int64_t failed = 0;
  const int warmup_requests = std::min(s.warmup_requests, s.requests);
  for (size_t k = 0; k < s.sides.size(); ++k) {
    Json warmup = RunRound(s, plan, s.sides[k], -1, clients[k], warmup_requests);
    failed += warmup["failed"].get<int64_t>();
  }
  Json rounds = Json::array();
  for (int r = 0; r < s.rounds; ++r) {
    const bool reversed = s.alternate_order && r % 2 == 1;
    for (size_t i = 0; i < s.sides.size(); ++i) {
      const size_t k = reversed ? s.sides.size() - 1 - i : i;
      Json round = RunRound(s, plan, s.sides[k], r, clients[k], s.requests);
      failed += round["failed"].get<int64_t>();
      round["pair"] = r;
      rounds.push_back(std::move(round));
    }
  }
  std::printf("%s\n", Json{{"streams", s.streams}, {"max_tokens", s.max_tokens}, {"max_tokens_spread", s.max_tokens_spread},
                            {"seed", s.seed}, {"failed", failed}, {"rounds", rounds}}
                           .dump()
                           .c_str());
  return failed == 0 ? 0 : 1;
}

const std::vector<kimi::tools::FlagSpec>& LoadFlags() {
  static const std::vector<kimi::tools::FlagSpec> flags = {
      {"direct", true, "URL   the worker: http://host:port"},
      {"gateway", true, "URL   the appliance in front of it: http://host:port"},
      {"api-key", true, "KEY   the appliance's bearer token"},
      {"rounds", true, "N     measured rounds per side, after one warm-up round each (default 3)"},
      {"model", true, "ID    model id to ask for"},
      {"streams", true, "N     concurrent client streams (default 64)"},
      {"requests", true, "N     requests each stream sends one after another (default 1)"},
      {"max-tokens", true, "N     max_tokens of each request (default 32), the mean with a spread"},
      {"max-tokens-spread", true, "S  each request's max_tokens drawn from [N-S, N+S] (default 0; S < N)"},
      {"seed", true, "N     seed of the max_tokens draws (default 1)"},
      {"order", true, "fixed|alternate  side order in each measured pair (default fixed: direct first)"},
      {"warmup-requests", true, "N  requests per stream in each side's warm-up round (default 2, at most --requests)"},
      {"help", false, "      this text"},
  };
  return flags;
}

}  // namespace

int main(int argc, char** argv) {
  auto flags = kimi::tools::Flags::Parse(std::vector<std::string>(argv + 1, argv + argc), LoadFlags());
  if (!flags.ok() || flags->Has("help") || !flags->Has("direct") || !flags->Has("gateway") || !flags->Has("model")) {
    std::fprintf(stderr, "%susage: kimi-bench-gateway-load --direct URL --gateway URL --model ID [flags]\n%s",
                 flags.ok() ? "" : (flags.status().message() + "\n").c_str(),
                 kimi::tools::Flags::Usage(LoadFlags()).c_str());
    return 2;
  }
  Settings s;
  s.sides = {Side{"direct", *flags->Get("direct"), ""},
             Side{"gateway", *flags->Get("gateway"), flags->Get("api-key").value_or("")}};
  s.model = *flags->Get("model");
  auto streams = flags->GetUint("streams", 64);
  auto requests = flags->GetUint("requests", 1);
  auto max_tokens = flags->GetUint("max-tokens", 32);
  auto rounds = flags->GetUint("rounds", 3);
  auto warmup_requests = flags->GetUint("warmup-requests", 2);
  auto spread = flags->GetUint("max-tokens-spread", 0);
  auto seed = flags->GetUint("seed", 1);
  for (const auto* value : {&streams, &requests, &max_tokens, &rounds, &warmup_requests}) {
    if (!value->ok() || **value == 0) {
      std::fprintf(stderr, "--streams, --requests, --max-tokens, --rounds and --warmup-requests take positive integers\n");
      return 2;
    }
  }
  s.streams = static_cast<int>(*streams);
  s.requests = static_cast<int>(*requests);
  s.max_tokens = static_cast<int>(*max_tokens);
  s.rounds = static_cast<int>(*rounds);
  s.warmup_requests = static_cast<int>(*warmup_requests);
  if (!spread.ok() || *spread >= *max_tokens || !seed.ok()) {
    std::fprintf(stderr, "--max-tokens-spread takes an integer below --max-tokens, --seed an integer\n");
    return 2;
  }
  s.max_tokens_spread = static_cast<int>(*spread);
  s.seed = *seed;
  const std::string order = flags->Get("order").value_or("fixed");
  if (order != "fixed" && order != "alternate") {
    std::fprintf(stderr, "--order takes fixed or alternate\n");
    return 2;
  }
  s.alternate_order = order == "alternate";
  return Run(s);
}
