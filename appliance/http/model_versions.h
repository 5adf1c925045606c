// ModelVersions: which signed bundle (its digest) each served model id comes from, so the
// audit record of a model request names the model version it was served by. The loader sets
// an entry after verifying and attaching a model; request handlers read it.
//
// Thread safety: all methods may be called from any thread (one mutex).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace kimi::http {

class ModelVersions {
 public:
  void Set(const std::string& model_id, const std::string& bundle_digest) {
    std::lock_guard<std::mutex> lock(mu_);
    digests_[model_id] = bundle_digest;
  }
  // "" when the model's version is not known.
  std::string DigestOf(std::string_view model_id) const {
    std::lock_guard<std::mutex> lock(mu_);
    const auto it = digests_.find(std::string(model_id));
    return it == digests_.end() ? std::string() : it->second;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> digests_;  // guarded by mu_
};

}  // namespace kimi::http
