"""Checks a folded profile (strobe's profile=FILE) against what a test program does.

  check.py share FILE A B SHARE TOL   A's samples / (A's + B's) is SHARE% within TOL
                                      (A, B: functions anywhere on a stack)
  check.py apart FILE T1:F1 T2:F2 MIN each stack with F1 has T1 and neither T2 nor F2
                                      (and the other way round); each has >= MIN samples
  check.py bounded FILE LINES DEPTH   at most LINES lines, each of at most DEPTH frames
                                      (not counting [truncated] and a leaf [..] frame)
  check.py schema SCHEMA JSON         JSON is valid against the JSON schema SCHEMA, and a
                                      copy without its profiles' weights is not
Prints `ok: …` or `FAIL: …` (exit status 1)."""
import copy
import json
import sys


def stacks(path):
    out = []
    for line in open(path):
        stack, count = line.rstrip("\n").rsplit(" ", 1)
        out.append((stack.split(";"), int(count)))
    return out


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def is_type(v, t):
    if t in ("number", "integer"):
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
        return ok and (t == "number" or float(v).is_integer())
    return isinstance(v, TYPES[t])


def validate(v, s, root, where):
    """The first error of v against JSON schema s (draft 7: the keywords that
    speedscope's schema uses: $ref, anyOf, const, enum, items, properties, required,
    type), or None."""
    if "$ref" in s:
        ref = s["$ref"]
        if not ref.startswith("#/"):
            return "%s: cannot follow $ref %s" % (where, ref)
        target = root
        for part in ref[2:].split("/"):
            target = target[part]
        return validate(v, target, root, where)
    if "type" in s:
        types = s["type"] if isinstance(s["type"], list) else [s["type"]]
        if not any(is_type(v, t) for t in types):
            return "%s: not of type %s" % (where, "/".join(types))
    if "const" in s and v != s["const"]:
        return "%s: not %r" % (where, s["const"])
    if "enum" in s and v not in s["enum"]:
        return "%s: not one of %r" % (where, s["enum"])
    if "anyOf" in s:
        errors = [validate(v, alt, root, where) for alt in s["anyOf"]]
        if all(errors):
            return "%s: matches no alternative (%s)" % (where, "; ".join(errors))
    if isinstance(v, dict):
        for k in s.get("required", []):
            if k not in v:
                return "%s: no %s" % (where, k)
        for k, sub in s.get("properties", {}).items():
            if k in v:
                e = validate(v[k], sub, root, where + "." + k)
                if e:
                    return e
    if isinstance(v, list) and "items" in s:
        for i, item in enumerate(v):
            e = validate(item, s["items"], root, "%s[%d]" % (where, i))
            if e:
                return e
    return None


def main(argv):
    what = argv[0]
    if what == "share":
        path, a, b, share, tol = argv[1:]
        na = sum(c for f, c in stacks(path) if a in f)
        nb = sum(c for f, c in stacks(path) if b in f)
        if na + nb == 0:
            fail("no samples of %s or %s" % (a, b))
        got = 100.0 * na / (na + nb)
        msg = "%s %.1f%% of %d samples (expected %s%% +- %s)" % (a, got, na + nb, share, tol)
        if abs(got - float(share)) > float(tol):
            fail(msg)
        print("ok: " + msg)
    elif what == "apart":
        path, p1, p2, least = argv[1:]
        (t1, f1), (t2, f2) = p1.split(":"), p2.split(":")
        counts = {f1: 0, f2: 0}
        for frames, c in stacks(path):
            for t, f, ot, of in ((t1, f1, t2, f2), (t2, f2, t1, f1)):
                if f in frames:
                    if t not in frames or ot in frames or of in frames:
                        fail("%s under another thread's functions: %s" % (f, ";".join(frames)))
                    counts[f] += c
        for f, n in counts.items():
            if n < int(least):
                fail("%s has %d samples, fewer than %s" % (f, n, least))
        print("ok: %s %d samples, %s %d samples, each under its own thread" %
              (f1, counts[f1], f2, counts[f2]))
    elif what == "bounded":
        path, lines, depth = argv[1:]
        s = stacks(path)
        if len(s) > int(lines):
            fail("%d lines, more than %s" % (len(s), lines))
        for frames, _ in s:
            inner = [f for f in frames if not f.startswith("[")]
            if len(inner) > int(depth):
                fail("%d frames, more than %s: %s" % (len(inner), depth, ";".join(frames)))
        print("ok: %d lines of at most %s frames, %d samples" % (len(s), depth,
                                                                  sum(c for _, c in s)))
    elif what == "schema":
        schema, doc = json.load(open(argv[1])), json.load(open(argv[2]))
        err = validate(doc, schema, schema, "$")
        if err:
            fail(err)
        broken = copy.deepcopy(doc)
        for p in broken["profiles"]:
            del p["weights"]
        if not validate(broken, schema, schema, "$"):
            fail("the schema accepts a sampled profile without weights")
        print("ok: valid speedscope file, %d frames, %d profiles" %
              (len(doc["shared"]["frames"]), len(doc["profiles"])))
    else:
        fail("unknown check " + what)


main(sys.argv[1:])
