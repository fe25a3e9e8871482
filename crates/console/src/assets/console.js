// The console's own script, served by the binary (no other origin is allowed to load anything):
// the passkey ceremonies, the live pending list, one submission per form, times in the
// operator's own time zone, copy buttons, and the atomic units of an amount as it is typed.
"use strict";

(function () {
  function fromBase64url(text) {
    const base64 = text.replace(/-/g, "+").replace(/_/g, "/");
    const padded = base64 + "=".repeat((4 - (base64.length % 4)) % 4);
    const binary = atob(padded);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes.buffer;
  }

  function toBase64url(buffer) {
    const bytes = new Uint8Array(buffer);
    let binary = "";
    for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }

  function say(text) {
    const message = document.getElementById("message");
    if (message) message.textContent = text;
  }

  async function post(path, body) {
    const response = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
      body: JSON.stringify(body || {}),
    });
    let answer = {};
    try {
      answer = await response.json();
    } catch (_) {
      answer = {};
    }
    if (!response.ok) throw new Error(answer.detail || "The console refused the request.");
    return answer;
  }

  function credentialDescriptors(list) {
    return (list || []).map(function (descriptor) {
      return Object.assign({}, descriptor, { id: fromBase64url(descriptor.id) });
    });
  }

  function creationOptions(publicKey) {
    return Object.assign({}, publicKey, {
      challenge: fromBase64url(publicKey.challenge),
      user: Object.assign({}, publicKey.user, { id: fromBase64url(publicKey.user.id) }),
      excludeCredentials: credentialDescriptors(publicKey.excludeCredentials),
    });
  }

  function requestOptions(publicKey) {
    return Object.assign({}, publicKey, {
      challenge: fromBase64url(publicKey.challenge),
      allowCredentials: credentialDescriptors(publicKey.allowCredentials),
    });
  }

  function registrationAnswer(credential) {
    const response = credential.response;
    return {
      id: credential.id,
      rawId: toBase64url(credential.rawId),
      type: credential.type,
      response: {
        attestationObject: toBase64url(response.attestationObject),
        clientDataJSON: toBase64url(response.clientDataJSON),
        transports: response.getTransports ? response.getTransports() : undefined,
      },
      extensions: credential.getClientExtensionResults(),
    };
  }

  function signInAnswer(credential) {
    const response = credential.response;
    return {
      id: credential.id,
      rawId: toBase64url(credential.rawId),
      type: credential.type,
      response: {
        authenticatorData: toBase64url(response.authenticatorData),
        clientDataJSON: toBase64url(response.clientDataJSON),
        signature: toBase64url(response.signature),
        userHandle: response.userHandle ? toBase64url(response.userHandle) : null,
      },
      extensions: credential.getClientExtensionResults(),
    };
  }

  async function register(button) {
    const base = button.getAttribute("data-enroll-path");
    say("Follow your browser's prompt to create a passkey…");
    const begun = await post(base + "/options");
    const credential = await navigator.credentials.create({
      publicKey: creationOptions(begun.options.publicKey),
    });
    const done = await post(base, { ceremony: begun.ceremony, credential: registrationAnswer(credential) });
    window.location.assign(done.next);
  }

  async function signIn() {
    say("Follow your browser's prompt to use your passkey…");
    const begun = await post("/console/sign-in/options");
    const credential = await navigator.credentials.get({
      publicKey: requestOptions(begun.options.publicKey),
    });
    const done = await post("/console/sign-in", { ceremony: begun.ceremony, credential: signInAnswer(credential) });
    window.location.assign(done.next);
  }

  function onCeremony(id, run) {
    const button = document.getElementById(id);
    if (!button) return;
    button.addEventListener("click", function () {
      button.disabled = true;
      run(button)
        .catch(function (error) {
          say(error && error.message ? error.message : String(error));
        })
        .finally(function () {
          button.disabled = false;
        });
    });
  }

  // The pending list follows every change: an event says something moved, the rows are read
  // again (a burst of events reads them once). While the operator is writing a rejection's
  // reason in a row, the rows wait: they are read once the reason is sent or put away.
  function followPending() {
    const body = document.getElementById("pending-rows");
    if (!body || !window.EventSource) return;
    let reading = false;
    let again = false;
    let held = false;
    function writing() {
      return body.querySelector("details[open]") !== null;
    }
    async function refresh() {
      if (writing()) {
        held = true;
        return;
      }
      if (reading) {
        again = true;
        return;
      }
      reading = true;
      try {
        const response = await fetch("/console/pending/rows" + window.location.search, {
          credentials: "same-origin",
        });
        if (response.ok && !writing()) {
          body.innerHTML = await response.text();
          localTimes(body);
        } else if (response.ok) held = true;
        else if (response.status === 401) window.location.assign("/console/sign-in");
      } finally {
        reading = false;
        if (again) {
          again = false;
          refresh();
        }
      }
    }
    // A toggle does not bubble: it is caught on its way down.
    body.addEventListener(
      "toggle",
      function () {
        if (held && !writing()) {
          held = false;
          refresh();
        }
      },
      true
    );
    const events = new EventSource("/console/pending/stream");
    events.addEventListener("changed", refresh);
    events.addEventListener("signed-out", function () {
      events.close();
      window.location.assign("/console/sign-in");
    });
  }

  // A form is sent once: a second click while it is on its way does nothing.
  function oneSubmissionPerForm() {
    document.addEventListener("submit", function (event) {
      const form = event.target;
      if (form.dataset.sent === "true") {
        event.preventDefault();
        return;
      }
      form.dataset.sent = "true";
    });
  }

  function part(parts, type) {
    const found = parts.find(function (each) {
      return each.type === type;
    });
    return found ? found.value : "";
  }

  // Every instant comes in UTC (right without this script), its UTC value in its title; here it
  // is written in the operator's own time zone, to the second, the zone named.
  function localTimes(root) {
    const format = new Intl.DateTimeFormat(undefined, {
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
      timeZoneName: "short",
    });
    root.querySelectorAll("time.instant[datetime]").forEach(function (element) {
      const at = new Date(element.getAttribute("datetime"));
      if (isNaN(at.getTime())) return;
      const parts = format.formatToParts(at);
      element.textContent =
        part(parts, "year") + "-" + part(parts, "month") + "-" + part(parts, "day") + " " +
        part(parts, "hour") + ":" + part(parts, "minute") + ":" + part(parts, "second") + " " +
        part(parts, "timeZoneName");
      element.dataset.local = "true";
    });
  }

  // A secret shown once has a button that copies it.
  function copyButtons() {
    document.querySelectorAll("button[data-copy]").forEach(function (button) {
      const source = document.getElementById(button.getAttribute("data-copy"));
      const status = button.parentElement.querySelector(".copied");
      if (!source || !navigator.clipboard) return;
      button.hidden = false;
      button.addEventListener("click", function () {
        navigator.clipboard.writeText(source.textContent.trim()).then(
          function () {
            if (status) status.textContent = "Copied.";
          },
          function () {
            if (status) status.textContent = "Not copied: select it and copy it by hand.";
          }
        );
      });
    });
  }

  // An amount of USDC as the operator types it, in atomic units beside it; the server reads the
  // field itself, and says what it refuses.
  function atomicOf(text) {
    const written = text.trim();
    if (written === "") return "";
    const match = /^([0-9]+)(?:\.([0-9]{1,6}))?$/.exec(written);
    if (!match) return "not an amount of USDC";
    const atomic = BigInt(match[1] + (match[2] || "").padEnd(6, "0"));
    return atomic === 0n ? "not an amount of USDC" : "= " + atomic.toString() + " atomic";
  }

  function atomicEchoes() {
    document.querySelectorAll("input[data-usdc]").forEach(function (input) {
      const echo = document.getElementById(input.getAttribute("aria-describedby"));
      if (!echo) return;
      input.addEventListener("input", function () {
        echo.textContent = atomicOf(input.value);
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    onCeremony("register-passkey", register);
    onCeremony("sign-in", signIn);
    localTimes(document);
    followPending();
    oneSubmissionPerForm();
    copyButtons();
    atomicEchoes();
  });
})();
