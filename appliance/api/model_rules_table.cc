#include "api/model_rules_table.h"

namespace kimi::api {

Status ModelRulesTable::Add(const std::string& model, const nlohmann::json& rules) {
  KIMI_ASSIGN_OR_RETURN(ModelRequestRules parsed, ModelRequestRules::FromJson(rules));
  if (!by_model_.emplace(model, parsed).second) {
    return Status::InvalidArgument("request rules for model " + model + " are given twice");
  }
  return Status::OK();
}

const ModelRequestRules& ModelRulesTable::For(std::string_view model) const {
  auto it = by_model_.find(model);
  return it == by_model_.end() ? default_ : it->second;
}

}  // namespace kimi::api
