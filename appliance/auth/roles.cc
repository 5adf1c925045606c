#include "auth/roles.h"

#include <cstdint>

namespace kimi::auth {
namespace {

constexpr uint32_t Bit(Role r) { return 1u << static_cast<int>(r); }
constexpr uint32_t kEveryRole = Bit(Role::kAdmin) | Bit(Role::kOperator) | Bit(Role::kAuditor) | Bit(Role::kUser) |
                                Bit(Role::kScrape);

struct RoleRow {
  Role role;
  std::string_view name;
};
constexpr RoleRow kRoles[] = {
    {Role::kAdmin, "admin"}, {Role::kOperator, "operator"}, {Role::kAuditor, "auditor"},
    {Role::kUser, "user"},   {Role::kScrape, "scrape"},
};
constexpr Role kRoleList[] = {Role::kAdmin, Role::kOperator, Role::kAuditor, Role::kUser, Role::kScrape};

struct PermissionRow {
  Permission permission;
  std::string_view name;
  uint32_t roles;  // who holds it
};
// The permission table. Admin holds everything; every other grant is written here.
constexpr PermissionRow kPermissions[] = {
    {Permission::kPublic, "public", kEveryRole},
    {Permission::kSessionSelf, "session.self", kEveryRole},
    {Permission::kMetricsRead, "metrics.read",
     Bit(Role::kAdmin) | Bit(Role::kOperator) | Bit(Role::kAuditor) | Bit(Role::kScrape)},
    {Permission::kModelsRead, "models.read",
     Bit(Role::kAdmin) | Bit(Role::kOperator) | Bit(Role::kAuditor) | Bit(Role::kUser)},
    {Permission::kModelsInspect, "models.inspect", Bit(Role::kAdmin) | Bit(Role::kOperator) | Bit(Role::kAuditor)},
    {Permission::kInference, "inference", Bit(Role::kAdmin) | Bit(Role::kOperator) | Bit(Role::kUser)},
    {Permission::kModelsManage, "models.manage", Bit(Role::kAdmin) | Bit(Role::kOperator)},
    {Permission::kAuditRead, "audit.read", Bit(Role::kAdmin) | Bit(Role::kAuditor)},
    {Permission::kKeysRead, "keys.read", Bit(Role::kAdmin) | Bit(Role::kAuditor)},
    {Permission::kKeysManage, "keys.manage", Bit(Role::kAdmin)},
    {Permission::kUsersManage, "users.manage", Bit(Role::kAdmin)},
    {Permission::kPolicyRead, "policy.read", Bit(Role::kAdmin) | Bit(Role::kOperator) | Bit(Role::kAuditor)},
    {Permission::kTrustRead, "trust.read", Bit(Role::kAdmin) | Bit(Role::kOperator) | Bit(Role::kAuditor)},
    {Permission::kUsageRead, "usage.read", Bit(Role::kAdmin) | Bit(Role::kOperator) | Bit(Role::kAuditor)},
    {Permission::kReadinessDetail, "readiness.detail",
     Bit(Role::kAdmin) | Bit(Role::kOperator) | Bit(Role::kAuditor)},
    {Permission::kAdminOnly, "admin.only", Bit(Role::kAdmin)},
};
constexpr Permission kPermissionList[] = {
    Permission::kPublic,       Permission::kSessionSelf, Permission::kMetricsRead,
    Permission::kModelsRead,   Permission::kModelsInspect, Permission::kInference,
    Permission::kModelsManage, Permission::kAuditRead,     Permission::kKeysRead,    Permission::kKeysManage,
    Permission::kUsersManage,  Permission::kPolicyRead,    Permission::kTrustRead,   Permission::kUsageRead,
    Permission::kReadinessDetail, Permission::kAdminOnly,
};

const PermissionRow* Row(Permission p) {
  for (const PermissionRow& row : kPermissions) {
    if (row.permission == p) return &row;
  }
  return nullptr;
}

}  // namespace

std::string_view RoleName(Role role) {
  for (const RoleRow& row : kRoles) {
    if (row.role == role) return row.name;
  }
  return "unknown";
}

std::optional<Role> ParseRole(std::string_view name) {
  for (const RoleRow& row : kRoles) {
    if (row.name == name) return row.role;
  }
  return std::nullopt;
}

bool IsUserRole(Role role) { return role != Role::kScrape; }
std::span<const Role> AllRoles() { return kRoleList; }

std::string_view PermissionName(Permission permission) {
  const PermissionRow* row = Row(permission);
  return row ? row->name : "unknown";
}

std::span<const Permission> AllPermissions() { return kPermissionList; }

bool RoleAllows(Role role, Permission permission) {
  const PermissionRow* row = Row(permission);
  return row != nullptr && (row->roles & Bit(role)) != 0;
}

}  // namespace kimi::auth
