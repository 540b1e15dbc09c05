#!/usr/bin/env python3
"""How fast the analysts' workbench is with a full queue and a large case (docs/benchmarks.md).

    workbench_bench.py --vigil build/vigil --model M.json --fx-rates F.csv --policy P.yaml
                       [--cases 10000] [--case-payments 500] [--counterparties 200] [--runs 5]

Starts `vigil serve` on loopback (tools/workbench_browser_test.py's Server), scores one large
payment for each of --cases accounts (10,000 open cases) and --case-payments payments of one
account to --counterparties counterparties (one case of 500 alerts, a graph of 201 nodes), then
in Debian's Chromium, headless, times what an analyst waits for, each --runs times (median and
worst):

  queue      the queue page showing a page of 1,000 of the 10,000 open cases (the API's largest
             page), from choosing "1000 per page" to the 1,000th row on screen;
  case       the 500-alert case, from navigating to it to its alerts table and graph drawn;
  select     choosing another of its alerts, to that decision's waterfall on screen.

Prints one line per measure. A benchmark, not a test: the figures go in docs/benchmarks.md.
"""
import argparse
import datetime
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workbench_browser_test import (  # noqa: E402
    Server, add_server_arguments, browser, console_errors, payment, sign_in)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402


def until(driver, condition, timeout=120):
    WebDriverWait(driver, timeout, poll_frequency=0.005).until(condition)


def main():
    p = argparse.ArgumentParser()
    add_server_arguments(p)
    p.add_argument("--cases", type=int, default=10000)
    p.add_argument("--case-payments", type=int, default=500)
    p.add_argument("--counterparties", type=int, default=200)
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    tmp = tempfile.mkdtemp(prefix="vigil-workbench-bench-")
    server = Server(args, tmp)
    driver = None
    try:
        analyst = server.token("analyst", "bench")
        scorer = server.token("scorer", "bench")
        server.start()
        def at(pay, second):  # event times in order, a second apart
            pay["timestamp"] = (datetime.datetime(2022, 9, 1) + datetime.timedelta(
                seconds=second)).strftime("%Y-%m-%dT%H:%M:%SZ")
            return pay
        pays = [at(payment(f"q{i}", f"Q{i:05d}", f"C{i % 97}", "2500.00", 0), i)
                for i in range(args.cases)]
        pays += [at(payment(f"big{i}", "BIG", f"K{i % args.counterparties:03d}", "1500.00", 0),
                    args.cases + i) for i in range(args.case_payments)]
        started = time.monotonic()
        for k in range(0, len(pays), 100):
            status, body = server.call("POST", "/v1/score/batch", scorer, pays[k:k + 100])
            if status != 200:
                sys.exit(f"POST /v1/score/batch: {status} {body}")
            refused = [r["error"] for r in body["results"] if "error" in r]
            if refused:
                sys.exit(f"POST /v1/score/batch refused {len(refused)}: {refused[0]}")
        scored = time.monotonic() - started
        want = args.cases + 1
        for _ in range(600):
            status, listed = server.call("GET", "/v1/cases?state=unclosed&limit=1", analyst)
            if listed.get("total", 0) >= want:
                break
            time.sleep(0.1)
        if listed.get("total") != want:
            sys.exit(f"expected {want} cases, the API lists {listed.get('total')}")
        _, big = server.call("GET", "/v1/cases?subject=BIG&limit=1", analyst)
        big_id = big["cases"][0]["id"]
        print(f"setup: {len(pays)} payments scored in {scored:.1f} s; {want} open cases; "
              f"{big_id} holds {big['cases'][0]['alerts']} alerts")

        tallies = []
        for _ in range(20):  # what each /metrics scrape also costs: every case tallied
            t0 = time.monotonic()
            server.call("GET", "/v1/cases/stats", analyst)
            tallies.append(time.monotonic() - t0)
        print(f"GET /v1/cases/stats over {want:,} cases: median "
              f"{statistics.median(tallies) * 1000:.1f} ms (20 calls, HTTP included)")
        driver = browser()
        base = f"http://127.0.0.1:{server.port}/ui"
        sign_in(driver, base, analyst)
        until(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "#queue tbody tr")))
        queue, case, select = [], [], []
        for run in range(args.runs):
            driver.get(f"{base}#/dashboard")
            driver.refresh()
            until(driver, EC.presence_of_element_located((By.ID, "dashboard")))
            driver.get(f"{base}#/queue")
            until(driver, EC.presence_of_element_located((By.CSS_SELECTOR, "#queue tbody tr")))
            per_page = Select(driver.find_elements(By.CSS_SELECTOR, ".toolbar select")[-1])
            t0 = time.monotonic()
            per_page.select_by_value("1000")
            until(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#queue tbody tr")) ==
                  min(1000, want))
            queue.append(time.monotonic() - t0)

            t0 = time.monotonic()
            driver.get(f"{base}#/case/{big_id}")
            until(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#alerts tbody tr")) ==
                  args.case_payments and d.find_elements(By.CSS_SELECTOR, ".graph canvas"))
            case.append(time.monotonic() - t0)

            until(driver, EC.presence_of_element_located((By.CSS_SELECTOR, ".waterfall")))
            rows = driver.find_elements(By.CSS_SELECTOR, "#alerts tbody tr button.link")
            target = rows[run * 37 % len(rows)]
            sequence = target.text
            t0 = time.monotonic()
            target.click()
            until(driver, lambda d: d.find_element(By.ID, "decision").get_attribute(
                "data-sequence") == sequence and d.find_elements(By.CSS_SELECTOR, ".waterfall"))
            select.append(time.monotonic() - t0)
        errors = console_errors(driver)
        for name, values in ((f"queue: {min(1000, want):,} of {want:,} open cases", queue),
                             (f"case: {args.case_payments} alerts, {args.counterparties + 1}-node graph", case),
                             ("select another alert: its waterfall", select)):
            print(f"{name:48s} median {statistics.median(values) * 1000:7.0f} ms, "
                  f"worst {max(values) * 1000:7.0f} ms ({len(values)} runs)")
        if errors:
            print(f"console errors: {errors}")
            return 1
        return 0
    finally:
        if driver is not None:
            driver.quit()
        server.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
