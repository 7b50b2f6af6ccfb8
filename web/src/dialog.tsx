// Modal dialogs on the browser's own <dialog> element: showModal() keeps focus inside, Escape
// closes, the page behind is inert. Dialog frames any content (a key's editor, a request's details);
// ConfirmDialog asks before an action that moves money or shuts someone out, saying what exactly.
import { useEffect, useId, useRef, type ReactNode } from "react";

export function Dialog(props: { title: string; onClose: () => void; children: ReactNode; alert?: boolean; wide?: boolean; testId?: string }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const { onClose } = props;
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) {
      dialog.showModal();
      // showModal() focuses the first control (the close button) unless told otherwise; React
      // renders no autofocus attribute, so the dialog's own choice is marked data-autofocus.
      dialog.querySelector<HTMLElement>("[data-autofocus]")?.focus();
    }
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      className={props.wide ? "modal wide" : "modal"}
      role={props.alert ? "alertdialog" : undefined}
      aria-labelledby={titleId}
      data-testid={props.testId}
      onCancel={(event) => {
        // Escape: the owner decides (it unmounts the dialog), so React's state and the element agree.
        event.preventDefault();
        onClose();
      }}
    >
      <header className="modal-head">
        <h2 id={titleId}>{props.title}</h2>
        <button type="button" className="close" onClick={onClose} aria-label="Close">
          ×
        </button>
      </header>
      {props.children}
    </dialog>
  );
}

/** "Suspend x@example.com?" with what will happen, a button naming the action, and Cancel (focused first). */
export function ConfirmDialog(props: { title: string; children: ReactNode; confirmLabel: string; onConfirm: () => void; onCancel: () => void; danger?: boolean }) {
  return (
    <Dialog title={props.title} onClose={props.onCancel} alert>
      <div className="modal-body">{props.children}</div>
      <div className="actions modal-actions">
        <button type="button" className={props.danger ? "danger" : "primary"} onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
        <button type="button" onClick={props.onCancel} data-autofocus>
          Cancel
        </button>
      </div>
    </Dialog>
  );
}
