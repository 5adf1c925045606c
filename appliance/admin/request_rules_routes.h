// GET /admin/v1/request-rules?model=ID: the sampling bounds the API holds requests for one model
// to (config/model_request_rules.h: the configured request_rules entry, else K3's), so that the
// console's playground offers only the settings the model accepts, with their ranges, instead
// of learning them from 400s. Permission inference: whoever may send the request may read
// its rules.
//
// Thread safety: the handler may run on many threads at once (the table is read-only).
#pragma once

#include "api/model_rules_table.h"
#include "http/routes.h"

namespace kimi::admin {

// The route, bound to `rules` (outlives the table; null: it answers 503).
void AddRequestRulesRoute(http::RouteTable& table, const api::ModelRulesTable* rules);

}  // namespace kimi::admin
