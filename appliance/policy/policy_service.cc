#include "policy/policy_service.h"

#include <chrono>

#include "kimi/log.h"
#include "policy/detectors.h"

namespace kimi::policy {
namespace {

// The detail of a "policy.update" audit record (docs/policies.md, "Versions and changes").
std::string InstallDetail(int64_t version, int64_t previous, const std::string& name, nlohmann::json diff,
                          int64_t restores) {
  nlohmann::json detail{{"version", version}, {"previous", previous}, {"name", name}, {"diff", std::move(diff)}};
  if (restores > 0) detail["restores"] = restores;
  return detail.dump();
}

// Matches the whole of any text that is not empty.
constexpr const char* kEveryText = R"([\s\S]+)";

}  // namespace

PolicyService::PolicyService(PolicyStore* store, const auth::ServerSecret* secret, AuditAct audit,
                             std::function<int64_t()> clock_ms)
    : store_(store), secret_(secret), audit_(std::move(audit)), clock_ms_(std::move(clock_ms)) {}

int64_t PolicyService::NowMs() const {
  if (clock_ms_) return clock_ms_();
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::vector<std::string> ReplaceUncompilablePatterns(nlohmann::json* document) {
  std::vector<std::string> replaced;
  if (!document->is_object() || !document->contains("redaction") || !(*document)["redaction"].is_object()) return replaced;
  nlohmann::json& redaction = (*document)["redaction"];
  auto check = [&replaced](nlohmann::json& pattern, const std::string& pointer) {
    if (!pattern.is_string() || PatternDetector::Create("check", pattern.get<std::string>()).ok()) return;
    pattern = kEveryText;
    replaced.push_back(pointer);
  };
  if (redaction.contains("medical_record_pattern")) check(redaction["medical_record_pattern"], "/redaction/medical_record_pattern");
  if (redaction.contains("custom_patterns") && redaction["custom_patterns"].is_array()) {
    nlohmann::json& custom = redaction["custom_patterns"];
    for (size_t i = 0; i < custom.size(); ++i) {
      if (custom[i].is_object() && custom[i].contains("pattern")) {
        check(custom[i]["pattern"], "/redaction/custom_patterns/" + std::to_string(i) + "/pattern");
      }
    }
  }
  return replaced;
}

Result<std::shared_ptr<ActivePolicy>> PolicyService::Compile(int64_t version, const nlohmann::json& document) const {
  auto active = std::make_shared<ActivePolicy>();
  active->version = version;
  active->document = document;
  KIMI_ASSIGN_OR_RETURN(active->policy, ParsePolicy(document));
  Result<std::unique_ptr<Redactor>> redactor = Redactor::Create(active->policy.redaction, secret_);
  if (!redactor.ok()) return Status::InvalidArgument("the policy is invalid: /redaction: " + redactor.status().message());
  active->redactor = std::move(redactor).value();
  return active;
}

Status PolicyService::Start(const nlohmann::json& initial, const PolicyActor& system) {
  if (store_ == nullptr) return Status::FailedPrecondition("the policy service has no store attached");
  KIMI_ASSIGN_OR_RETURN(std::optional<StoredPolicy> latest, store_->Latest());
  if (!latest) return Submit(initial, system).status();
  nlohmann::json document = nlohmann::json::parse(latest->document, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) {
    return Status::Corruption("stored policy version " + std::to_string(latest->version) + " is not JSON");
  }
  const nlohmann::json stored = document;
  for (const std::string& pointer : ReplaceUncompilablePatterns(&document)) {
    log::Error("a redaction pattern of the active policy no longer compiles; until a corrected policy is submitted, "
               "every text counts as a value of its category",
               {{"version", latest->version}, {"pattern", pointer}});
  }
  KIMI_ASSIGN_OR_RETURN(std::shared_ptr<ActivePolicy> active, Compile(latest->version, document));
  active->document = stored;
  std::lock_guard<std::mutex> lock(mu_);
  active_ = std::move(active);
  return Status::OK();
}

std::shared_ptr<const ActivePolicy> PolicyService::Active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return active_;
}

Result<int64_t> PolicyService::Submit(const nlohmann::json& document, const PolicyActor& actor) {
  std::lock_guard<std::mutex> submit(submit_mu_);
  return Install(document, actor, 0);
}

Result<int64_t> PolicyService::Restore(int64_t version, const PolicyActor& actor) {
  std::lock_guard<std::mutex> submit(submit_mu_);
  KIMI_ASSIGN_OR_RETURN(std::optional<StoredPolicy> stored, store_->Get(version));
  if (!stored) return Status::NotFound("no policy version " + std::to_string(version));
  std::shared_ptr<const ActivePolicy> active = Active();
  if (active && active->version == version) {
    return Status::FailedPrecondition("policy version " + std::to_string(version) + " is already active");
  }
  nlohmann::json document = nlohmann::json::parse(stored->document, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return Status::Corruption("stored policy version " + std::to_string(version) + " is not JSON");
  return Install(document, actor, version);
}

Result<int64_t> PolicyService::Install(const nlohmann::json& document, const PolicyActor& actor, int64_t restores) {
  // Compile first: a refused document touches neither the database nor the audit log.
  KIMI_ASSIGN_OR_RETURN(std::shared_ptr<ActivePolicy> candidate, Compile(0, document));
  std::shared_ptr<const ActivePolicy> previous = Active();
  const nlohmann::json before = previous ? previous->document : nlohmann::json::object();

  StoredPolicy row;
  row.created_ms = NowMs();
  row.actor = actor.name;
  row.name = candidate->policy.name;
  row.document = document.dump();
  KIMI_ASSIGN_OR_RETURN(int64_t version, store_->Append(row, [&](sqlite3* db, int64_t version) -> Status {
    audit::AuditRecord record =
        audit::RecordBuilder::AdminAction(actor, "policy.update", "policy/" + std::to_string(version))
            .Time(row.created_ms)
            .Detail(InstallDetail(version, previous ? previous->version : 0, row.name,
                                  nlohmann::json::diff(before, document), restores))
            .Build();
    return audit_ ? audit_(db, std::move(record)) : Status::OK();
  }));
  if (after_commit_) {
    if (Status moved = after_commit_(); !moved.ok()) {
      log::Warn("policy version stored; its audit record waits in the outbox",
                {{"version", version}, {"error", moved.ToString()}});
    }
  }

  candidate->version = version;
  {
    std::lock_guard<std::mutex> lock(mu_);
    active_ = std::move(candidate);
  }
  log::Info("policy version installed", {{"version", version}, {"name", row.name}, {"actor", actor.name}});
  return version;
}

}  // namespace kimi::policy
