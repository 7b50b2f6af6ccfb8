// The `request_log` section of the config file, resolved (docs/configuration.md, "Request log").

export interface RequestLogSettings {
  /** Rows older than this many days are pruned (request_log.retention_days). */
  retentionDays: number;
  /** Entries the buffer holds at most; more are dropped and counted (request_log.max_buffered). */
  maxBuffered: number;
  /** The longest an entry waits in the buffer before it is written (request_log.flush_interval_ms). */
  flushIntervalMs: number;
}
