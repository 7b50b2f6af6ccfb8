// Compile time (npm run typecheck): what each view function returns is what its response schema in
// src/openapi/response-schemas.ts says, so a field added to a view without the schema fails here
// before the end-to-end test (openapi.test.ts) sees it in a real answer.
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { adminAccountView, auditView, codeView, providerKeyView } from "../../src/admin/views.js";
import { accountView, inviteView, keyView } from "../../src/admin/account-views.js";
import type { ledgerRowView, usageAcrossAccounts, usageSummary } from "../../src/admin/usage-queries.js";
import { requestRecordJson } from "../../src/http/routes/request-record.js";
import { videoObject } from "../../src/media/videos/video-object.js";
import type { upstreamStatuses } from "../../src/pipeline/upstream-status.js";
import type { trafficUse } from "../../src/billing/traffic-usage.js";
import type { reloadView } from "../../src/admin/routes/config.js";
import type { dashboardModelView } from "../../src/dashboard/routes/model-routes.js";
import type { adminRequestLogView, requestLogView } from "../../src/dashboard/routes/request-log-routes.js";
import type * as r from "../../src/openapi/response-schemas.js";

/** Compiles only when View is assignable to the schema's output type. */
const viewOf =
  <Schema>() =>
  <View extends Schema>(): View | true =>
    true;

describe("view types", () => {
  it("match their response schemas", () => {
    const checks: unknown[] = [];
    checks.push(viewOf<z.output<typeof r.accountViewSchema>>()<ReturnType<typeof accountView>>());
    checks.push(viewOf<z.output<typeof r.adminAccountViewSchema>>()<ReturnType<typeof adminAccountView>>());
    checks.push(viewOf<z.output<typeof r.keyViewSchema>>()<ReturnType<typeof keyView>>());
    checks.push(viewOf<z.output<typeof r.inviteViewSchema>>()<ReturnType<typeof inviteView>>());
    checks.push(viewOf<z.output<typeof r.providerKeyViewSchema>>()<ReturnType<typeof providerKeyView>>());
    checks.push(viewOf<z.output<typeof r.auditViewSchema>>()<ReturnType<typeof auditView>>());
    checks.push(viewOf<z.output<typeof r.requestRecordSchema>>()<ReturnType<typeof requestRecordJson>>());
    checks.push(viewOf<z.output<typeof r.videoSchema>>()<ReturnType<typeof videoObject>>());
    checks.push(viewOf<z.output<typeof r.usageSummarySchema>>()<Awaited<ReturnType<typeof usageSummary>>>());
    checks.push(viewOf<z.output<typeof r.upstreamStatusesSchema>>()<Awaited<ReturnType<typeof upstreamStatuses>>>());
    checks.push(viewOf<z.output<typeof r.trafficUseSchema>>()<Awaited<ReturnType<typeof trafficUse>>>());
    checks.push(viewOf<z.output<typeof r.configReloadSchema>>()<ReturnType<typeof reloadView>>());
    checks.push(viewOf<z.output<typeof r.dashboardModelsSchema>["data"][number]>()<ReturnType<typeof dashboardModelView>>());
    checks.push(viewOf<z.output<typeof r.requestLogViewSchema>>()<ReturnType<typeof requestLogView>>());
    checks.push(viewOf<z.output<typeof r.adminRequestLogViewSchema>>()<ReturnType<typeof adminRequestLogView>>());
    checks.push(viewOf<z.output<typeof r.codeViewSchema>>()<ReturnType<typeof codeView>>());
    checks.push(viewOf<z.output<typeof r.ledgerRowViewSchema>>()<ReturnType<typeof ledgerRowView>>());
    checks.push(viewOf<z.output<typeof r.usageAcrossAccountsSchema>>()<Awaited<ReturnType<typeof usageAcrossAccounts>>>());
    // The assertions are the type arguments above; this only says all of them were compiled.
    expect(checks).toHaveLength(18);
  });
});
