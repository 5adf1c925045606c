#include "admin/audit_routes.h"

#include <httplib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <ostream>
#include <streambuf>

#include "admin/audit_proof_route.h"
#include "admin/audit_query.h"
#include "admin/reply.h"
#include "audit/audit_sink.h"
#include "audit/audit_store.h"
#include "audit/log_export.h"
#include "audit/log_verifier.h"
#include "audit/record_builder.h"
#include "auth/authenticator.h"
#include "http/request_audit.h"
#include "kimi/log.h"

namespace kimi::admin {
namespace {

using http::RequestContext;
using nlohmann::json;

Result<const AuditAccess*> Access(const AuditAccess* access) {
  if (access == nullptr) return Status::Unavailable("the audit log is not open");
  return access;
}

// An output stream buffer that hands its bytes on in chunks of up to 64 KiB; the stream
// fails once `write` returns false (the client went away).
class ChunkedOutput : public std::streambuf {
 public:
  explicit ChunkedOutput(std::function<bool(std::string_view)> write) : write_(std::move(write)) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }

 protected:
  int_type overflow(int_type c) override {
    if (sync() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) sputc(traits_type::to_char_type(c));
    return traits_type::not_eof(c);
  }
  int sync() override {
    const std::string_view pending(pbase(), static_cast<size_t>(pptr() - pbase()));
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    if (failed_ || (!pending.empty() && !write_(pending))) failed_ = true;
    return failed_ ? -1 : 0;
  }

 private:
  std::function<bool(std::string_view)> write_;
  std::array<char, 64 * 1024> buffer_{};
  bool failed_ = false;
};

}  // namespace

Result<std::unique_ptr<audit::AuditStore>> OpenAuditReader(const AuditAccess& access) {
  audit::AuditStoreOptions options;
  options.read_only = true;
  Result<std::unique_ptr<audit::AuditStore>> store = audit::AuditStore::Open(access.db_path, options);
  if (!store.ok()) return Status::Unavailable("cannot read the audit log: " + store.status().message());
  return store;
}

Result<KeyDirectory> LoadKeyDirectory(const AuditAccess& access) {
  if (access.keys == nullptr) return KeyDirectory();
  Result<std::vector<auth::KeyRecord>> keys = access.keys->ListKeys();
  if (!keys.ok()) return Status::Unavailable("cannot read the API keys: " + keys.status().message());
  return KeyDirectory(*keys);
}

Status HandleAuditSearch(const AuditAccess* audit_access, RequestContext&, const httplib::Request& req,
                         httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(const AuditAccess* access, Access(audit_access));
  KIMI_ASSIGN_OR_RETURN(KeyDirectory keys, LoadKeyDirectory(*access));
  KIMI_ASSIGN_OR_RETURN(AuditSearch search, ParseAuditSearch(req, keys));
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<audit::AuditStore> store, OpenAuditReader(*access));
  uint64_t next_seq = 0;
  if (!search.query.contains.empty()) {
    KIMI_ASSIGN_OR_RETURN(next_seq, store->NextSeq());
  }
  const AuditPage page = PageOf(search, next_seq);
  json records = json::array();
  std::optional<uint64_t> next = page.resume;
  KIMI_RETURN_IF_ERROR(store->ScanRecords(page.query, [&](audit::StoredRecord& row) {
    if (records.size() == search.limit) {
      next = row.record.seq;
      return Status::OK();
    }
    records.push_back(AuditorRecordJson(row, keys));
    return Status::OK();
  }));
  json reply{{"records", std::move(records)}, {"next_cursor", next ? json(std::to_string(*next)) : json(nullptr)}};
  if (page.bounded) reply["scanned"] = {{"first_seq", page.scan_first}, {"last_seq", page.scan_last}};
  ReplyJson(res, 200, reply);
  return Status::OK();
}

