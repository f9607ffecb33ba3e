"""Inputs for the program workloads, generated (never downloaded).

    make_input.py KIND N OUT

KIND is one of:
  sql  a SQLite script: N rows inserted in one transaction, an index, joins,
       GROUP BY and string functions over them, then half the rows deleted
  smt  an SMT-LIB 2 problem: N integer variables tied by random linear
       constraints, with a satisfiable and an unsatisfiable check
  ps   a PostScript document of N pages of strokes, fills and text (setup
       turns it into the PDF that ghostscript renders)
  c    a C translation unit of N functions with loops, switches and structs
The same N gives the same bytes (a fixed seed).
"""
from __future__ import annotations

import random
import sys


def sql(n: int, r: random.Random) -> str:
    out = ["PRAGMA journal_mode=OFF;", "PRAGMA synchronous=OFF;",
           "CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, price REAL);",
           "CREATE TABLE grp(id INTEGER PRIMARY KEY, label TEXT);", "BEGIN;"]
    for g in range(100):
        out.append(f"INSERT INTO grp VALUES({g}, 'group-{g:03d}');")
    for i in range(n):
        name = "".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(4, 40)))
        out.append(f"INSERT INTO item VALUES({i}, '{name}', {r.randrange(100)}, {r.random() * 1000:.2f});")
    out += ["COMMIT;", "CREATE INDEX item_name ON item(name);",
            "SELECT g.label, count(*), avg(i.price), group_concat(substr(i.name, 1, 3))"
            " FROM item i JOIN grp g ON g.id = i.grp GROUP BY g.label ORDER BY 3;",
            "SELECT count(*) FROM item WHERE name LIKE '%ab%';",
            "SELECT upper(name) || '-' || printf('%08.2f', price) FROM item ORDER BY name LIMIT 1000;",
            "DELETE FROM item WHERE id % 2 = 0;", "VACUUM;",
            "SELECT count(*), sum(length(name)) FROM item;"]
    return "\n".join(out) + "\n"


def smt(n: int, r: random.Random) -> str:
    out = ["(set-logic QF_LIA)"]
    out += [f"(declare-fun x{i} () Int)" for i in range(n)]
    for i in range(n):
        out.append(f"(assert (and (>= x{i} 0) (<= x{i} {r.randint(10, 1000)})))")
    for _ in range(n * 2):
        terms = " ".join(f"(* {r.randint(-9, 9)} x{r.randrange(n)})" for _ in range(4))
        out.append(f"(assert (<= (+ {terms}) {r.randint(0, 500)}))")
    out.append("(check-sat)")
    out.append("(push 1)")
    out.append(f"(assert (> (+ {' '.join(f'x{i}' for i in range(n))}) {n * 2000}))")
    out.append("(check-sat)")
    out.append("(pop 1)")
    return "\n".join(out) + "\n"


def ps(n: int, r: random.Random) -> str:
    out = ["%!PS-Adobe-3.0", "/Helvetica findfont 10 scalefont setfont"]
    for page in range(n):
        for _ in range(200):
            out.append(f"{r.random():.3f} {r.random():.3f} {r.random():.3f} setrgbcolor "
                       f"newpath {r.randint(0, 600)} {r.randint(0, 800)} moveto "
                       f"{r.randint(0, 600)} {r.randint(0, 800)} lineto "
                       f"{r.randint(0, 600)} {r.randint(0, 800)} lineto closepath "
                       + ("fill" if r.random() < 0.5 else "stroke"))
        for line in range(40):
            out.append(f"0 0 0 setrgbcolor 40 {780 - line * 19} moveto (page {page} line {line} "
                       f"{r.getrandbits(64):016x}) show")
        out.append("showpage")
    return "\n".join(out) + "\n"


def c(n: int, r: random.Random) -> str:
    out = ["#include <string.h>", "struct rec { int a, b; double w; char tag[16]; };"]
    for i in range(n):
        out.append(f"""int f{i}(struct rec *v, int len, int k)
{{
    int acc = {r.randint(0, 99)};
    for (int j = 0; j < len; j++) {{
        switch ((v[j].a + k) % 5) {{
        case 0: acc += v[j].b * {r.randint(1, 9)}; break;
        case 1: acc ^= (int)(v[j].w * {r.random():.4f}); break;
        case 2: if (memcmp(v[j].tag, "t{i}", 3) == 0) acc--; break;
        case 3: acc = acc * 31 + j; break;
        default: v[j].b = acc & 0xff;
        }}
    }}
    return acc{f" + f{i - 1}(v, len / 2, k + 1)" if i else ""};
}}""")
    return "\n".join(out) + "\n"


KINDS = {"sql": sql, "smt": smt, "ps": ps, "c": c}


def main(argv: list[str]) -> int:
    kind, n, path = argv[1], int(argv[2]), argv[3]
    with open(path, "w") as f:
        f.write(KINDS[kind](n, random.Random(1)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
