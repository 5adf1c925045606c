#include "models/oms_identity.h"

#include <openssl/x509v3.h>

#include <cctype>

namespace kimi::models {
namespace {

struct FieldName {
  SignerPattern::Field field;
  std::string_view name;
};
constexpr FieldName kFields[] = {{SignerPattern::Field::kSubject, "subject"},
                                 {SignerPattern::Field::kEmail, "email"},
                                 {SignerPattern::Field::kUri, "uri"},
                                 {SignerPattern::Field::kDns, "dns"}};

struct GeneralNamesFree {
  void operator()(GENERAL_NAMES* p) const { GENERAL_NAMES_free(p); }
};
using GeneralNamesPtr = std::unique_ptr<GENERAL_NAMES, GeneralNamesFree>;

// The subjectAltNames of one type, as text; names holding a NUL byte are left out, so that
// "a@example.com\0.evil" cannot pass for "a@example.com".
std::vector<std::string> AltNames(X509* cert, int type) {
  std::vector<std::string> out;
  GeneralNamesPtr names(static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  if (!names) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
    if (name->type != type) continue;
    const ASN1_IA5STRING* s = name->d.ia5;
    std::string text(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)), static_cast<size_t>(ASN1_STRING_length(s)));
    if (text.find('\0') == std::string::npos) out.push_back(std::move(text));
  }
  return out;
}

int AltNameType(SignerPattern::Field field) {
  switch (field) {
    case SignerPattern::Field::kEmail: return GEN_EMAIL;
    case SignerPattern::Field::kUri: return GEN_URI;
    case SignerPattern::Field::kDns: return GEN_DNS;
    case SignerPattern::Field::kSubject: break;
  }
  return -1;
}

char Fold(char c, bool ignore_case) {
  return ignore_case ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : c;
}

}  // namespace

std::string SignerPattern::ToString() const {
  for (const FieldName& f : kFields) {
    if (f.field == field) return std::string(f.name) + "=" + pattern;
  }
  return pattern;
}

Result<SignerPattern> ParseSignerPattern(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return Status::InvalidArgument("signer pattern \"" + std::string(text) +
                                   "\" is not <field>=<pattern> (fields: subject, email, uri, dns)");
  }
  const std::string_view name = text.substr(0, eq);
  const std::string_view pattern = text.substr(eq + 1);
  for (const FieldName& f : kFields) {
    if (f.name != name) continue;
    if (pattern.empty()) return Status::InvalidArgument("signer pattern \"" + std::string(text) + "\" has an empty " + std::string(name));
    if (pattern.find_first_of("\r\n") != std::string_view::npos || pattern.find('\0') != std::string_view::npos)
      return Status::InvalidArgument("signer pattern for " + std::string(name) + " holds a line break or NUL");
    return SignerPattern{f.field, std::string(pattern)};
  }
  return Status::InvalidArgument("signer pattern \"" + std::string(text) + "\" names the unknown field \"" +
                                 std::string(name) + "\" (fields: subject, email, uri, dns)");
}

bool GlobMatches(std::string_view pattern, std::string_view text, char separator, bool ignore_case) {
  // matched[j]: pattern[0, i) matches text[0, j). One row per pattern character keeps this
  // O(|pattern| * |text|) whatever the pattern, where backtracking could be exponential.
  std::vector<char> matched(text.size() + 1, 0);
  matched[0] = 1;
  for (char p : pattern) {
    std::vector<char> next(text.size() + 1, 0);
    if (p == '*') {
      next[0] = matched[0];
      for (size_t j = 1; j <= text.size(); ++j) {
        const bool may_extend = separator == '\0' || text[j - 1] != separator;
        next[j] = matched[j] || (may_extend && next[j - 1]);
      }
    } else {
      for (size_t j = 1; j <= text.size(); ++j) {
        next[j] = matched[j - 1] && Fold(text[j - 1], ignore_case) == Fold(p, ignore_case);
      }
    }
    matched.swap(next);
  }
  return matched[text.size()] != 0;
}

bool CertificateMatches(X509* cert, const SignerPattern& pattern) {
  if (pattern.field == SignerPattern::Field::kSubject) return NameText(X509_get_subject_name(cert)) == pattern.pattern;
  const int type = AltNameType(pattern.field);
  const char separator = pattern.field == SignerPattern::Field::kEmail ? '@'
                         : pattern.field == SignerPattern::Field::kDns ? '.'
                                                                       : '\0';
  const bool ignore_case = pattern.field == SignerPattern::Field::kDns;
  for (const std::string& name : AltNames(cert, type)) {
    if (GlobMatches(pattern.pattern, name, separator, ignore_case)) return true;
  }
  return false;
}

std::string NameText(X509_NAME* name) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253);
  char* data = nullptr;
  long len = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(len));
}

std::string CertificateIdentity(X509* cert) {
  std::string text = "subject " + NameText(X509_get_subject_name(cert));
  std::string alt;
  for (const auto& [type, label] : {std::pair{GEN_EMAIL, "email:"}, std::pair{GEN_URI, "uri:"}, std::pair{GEN_DNS, "dns:"}}) {
    for (const std::string& name : AltNames(cert, type)) alt += (alt.empty() ? "" : ", ") + std::string(label) + name;
  }
  if (!alt.empty()) text += "; " + alt;
  return text;
}

}  // namespace kimi::models
