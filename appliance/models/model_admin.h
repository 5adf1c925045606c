// ModelAdmin: the model lifecycle as the admin API (/admin/v1/models) sees it: JSON requests
// in, JSON replies out, with imports run as background jobs whose progress is polled.
//
//   List()                 {"models":[{model, digest, version, state, ...}], "activation_generation": n,
//                           "import_roots":[...], "serving":{...} or null}: the configured import
//                          roots (empty: import is off) and what the engine serves now as
//                          ModelAdminOptions::serving describes it, which may be a model.dir
//                          outside the store
//   StartImport(body)      {"model":"k3","source":"/media/usb/k3","ignore":[...]}
//                          -> {"job":"1","state":"running",...}; the source must lie under one of
//                          the configured import roots (the mounted media), after resolving links,
//                          and fit in the store's free space (else FailedPrecondition at once,
//                          naming the bytes needed and available; the job re-checks when it starts)
//   ImportStatus(job)      {"job","model","source","state":"running|succeeded|failed","phase",
//                           "bytes_done","bytes_total","bytes_per_second","eta_seconds",
//                           "version":{...} on success, "error" on failure}; phase is
//                          "copying", then "verifying", and "done" once it succeeded, when
//                          bytes_done = bytes_total = the bytes copied and the rate is the
//                          whole import's average
//   ImportJobs()           {"jobs":[...newest first...]}: what the console polls, no job id needed
//   Activate(body)         {"model","digest","force":false} -> {"version":{...}}
//   Rollback(body)         {"model"} -> {"version":{...}}
//   Remove(model, digest)  -> {"removed":{"model","digest"}}
// Errors are Status values for the HTTP layer's one error wrapper; a verification refusal
// (Corruption in the store) is reported as FailedPrecondition with its message, because an
// administrator needs to know which file failed.
//
// After Close() (the daemon's stop) every method answers Unavailable.
// Public header of models/: other folders include it.
// Owns: the import jobs and their threads. Close() and the destructor cancel a running
// import's copy and join the threads. Borrows the ModelStore.
// Thread safety: every method may be called from any thread, except Close() (after the HTTP
// server has stopped).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "kimi/status.h"
#include "models/model_store.h"

namespace kimi::models {

struct ModelAdminOptions {
  // Directories an import may read from (where removable media are mounted).
  std::vector<std::string> import_roots = {"/media", "/mnt", "/run/media"};
  size_t max_finished_jobs = 64;  // finished jobs kept for polling; oldest dropped first
  // What the engine serves now, as List() reports it (the daemon: model, store_id, digest,
  // version, signer, origin, since); null when nothing serves. Called on the List() caller's
  // thread; empty: "serving" is null.
  std::function<nlohmann::json()> serving;
};

class ModelAdmin {
 public:
  // `store` outlives the admin, or its Close(); null: every method answers Unavailable.
  ModelAdmin(ModelStore* store, ModelAdminOptions options);
  ~ModelAdmin();
  ModelAdmin(const ModelAdmin&) = delete;
  ModelAdmin& operator=(const ModelAdmin&) = delete;

  Result<nlohmann::json> List() const;
  Result<nlohmann::json> StartImport(const nlohmann::json& body, const Actor& actor);
  Result<nlohmann::json> ImportStatus(const std::string& job_id) const;
  Result<nlohmann::json> ImportJobs() const;

  // Cancels a running import, joins the import threads and detaches the store.
  void Close();
  Result<nlohmann::json> Activate(const nlohmann::json& body, const Actor& actor);
  Result<nlohmann::json> Rollback(const nlohmann::json& body, const Actor& actor);
  Result<nlohmann::json> Remove(const std::string& model_id, const std::string& digest, const Actor& actor);

  // Blocks until the job has finished (tests, shutdown).
  void WaitForJob(const std::string& job_id);

 private:
  struct Job {
    std::string id;
    std::string model_id;
    std::string source;
    std::string state = "running";  // running, succeeded, failed
    ImportProgress progress;        // phase points at a literal
    uint64_t bytes_total = 0;       // the largest total any phase reported: what was copied
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    nlohmann::json version;
    std::string error;
    std::thread worker;
  };
  nlohmann::json JobJson(const Job& job) const;  // precondition: mu_ held
  Result<std::string> CheckSource(const std::string& source) const;
  Result<ModelStore*> Store() const;
  void DropOldJobs();  // precondition: mu_ held

  std::atomic<ModelStore*> store_;
  const ModelAdminOptions options_;
  mutable std::mutex mu_;
  std::condition_variable job_done_;
  std::map<uint64_t, std::unique_ptr<Job>> jobs_;  // guarded by mu_; by job number
  uint64_t next_job_ = 1;                           // guarded by mu_
  std::atomic<bool> stopping_{false};               // set by the destructor: cancels imports
};

}  // namespace kimi::models
