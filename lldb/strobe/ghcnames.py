"""GHC's symbols as Haskell names: `base_GHCziNum_zdfNumIntzuzdczp_info` is
`base:GHC.Num.$fNumInt_$c+`.

A symbol that GHC 9.0 emits for a top-level Haskell binding is four parts joined by
`_` (GHC.Cmm.CLabel):

    UNIT_MODULE_NAME_KIND        base_GHCziNum_zdfNumIntzuzdczp_info
    MODULE_NAME_KIND             Main_fact_info  (the program's own unit: no prefix)

UNIT is the z-encoded unit id: the wired-in units by their short name (`base`,
`ghczmprim` for ghc-prim, `ghczmbignum`, `rts`), every other unit by its full id
(`containerszm0zi6zi4zi1`, `Cabalzm3zi4zi1zi0`).  MODULE is the z-encoded module name
(`GHCziNum`, `ZCMain` for `:Main`, the module of the real `main`), NAME the z-encoded
binding (`zdfNumIntzuzdczp`, the method `+` of the instance `Num Int`), KIND what the
label is: `info` (the info table, and the entry code right after it), `closure`,
`con_info` (a constructor's), `slow` (a function's slow entry), `closure_tbl`, ...

Z-encoding (GHC.Utils.Encoding) maps every character but letters and digits to a
two-character code, so that no encoded part holds an `_`: `_` itself is `zu`.  That
makes the split above exact, but for one ambiguity: a kind of two words (`con_info`)
and a name followed by a kind of one word (`con` + `info`) look alike.  The longer kind
wins when what is left before it reads as a module (every part capitalised, as
Haskell requires: `Main_Circle_con_info` is `Main.Circle`'s constructor); otherwise
the first part is a unit (`base_GHCziBase_con_info` would be `base:GHC.Base.con`).

The codes, as zDecodeString decodes them:
    ZZ Z   ZL (   ZR )   ZM [   ZN ]   ZC :
    zz z   za &   zb |   zc ^   zd $   ze =   zg >   zh #   zi .   zl <   zm -
    zn !   zp +   zq '   zr \   zs /   zt *   zu _   zv %
    Z<n>T a boxed n-tuple, `()` for n = 0 (`Z2T` is `(,)`);  Z<n>H an unboxed
    n-tuple, `(# #)` for n = 1;  z<hex>U the character of that code point (`z2218U`
    is `∘`; a leading 0 when the hex starts with a letter: `z0b5U`).
Inside a longer name a tuple is spelled out: `$fShow(,)` is `zdfShowZLz2cUZR`.

What is not a Haskell symbol stays as it is: the RTS's code and info tables
(`stg_upd_frame_info`, `stg_ap_pp_fast`, `StgRun`), C functions (`hs_main`), local
string literals (`c1I6_str`), and anything that does not split as above.
"""

from collections import namedtuple

GhcSymbol = namedtuple("GhcSymbol", "unit module name kind")

_UPPER = {"Z": "Z", "L": "(", "R": ")", "M": "[", "N": "]", "C": ":"}
_LOWER = {"z": "z", "a": "&", "b": "|", "c": "^", "d": "$", "e": "=", "g": ">",
          "h": "#", "i": ".", "l": "<", "m": "-", "n": "!", "p": "+", "q": "'",
          "r": "\\", "s": "/", "t": "*", "u": "_", "v": "%"}

# The kinds of label GHC 9.0 puts after a Haskell name, two-word ones first.
KINDS = ("con_info", "con_entry", "static_info", "closure_tbl",
         "info", "entry", "closure", "slow", "fast", "ret", "srt", "bytes")

# Kinds whose address is the code of the binding itself: shown by its name alone.
CODE_KINDS = ("info", "entry", "con_info", "con_entry", "static_info")

# The RTS's own symbols, which can look like Haskell ones (`stg_AP_STACK_info`).
RTS_PREFIXES = ("stg_", "__stg_", "Stg")


def zdecode(s):
    """The user's string of the z-encoded s; ValueError if s is no z-encoding."""
    out, i, n = [], 0, len(s)
    while i < n:
        c = s[i]
        if c not in "Zz":
            out.append(c)
            i += 1
            continue
        if i + 1 >= n:
            raise ValueError("%r ends in a lone %r" % (s, c))
        d = s[i + 1]
        if d.isdigit():
            j = i + 1
            if c == "Z":  # Z<decimal>T or Z<decimal>H: a tuple
                while j < n and s[j].isdigit():
                    j += 1
                if j >= n or s[j] not in "TH":
                    raise ValueError("%r: unfinished tuple at %d" % (s, i))
                k = int(s[i + 1:j])
                if s[j] == "T":
                    out.append("()" if k == 0 else "(" + "," * (k - 1) + ")")
                else:
                    out.append("(# #)" if k == 1 else "(#" + "," * (k - 1) + "#)")
            else:  # z<hex>U: a code point
                while j < n and s[j] in "0123456789abcdef":
                    j += 1
                if j >= n or s[j] != "U":
                    raise ValueError("%r: unfinished code point at %d" % (s, i))
                out.append(chr(int(s[i + 1:j], 16)))
            i = j + 1
            continue
        table = _UPPER if c == "Z" else _LOWER
        if d not in table:
            raise ValueError("%r: unknown code %r at %d" % (s, c + d, i))
        out.append(table[d])
        i += 2
    return "".join(out)


def _module(encoded):
    """The module name that encoded spells, or None if it spells none."""
    try:
        m = zdecode(encoded)
    except ValueError:
        return None
    if m == ":Main":
        return m
    parts = m.split(".")
    if all(p and p[0].isupper() and all(ch.isalnum() or ch in "_'" for ch in p)
           for p in parts):
        return m
    return None


def _unit(encoded):
    """The unit id that encoded spells, or None if it spells none."""
    try:
        u = zdecode(encoded)
    except ValueError:
        return None
    if u and u[0].isalnum() and all(ch.isalnum() or ch in "-._" for ch in u):
        return u
    return None


def parse_symbol(sym):
    """The GhcSymbol that sym names, or None if sym is not a Haskell binding's."""
    if not sym or sym.startswith(RTS_PREFIXES):
        return None
    parts = sym.split("_")
    for kind in KINDS:
        words = kind.count("_") + 1
        if len(parts) < 2 + words or "_".join(parts[-words:]) != kind:
            continue
        rest = parts[:-words]
        if len(rest) == 2:
            unit, module, name = None, _module(rest[0]), rest[1]
        elif len(rest) == 3:
            unit, module, name = _unit(rest[0]), _module(rest[1]), rest[2]
            if unit is None:
                continue
        else:
            continue
        if module is None or not name:
            continue
        try:
            return GhcSymbol(unit, module, zdecode(name), kind)
        except ValueError:
            continue
    return None


def haskell_name(sym):
    """How a backtrace shows sym: `unit:Module.name` (no unit for the program's own
    modules), the kind after an `_` when the label is not the binding's code
    (`base:Data.OldList.sortBy_slow`); None if sym is not a Haskell binding's."""
    g = parse_symbol(sym)
    if g is None:
        return None
    name = "%s.%s" % (g.module, g.name)
    if g.kind not in CODE_KINDS:
        name += "_" + g.kind
    return "%s:%s" % (g.unit, name) if g.unit else name