Status HandleAuditActions(const AuditAccess* audit_access, RequestContext&, const httplib::Request&,
                          httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(const AuditAccess* access, Access(audit_access));
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<audit::AuditStore> store, OpenAuditReader(*access));
  KIMI_ASSIGN_OR_RETURN(std::vector<std::string> actions, store->DistinctActions());
  ReplyJson(res, 200, json{{"actions", std::move(actions)}});
  return Status::OK();
}

Status HandleAuditExport(const AuditAccess* audit_access, RequestContext& ctx, const httplib::Request& req,
                         httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(const AuditAccess* access, Access(audit_access));
  audit::ExportOptions options;
  options.with_proofs = true;
  // The list's own parser: the export holds the records the list shows for these parameters
  // (in sequence order, every page; order, cursor and limit do not apply).
  KIMI_ASSIGN_OR_RETURN(KeyDirectory keys, LoadKeyDirectory(*access));
  KIMI_ASSIGN_OR_RETURN(AuditSearch search, ParseAuditSearch(req, keys));
  options.records = search.query;
  // format=csv: the same records as a spreadsheet reads them, with the covering signed heads
  // as rows but no inclusion proofs (those exist only in the JSON lines bundle).
  const std::string format = req.has_param("format") ? req.get_param_value("format") : "jsonl";
  if (format == "csv") {
    options.format = audit::ExportFormat::kCsv;
    options.with_proofs = false;
  } else if (format != "jsonl") {
    return Status::InvalidArgument("query parameter 'format' must be jsonl or csv");
  }
  const bool csv = options.format == audit::ExportFormat::kCsv;
  if (access->sink == nullptr) return Status::Unavailable("the audit log is not open");
  // A fresh head covers every record committed so far, so the bundle has no unproven tail.
  KIMI_RETURN_IF_ERROR(access->sink->SignHeadNow().status());
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<audit::AuditStore> store, OpenAuditReader(*access));

  // One pass over one snapshot into an unnamed spool file (removed when closed), hashed as it is
  // written; the snapshot ends with the pass. Streaming from the database instead held the
  // snapshot for as long as the client took to read, and a reader that paced its reads under
  // the write timeout kept every record committed meanwhile in the WAL: gigabytes a minute.
  std::shared_ptr<std::FILE> spool(std::tmpfile(), [](std::FILE* f) {
    if (f != nullptr) std::fclose(f);
  });
  if (spool == nullptr) return Status::Unavailable(std::string("cannot make the export's spool file: ") + std::strerror(errno));
  audit::Sha256Stream digest;
  ChunkedOutput spooling([&digest, file = spool.get()](std::string_view bytes) {
    digest.Update(bytes);
    return std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  });
  std::ostream spooled(&spooling);
  KIMI_RETURN_IF_ERROR(store->BeginSnapshot());
  Result<audit::ExportSummary> summary = audit::ExportAuditLog(*store, options, spooled);
  (void)store->EndSnapshot();
  store.reset();
  KIMI_RETURN_IF_ERROR(summary.status());
  if (spooling.pubsync() != 0 || std::fflush(spool.get()) != 0) {
    return Status::Unavailable(std::string("cannot write the export's spool file: ") + std::strerror(errno));
  }
  const uint64_t bytes = digest.bytes();
  const std::string sha256 = audit::ToHex(digest.Finish());

  // The export is an administrative act: recorded, durably, before anything leaves.
  const std::string target = DescribeAuditSearch(req) + " format=" + format;
  audit::AuditRecord act =
      audit::RecordBuilder::AdminAction(http::AuditActorOf(ctx), "audit.export", target)
          .HttpStatus(200)
          .Detail(std::to_string(summary->records) + " record(s), " + std::to_string(summary->heads) +
                  " signed head(s), " + std::to_string(bytes) + " bytes")
          .ResponseHash(sha256)
          .Build();
  Status recorded = access->sink->Record(std::move(act)).WaitCommitted();
  if (!recorded.ok()) return Status::Unavailable("the export could not be recorded: " + recorded.message());
  ctx.audit.response_sha256 = sha256;  // the request's own record, committed before the first chunk

  // The spooled bytes, streamed in chunks.
  res.status = 200;
  res.set_header("Content-Disposition",
                 csv ? "attachment; filename=\"audit-export.csv\"" : "attachment; filename=\"audit-export.jsonl\"");
  const std::string request_id = ctx.request_id;
  res.set_chunked_content_provider(
      csv ? "text/csv; charset=utf-8" : "application/x-ndjson",
      [spool, bytes, request_id](size_t, httplib::DataSink& sink) {
        std::rewind(spool.get());
        std::array<char, 64 * 1024> buffer{};
        uint64_t sent = 0;
        while (sent < bytes) {
          const size_t n = std::fread(buffer.data(), 1, std::min<uint64_t>(buffer.size(), bytes - sent), spool.get());
          if (n == 0 || !sink.write(buffer.data(), n)) {
            // No terminating chunk: the client sees a truncated response, never a short bundle.
            log::Warn("audit export cut short", {{"request_id", request_id},
                                                 {"error", n == 0 ? "the spool file ended early" : "client gone"}});
            return false;
          }
          sent += n;
        }
        sink.done();
        return true;
      });
  return Status::OK();
}

