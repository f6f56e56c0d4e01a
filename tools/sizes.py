#!/usr/bin/env python3
"""Size rules of the core (ARCHITECTURE.md): no source file over 800 lines and no function over 120 lines,
tests excepted (files named *tests*.rs / *_test.rs, `tests/`, `benches/`, and `#[cfg(test)]` modules).

Usage: tools/sizes.py [--max-file N] [--max-fn N] [ROOT ...]  (default: crates/checkpoint-core/src)
Exits 1 and lists the offenders when a rule is broken. Functions are found by their `fn` line and the matching
closing brace (strings, chars and comments are skipped), which is exact for rustfmt-formatted code.
"""
import re, sys, pathlib

def strip(src):
    """The source with string/char literals and comments blanked (newlines kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith('//', i):
            j = src.find('\n', i); j = n if j < 0 else j
            out.append(' ' * (j - i)); i = j
        elif src.startswith('/*', i):
            j = src.find('*/', i + 2); j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', src[i:j])); i = j
        elif c == 'r' and re.match(r'r#*"', src[i:i + 10]) and (i == 0 or not (src[i-1].isalnum() or src[i-1] == '_')):
            m = re.match(r'r(#*)"', src[i:]); end = '"' + m.group(1)
            j = src.find(end, i + len(m.group(0))); j = n if j < 0 else j + len(end)
            out.append(re.sub(r'[^\n]', ' ', src[i:j])); i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == '\\' else 1
            out.append(re.sub(r'[^\n]', ' ', src[i:j + 1])); i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'|'\\u\{[0-9a-fA-F]+\}'|'\\x[0-9a-fA-F]{2}'", src[i:i + 12]):
            m = re.match(r"'(\\.|[^\\'])'|'\\u\{[0-9a-fA-F]+\}'|'\\x[0-9a-fA-F]{2}'", src[i:i + 12])
            out.append(' ' * len(m.group(0))); i += len(m.group(0))
        else:
            out.append(c); i += 1
    return ''.join(out)

def test_file(p):
    s = str(p)
    return '/tests/' in s or '/benches/' in s or re.search(r'tests?\.rs$|_tests?\.rs$|tests?_[a-z0-9_]*\.rs$', p.name) is not None

def main(argv):
    max_file, max_fn, roots = 800, 120, []
    it = iter(argv)
    for a in it:
        if a == '--max-file': max_file = int(next(it))
        elif a == '--max-fn': max_fn = int(next(it))
        else: roots.append(a)
    roots = roots or ['crates/checkpoint-core/src']
    bad = []
    for root in roots:
        files = sorted(pathlib.Path(root).rglob('*.rs'))
        # Files that are `#[cfg(test)] mod name;` of their parent are tests.
        test_mods = set()
        for p in files:
            for m in re.finditer(r'#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', p.read_text()):
                base = p.parent if p.name in ('mod.rs', 'lib.rs', 'main.rs') else p.parent / p.stem
                test_mods.add(base / f'{m.group(1)}.rs'); test_mods.add(base / m.group(1) / 'mod.rs')
        for p in files:
            if test_file(p) or p in test_mods:
                continue
            src = strip(p.read_text())
            lines = src.split('\n')
            # Lines of #[cfg(test)] modules do not count.
            test_lines = 0
            depth_stack, fn_starts = [], []
            in_test_mod_depth = None
            pending_cfg_test = False
            depth = 0
            for ln, line in enumerate(lines, 1):
                if re.match(r'\s*#\[cfg\(test\)\]', line):
                    pending_cfg_test = True
                m = re.match(r'\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+"[^"]*"\s+)?fn\s+(\w+)', line)
                if m and in_test_mod_depth is None:
                    fn_starts.append((m.group(7), ln, depth))
                mod_line = re.match(r'\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{', line)
                if pending_cfg_test and mod_line and in_test_mod_depth is None:
                    in_test_mod_depth = depth; test_start = ln
                if pending_cfg_test and not line.strip().startswith('#'):
                    pending_cfg_test = False if not mod_line else pending_cfg_test
                for ch in line:
                    if ch == '{':
                        depth += 1
                    elif ch == '}':
                        depth -= 1
                        if fn_starts and depth == fn_starts[-1][2] and ln >= fn_starts[-1][1]:
                            name, start, _ = fn_starts.pop()
                            if ln - start + 1 > max_fn:
                                bad.append(f'{p}:{start}: fn {name} is {ln - start + 1} lines (max {max_fn})')
                        if in_test_mod_depth is not None and depth == in_test_mod_depth:
                            test_lines += ln - test_start + 1
                            in_test_mod_depth = None; pending_cfg_test = False
                # a `fn` declared without a body (trait item) never opens a brace: drop it at the `;`
                if fn_starts and fn_starts[-1][1] == ln and line.rstrip().endswith(';') and depth == fn_starts[-1][2]:
                    fn_starts.pop()
            code_lines = len(lines) - test_lines - (1 if src.endswith('\n') else 0)
            if code_lines > max_file:
                bad.append(f'{p}: {code_lines} lines outside tests (max {max_file})')
    for b in bad:
        print(b)
    if bad:
        print(f'{len(bad)} size rule(s) broken')
        return 1
    print('sizes ok: no file over', max_file, 'lines, no function over', max_fn, 'lines')
    return 0

if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
