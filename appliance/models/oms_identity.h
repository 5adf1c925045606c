// Who a signing certificate names, and the signer patterns a trust store pins to a CA.
//
// A trusted CA may carry "Signer:" patterns (docs/model-signing.md, "Pinning signers"): a
// leaf it issued signs models only if it matches one of them. A pattern is
//   subject=<DN>   the leaf's subject, exactly, in RFC 2253 form (what
//                  `openssl x509 -noout -subject -nameopt RFC2253` prints after "subject=")
//   email=<glob>   an rfc822Name subjectAltName; '*' matches a run of characters without '@'
//   uri=<glob>     a URI subjectAltName; '*' matches any run of characters
//   dns=<glob>     a dNSName subjectAltName, case-insensitively; '*' matches within one label
// Every other character is literal; there is no escape and no other wildcard.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"
#include "models/oms_openssl.h"

namespace kimi::models {

struct SignerPattern {
  enum class Field { kSubject, kEmail, kUri, kDns };
  Field field = Field::kSubject;
  std::string pattern;

  std::string ToString() const;  // "email=*@example.com", the form ParseSignerPattern reads
};

// InvalidArgument naming what is wrong for anything but "<field>=<non-empty pattern>".
Result<SignerPattern> ParseSignerPattern(std::string_view text);

// Whether the certificate's subject or one of its subjectAltNames matches `pattern`. A name
// holding a NUL byte never matches.
bool CertificateMatches(X509* cert, const SignerPattern& pattern);

// "CN=a,O=b" (RFC 2253), as patterns and messages write subjects.
std::string NameText(X509_NAME* name);

// "subject CN=signer,O=Example; email:a@example.com, uri:https://ci.example/x": for messages
// that say which identity was refused.
std::string CertificateIdentity(X509* cert);

// Glob matching as above: '*' matches any run of characters other than `separator` ('\0':
// any run at all).
bool GlobMatches(std::string_view pattern, std::string_view text, char separator, bool ignore_case);

}  // namespace kimi::models
