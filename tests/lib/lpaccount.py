"""The findings of one run as one account (docs/rules.md, *One account*),
checked on any database: call check_account(db) after recording it.

- the savings add up to at most the time judged (the scope: request time,
  or thread time without requests);
- no finding saves under 1% of it (such a rule is quiet, with its value
  and what it would have saved);
- findings that draw on one breakdown category never claim more of it, all
  together, than the breakdown (`report --breakdown`) shows for the same
  scope, and a finding that shares a category with a larger one names it
  (counted_in: a listed finding on the same category);
- the tail finding's category is the breakdown's for the same tail stage,
  and its summary names that category first ("mostly preempted");
- a quiet rule that points to a finding (counted_in) points to one that is
  listed, on the same category."""
import json

from lptest import check, latprof

MIN_SHARE = 0.01


def _json(db, *args):
    return json.loads(latprof("report", db, *args, "--format", "json", check=0).stdout)


def breakdown_totals(bd, scope):
    """Category -> ns over the findings' scope: requests, or all threads."""
    if scope == "requests":
        return dict(bd["request"]["categories"])
    tot = {}
    for t in bd["threads"]:
        for k, v in t["categories"].items():
            tot[k] = tot.get(k, 0) + v
    return tot


def check_account(db, label=None):
    """Checks db's findings as one account; returns the findings JSON."""
    label = label or db
    doc = _json(db, "--bottlenecks")
    bd = _json(db, "--breakdown")
    fs, scope_ns = doc["findings"], doc["scope_ns"]
    total = sum(f["saving_ns"] for f in fs)
    check(total <= scope_ns,
          f"{label}: the {len(fs)} findings save {total / 1e6:.3f} ms together, at most the "
          f"{scope_ns / 1e6:.3f} ms judged ({100 * total / max(scope_ns, 1):.1f}%: "
          f"{[(f['id'], round(100 * f['share'], 1)) for f in fs]})")
    small = [(f["id"], f["share"]) for f in fs if f["share"] < MIN_SHARE]
    check(not small, f"{label}: no finding saves under 1% of the time judged ({small})")
    cats = breakdown_totals(bd, doc["scope"])
    claimed, cat_of = {}, {f["id"]: f["category"] for f in fs}
    for f in fs:
        c = f["category"]
        if c is None:
            continue
        check(c in cats, f"{label}: {f['id']}'s category {c} is one of the breakdown's")
        if f["counted_in"] is not None:
            check(cat_of.get(f["counted_in"]) == c,
                  f"{label}: {f['id']} shares {c} with {f['counted_in']}, a listed finding "
                  f"on {c} that counts the rest")
        claimed[c] = claimed.get(c, 0) + f["saving_ns"]
    for c, ns in claimed.items():
        check(ns <= cats.get(c, 0),
              f"{label}: findings on {c} save {ns / 1e6:.3f} ms, within the breakdown's "
              f"{cats.get(c, 0) / 1e6:.3f} ms of {c} over the {doc['scope']}")
    tail = next((f for f in fs if f["id"] == "tail-outlier"), None)
    if tail and bd.get("tail") and bd["tail"].get("category"):
        bc = bd["tail"]["category"]["name"]
        label_of = {x["name"]: x["label"] for x in bd["categories"]}
        check(tail["category"] == bc and tail["subject"] == bd["tail"]["stage"]["name"],
              f"{label}: tail-outlier names stage {tail['subject']} and category "
              f"{tail['category']}, as the breakdown's tail ({bd['tail']['stage']['name']}, {bc})")
        check(f"mostly {label_of.get(bc, bc)} " in tail["summary"],
              f"{label}: its summary says 'mostly {label_of.get(bc, bc)}' first: "
              f"{tail['summary']!r}")
    listed = {f["id"]: f for f in fs}
    for r in doc["rules"]:
        if r["state"] == "quiet" and r["counted_in"] is not None:
            check(r["counted_in"] in listed,
                  f"{label}: quiet {r['id']} points to {r['counted_in']}, a listed finding")
        if r["unlisted_saving_ns"] is not None:
            check(r["state"] == "quiet" and (r["counted_in"] is not None or
                                             r["unlisted_saving_ns"] < MIN_SHARE * scope_ns),
                  f"{label}: {r['id']} crossed its threshold but is not listed: its saving "
                  f"{r['unlisted_saving_ns'] / 1e6:.3f} ms is counted in {r['counted_in']} "
                  f"or under 1%")
    return doc
