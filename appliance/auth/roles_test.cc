#include "auth/roles.h"

#include <gtest/gtest.h>

namespace kimi::auth {
namespace {

TEST(RolesTest, NamesRoundTrip) {
  for (Role r : AllRoles()) EXPECT_EQ(ParseRole(RoleName(r)), r);
  EXPECT_FALSE(ParseRole("root").has_value());
  EXPECT_FALSE(ParseRole("").has_value());
}

TEST(RolesTest, AdminHoldsEveryPermission) {
  for (Permission p : AllPermissions()) EXPECT_TRUE(RoleAllows(Role::kAdmin, p)) << PermissionName(p);
}

// The matrix of docs/security.md, row by row: (role, permission, allowed).
TEST(RolesTest, MatrixAsDocumented) {
  struct Row {
    Role role;
    Permission permission;
    bool allowed;
  };
  const Row rows[] = {
      {Role::kOperator, Permission::kModelsManage, true},  {Role::kOperator, Permission::kInference, true},
      {Role::kOperator, Permission::kMetricsRead, true},   {Role::kOperator, Permission::kAuditRead, false},
      {Role::kOperator, Permission::kKeysManage, false},   {Role::kOperator, Permission::kUsersManage, false},
      {Role::kAuditor, Permission::kAuditRead, true},      {Role::kAuditor, Permission::kModelsRead, true},
      {Role::kAuditor, Permission::kMetricsRead, true},    {Role::kAuditor, Permission::kInference, false},
      {Role::kAuditor, Permission::kModelsManage, false},  {Role::kAuditor, Permission::kKeysManage, false},
      {Role::kUser, Permission::kInference, true},         {Role::kUser, Permission::kModelsRead, true},
      {Role::kUser, Permission::kMetricsRead, false},      {Role::kUser, Permission::kAuditRead, false},
      {Role::kUser, Permission::kModelsManage, false},     {Role::kUser, Permission::kUsersManage, false},
      {Role::kScrape, Permission::kMetricsRead, true},     {Role::kScrape, Permission::kModelsRead, false},
      {Role::kScrape, Permission::kInference, false},      {Role::kScrape, Permission::kAuditRead, false},
      {Role::kOperator, Permission::kPolicyRead, true},    {Role::kAuditor, Permission::kPolicyRead, true},
      {Role::kUser, Permission::kPolicyRead, false},       {Role::kScrape, Permission::kPolicyRead, false},
      {Role::kOperator, Permission::kTrustRead, true},     {Role::kAuditor, Permission::kTrustRead, true},
      {Role::kUser, Permission::kTrustRead, false},        {Role::kScrape, Permission::kTrustRead, false},
      // The model store's contents (digests, sources, signers) are not the user's.
      {Role::kOperator, Permission::kModelsInspect, true}, {Role::kAuditor, Permission::kModelsInspect, true},
      {Role::kUser, Permission::kModelsInspect, false},    {Role::kScrape, Permission::kModelsInspect, false},
      // The key inventory is the auditor's to read, not to change.
      {Role::kAuditor, Permission::kKeysRead, true},       {Role::kOperator, Permission::kKeysRead, false},
      {Role::kUser, Permission::kKeysRead, false},         {Role::kScrape, Permission::kKeysRead, false},
      {Role::kOperator, Permission::kReadinessDetail, true}, {Role::kAuditor, Permission::kReadinessDetail, true},
      {Role::kUser, Permission::kReadinessDetail, false},    {Role::kScrape, Permission::kReadinessDetail, false},
      // Who used how much is for those who run and check the appliance, not for key holders.
      {Role::kOperator, Permission::kUsageRead, true},     {Role::kAuditor, Permission::kUsageRead, true},
      {Role::kUser, Permission::kUsageRead, false},        {Role::kScrape, Permission::kUsageRead, false},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(RoleAllows(r.role, r.permission), r.allowed) << RoleName(r.role) << " " << PermissionName(r.permission);
  }
}

// A user key sees the models it may use (/v1/models) and nothing the admin API reads.
TEST(RolesTest, UserReadsNoAdminRoute) {
  for (const Permission p : AllPermissions()) {
    if (p == Permission::kPublic || p == Permission::kSessionSelf || p == Permission::kModelsRead ||
        p == Permission::kInference) {
      continue;
    }
    EXPECT_FALSE(RoleAllows(Role::kUser, p)) << PermissionName(p);
  }
}

TEST(RolesTest, ScrapeIsNotAUserRole) {
  EXPECT_FALSE(IsUserRole(Role::kScrape));
  EXPECT_TRUE(IsUserRole(Role::kAuditor));
}

}  // namespace
}  // namespace kimi::auth
