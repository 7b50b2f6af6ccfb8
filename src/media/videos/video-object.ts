// The task as clients see it: the OpenAI Videos object, built only from the gateway's own row, so
// the upstream task id, key and host cannot reach the client. "expired" is shown as "failed" with
// code video_expired, because OpenAI-style clients wait for one of queued|in_progress|completed|failed.
import type { VideoTaskRow } from "../../store/video-tasks-store.js";

export interface VideoObject {
  id: string;
  object: "video";
  model: string;
  status: "queued" | "in_progress" | "completed" | "failed";
  progress: number;
  created_at: number;
  completed_at: number | null;
  expires_at: number | null;
  error: { code: string; message: string } | null;
  seconds: string | null;
  size: string | null;
  prompt: null;
  remixed_from_video_id: null;
}

const seconds = (ms: bigint) => Math.floor(Number(ms) / 1000);

export function videoObject(row: VideoTaskRow): VideoObject {
  const expired = row.status === "expired";
  const failed = expired || row.status === "failed";
  return {
    id: row.id,
    object: "video",
    model: row.model,
    status: row.status === "expired" ? "failed" : row.status,
    progress: Number(row.progress),
    created_at: seconds(row.created_at),
    completed_at: row.completed_at === null ? null : seconds(row.completed_at),
    expires_at: null,
    error: failed ? { code: expired ? "video_expired" : "video_generation_failed", message: row.error_message ?? "The video generation failed." } : null,
    seconds: row.seconds === null ? null : String(row.seconds),
    size: row.size,
    // The prompt is not stored: the task row keeps what billing and polling need, nothing more.
    prompt: null,
    remixed_from_video_id: null,
  };
}
