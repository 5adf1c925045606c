// Owning handles for the OpenSSL objects the model-signing code uses, and the one function
// that turns OpenSSL's error queue into a Status message. Internal to appliance/models.
//
// Thread safety: the handles are plain owners; OpenSSL objects behind them follow OpenSSL's
// rules (a key or certificate may be used for verification from several threads).
#pragma once

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <memory>
#include <string>

namespace kimi::models {

struct PkeyFree { void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); } };
struct X509Free { void operator()(X509* p) const { X509_free(p); } };
struct MdCtxFree { void operator()(EVP_MD_CTX* p) const { EVP_MD_CTX_free(p); } };
struct BioFree { void operator()(BIO* p) const { BIO_free(p); } };
struct StoreFree { void operator()(X509_STORE* p) const { X509_STORE_free(p); } };
struct StoreCtxFree { void operator()(X509_STORE_CTX* p) const { X509_STORE_CTX_free(p); } };
struct X509StackFree { void operator()(STACK_OF(X509)* p) const { sk_X509_pop_free(p, X509_free); } };

using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using SharedPkey = std::shared_ptr<EVP_PKEY>;
using X509Ptr = std::unique_ptr<X509, X509Free>;
using SharedX509 = std::shared_ptr<X509>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;
using BioPtr = std::unique_ptr<BIO, BioFree>;
using StorePtr = std::unique_ptr<X509_STORE, StoreFree>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, StoreCtxFree>;
using X509StackPtr = std::unique_ptr<STACK_OF(X509), X509StackFree>;

// The oldest queued OpenSSL error as text (and clears the queue); "" when none.
inline std::string TakeOpensslError() {
  unsigned long code = ERR_get_error();
  std::string text;
  if (code != 0) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof(buf));
    text = buf;
  }
  ERR_clear_error();
  return text;
}

}  // namespace kimi::models
