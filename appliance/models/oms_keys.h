// ECDSA keys for model signing: loading PEM keys, the key fingerprint that OMS bundles carry
// as their public-key hint (hex SHA-256 of the PEM SubjectPublicKeyInfo text), signing and
// verifying with the hash that matches the curve (P-256/SHA-256, P-384/SHA-384,
// P-521/SHA-512), generating a P-256 key pair, and reading a signing certificate chain.
// Public header of models/: other folders include it.
// Thread safety: pure functions; a loaded key may be shared by threads for verification.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kimi/status.h"
#include "models/oms_openssl.h"

namespace kimi::models {

// The first PUBLIC KEY block of `pem` (text before it, such as certtool's dump, is skipped).
// Refuses keys that are not ECDSA on P-256, P-384 or P-521.
Result<SharedPkey> LoadPublicKeyPem(std::string_view pem);
Result<SharedPkey> LoadPrivateKeyPem(std::string_view pem);
// Every CERTIFICATE block of `pem`, in order (a signing chain: leaf first); InvalidArgument
// when there is none or one cannot be read.
Result<std::vector<SharedX509>> LoadCertificatesPem(std::string_view pem);

// "-----BEGIN PUBLIC KEY-----\n...": the canonical PEM text of the public half.
std::string PublicKeyPem(EVP_PKEY* key);
// Hex SHA-256 of PublicKeyPem(key): the "hint" of OMS bundles and our key fingerprint.
std::string KeyFingerprint(EVP_PKEY* key);

// The digest OMS pairs with the key's curve; nullptr for an unsupported key.
const EVP_MD* DigestForKey(EVP_PKEY* key);

// `md` nullptr means DigestForKey(key).
bool EcdsaVerify(EVP_PKEY* key, std::string_view message, std::string_view der_signature, const EVP_MD* md = nullptr);
Result<std::string> EcdsaSign(EVP_PKEY* key, std::string_view message);

Result<SharedPkey> GenerateP256Key();
// PKCS#8 PEM of the private key (unencrypted: the file mode protects it).
Result<std::string> PrivateKeyPem(EVP_PKEY* key);

}  // namespace kimi::models
