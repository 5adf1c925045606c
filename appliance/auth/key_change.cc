#include "auth/key_change.h"

namespace kimi::auth {
namespace {

std::string ModelsText(const std::vector<std::string>& models) {
  if (models.empty()) return "*";
  std::string out;
  for (const std::string& m : models) out += (out.empty() ? "" : ",") + m;
  return out;
}

void AddDifference(std::string* out, std::string_view field, const std::string& before, const std::string& after) {
  if (before == after) return;
  if (!out->empty()) *out += "; ";
  *out += std::string(field) + " " + before + " -> " + after;
}

}  // namespace

bool KeyChange::empty() const {
  if (role || models) return false;
  for (const std::optional<int64_t>& limit : limits) {
    if (limit) return false;
  }
  return true;
}

KeyLimits ApplyLimitChange(KeyLimits limits, const KeyChange& change) {
  for (size_t i = 0; i < change.limits.size(); ++i) {
    if (change.limits[i]) limits.*kKeyLimitFields[i].member = *change.limits[i];
  }
  return limits;
}

KeyRecord ApplyKeyChange(KeyRecord key, const KeyChange& change) {
  if (change.role) key.role = std::string(RoleName(*change.role));
  if (change.models) key.models = *change.models;
  key.limits = ApplyLimitChange(key.limits, change);
  return key;
}

std::string DescribeKeyChange(const KeyRecord& before, const KeyRecord& after) {
  std::string out;
  AddDifference(&out, "role", before.role, after.role);
  AddDifference(&out, "models", ModelsText(before.models), ModelsText(after.models));
  for (const KeyLimitField& f : kKeyLimitFields) {
    AddDifference(&out, f.name, std::to_string(before.limits.*f.member), std::to_string(after.limits.*f.member));
  }
  return out;
}

}  // namespace kimi::auth
