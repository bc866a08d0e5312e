// The failures a built-in browser tool answers with: each carries the wire code the broker passes
// on to the client (`toolResult.error.code`), so a client can tell a ref it must refresh from a
// page that refused, without parsing messages.

export const Code = Object.freeze({
  STALE_REF: "stale_ref",
  INVALID_ARGUMENTS: "invalid_arguments",
  NAVIGATED: "navigated",
  TIMEOUT: "timeout",
  CAPTURE_FAILED: "capture_failed",
  EVALUATE_FAILED: "evaluate_failed",
  ACTION_FAILED: "action_failed",
  // Input would not reach the element: something else is on top of it where input would go (the
  // message names it).
  ELEMENT_COVERED: "element_covered",
  // Input would not reach the element: it moved (the page shifted, the viewport shrank) between
  // being scrolled to and the input, and again once scrolled to anew.
  ELEMENT_MOVED: "element_moved",
  // browser_handle_dialog found no dialog to answer (a dialog that is open is Refusal.DIALOG_OPEN).
  NO_DIALOG: "no_dialog",
  // browser_file_upload found no file chooser open (no click opened one, or it was answered).
  NO_FILE_CHOOSER: "no_file_chooser",
  // The broker called the action off (its client cancelled, or its time ran out): nobody waits for it.
  CANCELLED: "cancelled",
  // The page driver cannot do it in this browser (the message names the browser).
  NOT_SUPPORTED: "not_supported",
});

export class ActionError extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

export function invalidArguments(message) {
  return new ActionError(Code.INVALID_ARGUMENTS, message);
}

/** Resolve with `promise`, or fail with `timeout` once `ms` have passed; `what` names the wait. */
export function withTimeout(promise, ms, what) {
  let timer;
  const expired = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new ActionError(Code.TIMEOUT, `${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}

/** A pause of `ms`, cut short with a cancelled ActionError when `signal` fires. */
export function sleep(ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(calledOff());
      return;
    }
    const stop = () => {
      clearTimeout(timer);
      reject(calledOff());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", stop);
      resolve();
    }, ms);
    signal?.addEventListener("abort", stop, { once: true });
  });
}

export function calledOff() {
  return new ActionError(Code.CANCELLED, "the broker called the action off");
}
