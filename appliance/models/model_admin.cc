#include "models/model_admin.h"

#include <algorithm>
#include <filesystem>

namespace kimi::models {
namespace {

namespace fs = std::filesystem;

// Refusals the administrator must read in full; the HTTP layer hides Corruption details.
Status AdminVisible(const Status& s) {
  if (s.code() == Status::Code::kCorruption) return Status::FailedPrecondition(s.message());
  return s;
}

template <typename T>
Result<T> AdminVisible(Result<T> r) {
  if (r.ok()) return r;
  return AdminVisible(r.status());
}

Result<std::string> StringField(const nlohmann::json& body, const char* name, bool required = true) {
  if (!body.is_object()) return Status::InvalidArgument("the request body must be a JSON object");
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) {
    if (required) return Status::InvalidArgument(std::string("\"") + name + "\" is required");
    return std::string();
  }
  if (!it->is_string()) return Status::InvalidArgument(std::string("\"") + name + "\" must be a string");
  return it->get<std::string>();
}

Result<bool> BoolField(const nlohmann::json& body, const char* name) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return false;
  if (!it->is_boolean()) return Status::InvalidArgument(std::string("\"") + name + "\" must be true or false");
  return it->get<bool>();
}

}  // namespace

ModelAdmin::ModelAdmin(ModelStore* store, ModelAdminOptions options) : store_(store), options_(std::move(options)) {}

ModelAdmin::~ModelAdmin() { Close(); }


Result<ModelStore*> ModelAdmin::Store() const {
  ModelStore* store = store_.load();
  if (store == nullptr) return Status::Unavailable("the model store is not open");
  return store;
}

void ModelAdmin::Close() {
  stopping_.store(true);
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [n, job] : jobs_) workers.push_back(std::move(job->worker));
  }
  for (auto& t : workers)
    if (t.joinable()) t.join();
  store_.store(nullptr);
}

Result<nlohmann::json> ModelAdmin::List() const {
  KIMI_ASSIGN_OR_RETURN(ModelStore * store, Store());
  KIMI_ASSIGN_OR_RETURN(std::vector<ModelVersion> rows, store->List());
  nlohmann::json models = nlohmann::json::array();
  for (const auto& v : rows) models.push_back(VersionToJson(v));
  return nlohmann::json{{"models", std::move(models)},
                        {"activation_generation", store->activation_generation()},
                        {"import_roots", options_.import_roots},
                        {"serving", options_.serving ? options_.serving() : nlohmann::json()}};
}

Result<std::string> ModelAdmin::CheckSource(const std::string& source) const {
  // Where the path leads (links resolved as far as it exists), then whether that is under an
  // import root, and only then whether it is a directory: a path outside the roots gets one
  // answer whether or not it exists, so the route cannot probe the appliance's file system.
  std::error_code ec;
  fs::path resolved = fs::weakly_canonical(source, ec);
  if (ec) resolved = fs::absolute(source, ec).lexically_normal();
  bool inside = false;
  for (const auto& root : options_.import_roots) {
    fs::path r = fs::weakly_canonical(root, ec);
    if (ec) continue;
    auto rel = resolved.lexically_relative(r);
    inside = inside || (!rel.empty() && *rel.begin() != ".." && rel != ".");
  }
  if (!inside) {
    std::string roots;
    for (const auto& root : options_.import_roots) roots += (roots.empty() ? "" : ", ") + root;
    return Status::PermissionDenied("imports are read from mounted media only (" + roots + "); " + source +
                                    " is outside them");
  }
  if (!fs::is_directory(resolved, ec)) return Status::NotFound("no model directory at " + source);
  return resolved.string();
}

Result<nlohmann::json> ModelAdmin::StartImport(const nlohmann::json& body, const Actor& actor) {
  KIMI_ASSIGN_OR_RETURN(ModelStore * store, Store());
  KIMI_ASSIGN_OR_RETURN(std::string model_id, StringField(body, "model"));
  KIMI_ASSIGN_OR_RETURN(std::string source, StringField(body, "source"));
  KIMI_RETURN_IF_ERROR(ValidateModelId(model_id));
  ImportRequest request;
  request.model_id = model_id;
  request.cancel = &stopping_;
  if (auto it = body.find("ignore"); it != body.end()) {
    if (!it->is_array()) return Status::InvalidArgument("\"ignore\" must be an array of paths");
    for (const auto& p : *it) {
      if (!p.is_string()) return Status::InvalidArgument("\"ignore\" must be an array of paths");
      request.extra_ignore_paths.push_back(p.get<std::string>());
    }
  }
  KIMI_ASSIGN_OR_RETURN(request.source, CheckSource(source));
  // A medium that does not fit is refused now, with the figures, rather than as a failed job.
  KIMI_RETURN_IF_ERROR(store->CheckImportSpace(request, actor));

  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [n, job] : jobs_) {
    if (job->state == "running") {
      return Status::ResourceExhausted("import job " + job->id + " (" + job->source +
                                       ") is still running; one import at a time");
    }
  }
  DropOldJobs();
  uint64_t number = next_job_++;
  auto job = std::make_unique<Job>();
  Job* j = job.get();
  j->id = std::to_string(number);
  j->model_id = model_id;
  j->source = request.source;
  j->progress.phase = "copying";
  request.progress = [this, j](const ImportProgress& p) {
    std::lock_guard<std::mutex> progress_lock(mu_);
    j->progress = p;
    j->bytes_total = std::max(j->bytes_total, p.bytes.bytes_total);
  };
  j->worker = std::thread([this, store, j, request = std::move(request), actor] {
    Result<ModelVersion> v = store->Import(request, actor);
    std::lock_guard<std::mutex> done_lock(mu_);
    if (v.ok()) {
      j->state = "succeeded";
      j->version = VersionToJson(*v);
      // The last report came from a phase that may have had nothing left to read (the
      // verification of digests the copy already computed): the finished job reports all of it.
      j->progress = {"done", ProgressSince(j->started, j->bytes_total, j->bytes_total, /*finished=*/true)};
    } else {
      j->state = "failed";
      j->error = v.status().message();
    }
    job_done_.notify_all();
  });
  jobs_[number] = std::move(job);
  return JobJson(*j);
}

