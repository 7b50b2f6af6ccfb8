// The guardrails a key or a workspace switches on, ticked from the configured ones (GET /guardrails):
// the operator's `applies: all` guardrails are shown ticked and fixed (only the operator can turn them
// off); `selected` ones are ticked here. A name the config no longer has stays visible to be dropped.
import { api } from "../api";
import { ErrorText, useLoad } from "../components";

interface GuardrailInfo {
  name: string;
  description: string;
  applies: "all" | "selected";
  mode: "block" | "mask" | "log";
  sides: Array<"request" | "response">;
}

export function GuardrailChooser(props: { chosen: string[]; onChange: (names: string[]) => void; label: string }) {
  const configured = useLoad(() => api<{ data: GuardrailInfo[] }>("GET", "/guardrails"), []);
  const list = configured.data?.data ?? [];
  const known = new Set(list.map((g) => g.name));
  const gone = props.chosen.filter((name) => !known.has(name));
  const toggle = (name: string, on: boolean) => props.onChange(on ? [...props.chosen, name] : props.chosen.filter((n) => n !== name));
  return (
    <fieldset>
      <legend>Guardrails</legend>
      <ErrorText error={configured.error} />
      {configured.data && list.length === 0 && <p className="hint">No guardrails are configured.</p>}
      <div className="model-choices guardrail-choices" role="group" aria-label={props.label}>
        {list.map((g) => (
          <label key={g.name} className="check">
            <input
              type="checkbox"
              name={`guardrail-${g.name}`}
              checked={g.applies === "all" || props.chosen.includes(g.name)}
              disabled={g.applies === "all"}
              onChange={(e) => toggle(g.name, e.target.checked)}
            />
            <code>{g.name}</code>
            <span className="hint">
              {g.description || `${g.mode} on the ${g.sides.join(" and ")}`}
              {g.applies === "all" ? " (on every request, set by the operator)" : ""}
            </span>
          </label>
        ))}
        {gone.map((name) => (
          <label key={name} className="check">
            <input type="checkbox" checked onChange={() => toggle(name, false)} />
            <code>{name}</code>
            <span className="hint">no longer configured (ignored)</span>
          </label>
        ))}
      </div>
    </fieldset>
  );
}
