"""The pages of the bench's other tasks: the support form (half of it in a frame, sent after a
``confirm``), the small pages' newsletter form and notes, the order details frame and the soak's page.
"""

from __future__ import annotations

__all__ = [
    "NOTES_HEADING",
    "NOTES_PAGE",
    "ORDER_DETAILS_FRAME",
    "SIGNED_UP",
    "SIGNUP_HEADING",
    "SMALL_FORM_PAGE",
    "SOAK_PAGE",
    "SUPPORT_CONFIRM",
    "SUPPORT_HEADING",
    "SUPPORT_PAGE",
    "SUPPORT_SENT",
]


# The support form: its second part in a same-origin iframe, and a confirm() before it is sent.
SUPPORT_HEADING = "Contact support"
SUPPORT_CONFIRM = "Send this request to support?"
SUPPORT_SENT = "Request sent"
SUPPORT_PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{SUPPORT_HEADING}</title></head><body>
<h1>{SUPPORT_HEADING}</h1>
<form id="support"><label>Your name <input name="name"></label>
<label>Your email <input type="email" name="email"></label>
<label>Topic <select name="topic"><option>Delivery</option><option>Returns</option><option>Payment</option>
</select></label>
<iframe title="Order details" src="/frame/order-details" width="600" height="200"></iframe>
<button type="submit">Send request</button></form>
<p id="status" role="status"></p>
<script>
document.getElementById("support").addEventListener("submit", (event) => {{
  event.preventDefault();
  const form = event.target, details = document.querySelector("iframe").contentDocument;
  const order = details.querySelector("[name=order]").value;
  document.getElementById("status").textContent = confirm("{SUPPORT_CONFIRM}")
    ? `{SUPPORT_SENT}: ${{form.elements.name.value}}, order ${{order}}, topic ${{form.elements.topic.value}}`
    : "Request not sent";
}});
</script>
</body></html>
"""
# The small pages (``/small-form``, ``/small-notes``): a form of three fields and a button, and a form
# that resets itself once sent, each note it keeps going into a list.
SIGNUP_HEADING = "Newsletter"
SIGNED_UP = "Signed up"
SMALL_FORM_PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{SIGNUP_HEADING}</title></head><body>
<h1>{SIGNUP_HEADING}</h1>
<form id="signup"><label>Name <input name="name"></label>
<label>Email <input type="email" name="email"></label>
<label>City <input name="city"></label>
<button type="submit">Sign up</button></form>
<p id="status" role="status"></p>
<script>
document.getElementById("signup").addEventListener("submit", (event) => {{
  event.preventDefault();
  const fields = event.target.elements;
  document.getElementById("status").textContent =
    `{SIGNED_UP}: ${{fields.name.value}}, ${{fields.email.value}}, ${{fields.city.value}}`;
}});
</script>
</body></html>
"""
NOTES_HEADING = "Notes"
NOTES_PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{NOTES_HEADING}</title></head><body>
<h1>{NOTES_HEADING}</h1>
<form id="note"><label>Note <input name="note"></label> <button type="submit">Save note</button></form>
<ul id="saved" aria-label="Saved notes"></ul>
<script>
document.getElementById("note").addEventListener("submit", (event) => {{
  event.preventDefault();
  const item = document.createElement("li");
  item.textContent = event.target.elements.note.value;
  document.getElementById("saved").append(item);
  event.target.reset();
}});
</script>
</body></html>
"""
ORDER_DETAILS_FRAME = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Order details</title></head><body>
<h2>Order details</h2>
<label>Order number <input name="order"></label>
<label>Message <textarea name="message"></textarea></label>
</body></html>
"""
# The soak suite's page (``/soak?client=c7&tab=3&step=2``): it names its client, tab and step in its
# title and heading, counts the clicks on "Add one", holds a "Note" field, and declares one page tool,
# soak_state, that says all of that back with the nonce it was given: an answer that names another
# client, tab or step, or other figures, was misrouted or wrong.
SOAK_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Soak</title></head><body>
<h1>Soak</h1>
<p id="count">Clicked 0 times</p>
<button type="button" id="add">Add one</button>
<label>Note <input type="text" id="note"></label>
<script>
const asked = new URLSearchParams(location.search);
const [client, tab, step] = ["client", "tab", "step"].map((key) => asked.get(key));
document.title = `Soak ${client} tab ${tab} step ${step}`;
document.querySelector("h1").textContent = `Soak page of ${client}, tab ${tab}, step ${step}`;
let clicks = 0;
document.getElementById("add").addEventListener("click", () => {
  clicks += 1;
  document.getElementById("count").textContent = `Clicked ${clicks} times`;
});
document.modelContext.registerTool({
  name: "soak_state",
  description: "What this page holds: its client, tab, step, clicks and note, and the nonce given",
  inputSchema: {type: "object", properties: {nonce: {type: "string"}}, required: ["nonce"]},
  annotations: {readOnlyHint: true},
  execute: async ({nonce}) => ({client, tab, step, clicks, note: document.getElementById("note").value, nonce}),
});
</script>
</body></html>
"""
