#!/usr/bin/env python3
"""check-registry-doc.py -- docs/registry.md against the runtime's ABI.

docs/registry.md prints the registry's and the tick descriptor's layouts for human
readers: a table per record (offset, type, field), sizes, the magic, the version, flag
bits, and a few of those numbers again in its prose.  The ABI's one home is intrinsics/ (and
rts/strobe/dynstack.h, which expands it); the build writes what it says, with sizeof and
offsetof, into build/lldb/strobe_abi.py (lldb/strobe_abi_gen.c).  This script compares
every number of the page with that file:

  - each `### \`Record\` (N bytes...)` heading names a record of the ABI, with its size;
    every record of the ABI has one;
  - its table lists every field of the record, in order, each at its offset, with a type
    of the field's size (u32, u64, ptr, or a record of the ABI);
  - the numbers in a table's last column and in the prose that state a size, an offset
    computation, the magic, the version or a flag bit are each matched by a rule below
    against the ABI; any other such number (`N bytes`, `entries - N`, `× N`, `/ N`,
    `0x...`) is an error, so that a new one cannot go unchecked.

Usage: check-registry-doc.py REGISTRY.md STROBE_ABI.py
Exit status 0 when they agree, 1 (with `file:line: error: ...` for each difference) when
they do not.
"""
import re
import runpy
import sys

TYPE_SIZES = {"u32": 4, "u64": 8, "ptr": 8}
COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
          "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
# The registry's header fields that give a record's size.
SIZE_FIELDS = {"header_size": "StrobeRegistry", "thread_size": "StrobeThreadStack",
               "entry_size": "StrobeEntry", "desc_size": "StrobeTickDesc",
               "head_size": "StrobeDynStackHead"}
# Numbers that state a layout fact; each one must be covered by a rule.
LAYOUT_NUMBER = re.compile(r"\b\d+ bytes\b|entries [-+] \d+|× \d+|/ \d+|0x[0-9a-fA-F]+")


def rules(abi):
    """(regex with one group, the value it must have, what it is) for the prose."""
    size = {name: layout[0] for name, layout in abi["LAYOUTS"].items()}
    entry = size["StrobeEntry"]
    return [
        (r"read its (\d+) bytes", size["StrobeRegistry"], "the registry's size"),
        (r"`magic` \(`0x([0-9a-fA-F]+)`", abi["REGISTRY_MAGIC"], "the magic"),
        (r"`version` \((\d+)\)", abi["REGISTRY_VERSION"], "the version"),
        (r"Version (\d+) \(this one\)", abi["REGISTRY_VERSION"], "the version"),
        (r"each record \((\d+) bytes\)", size["StrobeThreadStack"], "a thread record's size"),
        (r"its head\s+\((\d+) bytes", size["StrobeDynStackHead"], "the head's size"),
        (r"descriptor \((\d+) bytes", size["StrobeTickDesc"], "a descriptor's size"),
        (r"\((\d+) bytes each", entry, "an entry's size"),
        (r"entries\) / (\d+)", entry, "an entry's size"),
        (r"entries - (\d+)", entry, "an entry's size"),
        (r"capacity - 1\) × (\d+)", entry, "an entry's size"),
    ]