Status HandleAuditVerify(const AuditAccess* audit_access, RequestContext&, const httplib::Request&, httplib::Response& res) {
  KIMI_ASSIGN_OR_RETURN(const AuditAccess* access, Access(audit_access));
  KIMI_ASSIGN_OR_RETURN(std::unique_ptr<audit::AuditStore> store, OpenAuditReader(*access));
  Result<audit::VerifyReport> verified = audit::VerifyAuditLog(*store, access->public_key);
  if (!verified.ok() && verified.status().code() == Status::Code::kCorruption) {
    // A log SQLite finds malformed (a truncated WAL, a damaged page) fails verification: said
    // so, and the writer stops signing heads over it, as after a failed background check.
    const std::string problem = "the log cannot be read: " + verified.status().message();
    if (access->sink != nullptr) access->sink->Distrust(problem);
    audit::VerifyReport unreadable;
    unreadable.problems.push_back(problem);
    verified = std::move(unreadable);
  }
  KIMI_RETURN_IF_ERROR(verified.status());
  const audit::VerifyReport& report = *verified;
  ReplyJson(res, 200, json{{"ok", report.ok()},
                      {"records", report.records},
                      {"signed_heads", report.heads},
                      {"covered_size", report.covered_size},
                      {"first_bad_seq", report.first_bad_seq ? json(*report.first_bad_seq) : json(nullptr)},
                      {"problems", report.problems},
                      {"notes", report.notes},
                      {"public_key", audit::PublicKeyToJson(access->public_key)}});
  return Status::OK();
}

void AddAuditRoutes(http::RouteTable& table, const AuditAccess* access) {
  using P = auth::Permission;
  const auto bind = [access](auto handler) { return http::BindRoute(access, handler); };
  table.Add({"GET", "/admin/v1/audit", "admin_audit_search", bind(&HandleAuditSearch), false, P::kAuditRead});
  table.Add({"GET", "/admin/v1/audit/actions", "admin_audit_actions", bind(&HandleAuditActions), false,
             P::kAuditRead});
  table.Add({"GET", "/admin/v1/audit/export", "admin_audit_export", bind(&HandleAuditExport), false, P::kAuditRead});
  table.Add({"GET", "/admin/v1/audit/verify", "admin_audit_verify", bind(&HandleAuditVerify), false, P::kAuditRead});
  table.Add({"GET", "/admin/v1/audit/records/{seq}/proof", "admin_audit_proof", bind(&HandleAuditRecordProof), false,
             P::kAuditRead});
}

}  // namespace kimi::admin
