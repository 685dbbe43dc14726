"""One ``llm`` session per shipped system against a language-model endpoint
(by default ``diagkg llm serve-local`` on 127.0.0.1:8011), printing the end
value, cost, rounds, calls and seconds per call.

    .venv/bin/diagkg llm serve-local &          # the local-llm extra
    .venv/bin/python benchmarks/llm_local.py [--base-url URL] [--model NAME] [--budget 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from _load import load_average
from diagkg.kg.loading import load_shipped
from diagkg.kg.store import KnowledgeStore
from diagkg.runs.runner import run_session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", default="http://127.0.0.1:8011/v1")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--structured", default="json_object")
    parser.add_argument("--budget", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=400)
    parser.add_argument("--timeout", type=float, default=600, help="seconds per call (a shared 2-core machine is slow)")
    args = parser.parse_args()
    store = KnowledgeStore.memory()
    load_shipped(store)
    first = {}
    for row in store.select("scenario-index"):
        first.setdefault(row["key"], row)
    cfg = {"base_url": args.base_url, "model": args.model, "structured": args.structured, "timeout": args.timeout,
           "max_tokens": args.max_tokens, "retries": 1, "backoff": 0.1}
    print(f"{'system':<16} {'scenario':<10} {'end':<24} {'cost':>6} {'rounds':>6} {'calls':>5} {'s/call':>7}")
    for system, row in sorted(first.items()):
        t0 = time.perf_counter()
        result = run_session(row["number"], "llm", config=cfg, store=store, budget=args.budget)
        calls = result.llm.records if result.llm else []
        per_call = statistics.mean(c.latency for c in calls) if calls else 0.0
        end = result.end + (f" ({result.llm_cause.value})" if result.llm_cause else "")
        print(f"{system:<16} {row['id']:<10} {end:<24} {result.cost:>6g} {result.rounds:>6} {len(calls):>5} "
              f"{per_call:>7.2f}   ({time.perf_counter() - t0:.1f} s)  ({load_average()})")


if __name__ == "__main__":
    main()
