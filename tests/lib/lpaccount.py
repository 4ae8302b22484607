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
- every finding with a category draws at most the breakdown's time in it
  over the scope; a finding about one stage (its subject is a breakdown
  stage) is on that stage's largest wait category, or its summary names
  the larger one (it explains why its own comes first);
- the tail finding's category is the breakdown's for the same tail stage,
  its summary names that category first ("mostly preempted"), and its
  first cause and amount are the breakdown's tail category and growth
  (within rounding: 1 ns per tail request);
- a quiet rule that points to a finding (counted_in) points to one that is
  listed, on the same category."""
import json

from lptest import check, latprof

MIN_SHARE = 0.01
# the time no wait covers: not a wait category
REST_CATS = ("on_cpu", "preempted", "cpu_or_preempted")


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


def _check_stage(label, f, bd):
    """A finding about one stage is on its largest wait category, or says
    which larger one there is."""
    if f["id"] == "tail-outlier" or not bd.get("stages"):
        return
    st = next((x for x in bd["stages"] if x["name"] == f.get("subject")), None)
    if st is None:
        return
    waits = {k: v for k, v in st["categories"].items() if k not in REST_CATS and v > 0}
    if not waits:
        return
    top = max(waits, key=waits.get)
    label_of = {x["name"]: x["label"] for x in bd["categories"]}
    check(f["category"] == top or waits[top] <= waits.get(f["category"], 0) or
          label_of.get(top, top) in f["summary"],
          f"{label}: {f['id']} on stage {f['subject']} is on {f['category']}, the stage's "
          f"largest wait category ({top}: {waits[top] / 1e6:.3f} ms) or it names it "
          f"({f['summary']!r})")


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
        check(f["saving_ns"] <= cats.get(c, 0),
              f"{label}: {f['id']} saves {f['saving_ns'] / 1e6:.3f} ms of {c}, within the "
              f"breakdown's {cats.get(c, 0) / 1e6:.3f} ms of {c} over the {doc['scope']}")
        claimed[c] = claimed.get(c, 0) + f["saving_ns"]
        _check_stage(label, f, bd)
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
        items = (tail.get("sites") or {}).get("items") or []
        causes = [x for x in items if x["what"] != tail["subject"]]
        if causes:
            n = max(causes[0]["count"], 1)
            grow = bd["tail"]["category"]["growth_ns"]
            check(causes[0]["what"].split(" on ")[0] == label_of.get(bc, bc) and
                  abs(causes[0]["ns"] / n - grow) <= 1 + 0.1 / n,
                  f"{label}: tail-outlier's first cause {causes[0]['what']} "
                  f"+{causes[0]['ns'] / n / 1e6:.4f} ms per tail request is the breakdown's "
                  f"tail {label_of.get(bc, bc)} +{grow / 1e6:.4f} ms")
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