class Checker:
    def __init__(self, path, abi):
        self.path, self.abi, self.errors, self.checked = path, abi, 0, 0
        self.layouts = abi["LAYOUTS"]

    def error(self, line, msg):
        print("%s:%d: error: %s" % (self.path, line, msg))
        self.errors += 1

    def expect(self, line, what, doc, abi):
        self.checked += 1
        if doc != abi:
            self.error(line, "%s: the page says %s, the ABI %s" % (what, doc, abi))

    def numbers(self, line, text, covered):
        """Check text's layout numbers against the rules; covered: spans already checked."""
        spans = list(covered)
        for regex, value, what in rules(self.abi):
            for m in re.finditer(regex, text):
                doc = int(m.group(1), 16 if "0x" in regex else 10)
                self.expect(line, what, doc, value)
                spans.append(m.span())
        for m in LAYOUT_NUMBER.finditer(text):
            if not any(a <= m.start() and m.end() <= b for a, b in spans):
                self.error(line, "`%s` states a layout that nothing checks "
                                 "(add a rule to scripts/check-registry-doc.py)" % m.group(0))

    def meaning(self, line, record, field, cell):
        """The spans of a table's last cell that the record's own facts check."""
        spans = []
        if record == "StrobeRegistry" and field in SIZE_FIELDS:
            m = re.fullmatch(r"\s*(\d+)\s*", cell)
            if not m:
                self.error(line, "StrobeRegistry.%s: expected the size of %s"
                           % (field, SIZE_FIELDS[field]))
                return spans
            self.expect(line, "StrobeRegistry.%s" % field, int(m.group(1)),
                        self.layouts[SIZE_FIELDS[field]][0])
            spans.append(m.span())
        elif record == "StrobeRegistry" and field == "magic":
            m = re.search(r"`0x([0-9a-fA-F]+)`", cell)
            self.expect(line, "the magic", int(m.group(1), 16) if m else None,
                        self.abi["REGISTRY_MAGIC"])
            spans.append(m.span() if m else (0, 0))
        elif record == "StrobeRegistry" and field == "version":
            self.expect(line, "the version", int(cell.strip()), self.abi["REGISTRY_VERSION"])
        elif record == "StrobeRegistry" and field == "flags":
            for m in re.finditer(r"(\d+) `(\w+)`", cell):
                self.expect(line, "the flag %s" % m.group(2), int(m.group(1)),
                            self.abi.get("REGISTRY_" + m.group(2).upper()))
            names = {k for k in self.abi if k.startswith("REGISTRY_") and
                     k not in ("REGISTRY_SYMBOL", "REGISTRY_MAGIC", "REGISTRY_VERSION")}
            listed = {"REGISTRY_" + n.upper() for n in re.findall(r"\d+ `(\w+)`", cell)}
            if names != listed:
                self.error(line, "StrobeRegistry.flags: the page lists %s, the ABI has %s"
                           % (sorted(listed), sorted(names)))
        elif record == "StrobeEntry" and field == "flags":
            m = re.search(r"(\d+) = \*tail\*", cell)
            self.expect(line, "the entry flag tail", int(m.group(1)) if m else None,
                        self.abi["ENTRY_TAIL"])
        elif record == "StrobeTickDesc" and field == "flags":
            m = re.search(r"(\d+) = \*nested\*", cell)
            self.expect(line, "the descriptor flag nested", int(m.group(1)) if m else None,
                        self.abi["DESC_NESTED"])
        elif record == "StrobeTickDesc" and field == "kind":
            m = re.search(r"(\d+) = source note", cell)
            self.expect(line, "the kind source note", int(m.group(1)) if m else None,
                        self.abi["TICK_SOURCE_NOTE"])
            m = re.search(r"(\d+) reserved \(function entry", cell)
            self.expect(line, "the kind function entry", int(m.group(1)) if m else None,
                        self.abi["TICK_ENTRY"])
        return spans

    def table(self, start, rows, record, elem_size):
        """rows: [(line, cells)], the header first, then the separator."""
        header = [c.strip() for c in rows[0][1]]
        col = {name: i for i, name in enumerate(header)}
        if "offset" not in col or "field" not in col:
            self.error(start, "the table of %s has no offset or field column" % record)
            return
        size, fields = self.layouts[record]
        listed = []
        for line, cells in rows[2:]:
            offset, name = cells[col["offset"]].strip(), cells[col["field"]].strip().strip("`")
            listed.append(name)
            known = {f[0]: f for f in fields}
            if name not in known:
                self.error(line, "%s has no field %s" % (record, name))
                continue
            _, abi_offset, abi_size, nested = known[name]
            self.expect(line, "%s.%s's offset" % (record, name), int(offset), abi_offset)
            if "type" in col:
                ty = cells[col["type"]].strip()
                if ty.strip("`") in self.layouts:
                    self.expect(line, "%s.%s's type" % (record, name), ty.strip("`"), nested)
                    doc_size = self.layouts[ty.strip("`")][0]
                else:
                    doc_size = TYPE_SIZES.get(ty)
                    if doc_size is None:
                        self.error(line, "%s.%s: unknown type %s" % (record, name, ty))
                        continue
                self.expect(line, "%s.%s's size" % (record, name), doc_size, abi_size)
            elif elem_size is not None:
                self.expect(line, "%s.%s's size" % (record, name), elem_size, abi_size)
            last = cells[-1]
            self.numbers(line, last, self.meaning(line, record, name, last))
        order = [f[0] for f in fields]
        if listed != order:
            self.error(start, "the table of %s lists %s; the ABI's fields are %s"
                       % (record, ", ".join(listed), ", ".join(order)))

    def run(self, text):
        lines = text.split("\n")
        seen, i, fence = set(), 0, False
        para = []  # the prose paragraph being read: [(line number, text)]

        def flush():
            if para:  # a paragraph at once: its sentences may break across lines
                self.numbers(para[0][0], " ".join(t for _, t in para), [])
                para.clear()

        while i < len(lines):
            line, n = lines[i], i + 1
            if line.startswith("```"):
                fence = not fence
            if fence or line.startswith("```"):
                i += 1
                continue
            if line.strip() and not line.startswith("|") and not line.startswith("#"):
                para.append((n, line))
                i += 1
                continue
            flush()
            m = re.match(r"### `(\w+)` \((\d+) bytes(?:, (\w+) (u32|u64))?\)", line)
            if m:
                record = m.group(1)
                if record not in self.layouts:
                    self.error(n, "the ABI has no record %s" % record)
                    i += 1
                    continue
                seen.add(record)
                size, fields = self.layouts[record]
                self.expect(n, "%s's size" % record, int(m.group(2)), size)
                elem = None
                if m.group(3):
                    self.expect(n, "%s's field count" % record, COUNTS.get(m.group(3)),
                                len(fields))
                    elem = TYPE_SIZES[m.group(4)]
                self.numbers(n, line[m.end():], [])
                j = i + 1
                while j < len(lines) and not lines[j].strip():
                    j += 1
                rows = []
                while j < len(lines) and lines[j].startswith("|"):
                    rows.append((j + 1, lines[j].strip().strip("|").split("|")))
                    j += 1
                if len(rows) < 3:
                    self.error(n, "%s has no table of its fields" % record)
                else:
                    self.table(n, rows, record, elem)
                i = j
                continue
            if line.startswith("|"):  # another table (options): its last column is prose
                self.numbers(n, line.strip().strip("|").split("|")[-1], [])
            elif line.startswith("#"):
                self.numbers(n, line, [])
            i += 1
        flush()
        for record in self.layouts:
            if record not in seen:
                self.error(len(lines), "the page has no table of %s" % record)


def main(argv):
    if len(argv) != 3:
        print("usage: check-registry-doc.py REGISTRY.md STROBE_ABI.py", file=sys.stderr)
        return 1
    abi = runpy.run_path(argv[2])
    with open(argv[1], encoding="utf-8") as f:
        text = f.read()
    checker = Checker(argv[1], abi)
    checker.run(text)
    if checker.errors:
        print("%s: %d difference(s) from %s" % (argv[1], checker.errors, argv[2]))
        return 1
    print("%s agrees with %s: %d records, %d numbers checked"
          % (argv[1], argv[2], len(checker.layouts), checker.checked))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
