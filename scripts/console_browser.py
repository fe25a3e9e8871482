"""The operator console in a real browser (console.md, issue 27): Debian's Chromium driven by
Playwright for Python, with a virtual WebAuthn authenticator per operator, against the real
server. Run by the black-box test `console::the_console_holds_in_a_real_browser` with the
interpreter of scripts/console-browser.sh.

    python console_browser.py BASE_URL

The environment gives AGENTCTL (the binary), DATABASE_URL and PUBLIC_BASE_URL for it, AXE_JS (the
path of axe-core's axe.min.js) and, when set, SCREENSHOTS (a folder for a picture of each page).
The first operator's browser is in another time zone than UTC (OPERATOR_ZONE), so that times are
seen read in the operator's own.
Prints one JSON object: each scenario with its result, and the accessibility check's counts per
page; exits 0 only when every scenario held. Each scenario's outcome is also written to stderr as
it ends.
"""

import csv
import glob
import json
import os
import subprocess
import sys
import time
import traceback
import urllib.error
import urllib.request
from datetime import datetime, timedelta, timezone

from playwright.sync_api import sync_playwright

BASE = sys.argv[1].rstrip("/")
AGENTCTL = os.environ["AGENTCTL"]
with open(os.environ["AXE_JS"], encoding="utf-8") as axe_file:
    AXE_SOURCE = axe_file.read()
SCREENSHOTS = os.environ.get("SCREENSHOTS")
# USDC on Base, the sandbox's token, whose EIP-712 domain is "USD Coin", version 2.
BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
RECIPIENT = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
# Generous deadlines: they bound a wait, they measure nothing.
DEADLINE_MS = 15000

# The time zone of the first operator's browser: its pages show times there, UTC on hover.
OPERATOR_ZONE = "Asia/Kolkata"
OPERATOR_OFFSET = timedelta(hours=5, minutes=30)
# What is read whole, never broken across lines: every address, id, hash, key or amount, every
# time, every agent's label (a secret shown once may wrap: its Copy button copies it whole).
UNBROKEN = "code:not(.secret code), .amount, time.instant, a.agent"

results = []
accessibility = {}
measured = {}
# Every request any page of the run made, to check none left the console's origin.
requested = []


def new_context(browser, **options):
    """A browser context whose every request is recorded."""
    context = browser.new_context(base_url=BASE, locale="en-US", **options)
    context.on("request", lambda request: requested.append(request.url))
    return context


def agentctl(*args, env=None):
    done = subprocess.run(
        [AGENTCTL, *args],
        capture_output=True,
        text=True,
        check=False,
        env=None if env is None else {**os.environ, **env},
    )
    if done.returncode != 0:
        raise AssertionError(f"agentctl {' '.join(args)} failed: {done.stderr.strip()}")
    return json.loads(done.stdout)


