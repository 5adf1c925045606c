// Helpers shared by the model-signing tests: the reference vectors, temporary model
// directories, and bundles built around arbitrary payloads. Test-only.
// Public header of models/: the tests of other folders use it too.
// Thread safety: none needed; tests are single-threaded (ReturnsWithin runs one thread of its own).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "models/oms_openssl.h"
#include "models/oms_trust.h"

namespace kimi::models::testing {

// tests/data/model-signing in the source tree (from KIMI_SOURCE_DIR, or the compile-time path).
std::string VectorsDir();

struct Vector {
  std::string name;         // e.g. "v1.1.0-elliptic-key"
  bool certificate = false;  // signed with the certificate chain rather than the bare key
  bool single_file = false;  // the model is the file signme-1, not the directory
  std::vector<std::string> extra_ignore;  // what the caller must ignore besides the bundle's list
};
std::vector<Vector> AllVectors();

// The trust a vector needs: the public key or the root CA.
TrustStore TrustFor(const Vector& v);

// A fresh directory under the system temp dir, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Copies the vector's directory to `dest` (writable) and returns the model path to verify.
std::string CopyVector(const Vector& v, const std::string& dest);

// Runs `body` on a thread of its own and waits for it at most `limit`: true when it returned in
// time. When it did not (a call blocked in the open() of a FIFO), the test fails, `unblock` (may
// be empty) is called to free it, and the process aborts if even that does not end it within
// `limit`: a regression fails instead of hanging. Not a timing assertion: `limit` is generous.
bool ReturnsWithin(std::chrono::seconds limit, const std::function<void()>& body,
                   const std::function<void()>& unblock = {});
// Opens the FIFO at `path` for writing and closes it: a reader blocked in open() goes on, reads
// the end of the file, and the body of ReturnsWithin() can finish.
void ReleaseFifoReaders(const std::string& path);

std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& bytes);
void FlipByte(const std::string& path, size_t offset);

// A v0.3 bundle (public-key hint material) over `payload`, signed with `key`.
std::string MakeKeyBundle(const std::string& payload, EVP_PKEY* key);

// An in-toto statement of the v1.0 predicate for files with the given (name, hex digest)
// pairs, kept in the order given, with a correct subject digest unless `subject_hex` is set.
std::string MakeStatement(const std::vector<std::pair<std::string, std::string>>& resources,
                          const std::string& subject_hex = "", const std::string& method = "files",
                          bool allow_symlinks = false);

std::string Sha256Hex(const std::string& bytes);

// A certificate made for a test, with its P-256 key.
struct TestCertificate {
  SharedPkey key;
  SharedX509 cert;
  std::string Pem() const;  // the CERTIFICATE block
  std::string KeyPem() const;  // the PKCS#8 private key
};
struct CertificateSpec {
  std::string subject = "CN=signer";   // "CN=a,O=b", as RFC 2253 prints it (most specific first)
  bool ca = false;                     // CA:TRUE; key usage keyCertSign, cRLSign, digitalSignature
  std::string key_usage = "digitalSignature";  // "" leaves the extension out
  std::string extended_key_usage;      // "codeSigning", "serverAuth,clientAuth"; "" none
  std::string subject_alt_names;       // "email:a@example.com,URI:https://x,DNS:host"
};
// Signed by `issuer` (nullptr: self-signed), valid from an hour ago for a day.
TestCertificate MakeCertificate(const CertificateSpec& spec, const TestCertificate* issuer);

}  // namespace kimi::models::testing
