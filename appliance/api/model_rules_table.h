// ModelRulesTable: which request rules (config/model_request_rules.h) apply to a request
// for a given model id: the operator's entry from the `request_rules` configuration section,
// else Kimi K3's, the verifier's bounds.
// Public header of api/: other folders include it.
// Owns: one ModelRequestRules per configured model.
// Thread safety: filled by Add() before the server starts, then read-only from any thread.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "config/model_request_rules.h"
#include "kimi/status.h"

namespace kimi::api {

class ModelRulesTable {
 public:
  // `rules` in ModelRequestRules::FromJson's form. Errors: InvalidArgument for bad rules or
  // a model given twice.
  Status Add(const std::string& model, const nlohmann::json& rules);
  // The rules for `model`; K3's for a model without an entry.
  const ModelRequestRules& For(std::string_view model) const;
  // The rules of a model without an entry (K3's).
  const ModelRequestRules& Unlisted() const { return default_; }

 private:
  std::map<std::string, ModelRequestRules, std::less<>> by_model_;
  ModelRequestRules default_ = ModelRequestRules::K3();
};

}  // namespace kimi::api
