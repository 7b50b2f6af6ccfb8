import { describe, expect, it } from "vitest";
import { metricsSettingsFrom, tracingSettingsFromEnv } from "./settings.js";

const fail = (message: string): never => {
  throw new Error(message);
};
const failField = (field: string, message: string): never => {
  throw new Error(`${field}: ${message}`);
};

describe("tracingSettingsFromEnv", () => {
  it("is off unless OTEL_TRACES_EXPORTER names otlp, and when the SDK is disabled", () => {
    expect(tracingSettingsFromEnv({}, fail)).toBeNull();
    expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "none", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }, fail)).toBeNull();
    expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "otlp", OTEL_SDK_DISABLED: "true" }, fail)).toBeNull();
  });

  it("reads the standard endpoint, headers, service name and sampler variables", () => {
    expect(tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "otlp" }, fail)).toEqual({
      url: "http://localhost:4318/v1/traces",
      headers: {},
      serviceName: "model-gateway",
      ratio: 1,
      parentBased: true,
    });
    expect(
      tracingSettingsFromEnv(
        {
          OTEL_TRACES_EXPORTER: "otlp",
          OTEL_EXPORTER_OTLP_ENDPOINT: "https://collector.example:4318/",
          OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=a%20b,tenant=t1",
          OTEL_SERVICE_NAME: "gw",
          OTEL_TRACES_SAMPLER: "traceidratio",
          OTEL_TRACES_SAMPLER_ARG: "0.25",
        },
        fail,
      ),
    ).toEqual({ url: "https://collector.example:4318/v1/traces", headers: { "x-api-key": "a b", tenant: "t1" }, serviceName: "gw", ratio: 0.25, parentBased: false });
    const traces = tracingSettingsFromEnv(
      { OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:1", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://b:2/custom" },
      fail,
    );
    expect(traces?.url).toBe("http://b:2/custom");
  });

  it("refuses what it cannot do, by the variable's name", () => {
    expect(() => tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, fail)).toThrow(
      /OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" is not supported/,
    );
    expect(() => tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "otlp,zipkin" }, fail)).toThrow(/OTEL_TRACES_EXPORTER: only "otlp"/);
    expect(() => tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "otlp", OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" }, fail)).toThrow(
      /OTEL_TRACES_SAMPLER_ARG/,
    );
    expect(() => tracingSettingsFromEnv({ OTEL_TRACES_EXPORTER: "otlp", OTEL_TRACES_SAMPLER: "jaeger_remote" }, fail)).toThrow(/OTEL_TRACES_SAMPLER/);
  });
});

describe("metricsSettingsFrom", () => {
  const section = { account_series: { enabled: false, max_accounts: 100 } };
  it("is off without the section; reads the token from the named variable and parses listen", () => {
    expect(metricsSettingsFrom(undefined, {}, failField)).toBeNull();
    expect(metricsSettingsFrom({ ...section, token_env: "T", listen: "[::1]:9464" }, { T: "0123456789abcdef" }, failField)).toEqual({
      token: "0123456789abcdef",
      listen: { host: "::1", port: 9464 },
      accountSeriesMax: null,
    });
    expect(metricsSettingsFrom({ listen: "0.0.0.0:9464", account_series: { enabled: true, max_accounts: 5 } }, {}, failField)).toEqual({
      token: null,
      listen: { host: "0.0.0.0", port: 9464 },
      accountSeriesMax: 5,
    });
  });
  it("refuses a short token and a port out of range", () => {
    expect(() => metricsSettingsFrom({ ...section, token_env: "T" }, { T: "short" }, failField)).toThrow(/shorter than 16/);
    expect(() => metricsSettingsFrom({ ...section, listen: "127.0.0.1:70000" }, {}, failField)).toThrow(/not host:port/);
  });
});
