#!/usr/bin/env python3
"""The analysts' workbench in a real browser (docs/workbench.md).

    workbench_browser_test.py --vigil build/vigil --model M.json --fx-rates F.csv
                              --policy testdata/policies/cases.yaml [--screenshots DIR] [--keep]

Starts `vigil serve` on a free loopback port over a fresh data directory (tokens: two analysts,
a scorer), scores payments over HTTP so that the decision log raises cases, then drives
Debian's Chromium through chromedriver with Selenium, headless: signs in with the keyboard,
takes the next case from the queue, reads the waterfall and checks its values against the
API's answer and its sum against the margin, adds a note, closes the case as a false positive,
sees it leave the queue and count in the dashboard, and checks that no page logged a console
error. With --screenshots, saves the main pages as PNG there (docs/images/). Exit 0 when every
check passes; otherwise each failed check is printed and the exit status is 1.
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

LISTENING_RE = re.compile(r"vigil serve: listening on 127\.0\.0\.1:(\d+)")
WAIT_S = 20



class Failures:
    def __init__(self):
        self.items = []
        self.step = "starting"

    def expect(self, ok, what):
        if not ok:
            self.items.append(what)
            print(f"FAIL: {what}", file=sys.stderr)
        return ok


def payment(tx, payer, payee, amount, minute):
    return {"id": tx, "timestamp": f"2022-09-01T08:{minute:02d}:00Z",
            "originator": {"account_id": payer, "bank_id": "B1", "name": f"Payer {payer}"},
            "beneficiary": {"account_id": payee, "bank_id": "B2", "name": f"Payee {payee}"},
            "amount": {"value": amount, "currency": "USD"}, "payment_format": "wire"}


class Server:
    def __init__(self, args, tmp):
        self.args = args
        self.data_dir = os.path.join(tmp, "data")
        os.makedirs(self.data_dir)
        # REVIEW above 1,000 in the reporting currency, BLOCK above 50,000; the model scores
        # too, so that each decision has an attribution.
        self.policy = args.policy
        self.stderr_path = os.path.join(tmp, "serve.stderr")
        self.proc = None
        self.port = None

    def token(self, role, who):
        p = subprocess.run([self.args.vigil, "token", "create", "--data-dir", self.data_dir,
                            "--role", role, "--description", who],
                           capture_output=True, timeout=60, check=True)
        return p.stdout.decode().strip()

    def start(self):
        watchlist = os.path.join(os.path.dirname(self.data_dir), "watchlist.csv")
        with open(watchlist, "w", encoding="utf-8") as f:
            f.write("id,name,aliases,type,countries,identifiers,list\n"
                    "T1,ACME SANCTIONED TRADING LLC,,entity,Iran,,TEST LIST\n")
        # A small drift reference (tools/train.py's form) of two features, so that the
        # dashboard shows drift levels: the amounts scored here sit far above its range.
        profile = os.path.join(os.path.dirname(self.data_dir), "reference_profile.json")
        def entry(lo, hi):
            return {"count": 1000, "missing": 0,
                    "bin_edges": [lo + (hi - lo) * i / 10 for i in range(11)],
                    "bin_counts": [100] * 10, "mean": (lo + hi) / 2, "std": (hi - lo) / 3.5,
                    "sample": [lo + (hi - lo) * i / 20 for i in range(21)]}
        with open(profile, "w", encoding="utf-8") as f:
            json.dump({"feature_schema_version": "vigil.features.v3", "rows": 1000,
                       "features": {"amount_reporting": entry(0, 500),
                                    "is_cross_currency": entry(0, 1)},
                       "score": entry(0, 1)}, f)
        cmd = [self.args.vigil, "serve", "--listen", "127.0.0.1:0", "--data-dir", self.data_dir,
               "--model", self.args.model, "--policy", self.policy,
               "--fx-rates", self.args.fx_rates, "--screening-list", watchlist,
               "--drift-profile", profile, "--no-drift-freeze", "--drift-min-rows", "1",
               "--plaintext"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                     stderr=open(self.stderr_path, "wb"),
                                     stdin=subprocess.DEVNULL)
        found = {}

        def read():
            for raw in self.proc.stdout:
                m = LISTENING_RE.search(raw.decode("utf-8", "replace"))
                if m and "port" not in found:
                    found["port"] = int(m.group(1))
        threading.Thread(target=read, daemon=True).start()
        deadline = time.monotonic() + 60
        while "port" not in found:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"vigil serve did not start; stderr: {self.stderr()}")
            time.sleep(0.05)
        self.port = found["port"]

    def stderr(self):
        try:
            with open(self.stderr_path, encoding="utf-8", errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def call(self, method, path, token, body=None):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {token}",
                                              "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1500,1100", "--no-first-run", "--disable-extensions",
                 "--lang=en-US"):  # the date field's order (mm/dd/yyyy) the test types
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=shutil.which("chromedriver") or "/usr/bin/chromedriver")
    return webdriver.Chrome(service=service, options=options)


def console_errors(driver):
    return [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]


def add_server_arguments(p):
    """What Server needs: the binary, the model, the FX table and the policy."""
    p.add_argument("--vigil", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--fx-rates", required=True)
    p.add_argument("--policy", required=True)


def sign_in(driver, base, token, wait_s=WAIT_S):
    """Opens the workbench at "base" and signs in with "token" from the keyboard."""
    driver.get(base)
    field = WebDriverWait(driver, wait_s).until(EC.presence_of_element_located((By.ID, "token")))
    field.send_keys(token)
    field.send_keys(Keys.ENTER)


def main():
    p = argparse.ArgumentParser()
    add_server_arguments(p)
    p.add_argument("--screenshots", default="")
    p.add_argument("--keep", action="store_true", help="keep the data directory")
    args = p.parse_args()
    fails = Failures()
    tmp = tempfile.mkdtemp(prefix="vigil-workbench-test-")
    server = Server(args, tmp)
    driver = None
    try:
        alice = server.token("analyst", "alice")
        bob = server.token("analyst", "bob")
        scorer = server.token("scorer", "gateway")
        server.start()
        # A1 pays three large amounts (one case of three alerts); C2, paid by A1, pays A1 back
        # (a cycle); B1 makes a huge payment (a BLOCK case).
        payments = [payment("t1", "A1", "C1", "2500.00", 1), payment("t2", "A1", "C2", "3100.00", 2),
                    payment("t3", "A1", "C1", "1900.00", 3), payment("t4", "C2", "A1", "2800.00", 4),
                    payment("t5", "B1", "C3", "75000.00", 5),
                    payment("t6", "S1", "L1", "120.00", 6)]
        payments[-1]["beneficiary"]["name"] = "ACME SANCTIONED TRADING LLC"  # a listed name
        for pay in payments:
            status, body = server.call("POST", "/v1/score", scorer, pay)
            if not fails.expect(status == 200, f"POST /v1/score {pay['id']}: {status} {body}"):
                return 1
        deadline = time.monotonic() + WAIT_S
        listed = None
        while time.monotonic() < deadline:
            status, listed = server.call("GET", "/v1/cases?state=unclosed", alice)
            if status == 200 and listed["total"] >= 4:
                break
            time.sleep(0.2)
        if not fails.expect(listed and listed.get("total") == 4,
                            f"four cases (A1, C2, B1, S1) from the decision log, got {listed}"):
            return 1

        driver = browser()
        fails.step = "sign in"
        wait = WebDriverWait(driver, WAIT_S)
        base = f"http://127.0.0.1:{server.port}/ui"
        sign_in(driver, base, alice)  # signing in needs no mouse
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#queue tbody tr")))
        rows = driver.find_elements(By.CSS_SELECTOR, "#queue tbody tr")
        fails.expect(len(rows) == 4, f"the queue shows the 4 unclosed cases, shows {len(rows)}")
        fails.expect(rows[0].get_attribute("data-case") == listed["cases"][0]["id"],
                     "the queue's first row is the API's case of highest priority")
        if args.screenshots:
            driver.save_screenshot(os.path.join(args.screenshots, "workbench-queue.png"))

        # Take the next case: the one of highest priority, claimed.
        fails.step = "take next"
        expected = listed["cases"][0]["id"]
        driver.find_element(By.ID, "take-next").click()
        wait.until(lambda d: d.current_url.endswith(f"#/case/{expected}"))
        case = wait.until(EC.presence_of_element_located((By.ID, "case")))
        wait.until(lambda d: d.find_element(By.ID, "case").get_attribute("data-state") == "in_review")
        status, detail = server.call("GET", f"/v1/cases/{expected}", alice)
        fails.expect(detail["case"]["owner"].startswith("token:"),
                     f"the taken case is held by alice's token: {detail['case']['owner']}")

        # The waterfall of the selected (latest) alert: its values are the API's.
        fails.step = "waterfall"
        decision = wait.until(EC.presence_of_element_located((By.ID, "decision")))
        sequence = int(decision.get_attribute("data-sequence"))
        status, api = server.call("GET", f"/v1/cases/{expected}/decision?sequence={sequence}", alice)
        fails.expect(status == 200, f"GET decision {sequence}: {status}")
        attribution = api.get("attribution")
        if fails.expect(attribution is not None,
                        f"the decision has an attribution: {api.get('attribution_unavailable')}"):
            wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "table.attribution tbody tr")))
            shown = {r.get_attribute("data-feature"): float(r.get_attribute("data-contribution"))
                     for r in driver.find_elements(By.CSS_SELECTOR, "table.attribution tbody tr")}
            want = {f["feature"]: f["contribution"] for f in attribution["features"]}
            fails.expect(shown == want, "the page's contributions equal the API's, feature by feature")
            total = attribution["bias"] + sum(want.values())
            fails.expect(abs(total - attribution["margin"]) < 1e-5,
                         f"bias + contributions {total} = margin {attribution['margin']}")
            fails.expect(abs(attribution["score"] - api["record"]["decision"]["score"]) < 1e-6,
                         "the attribution's score is the recorded score")
            fails.expect(len(driver.find_elements(By.CSS_SELECTOR, ".waterfall svg g.step")) >= 3,
                         "the waterfall draws the bias, steps and the margin")
        if args.screenshots:
            driver.save_screenshot(os.path.join(args.screenshots, "workbench-case.png"))

        # A note, then closing as a false positive.
        fails.step = "note and close"
        note = driver.find_element(By.CSS_SELECTOR, "#note textarea")
        note.send_keys("Payroll run confirmed with the relationship manager.")
        driver.find_element(By.CSS_SELECTOR, "#note button[type=submit]").click()
        wait.until(lambda d: any("Payroll run confirmed" in li.text for li in
                                 d.find_elements(By.CSS_SELECTOR, "#timeline li[data-kind=note]")))
        fails.step = "attach"
        evidence = os.path.join(tmp, "contract.txt")
        with open(evidence, "w", encoding="utf-8") as f:
            f.write("Property purchase contract, signed 2022-08-30.\n")
        driver.find_element(By.CSS_SELECTOR, "#attach input[type=file]").send_keys(evidence)
        driver.find_element(By.CSS_SELECTOR, "#attach input[name=text]").send_keys("the contract")
        driver.find_element(By.CSS_SELECTOR, "#attach button[type=submit]").click()
        wait.until(lambda d: any("contract.txt" in li.text for li in
                                 d.find_elements(By.CSS_SELECTOR, "#timeline li[data-kind=attach]")))
        fails.step = "note and close"
        Select(driver.find_element(By.CSS_SELECTOR, "#close select")).select_by_value("false_positive")
        driver.find_element(By.CSS_SELECTOR, "#close textarea").send_keys("Known payroll pattern.")
        driver.find_element(By.CSS_SELECTOR, "#close button[type=submit]").click()
        # The case of highest priority holds a BLOCK: its closing awaits a second analyst.
        wait.until(lambda d: d.find_element(By.ID, "case").get_attribute("data-state") ==
                   "awaiting_approval")
        fails.step = "four eyes: sign out"
        driver.find_element(By.ID, "sign-out").click()
        field = wait.until(EC.presence_of_element_located((By.ID, "token")))
        field.send_keys(bob)
        field.send_keys(Keys.ENTER)
        # Signing in keeps the page's address: the case again, now as bob.
        fails.step = "four eyes: approve"
        wait.until(EC.element_to_be_clickable((By.ID, "approve"))).click()
        fails.step = "four eyes: closed"
        wait.until(lambda d: d.find_element(By.ID, "case").get_attribute("data-state") == "closed")
        status, detail = server.call("GET", f"/v1/cases/{expected}", alice)
        fails.expect(detail["case"]["state"] == "closed" and
                     detail["case"]["outcome"] == "false_positive" and
                     detail["case"]["approved_by"] != detail["case"]["closed_by"],
                     f"the API has the case closed as a false positive by two analysts: "
                     f"{detail['case']}")
        kinds = [e["kind"] for e in detail["timeline"]]
        fails.expect(kinds == ["claim", "note", "attach", "propose_close", "approve_close"],
                     f"the timeline {kinds}")

        # It leaves the queue.
        fails.step = "queue after closing"
        driver.get(f"{base}#/queue")
        wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#queue tbody tr")))
        ids = [r.get_attribute("data-case")
               for r in driver.find_elements(By.CSS_SELECTOR, "#queue tbody tr")]
        fails.expect(expected not in ids and len(ids) == 3,
                     f"the closed case left the queue: {ids}")

        # Bob reviews the screening hit of S1's case: a namesake, cleared for 30 days.
        fails.step = "screening review"
        hit_case = next(c["id"] for c in listed["cases"] if c["subject"] == "S1")
        driver.get(f"{base}#/case/{hit_case}")
        wait.until(EC.element_to_be_clickable((By.ID, "claim"))).click()
        wait.until(lambda d: d.find_element(By.ID, "case").get_attribute("data-state") == "in_review")
        form = wait.until(EC.presence_of_element_located(
            (By.CSS_SELECTOR, "#hits li[data-hit='TEST LIST:T1'] form")))
        Select(form.find_element(By.NAME, "verdict")).select_by_value("cleared")
        until = time.gmtime(time.time() + 30 * 86400)
        form.find_element(By.NAME, "expires").send_keys(time.strftime("%m%d%Y", until))
        form.find_element(By.NAME, "text").send_keys("a namesake: different registration")
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        wait.until(EC.presence_of_element_located(
            (By.CSS_SELECTOR, "#hits li[data-hit='TEST LIST:T1'] .verdict[data-verdict=cleared]")))
        status, held = server.call("GET", "/v1/screening/clearances", bob)
        fails.expect(status == 200 and len(held["clearances"]) == 1 and
                     held["clearances"][0]["party"] == "account:L1" and
                     held["clearances"][0]["expires"].startswith(time.strftime("%Y-%m-%d", until)),
                     f"the clearance is in force for the listed party until the date: {held}")
        status, again = server.call("POST", "/v1/score", scorer,
                                    dict(payments[-1], id="t7", timestamp="2022-09-01T08:07:00Z"))
        fails.expect(status == 200 and again.get("action") == "ALLOW",
                     f"the same payment is no longer held: {again.get('action')}")
        if args.screenshots:
            driver.save_screenshot(os.path.join(args.screenshots, "workbench-screening.png"))

        # It counts in the dashboard.
        fails.step = "dashboard"
        driver.get(f"{base}#/dashboard")
        wait.until(EC.presence_of_element_located((By.ID, "d-state-closed")))
        fails.expect(driver.find_element(By.ID, "d-state-closed").text == "1",
                     "the dashboard counts one closed case")
        fp = driver.find_element(By.CSS_SELECTOR, "#outcomes tr[data-outcome=false_positive] td")
        fails.expect(fp.text == "1", f"one false positive in the outcomes, shows {fp.text}")
        rate = driver.find_element(By.CSS_SELECTOR, "#reasons tr[data-reason=large] td[data-rate]")
        fails.expect(rate.get_attribute("data-rate") != "",
                     "the rule 'large' has a false-positive rate once a case of it is closed")
        drift = wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#drift table")))
        fails.expect(len(drift.find_elements(By.CSS_SELECTOR, "tr[data-feature]")) >= 2,
                     "the dashboard lists the drift monitor's features")
        if args.screenshots:
            driver.save_screenshot(os.path.join(args.screenshots, "workbench-dashboard.png"))

        errors = console_errors(driver)
        fails.expect(not errors, f"no console errors: {errors}")
    except TimeoutException as e:
        if driver is not None:
            shot = os.path.join(tempfile.gettempdir(), "workbench-browser-test-failure.png")
            driver.save_screenshot(shot)
            print(f"the page when it timed out: {shot}\n{driver.find_element(By.TAG_NAME, 'body').text[:3000]}",
                  file=sys.stderr)
        fails.expect(False, f"timed out waiting in the browser at '{fails.step}': {e.msg or e}; url "
                            f"{driver.current_url if driver else '-'}; console "
                            f"{console_errors(driver) if driver else '-'}")
    except Exception as e:  # the check's own failure is reported as one
        fails.expect(False, f"{type(e).__name__}: {e}")
    finally:
        if driver is not None:
            driver.quit()
        server.stop()
        if fails.items:
            print(f"vigil serve stderr (tail):\n{server.stderr()}", file=sys.stderr)
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if fails.items:
        print(f"workbench_browser_test: {len(fails.items)} check(s) failed", file=sys.stderr)
        return 1
    print("workbench_browser_test: every check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
