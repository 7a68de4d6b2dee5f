"""Printing: entries as docs/registry.md, "How an entry is printed", says, and a
function's nested notes grouped into one frame as the runtime's reports do."""

from .registry import Registry


def span(d):
    """As GHC prints a span: l:c, l:c1-c2, or (l1,c1)-(l2,c2)."""
    if d.line1 == d.line2:
        return "%d:%d" % (d.line1, d.col1) + ("-%d" % d.col2 if d.col2 != d.col1 else "")
    return "(%d,%d)-(%d,%d)" % (d.line1, d.col1, d.line2, d.col2)


def count(n, one, many):
    return "%d %s" % (n, one if n == 1 else many)


def entry_lines(n, e, d):
    """`#n Main.fact at Fact.hs:15:10-25 (x3) (tail)`, and its elided tail calls."""
    s = "#%d %s" % (n, d.function or "?")
    if d.kind == Registry.KIND_SOURCE_NOTE and d.file:
        s += " at %s:%s" % (d.file, span(d))
    if e.repeats > 0:
        s += " (x%d)" % (e.repeats + 1)
    if e.flags & Registry.ENTRY_TAIL:
        s += " (tail)"
    lines = [s]
    if e.elided > 0:
        lines.append("   ... " + count(e.elided, "tail call elided", "tail calls elided"))
    return lines


def on_parent_chain(descs, older, newer):
    """Whether the descriptor at older is on the `parent` chain of the one at newer
    (strictly: a descriptor is not on its own chain)."""
    d = descs.get(newer)
    for _ in range(256):  # chains are short; a torn or cyclic one must not hang
        if not d.parent:
            return False
        if d.parent == older:
            return True
        d = descs.get(d.parent)
    return False


def group_entries(descs, entries):
    """The frames a user sees, from entries newest first, by the runtime's rule (Note
    [One frame per activation] in rts/report.c): two consecutive entries are one frame
    when the older's descriptor is on the newer's parent chain (the same function's
    nested notes), the older is not marked tail and the newer elided nothing.  A frame
    shows its newest entry (function, span, tail mark) with its oldest entry's repeats
    and elided count."""
    out, newer = [], None
    for e in entries:
        if newer is not None and not e.flags & Registry.ENTRY_TAIL and newer.elided == 0 \
                and on_parent_chain(descs, e.desc, newer.desc):
            out[-1] = out[-1]._replace(repeats=e.repeats, elided=e.elided)
        else:
            out.append(e)
        newer = e
    return out


# Plain `bt` shows one frame per group (`strobe frames full`: per entry).
FRAMES = {"full": False}


def shown_entries(state, view, sp=0, full=None):
    """The entries a backtrace shows, newest first (grouped unless full), and how many
    dropped entries are still live."""
    entries, dropped = view.newest_first(sp)
    if not (FRAMES["full"] if full is None else full):
        entries = group_entries(state.descs, entries)
    return entries, dropped


def stack_lines(state, view, sp=0, limit=None, full=False):
    """The report of a stack, newest first, as the runtime prints it (its nested
    notes grouped into one frame per function activation unless full)."""
    entries, dropped = shown_entries(state, view, sp, full)
    lines = []
    for n, e in enumerate(entries[:limit] if limit is not None else entries):
        lines += entry_lines(n, e, state.descs.get(e.desc))
    if limit is not None and len(entries) > limit:
        lines.append("... " + count(len(entries) - limit, "more entry", "more entries")
                     + " (strobe bt without a count shows all)")
    elif dropped:
        lines.append("... " + count(dropped, "older entry dropped", "older entries dropped"))
    if view.thread.flags & Registry.STACK_APPROX:
        lines.append("(approximate: the thread's stack chunks changed in a way strobe "
                     "could not follow)")
    if view.note:
        lines.append("(%s)" % view.note)
    return lines
