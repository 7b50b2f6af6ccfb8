// The /dashboard/api operations of signing in: the sign-in page's settings, company sign-in
// (OpenID Connect), sessions, sign-up, set-password links and changing a password.
import { z } from "zod";
import { accountRouteSchemas } from "../dashboard/routes/account-routes.js";
import { authRouteSchemas } from "../dashboard/routes/auth-routes.js";
import { created, dash, noContent, ok, type OperationSpec } from "./operation-spec.js";
import * as r from "./response-schemas.js";

const sessionView = z.object({ account: r.accountViewSchema, csrf_token: z.string() });

export const DASHBOARD_SIGN_IN_OPERATIONS: readonly OperationSpec[] = [
  dash({
    method: "GET",
    path: "/config",
    auth: "none",
    summary: "Public settings of the sign-in page",
    responses: ok(z.object({ signup: z.string(), password_sign_in: z.boolean(), company_sign_in: z.object({ label: z.string() }).nullable() })),
  }),
  dash({
    method: "GET",
    path: "/auth/oidc/start",
    auth: "none",
    summary: "Company sign-in (OpenID Connect): redirects the browser to the issuer",
    responses: { 302: { description: "To the issuer's authorization endpoint; or back to /dashboard?oidc_error=REASON" } },
  }),
  dash({
    method: "GET",
    path: "/auth/oidc/callback",
    auth: "none",
    summary: "Company sign-in's return from the issuer: signs the person in (sets the session cookie)",
    query: z.object({ code: z.string().optional(), state: z.string().optional(), error: z.string().optional() }),
    responses: { 302: { description: "To /dashboard signed in; or to /dashboard?oidc_error=REASON" } },
  }),
  dash({ method: "GET", path: "/session", summary: "The signed-in account and its CSRF token", responses: ok(sessionView) }),
  dash({ method: "POST", path: "/signin", auth: "none", summary: "Sign in (sets the session cookie)", body: authRouteSchemas.signInBody, responses: ok(sessionView) }),
  dash({ method: "POST", path: "/signup", auth: "none", summary: "Sign up (sets the session cookie)", body: authRouteSchemas.signUpBody, responses: created(sessionView) }),
  dash({ method: "POST", path: "/signout", summary: "Sign out", responses: noContent }),
  dash({
    method: "POST",
    path: "/set-password/check",
    auth: "none",
    summary: "What a set-password link is for, without using it (failures are throttled)",
    body: authRouteSchemas.linkBody,
    responses: ok(z.object({ email: z.string(), purpose: z.enum(["setup", "reset"]), expires_at: z.string() })),
  }),
  dash({
    method: "POST",
    path: "/set-password",
    auth: "none",
    summary: "Use a set-password link once: set the password, end the account's sessions, sign in",
    body: authRouteSchemas.setPasswordBody,
    responses: ok(sessionView),
  }),
  dash({
    method: "POST",
    path: "/account/password",
    summary: "Change your password (the current one is required); every session ends, this browser gets a new one",
    body: accountRouteSchemas.passwordBody,
    responses: ok(sessionView),
  }),
];
