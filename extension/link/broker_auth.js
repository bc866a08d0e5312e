// Who a broker is: the arithmetic of the link handshake and of pairing (broker/core/link_auth.py is
// the broker's side, and docs/extension-link.md the frames), all with WebCrypto, and
// the link keys of paired brokers, kept in chrome.storage.local by broker id.
//
// A broker proves it holds its link key (HMAC-SHA256 over our nonce, its nonce, its role and the
// port we reached it on) before this extension tells it anything or does anything it asks. The
// key comes from the token the native host read in the broker's discovery file, or from pairing
// once with a code the person types.

const encoder = new TextEncoder();
const PAIRED = "pairedBrokers"; // chrome.storage.local: {brokerId: link key in base64url}
const PAIRING_ITERATIONS = 200_000;

export const Role = Object.freeze({
  BROKER: "browser-mcp broker proof v1",
  EXTENSION: "browser-mcp extension proof v1",
  PAIR_BROKER: "browser-mcp pair broker v1",
  PAIR_EXTENSION: "browser-mcp pair extension v1",
  PAIR_WRAP: "browser-mcp pair wrap v1",
});

function b64(bytes) {
  let text = "";
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
  return btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function unb64(text) {
  const plain = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(plain, (c) => c.charCodeAt(0));
}

const hex = (bytes) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

/** 32 random bytes in base64url: one side's nonce of one exchange. */
export function newNonce() {
  return b64(crypto.getRandomValues(new Uint8Array(32)));
}

function hmacKey(raw, uses) {
  return crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, uses);
}

async function mac(raw, message) {
  return new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(raw, ["sign"]), encoder.encode(message)));
}

const transcript = (role, port, nonces) => [role, String(port), ...nonces].join("\n");

/** The link key and broker id a broker's token gives (the native host hands the token over). */
export async function tokenKeys(token) {
  const raw = encoder.encode(token);
  const [key, id] = await Promise.all([mac(raw, "browser-mcp link key v1"), mac(raw, "browser-mcp broker id v1")]);
  return { key, brokerId: hex(id.slice(0, 16)) };
}

export async function proof(key, role, port, ...nonces) {
  return b64(await mac(key, transcript(role, port, nonces)));
}

/** Whether `presented` is the proof of `role` on `port` over `nonces` (WebCrypto compares it). */
export async function checkProof(presented, key, role, port, ...nonces) {
  if (typeof presented !== "string") return false;
  let signature;
  try {
    signature = unb64(presented);
  } catch {
    return false;
  }
  const verifier = await hmacKey(key, ["verify"]);
  return crypto.subtle.verify("HMAC", verifier, signature, encoder.encode(transcript(role, port, nonces)));
}

/** A code as the person typed it (any case, spaces or a dash) as `browser-mcp pair` issued it. */
export function normalizeCode(code) {
  return String(code).replace(/[\s-]/g, "").toUpperCase();
}

/** What both ends derive from the code and the exchange's nonces (broker/core/link_auth.py pairing_keys). */
export async function pairingKeys(code, brokerId, port, extensionNonce, brokerNonce) {
  const salt = transcript("browser-mcp pairing v1", port, [brokerId, extensionNonce, brokerNonce]);
  const material = await crypto.subtle.importKey("raw", encoder.encode(normalizeCode(code)), "PBKDF2", false, [
    "deriveBits",
  ]);
  const stretched = new Uint8Array(
    await crypto.subtle.deriveBits(
      { name: "PBKDF2", hash: "SHA-256", salt: encoder.encode(salt), iterations: PAIRING_ITERATIONS },
      material,
      256,
    ),
  );
  const nonces = [extensionNonce, brokerNonce];
  return {
    extensionProof: await proof(stretched, Role.PAIR_EXTENSION, port, ...nonces),
    brokerProof: await proof(stretched, Role.PAIR_BROKER, port, ...nonces),
    wrapKey: await mac(stretched, transcript(Role.PAIR_WRAP, port, nonces)),
  };
}

/** The link key the broker wrapped (AES-GCM, the broker id as associated data). Throws when it does not open. */
export async function unwrapLinkKey(wrapKey, iv, wrapped, brokerId) {
  const key = await crypto.subtle.importKey("raw", wrapKey, "AES-GCM", false, ["decrypt"]);
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: unb64(iv), additionalData: encoder.encode(brokerId) },
    key,
    unb64(wrapped),
  );
  return new Uint8Array(plain);
}

let paired = {};

export const pairedReady = chrome.storage.local
  .get(PAIRED)
  .then((stored) => {
    paired = readPaired(stored[PAIRED]);
  })
  .catch((error) => console.warn("browser-mcp: cannot read the paired brokers", error));

function readPaired(value) {
  return value && typeof value === "object" ? value : {};
}

/** The link key stored for `brokerId` by pairing, or null. */
export async function pairedKey(brokerId) {
  await pairedReady;
  const stored = paired[brokerId];
  try {
    return typeof stored === "string" ? unb64(stored) : null;
  } catch {
    return null;
  }
}

export async function rememberPairing(brokerId, key) {
  await pairedReady;
  paired = { ...paired, [brokerId]: b64(key) };
  await chrome.storage.local.set({ [PAIRED]: paired });
}

/** chrome.storage.onChanged: whether the paired brokers changed (the copy here is then updated). */
export function pairingChanged(changes, area) {
  if (area !== "local" || !changes[PAIRED]) return false;
  paired = readPaired(changes[PAIRED].newValue);
  return true;
}
