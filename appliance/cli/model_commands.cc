#include "cli/model_commands.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "audit/audit_text.h"
#include "cli/model_command_args.h"
#include "kimi/durable_file.h"
#include "models/oms_keys.h"
#include "models/oms_signer.h"
#include "models/oms_trust.h"
#include "models/oms_verifier.h"
#include "kimi/regular_file.h"

namespace kimi::cli {
namespace {

// A key or certificate chain named on the command line.
Result<std::string> ReadText(const std::string& path) { return ReadRegularFile(path, 1u << 20, FinalLink::kFollow); }

Status WriteNewFile(const std::string& path, const std::string& text, mode_t mode, bool force) {
  Status s = WriteFileAtomically(path, text, mode, force ? IfExists::kReplace : IfExists::kRefuse);
  if (s.code() == Status::Code::kAlreadyExists) return Status::AlreadyExists(path + " exists (use --force to replace it)");
  return s;
}

}  // namespace

int RunKeygen(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a = ParseArgs(args, {"--out"}, {"--force"}, 0);
  if (!a.error.empty() || !a.positional.empty()) {
    err << "usage: kimictl keygen [--out PREFIX] [--force]\n" << (a.error.empty() ? "" : "error: " + a.error + "\n");
    return kExitUsage;
  }
  std::string prefix = a.One("--out").empty() ? "signing-key" : a.One("--out");
  auto key = models::GenerateP256Key();
  if (!key.ok()) return Fail(err, "keygen", key.status());
  auto private_pem = models::PrivateKeyPem(key->get());
  if (!private_pem.ok()) return Fail(err, "keygen", private_pem.status());
  std::string private_path = prefix + ".pem";
  std::string public_path = prefix + ".pub.pem";
  Status s = WriteNewFile(private_path, *private_pem, 0600, a.Has("--force"));
  if (!s.ok()) return Fail(err, "keygen", s);
  s = WriteNewFile(public_path, models::PublicKeyPem(key->get()), 0644, a.Has("--force"));
  if (!s.ok()) return Fail(err, "keygen", s);
  out << "private key: " << private_path << " (mode 0600)\n"
      << "public key:  " << public_path << "\n"
      << "fingerprint: sha256:" << models::KeyFingerprint(key->get()) << "\n";
  return kExitOk;
}

int RunModelSign(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a =
      ParseArgs(args, {"--key", "--certificate", "--signature", "--shard-size", "--ignore", "--threads"},
                {"--quiet", "--files"}, 1);
  if (!a.error.empty() || a.positional.size() != 1 || a.One("--key").empty()) {
    err << "usage: kimictl model sign --key KEY.pem [--certificate CHAIN.pem] [--signature PATH]\n"
           "                          [--shard-size auto|BYTES | --files] [--ignore PATH]... MODEL\n"
        << (a.error.empty() ? "" : "error: " + a.error + "\n");
    return kExitUsage;
  }
  auto pem = ReadText(a.One("--key"));
  if (!pem.ok()) return Fail(err, "sign", pem.status());
  auto key = models::LoadPrivateKeyPem(*pem);
  if (!key.ok()) return Fail(err, "sign: " + a.One("--key"), key.status());

  models::SignRequest request;
  request.model_path = a.positional[0];
  request.signature_path = a.One("--signature");
  request.private_key = *key;
  if (const std::string chain_path = a.One("--certificate"); !chain_path.empty()) {
    auto chain_pem = ReadText(chain_path);
    if (!chain_pem.ok()) return Fail(err, "sign", chain_pem.status());
    auto chain = models::LoadCertificatesPem(*chain_pem);
    if (!chain.ok()) return Fail(err, "sign: " + chain_path, chain.status());
    request.certificate_chain = *std::move(chain);
  }
  for (const auto& p : a.All("--ignore")) request.ignore_paths.push_back(p);
  // Shards by default, so that verification spreads over every core (AutoShardSize); --files
  // writes one resource per file, for verifiers that predate the shard serialization.
  const std::string& shard_text = a.One("--shard-size");
  if (a.Has("--files") && !shard_text.empty()) {
    err << "error: --files and --shard-size exclude each other\n";
    return kExitUsage;
  }
  request.auto_shard_size = !a.Has("--files") && (shard_text.empty() || shard_text == "auto");
  if (!request.auto_shard_size && !shard_text.empty()) {
    const std::string& text = shard_text;
    char* end = nullptr;
    request.shard_size = std::strtoull(text.c_str(), &end, 10);
    if (request.shard_size == 0 || *end != '\0') {
      err << "error: --shard-size needs a positive number of bytes, got \"" << text << "\"\n";
      return kExitUsage;
    }
  }
  if (!a.One("--threads").empty()) request.hashing.threads = static_cast<unsigned>(std::atoi(a.One("--threads").c_str()));
  if (!a.Has("--quiet")) request.hashing.progress = ProgressPrinter(err, "hashing");
  auto result = models::SignModel(request);
  if (!result.ok()) return Fail(err, "sign " + request.model_path, result.status());
  out << "signed " << audit::ShownText(request.model_path) << "\n"
      << "signature: " << audit::ShownText(result->signature_path) << "\n"
      << "subject sha256: " << result->subject_digest_hex << "\n"
      << "resources: " << result->resources << ", bytes: " << result->bytes << "\n"
      << "key: sha256:" << models::KeyFingerprint(key->get()) << "\n";
  return kExitOk;
}

int RunModelVerify(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ParsedArgs a = ParseArgs(args, {"--key", "--ca", "--trust-dir", "--signature", "--ignore", "--threads"}, {"--quiet"}, 1);
  if (!a.error.empty() || a.positional.size() != 1) {
    err << "usage: kimictl model verify [--key PUB.pem]... [--ca CA.pem]... [--trust-dir DIR] [--signature PATH]\n"
           "                            [--ignore PATH]... [--threads N] [--quiet] MODEL\n"
        << (a.error.empty() ? "" : "error: " + a.error + "\n");
    return kExitUsage;
  }
  auto trust = TrustFromArgs(a);
  if (!trust.ok()) return Fail(err, "trust store", trust.status());

  models::VerifyRequest request;
  request.model_path = a.positional[0];
  request.signature_path = a.One("--signature");
  request.extra_ignore_paths = a.All("--ignore");
  if (!a.One("--threads").empty()) request.hashing.threads = static_cast<unsigned>(std::atoi(a.One("--threads").c_str()));
  if (!a.Has("--quiet")) request.hashing.progress = ProgressPrinter(err, "verifying");
  auto manifest = models::ModelVerifier::Verify(request, *trust);
  if (!manifest.ok()) {
    err << "REFUSED " << audit::ShownText(request.model_path) << ": " << audit::ShownText(manifest.status().message()) << "\n";
    return kExitFailed;
  }
  // Names come from the signed manifest and the signer's certificate: shown as text, so that a
  // file name cannot recolour the terminal or forge a line of this listing.
  out << "OK " << audit::ShownText(request.model_path) << "\n"
      << "subject sha256: " << manifest->subject_digest_hex() << "\n"
      << "signer: " << audit::ShownText(manifest->signer().description) << "\n"
      << "resources: " << manifest->entries().size() << " (" << manifest->files().size() << " files, "
      << manifest->total_bytes() << " bytes)\n";
  for (const auto& e : manifest->entries()) out << "  " << e.sha256_hex << "  " << audit::ShownText(e.name) << "\n";
  return kExitOk;
}

int RunKeygen(const std::vector<std::string>& args) { return RunKeygen(args, std::cout, std::cerr); }
int RunModelSign(const std::vector<std::string>& args) { return RunModelSign(args, std::cout, std::cerr); }
int RunModelVerify(const std::vector<std::string>& args) { return RunModelVerify(args, std::cout, std::cerr); }

}  // namespace kimi::cli