def sql(statement):
    """One statement on the server's database, by the psql of its PostgreSQL (or the PATH's)."""
    psql = (sorted(glob.glob("/usr/lib/postgresql/*/bin/psql")) or ["psql"])[-1]
    done = subprocess.run(
        [psql, "-qtA", os.environ["DATABASE_URL"], "-c", statement],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def api(method, path, key, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {key}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def scenario(name):
    def run(check):
        started = time.monotonic()
        try:
            detail = check()
            results.append({"name": name, "ok": True, "detail": detail or ""})
        except Exception as error:  # every failure is reported, and the rest still run
            results.append(
                {
                    "name": name,
                    "ok": False,
                    "detail": f"{error}\n{traceback.format_exc(limit=3)}",
                }
            )
        measured[name] = round(time.monotonic() - started, 2)
        # Each outcome as it comes, on stderr: a run cut short still tells how far it got.
        print(f"{'held' if results[-1]['ok'] else 'FAILED'} in {measured[name]} s: {name}", file=sys.stderr, flush=True)
        return check

    return run


class Operator:
    """One operator in a browser context of their own, with their own authenticator."""

    def __init__(self, browser, name, role, **context_options):
        self.name = name
        invited = agentctl("operators", "invite", "--name", name, "--role", role)
        self.enroll_url = invited["enroll_url"]
        self.context = new_context(browser, **context_options)
        self.page = self.context.new_page()
        self.cdp = self.context.new_cdp_session(self.page)
        self.cdp.send("WebAuthn.enable")
        self.authenticator = self.cdp.send(
            "WebAuthn.addVirtualAuthenticator",
            {
                "options": {
                    "protocol": "ctap2",
                    "transport": "internal",
                    "hasResidentKey": True,
                    "hasUserVerification": True,
                    "isUserVerified": True,
                    "automaticPresenceSimulation": True,
                }
            },
        )["authenticatorId"]

    def enroll_and_sign_in(self):
        self.page.goto(self.enroll_url)
        self.page.get_by_role("button", name="Register a passkey").click()
        self.page.wait_for_url("**/console/sign-in?enrolled=1", timeout=DEADLINE_MS)
        self.page.get_by_role("button", name="Sign in with a passkey").click()
        self.page.wait_for_url("**/console/pending", timeout=DEADLINE_MS)

    def sign_in(self):
        self.page.goto(BASE + "/console/sign-in")
        self.page.get_by_role("button", name="Sign in with a passkey").click()

    def set_back_counter(self):
        """The passkey's signature counter set back to zero, as a copy of the passkey made
        earlier would have it."""
        credentials = self.cdp.send("WebAuthn.getCredentials", {"authenticatorId": self.authenticator})
        (credential,) = credentials["credentials"]
        before = credential["signCount"]
        self.cdp.send(
            "WebAuthn.removeCredential",
            {"authenticatorId": self.authenticator, "credentialId": credential["credentialId"]},
        )
        credential["signCount"] = 0
        self.cdp.send(
            "WebAuthn.addCredential", {"authenticatorId": self.authenticator, "credential": credential}
        )
        return before

    def csrf(self):
        return self.page.locator('meta[name="csrf-token"]').get_attribute("content")

    def post(self, path, form, origin=BASE):
        """A form post of this operator's session, as a page of `origin` would send it."""
        return self.context.request.post(
            BASE + path,
            form=form,
            headers={"Origin": origin},
            max_redirects=0,
        )


def check_accessibility(page, name):
    # Through the DevTools protocol: the page's own policy forbids any script not its own.
    page.evaluate(AXE_SOURCE)
    found = page.evaluate("async () => (await axe.run(document)).violations")
    counts = {}
    for violation in found:
        impact = violation.get("impact") or "minor"
        counts[impact] = counts.get(impact, 0) + 1
    accessibility[name] = {
        "counts": counts,
        "serious_or_critical": [
            violation["id"]
            for violation in found
            if violation.get("impact") in ("serious", "critical")
        ],
    }
    if SCREENSHOTS:
        # An agent's key or an operator's token never goes into a picture, even a test's.
        page.screenshot(
            path=os.path.join(SCREENSHOTS, f"{name}.png"),
            full_page=True,
            mask=[page.locator("[data-agent-key]"), page.locator("[data-operator-token]")],
        )


def intent_row(page, intent_id):
    return page.locator(f'tr[data-intent-id="{intent_id}"]')


def audit_rows(page, action, target):
    return page.locator(f'tr[data-action="{action}"][data-target="{target}"]')


def agent_links(page, agent):
    return page.locator(f'a[data-agent-link="{agent}"]')


def broken_values(page):
    """The addresses, ids, hashes, amounts and times the page shows on more than one line."""
    return page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)]
            .filter((element) => element.getClientRects().length > 1)
            .map((element) => element.textContent)""",
        UNBROKEN,
    )


def beside_its_label(page, checkbox_id):
    """Whether the checkbox is on its label's line, just before it."""
    box = page.locator(f"#{checkbox_id}").bounding_box()
    label = page.locator(f'label[for="{checkbox_id}"]').bounding_box()
    same_line = abs((box["y"] + box["height"] / 2) - (label["y"] + label["height"] / 2)) < label["height"] / 2
    just_before = 0 <= label["x"] - (box["x"] + box["width"]) < 24
    return same_line and just_before, {"checkbox": box, "label": label}


def send(key, amount):
    status, body = api("POST", "/v1/wallet/send", key, {"to": RECIPIENT, "amount_atomic": amount})
    assert status == 200, f"send answered {status}: {body}"
    return body["data"]["id"] if "data" in body else body["id"]


def intent_status(key, intent_id):
    status, body = api("GET", f"/v1/wallet/intents/{intent_id}", key)
    assert status == 200, f"intent read answered {status}: {body}"
    return body


def wait_for_status(key, intent_id, wanted):
    deadline = time.monotonic() + DEADLINE_MS / 1000 * 2
    while True:
        intent = intent_status(key, intent_id)
        if intent["status"] in wanted:
            return intent
        assert time.monotonic() < deadline, f"intent never reached {wanted}: {intent}"
        time.sleep(0.1)


