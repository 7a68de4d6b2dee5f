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


def entry_lines(n, e, d, run=1):
    """`#n Main.fact at Fact.hs:15:10-25 (x3) (tail) (×k)`, and its elided tail calls:
    an entry, or a frame standing for a run of k identical ones."""
    s = "#%d %s" % (n, d.function or "?")
    if d.kind == Registry.KIND_SOURCE_NOTE and d.file:
        s += " at %s:%s" % (d.file, span(d))
    if e.repeats > 0:
        s += " (x%d)" % (e.repeats + 1)
    if e.flags & Registry.ENTRY_TAIL:
        s += " (tail)"
    if run > 1:
        s += " (\u00d7%d)" % run
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


def frames_of(registry, descs, entries):
    """The frames a user sees, from entries newest first, by the runtime's rule (Note
    [One frame per activation] in rts/report.c): two consecutive entries are one frame
    when the older's descriptor is on the newer's parent chain (the same function's
    nested notes), the older is not marked tail and the newer elided nothing.  A frame
    shows its newest entry (function, span, tail mark) with its oldest entry's repeats
    and elided count; each is (that entry, the oldest one's descriptor).  A marker of
    folded entries is a frame of its own."""
    out, newer = [], None
    for e in entries:
        marker = registry.is_dropped_marker(e)
        if newer is not None and not marker and not registry.is_dropped_marker(newer) \
                and not e.flags & Registry.ENTRY_TAIL and newer.elided == 0 \
                and on_parent_chain(descs, e.desc, newer.desc):
            out[-1] = (out[-1][0]._replace(repeats=e.repeats, elided=e.elided), e.desc)
        else:
            out.append((e, e.desc))
        newer = e
    return out


# Plain `bt` shows one frame per group (`strobe frames full`: per entry).
FRAMES = {"full": False}


def grouped(state, view, sp=0, full=None):
    """The frames a backtrace shows, newest first, as frames_of gives them (one per
    entry if full), the markers of folded entries among them."""
    entries = view.newest_first(sp)
    if FRAMES["full"] if full is None else full:
        return [(e, e.desc) for e in entries]
    return frames_of(view.registry, state.descs, entries)


def shown_entries(state, view, sp=0, full=None):
    """The frames a backtrace shows, newest first (the markers left out), and how many
    entries the markers among them stand for."""
    frames = [e for e, _ in grouped(state, view, sp, full)]
    markers = [e.elided for e in frames if view.registry.is_dropped_marker(e)]
    return [e for e in frames if not view.registry.is_dropped_marker(e)], sum(markers)


def same_frame(a, b):
    """Note [Runs of frames] in rts/report.c: the same expressions, marks and counts."""
    (e, oldest), (f, f_oldest) = a, b
    return (e.desc, oldest, e.flags, e.repeats, e.elided) == \
        (f.desc, f_oldest, f.flags, f.repeats, f.elided)


def stack_lines(state, view, sp=0, limit=None, full=False):
    """The report of a stack, newest first, as the runtime prints it: its nested notes
    grouped into one frame per function activation unless full, a run of identical
    frames as one line with its count, and a line for each run of markers counting the
    entries they stand for."""
    lines, n, shown = [], 0, 0
    frames = grouped(state, view, sp, full)
    is_marker = lambda i: view.registry.is_dropped_marker(frames[i][0])
    i = 0
    while i < len(frames):
        if is_marker(i):
            k = 0
            while i < len(frames) and is_marker(i):
                k += frames[i][0].elided
                i += 1
            lines.append("... " + count(k, "older entry not kept", "older entries not kept"))
            continue
        run = 1
        while i + run < len(frames) and not is_marker(i + run) \
                and same_frame(frames[i], frames[i + run]):
            run += 1
        if limit is not None and shown == limit:
            rest = sum(1 for j in range(i, len(frames)) if not is_marker(j))
            lines.append("... " + count(rest, "more frame", "more frames")
                         + " (strobe bt without a count shows all)")
            break
        e = frames[i][0]
        lines += entry_lines(n, e, state.descs.get(e.desc), run)
        n += run
        shown += 1
        i += run
    if view.thread.flags & Registry.STACK_APPROX:
        lines.append("(approximate: the thread's stack chunks changed in a way strobe "
                     "could not follow)")
    if view.note:
        lines.append("(%s)" % view.note)
    return lines