nlohmann::json ModelAdmin::JobJson(const Job& job) const {
  nlohmann::json out = {{"job", job.id},
                        {"model", job.model_id},
                        {"source", job.source},
                        {"state", job.state},
                        {"phase", std::string(job.progress.phase)},
                        {"bytes_done", job.progress.bytes.bytes_done},
                        {"bytes_total", job.progress.bytes.bytes_total},
                        {"bytes_per_second", job.progress.bytes.bytes_per_second},
                        {"eta_seconds", job.progress.bytes.eta_seconds}};
  if (job.state == "succeeded") out["version"] = job.version;
  if (job.state == "failed") out["error"] = job.error;
  return out;
}

void ModelAdmin::DropOldJobs() {
  size_t finished = 0;
  for (const auto& [n, job] : jobs_) finished += job->state != "running";
  for (auto it = jobs_.begin(); it != jobs_.end() && finished >= options_.max_finished_jobs;) {
    if (it->second->state == "running") {
      ++it;
      continue;
    }
    // A finished worker only has to return; it no longer takes mu_.
    if (it->second->worker.joinable()) it->second->worker.join();
    it = jobs_.erase(it);
    --finished;
  }
}

Result<nlohmann::json> ModelAdmin::ImportStatus(const std::string& job_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [n, job] : jobs_) {
    if (job->id == job_id) return JobJson(*job);
  }
  return Status::NotFound("no import job \"" + job_id + "\"");
}

Result<nlohmann::json> ModelAdmin::ImportJobs() const {
  std::lock_guard<std::mutex> lock(mu_);
  nlohmann::json jobs = nlohmann::json::array();
  for (auto it = jobs_.rbegin(); it != jobs_.rend(); ++it) jobs.push_back(JobJson(*it->second));
  return nlohmann::json{{"jobs", std::move(jobs)}};
}

void ModelAdmin::WaitForJob(const std::string& job_id) {
  std::unique_lock<std::mutex> lock(mu_);
  job_done_.wait(lock, [&] {
    for (const auto& [n, job] : jobs_)
      if (job->id == job_id) return job->state != "running";
    return true;
  });
}

Result<nlohmann::json> ModelAdmin::Activate(const nlohmann::json& body, const Actor& actor) {
  KIMI_ASSIGN_OR_RETURN(std::string model_id, StringField(body, "model"));
  KIMI_ASSIGN_OR_RETURN(std::string digest, StringField(body, "digest"));
  KIMI_ASSIGN_OR_RETURN(bool force, BoolField(body, "force"));
  KIMI_ASSIGN_OR_RETURN(ModelStore * store, Store());
  KIMI_ASSIGN_OR_RETURN(ModelVersion v, AdminVisible(store->Activate(model_id, digest, actor, force)));
  return nlohmann::json{{"version", VersionToJson(v)}};
}

Result<nlohmann::json> ModelAdmin::Rollback(const nlohmann::json& body, const Actor& actor) {
  KIMI_ASSIGN_OR_RETURN(std::string model_id, StringField(body, "model"));
  KIMI_ASSIGN_OR_RETURN(ModelStore * store, Store());
  KIMI_ASSIGN_OR_RETURN(ModelVersion v, AdminVisible(store->Rollback(model_id, actor)));
  return nlohmann::json{{"version", VersionToJson(v)}};
}

Result<nlohmann::json> ModelAdmin::Remove(const std::string& model_id, const std::string& digest, const Actor& actor) {
  if (model_id.empty() || digest.empty()) return Status::InvalidArgument("\"model\" and \"digest\" are required");
  KIMI_ASSIGN_OR_RETURN(ModelStore * store, Store());
  KIMI_RETURN_IF_ERROR(AdminVisible(store->Remove(model_id, digest, actor)));
  return nlohmann::json{{"removed", {{"model", model_id}, {"digest", digest}}}};
}

}  // namespace kimi::models
