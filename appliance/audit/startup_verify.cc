#include "audit/startup_verify.h"

#include "audit/log_verifier.h"
#include "audit/writer_state.h"

namespace kimi::audit {

Result<VerifiedLog> VerifyBeforeExtending(AuditStore& store, const PublicKey& key) {
  KIMI_ASSIGN_OR_RETURN(std::optional<WriterState> state, store.ReadWriterState());
  VerifyOptions options;
  // A checkpoint is taken only from a state this key signed; anything else means seq 0.
  if (state && VerifyWriterState(*state, key).ok()) {
    if (Result<CompactTree> checkpoint = VerifiedTree(*state); checkpoint.ok()) options.from = *checkpoint;
  }
  KIMI_ASSIGN_OR_RETURN(VerifyReport report, VerifyAuditLog(store, key, options));
  if (!report.ok()) {
    return Status::Corruption("the audit log fails verification at " + DescribeFailure(report) +
                              "; the appliance does not extend a log it cannot vouch for");
  }
  VerifiedLog out;
  KIMI_ASSIGN_OR_RETURN(out.tree, store.LoadTree());
  KIMI_ASSIGN_OR_RETURN(out.heads, store.HeadCount());
  KIMI_ASSIGN_OR_RETURN(out.head_size, store.LargestHeadSize());
  out.last_time_ms = report.last_time_ms;
  out.rows_checked = report.records;
  return out;
}

}  // namespace kimi::audit