def main():
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        state = {}

        @scenario("invite, enroll and sign in with a passkey")
        def _():
            anonymous = new_context(browser).new_page()
            anonymous.goto(BASE + "/console/sign-in")
            check_accessibility(anonymous, "sign-in")
            alice = Operator(browser, "alice", "admin", timezone_id=OPERATOR_ZONE)
            alice.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=BASE)
            alice.page.goto(alice.enroll_url)
            check_accessibility(alice.page, "enroll")
            alice.enroll_and_sign_in()
            state["alice"] = alice
            assert "Signed in as alice" in alice.page.inner_text("header")

        @scenario("create an agent: its key is shown once, with a button that copies it")
        def _():
            alice = state["alice"]
            alice.page.goto(BASE + "/console/agents")
            for checkbox in ("inbox", "number", "wallet"):
                beside, boxes = beside_its_label(alice.page, checkbox)
                assert beside, f"the {checkbox} checkbox is not beside its label: {boxes}"
            alice.page.get_by_label("Label").fill("console-payer")
            alice.page.get_by_label("Email inbox").check()
            alice.page.get_by_label("Wallet").check()
            alice.page.get_by_role("button", name="Create agent").click()
            key = alice.page.locator("[data-agent-key]").inner_text().strip()
            assert key.startswith("ark_"), key
            alice.page.get_by_role("button", name="Copy").click()
            alice.page.get_by_text("Copied.").wait_for(timeout=DEADLINE_MS)
            copied = alice.page.evaluate("() => navigator.clipboard.readText()")
            assert copied == key, "the Copy button copies the key as shown"
            check_accessibility(alice.page, "agent-created")
            status, me = api("GET", "/v1/agents/me", key)
            assert status == 200, me
            state["key"], state["agent"] = key, me["id"]
            state["inbox"] = me["email_inbox"]["address"]
            alice.page.goto(BASE + "/console/agents")
            row = alice.page.locator(f'tr[data-agent-id="{me["id"]}"]')
            assert row.count() == 1
            link = agent_links(row, me["id"])
            assert link.inner_text() == "console-payer", "the agent is shown by its label"
            assert link.get_attribute("href") == f"/console/agents/{me['id']}"
            assert alice.page.locator("[data-agent-key]").count() == 0, "the key is shown once"
            check_accessibility(alice.page, "agents")
            status, wallet = api("GET", "/v1/wallet/address", key)
            state["wallet"] = wallet["address"]
            agentctl("sandbox", "fund", wallet["address"], "100000000")

        @scenario("an agent's keys are listed and one is revoked, audited")
        def _():
            alice, key, agent = state["alice"], state["key"], state["agent"]
            status, made = api(
                "POST",
                "/v1/keys",
                key,
                {"label": "balance reader", "scopes": ["wallet:read"], "expires_in_seconds": 600},
            )
            assert status == 201, made
            alice.page.goto(BASE + "/console/agents")
            alice.page.locator(f'tr[data-agent-id="{agent}"]').get_by_role("link", name="Keys").click()
            alice.page.wait_for_url(f"**/console/agents/{agent}/keys")
            row = alice.page.locator(f'tr[data-key-id="{made["id"]}"]')
            assert row.count() == 1, "the key made by the agent is listed"
            text = row.inner_text()
            assert "balance reader" in text and "agent:read, wallet:read" in text, text
            assert alice.page.locator("tr[data-key-id]").count() == 2
            check_accessibility(alice.page, "agent-keys")
            row.get_by_role("button", name="Revoke").click()
            alice.page.wait_for_url(f"**/console/agents/{agent}/keys?done=revoked")
            assert alice.page.locator(f'tr[data-key-id="{made["id"]}"]').count() == 0
            status, _ = api("GET", "/v1/agents/me", made["key"])
            assert status == 401, status
            status, _ = api("GET", "/v1/agents/me", key)
            assert status == 200, "the key that made it still works"
            alice.page.goto(BASE + "/console/audit")
            revoked = audit_rows(alice.page, "key_revoke", f"agent:{agent}")
            assert revoked.count() == 1, "one audit row of the revocation"
            assert "operator:alice" in revoked.inner_text()
            assert agent_links(revoked, agent).inner_text() == "console-payer", "its target by its label"
            assert made["id"] in revoked.locator("ul.changes").inner_text(), "what it revoked"
            created = audit_rows(alice.page, "key_create", f"agent:{agent}")
            assert created.count() == 1 and "key:key_" in created.inner_text()

        @scenario("an intent sent over REST appears live, is approved and executed, and audited")
        def _():
            alice, key, agent = state["alice"], state["key"], state["agent"]
            alice.page.goto(BASE + "/console/pending")
            alice.page.wait_for_load_state("networkidle")
            sent_at = time.monotonic()
            intent_id = send(key, "10000000")
            intent_row(alice.page, intent_id).wait_for(timeout=DEADLINE_MS)
            measured["live row after the send, s"] = round(time.monotonic() - sent_at, 3)
            row = intent_row(alice.page, intent_id)
            assert agent_links(row, agent).inner_text() == "console-payer", "the row names its agent"
            check_accessibility(alice.page, "pending")
            row.get_by_role("button", name="Approve").click()
            alice.page.wait_for_url(f"**/console/intents/{intent_id}?done=confirmed")
            status, me = api("GET", "/v1/agents/me", key)
            asked_with = alice.page.locator("code[data-key-id]").inner_text()
            assert asked_with == me["key"]["id"], "the intent names the key that asked for it"
            assert agent_links(alice.page.locator("main"), agent).inner_text() == "console-payer"
            check_accessibility(alice.page, "intent")
            executed = wait_for_status(key, intent_id, {"executed"})
            assert executed.get("tx_hash"), executed
            alice.page.goto(BASE + "/console/audit")
            approve = audit_rows(alice.page, "approve", f"intent:{intent_id}")
            assert approve.count() == 1, "one audit row of the approval"
            assert "operator:alice" in approve.inner_text()
            changed = approve.locator('li[data-field="status"]').inner_text()
            assert "pending_confirmation" in changed and "confirmed" in changed, changed
            assert "{" not in approve.inner_text(), "a change reads as fields, not as JSON"
            check_accessibility(alice.page, "audit")
            alice.page.goto(BASE + "/console/history")
            row = intent_row(alice.page, intent_id)
            assert row.count() == 1
            assert agent_links(row, agent).inner_text() == "console-payer", "the history shows labels"
            check_accessibility(alice.page, "history")
            state["executed"] = intent_id
            return f"the row appeared {measured['live row after the send, s']} s after the send"

        @scenario("the receipts of an agent's executions download from the history as CSV")
        def _():
            alice, key, agent = state["alice"], state["key"], state["agent"]
            intent_id = state["executed"]
            status, signed = api("GET", f"/v1/wallet/intents/{intent_id}/receipt", key)
            assert status == 200, signed
            alice.page.goto(BASE + "/console/history")
            alice.page.locator("summary", has_text="Export receipts").click()
            alice.page.locator("#export-agent").fill(agent)
            with alice.page.expect_download(timeout=DEADLINE_MS) as downloading:
                alice.page.get_by_role("button", name="Download").click()
            download = downloading.value
            assert download.suggested_filename.startswith(f"receipts-{agent}-"), download.suggested_filename
            assert download.suggested_filename.endswith(".csv"), download.suggested_filename
            with open(download.path(), newline="", encoding="utf-8") as exported:
                rows = list(csv.DictReader(exported))
            row = next((row for row in rows if row["intent_id"] == intent_id), None)
            assert row is not None, rows
            receipt = signed["receipt"]
            for field in ("tx_hash", "amount_atomic", "recipient", "decided_by", "executed_at"):
                assert row[field] == str(receipt[field]), (field, row, receipt)
            assert row["signature"] == signed["signature"], (row, signed)
            return f"{len(rows)} receipt(s) in {download.suggested_filename}"

        @scenario("the spend policy takes USDC, shows the atomic units, and names its windows")
        def _():
            alice, agent = state["alice"], state["agent"]
            alice.page.goto(BASE + f"/console/agents/{agent}/policy")
            daily = alice.page.get_by_label("Spending, rolling 24 h (USDC)")
            daily.fill("0.0000001")
            alice.page.get_by_role("button", name="Save policy").click()
            refused = alice.page.get_by_role("alert").inner_text()
            assert "Spending, rolling 24 h" in refused and "6 digits after the point" in refused, refused
            daily = alice.page.get_by_label("Spending, rolling 24 h (USDC)")
            daily.fill("250.5")
            echo = alice.page.locator("#max_daily-atomic").inner_text()
            assert echo == "= 250500000 atomic", f"the atomic units beside the field: {echo!r}"
            check_accessibility(alice.page, "policy")
            alice.page.get_by_role("button", name="Save policy").click()
            alice.page.wait_for_url(f"**/console/agents/{agent}?done=policy")
            window = alice.page.locator('tr[data-window="daily"]')
            assert window.locator("th").inner_text() == "Spending, rolling 24 h", window.inner_text()
            assert "250.5 USDC (250500000 atomic)" in window.inner_text(), window.inner_text()
            alice.page.goto(BASE + f"/console/agents/{agent}/policy")
            kept = alice.page.get_by_label("Spending, rolling 24 h (USDC)").input_value()
            assert kept == "250.5", f"the form shows the cap in USDC: {kept!r}"
            assert alice.page.locator("#max_daily-atomic").inner_text() == "= 250500000 atomic"
            alice.page.goto(BASE + "/console/audit")
            change = audit_rows(alice.page, "policy_change", f"agent:{agent}")
            assert change.count() == 1, "one audit row of the policy change"
            field = change.locator('li[data-field="max_daily_atomic"]').inner_text()
            assert field == "Spending, rolling 24 h: none → 250.5 USDC (250500000 atomic)", field
            assert change.locator("ul.changes li").count() == 1, "only what changed is shown"

        @scenario("an agent's own page: resources, policy and usage, keys, intents, mail, actions")
        def _():
            alice, agent = state["alice"], state["agent"]
            agentctl(
                "sandbox", "email", "--to", state["inbox"], "--from", "supplier@example.org",
                "--subject", "Invoice", "--text", "Your invoice is attached.",
            )
            alice.page.goto(BASE + "/console/history")
            agent_links(intent_row(alice.page, state["executed"]), agent).click()
            alice.page.wait_for_url(f"**/console/agents/{agent}")
            main = alice.page.locator("main")
            assert alice.page.locator("h1").inner_text() == "console-payer"
            assert state["wallet"].lower() in main.inner_text().lower(), "its wallet's address"
            assert state["inbox"] in main.inner_text(), "its inbox"
            assert "Spending, rolling 24 h" in alice.page.locator('tr[data-window="daily"]').inner_text()
            assert main.locator("tr[data-key-id]").count() == 1, "its live key"
            assert intent_row(alice.page, state["executed"]).count() == 1, "its latest intents"
            received = alice.page.locator('dd[data-mail="received"]').inner_text()
            sent = alice.page.locator('dd[data-mail="sent"]').inner_text()
            assert (received, sent) == ("1", "0"), (received, sent)
            for action in ("Rotate key", "Deactivate"):
                assert main.get_by_role("button", name=action).count() == 1, action
            check_accessibility(alice.page, "agent")

        @scenario("an x402 payment shows what it pays for and is approved like a transfer")
        def _():
            alice, key = state["alice"], state["key"]
            challenge = {
                "x402Version": 2,
                "resource": {"url": "https://api.example.com/report"},
                "accepts": [{"scheme": "exact", "network": "eip155:8453", "amount": "3000000",
                             "asset": BASE_USDC, "payTo": RECIPIENT, "maxTimeoutSeconds": 60,
                             "extra": {"name": "USD Coin", "version": "2"}}],
            }
            pay = {"payment_required": challenge, "idempotency_key": "console-report"}
            status, pending = api("POST", "/v1/wallet/x402/authorize", key, pay)
            assert status == 202, f"authorize answered {status}: {pending}"
            intent_id = pending["intent"]["id"]
            alice.page.goto(BASE + "/console/pending")
            row = intent_row(alice.page, intent_id)
            row.wait_for(timeout=DEADLINE_MS)
            assert "x402" in row.inner_text(), row.inner_text()
            alice.page.goto(BASE + f"/console/intents/{intent_id}")
            pays_for = alice.page.locator("dd.x402").inner_text()
            assert "https://api.example.com/report" in pays_for and "eip155:8453" in pays_for, pays_for
            check_accessibility(alice.page, "x402 intent")
            alice.page.get_by_role("button", name="Approve").click()
            alice.page.wait_for_url(f"**/console/intents/{intent_id}?done=confirmed")
            status, authorized = api("POST", "/v1/wallet/x402/authorize", key, pay)
            assert status == 200 and authorized["status"] == "authorized", authorized

        @scenario("reject needs a reason, which the intent keeps")
        def _():
            alice, key = state["alice"], state["key"]
            intent_id = send(key, "2000000")
            alice.page.goto(BASE + f"/console/intents/{intent_id}")
            alice.page.get_by_role("button", name="Reject").click()
            assert intent_status(key, intent_id)["status"] == "pending_confirmation", "no reason, no rejection"
            alice.page.get_by_label("Reason").fill("unknown recipient")
            alice.page.get_by_role("button", name="Reject").click()
            alice.page.wait_for_url(f"**/console/intents/{intent_id}?done=rejected")
            rejected = intent_status(key, intent_id)
            assert rejected["status"] == "rejected", rejected
            assert rejected.get("failure_reason") == "unknown recipient", rejected

        @scenario("reject is reachable from the pending list, with its reason")
        def _():
            alice, key = state["alice"], state["key"]
            alice.page.goto(BASE + "/console/pending")
            intent_id = send(key, "2500000")
            row = intent_row(alice.page, intent_id)
            row.wait_for(timeout=DEADLINE_MS)
            row.locator("summary", has_text="Reject").click()
            row.get_by_label("Reason").fill("sent twice")
            row.get_by_role("button", name="Reject", exact=True).click()
            alice.page.wait_for_url(f"**/console/intents/{intent_id}?done=rejected")
            rejected = intent_status(key, intent_id)
            assert (rejected["status"], rejected.get("failure_reason")) == ("rejected", "sent twice"), rejected

        @scenario("a wrong CSRF token or a foreign origin is refused and changes nothing")
        def _():
            alice, key = state["alice"], state["key"]
            intent_id = send(key, "3000000")
            alice.page.goto(BASE + "/console/pending")
            path = f"/console/intents/{intent_id}/approve"
            wrong = alice.post(path, {"csrf": "not-the-token"})
            foreign = alice.post(path, {"csrf": alice.csrf()}, origin="http://evil.example")
            missing = alice.post(path, {})
            assert (wrong.status, foreign.status, missing.status) == (403, 403, 403), (
                wrong.status,
                foreign.status,
                missing.status,
            )
            assert intent_status(key, intent_id)["status"] == "pending_confirmation"
            state["csrf_intent"] = intent_id

        @scenario("a double click, or two tabs at once, confirm once")
        def _():
            alice, key = state["alice"], state["key"]
            intent_id = state["csrf_intent"]
            alice.page.goto(BASE + "/console/pending")
            token = alice.csrf()
            answers = alice.page.evaluate(
                """async ([path, token]) => {
                    const body = new URLSearchParams({csrf: token});
                    const once = () => fetch(path, {method: "POST", body, redirect: "manual"});
                    const answers = await Promise.all([once(), once()]);
                    return answers.map((answer) => answer.status);
                }""",
                [f"/console/intents/{intent_id}/approve", token],
            )
            confirmed = wait_for_status(key, intent_id, {"confirmed", "submitted", "executed"})
            assert confirmed["approvals"]["received"] == 1, confirmed
            alice.page.goto(BASE + "/console/audit")
            rows = audit_rows(alice.page, "approve", f"intent:{intent_id}")
            assert rows.count() == 1, f"{rows.count()} approvals audited"
            return f"the two posts answered {answers}"

        @scenario("a viewer sees the queue and the agent, and can neither approve, reject nor act")
        def _():
            key, agent = state["key"], state["agent"]
            viewer = Operator(browser, "victor", "viewer")
            viewer.enroll_and_sign_in()
            intent_id = send(key, "1000000")
            row = intent_row(viewer.page, intent_id)
            row.wait_for(timeout=DEADLINE_MS)
            assert row.get_by_role("button", name="Approve").count() == 0
            assert row.locator("details.reject").count() == 0, "no rejection for a viewer"
            refused = viewer.post(f"/console/intents/{intent_id}/approve", {"csrf": viewer.csrf()})
            assert refused.status == 403, refused.status
            assert intent_status(key, intent_id)["status"] == "pending_confirmation"
            agent_links(row, agent).click()
            viewer.page.wait_for_url(f"**/console/agents/{agent}")
            assert viewer.page.locator("h1").inner_text() == "console-payer"
            assert viewer.page.locator("main").get_by_role("button").count() == 0, "nothing to act on"
            viewer.page.goto(BASE + "/console/agents")
            assert "Only an admin" in viewer.page.inner_text("main")
            state["viewer"], state["viewer_intent"] = viewer, intent_id

        @scenario("a page left open does not keep its session alive")
        def _():
            viewer, key = state["viewer"], state["key"]
            viewer.page.goto(BASE + "/console/pending")
            viewer.page.wait_for_load_state("networkidle")
            victors = "operator_id = (SELECT id FROM operators WHERE name = 'victor')"
            sql(f"UPDATE operator_sessions SET last_seen_at = now() - interval '29 minutes' WHERE {victors}")
            intent_id = send(key, "1000000")
            intent_row(viewer.page, intent_id).wait_for(timeout=DEADLINE_MS)
            idle_secs = int(sql(
                "SELECT min(extract(epoch FROM now() - last_seen_at))::int "
                f"FROM operator_sessions WHERE {victors}"
            ))
            assert idle_secs >= 29 * 60, f"the live list refreshed the session: idle {idle_secs} s"
            sql(f"UPDATE operator_sessions SET last_seen_at = now() WHERE {victors}")
            return f"idle {idle_secs} s after the live list showed a new intent"

        @scenario("above the threshold, two distinct operators confirm; who approved waits for the other")
        def _():
            alice, key = state["alice"], state["key"]
            agentctl(
                "policy", "set", state["agent"], "--approvals-required", "2", "--approvals-above", "5000000"
            )
            carol = Operator(browser, "carol", "approver")
            carol.enroll_and_sign_in()
            alice.page.goto(BASE + "/console/pending")
            intent_id = send(key, "6000000")
            intent_row(alice.page, intent_id).wait_for(timeout=DEADLINE_MS)
            alice.page.goto(BASE + f"/console/intents/{intent_id}")
            alice.page.get_by_role("button", name="Approve").click()
            alice.page.wait_for_url(f"**/console/intents/{intent_id}?done=approved")
            first = intent_status(key, intent_id)
            assert first["status"] == "pending_confirmation", first
            assert first["approvals"] == {"required": 2, "received": 1}, first
            waiting = alice.page.locator(".quorum-wait").inner_text()
            assert waiting.startswith("You approved; waiting for 1 more"), waiting
            assert alice.page.get_by_role("button", name="Approve").count() == 0, "no second Approve"
            assert alice.page.get_by_role("button", name="Reject").count() == 1, "Reject stays"
            alice.page.goto(BASE + "/console/pending")
            row = intent_row(alice.page, intent_id)
            assert row.locator(".quorum-wait").inner_text().startswith("You approved; waiting for 1 more")
            assert row.get_by_role("button", name="Approve").count() == 0, "no Approve in Pending either"
            assert row.locator("details.reject").count() == 1, "Reject is reachable from Pending"
            assert "1 of 2" in row.inner_text(), row.inner_text()
            check_accessibility(alice.page, "pending-awaiting-quorum")
            again = alice.post(f"/console/intents/{intent_id}/approve", {"csrf": alice.csrf()})
            assert again.status == 409, f"a second approval of alice's answered {again.status}"
            alice.page.goto(BASE + f"/console/intents/{intent_id}")
            shown = alice.page.inner_text("main")
            for part in ("Verdict at creation", "Verdict now", "Wallet balance", "USDC"):
                assert part in shown, f"the intent page shows no {part!r}"
            history = alice.page.locator('tr[data-action="approve"]', has_text="operator:alice")
            assert history.count() == 1, "the decision history shows alice's approval"
            received = history.locator('li[data-field="approvals.received"]').inner_text()
            assert received == "Approvals received: 0 → 1", received
            assert "{" not in history.inner_text(), "the history reads as fields, not as JSON"
            earlier = alice.page.locator(f'tr[data-intent-id="{state["csrf_intent"]}"]')
            assert earlier.count() == 1, "the agent's earlier intent to the same recipient is listed"
            check_accessibility(alice.page, "intent-awaiting-quorum")
            carol.page.goto(BASE + f"/console/intents/{intent_id}")
            assert carol.page.locator(".quorum-wait").count() == 0, "carol has not approved"
            carol.page.get_by_role("button", name="Approve").click()
            carol.page.wait_for_url(f"**/console/intents/{intent_id}?done=confirmed")
            wait_for_status(key, intent_id, {"confirmed", "submitted", "executed"})
            state["carol"] = carol

        @scenario("a token issued on the console, shown once, proves its operator to agentctl")
        def _():
            alice, carol, key = state["alice"], state["carol"], state["key"]
            intent_id = send(key, "7000000")
            carol.page.goto(BASE + "/console/token")
            carol.page.get_by_role("button", name="Issue a token").click()
            token = carol.page.locator("[data-operator-token]").inner_text().strip()
            assert token.startswith("aro_"), "a token is shown"
            assert carol.page.get_by_role("button", name="Copy").count() == 1, "with a Copy button"
            check_accessibility(carol.page, "token")
            carol.page.goto(BASE + "/console/token")
            assert carol.page.locator("[data-operator-token]").count() == 0, "shown once"
            unproven = subprocess.run(
                [AGENTCTL, "intents", "confirm", intent_id, "--operator", "carol"],
                capture_output=True,
                text=True,
                check=False,
            )
            assert unproven.returncode != 0, "a name alone counted as carol's approval"
            first = agentctl(
                "intents", "confirm", intent_id, env={"AGENTCTL_OPERATOR_TOKEN": token}
            )
            assert first["decided_by"] == "operator:carol", first
            assert first["approvals"] == {"required": 2, "received": 1}, first
            alice.page.goto(BASE + f"/console/intents/{intent_id}")
            assert alice.page.locator('li[data-approver="operator:carol"]').count() == 1
            alice.page.get_by_role("button", name="Approve").click()
            alice.page.wait_for_url(f"**/console/intents/{intent_id}?done=confirmed")
            wait_for_status(key, intent_id, {"confirmed", "submitted", "executed"})

        @scenario("approve judges again: under a policy tightened since, it refuses and says why")
        def _():
            alice, key = state["alice"], state["key"]
            intent_id = state["viewer_intent"]
            agentctl("policy", "set", state["agent"], "--max-daily", "1000")
            alice.page.goto(BASE + f"/console/intents/{intent_id}")
            now = alice.page.locator('span.verdict.refused[data-rule="max_daily"]').inner_text()
            assert "Spending, rolling 24 h" in now and "USDC" in now, f"the verdict now, in words: {now}"
            alice.page.get_by_role("button", name="Approve").click()
            alice.page.wait_for_load_state()
            why = alice.page.get_by_role("alert").inner_text()
            assert why.startswith("Not approved"), why
            assert intent_status(key, intent_id)["status"] == "pending_confirmation"
            return why

        @scenario("times read in the operator's time zone to the second, UTC on hover and without a script")
        def _():
            alice = state["alice"]
            alice.page.goto(BASE + "/console/audit")
            shown = alice.page.locator("time.instant").first
            at = datetime.strptime(shown.get_attribute("datetime"), "%Y-%m-%dT%H:%M:%SZ")
            at = at.replace(tzinfo=timezone.utc)
            utc = at.strftime("%Y-%m-%d %H:%M:%S") + " UTC"
            local = (at + OPERATOR_OFFSET).strftime("%Y-%m-%d %H:%M:%S")
            text = shown.inner_text()
            assert text.startswith(local + " ") and not text.endswith("UTC"), f"{text!r} is not {local} in {OPERATOR_ZONE}"
            assert shown.get_attribute("title") == utc, "the UTC value on hover"
            scriptless = new_context(
                browser, java_script_enabled=False, storage_state=alice.context.storage_state()
            ).new_page()
            scriptless.goto(BASE + "/console/audit")
            plain = scriptless.locator("time.instant").first
            plain_at = plain.get_attribute("datetime")
            expected = datetime.strptime(plain_at, "%Y-%m-%dT%H:%M:%SZ").strftime("%Y-%m-%d %H:%M:%S") + " UTC"
            assert plain.inner_text() == expected, f"without a script: {plain.inner_text()!r}"
            scriptless.context.close()
            return f"{utc} reads {text}"

        @scenario("addresses, ids and amounts are never broken mid-value, even on a narrow page")
        def _():
            alice, agent = state["alice"], state["agent"]
            narrow = alice.context.new_page()
            narrow.set_viewport_size({"width": 760, "height": 900})
            checked = 0
            for path in (
                "/console/pending",
                "/console/history",
                "/console/audit",
                f"/console/agents/{agent}",
                f"/console/intents/{state['csrf_intent']}",
                "/console/agents",
            ):
                narrow.goto(BASE + path)
                broken = broken_values(narrow)
                assert broken == [], f"broken across lines on {path}: {broken}"
                checked += narrow.locator(UNBROKEN).count()
            narrow.close()
            return f"{checked} values read whole"

        @scenario("a failed sign-in is audited; a passkey whose counter went backwards is refused in the console's words")
        def _():
            alice = state["alice"]
            dave = Operator(browser, "dave", "approver")
            dave.enroll_and_sign_in()
            dave.page.get_by_role("button", name="Sign out").click()
            dave.page.wait_for_url("**/console/sign-in")
            counter = dave.set_back_counter()
            dave.sign_in()
            message = dave.page.locator("#message")
            message.filter(has_text="counter went backwards").wait_for(timeout=DEADLINE_MS)
            said = message.inner_text()
            assert "The attempt is in the audit log" in said, said
            assert "compromised" not in said, "said in the console's words, not the library's"
            assert dave.page.url.endswith("/console/sign-in"), "no session"
            check_accessibility(dave.page, "sign-in-refused")
            alice.page.goto(BASE + "/console/audit")
            failed = audit_rows(alice.page, "login_failed", "operator:dave")
            assert failed.count() == 1, "one audit row of the refused sign-in"
            text = failed.inner_text()
            assert "failed sign-in" in text and "signature counter went backwards" in text, text
            return f"the counter was {counter}, then 0: {said}"

        @scenario("no page asks another host for anything, and every page names its own icon")
        def _():
            alice = state["alice"]
            alice.page.goto(BASE + "/console/pending")
            icon = alice.page.locator('link[rel="icon"]').get_attribute("href")
            answer = alice.context.request.get(BASE + icon)
            assert answer.status == 200 and answer.headers["content-type"] == "image/svg+xml", answer.status
            elsewhere = sorted({url for url in requested if not url.startswith(BASE + "/")})
            assert elsewhere == [], f"requests to other hosts: {elsewhere}"
            return f"{len(requested)} requests, all to {BASE}"

        @scenario("a disabled operator is thrown out at once")
        def _():
            viewer = state["viewer"]
            viewer.page.goto(BASE + "/console/pending")
            viewer.page.wait_for_load_state("networkidle")
            agentctl("operators", "disable", "victor")
            viewer.page.wait_for_url("**/console/sign-in", timeout=DEADLINE_MS)
            viewer.page.goto(BASE + "/console/pending")
            assert viewer.page.url.endswith("/console/sign-in"), viewer.page.url

        browser.close()
    held = all(result["ok"] for result in results)
    serious = {page: a["serious_or_critical"] for page, a in accessibility.items() if a["serious_or_critical"]}
    print(
        json.dumps(
            {
                "held": held and not serious,
                "scenarios": results,
                "accessibility": accessibility,
                "measured": measured,
            },
            indent=2,
        )
    )
    sys.exit(0 if held and not serious else 1)


if __name__ == "__main__":
    main()
