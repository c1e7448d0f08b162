#!/usr/bin/env python3
"""check_syntax.py SOURCE_DIR: the editor syntax files (dsl/editor/) against the compiler's
tables of names, so a keyword or builtin added to the language cannot be forgotten there.

Words of the language: the quoted words of compiler/lexer.l's rules (keywords, types, true
and false), parser.y's keyword tokens, and the names of compiler/builtins.def. Each must be
highlighted by the TextMate grammar (some keyword-class pattern matches the whole word) and
listed in a `syn keyword` of the Vim file; a word in either file's lists that the language
does not have fails too (a stale entry). With vim installed, the Vim file is also loaded on
every shipped .tile file, which must raise no error.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

WORD = r"[A-Za-z_][A-Za-z0-9_]*"


def language_words(src):
    words = {}
    with open(os.path.join(src, "compiler/lexer.l")) as f:
        for m in re.finditer(r'^"(' + WORD + r')"\s*\{', f.read(), re.M):
            words[m.group(1)] = "compiler/lexer.l"
    with open(os.path.join(src, "compiler/parser.y")) as f:
        for m in re.finditer(r'\bKW_[A-Z_]+\s+"(' + WORD + r')"', f.read()):
            words.setdefault(m.group(1), "compiler/parser.y")
    with open(os.path.join(src, "compiler/builtins.def")) as f:
        for m in re.finditer(r'^BUILTIN\(\s*\w+\s*,\s*"(' + WORD + r')"', f.read(), re.M):
            words[m.group(1)] = "compiler/builtins.def"
    return words


def textmate(path):
    """Every `match` regex of the grammar, and the words of its word alternations."""
    with open(path) as f:
        grammar = json.load(f)
    patterns = []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("match"), str):
                patterns.append(node["match"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(grammar)
    listed = set()
    for p in patterns:
        for m in re.finditer(r"\\b\((?:\?:)?(" + WORD + r"(?:\|" + WORD + r")*)\)", p):
            listed.update(m.group(1).split("|"))
    return [re.compile(p) for p in patterns], listed


def vim(path):
    listed = set()
    options = {"contained", "transparent", "skipwhite", "skipnl", "skipempty", "display",
               "fold", "conceal", "concealends"}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3 or parts[0] not in ("syn", "syntax") or parts[1] != "keyword":
                continue
            if parts[2] == "tileTodo":  # words in comments, not the language's
                continue
            listed.update(w for w in parts[3:] if w not in options and "=" not in w)
    return listed


def vim_loads(src, path, ftdetect):
    """Vim reads the syntax and ftdetect files on every .tile file without an error."""
    exe = shutil.which("vim")
    if not exe:
        return []
    files = sorted(glob.glob(os.path.join(src, "examples/*.tile")) +
                   glob.glob(os.path.join(src, "kernels/*.tile")) +
                   glob.glob(os.path.join(src, "dsl/prelude/*.tile")))
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "messages")
        for f in files:
            cmd = [exe, "-u", "NONE", "-i", "NONE", "-N", "-es", "--cmd", "syntax on",
                   "-c", "source " + ftdetect, "-c", "edit " + f,
                   "-c", "if &filetype != 'tile' | echoerr 'filetype ' . &filetype | endif",
                   "-c", "source " + path,
                   "-c", "redir! > " + log + " | silent messages | redir END", "-c", "qa!"]
            r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=60)
            out = r.stdout + r.stderr
            if os.path.exists(log):
                with open(log) as m:
                    out += m.read()
            if r.returncode != 0 or re.search(r"\bE\d+:|filetype ", out):
                errors.append("vim on %s: rc %d: %s" % (os.path.relpath(f, src), r.returncode,
                                                      out.strip()[:400]))
                break  # the same error again on every other file says nothing new
    return errors


def main():
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                          os.path.join(os.path.dirname(__file__), "../.."))
    tm_path = os.path.join(src, "dsl/editor/tile.tmLanguage.json")
    vim_path = os.path.join(src, "dsl/editor/tile.vim")
    ftdetect = os.path.join(src, "dsl/editor/ftdetect/tile.vim")
    words = language_words(src)
    if len(words) < 40:
        print("check_syntax: only %d words found in the lexer and builtins tables; "
              "has their format changed?" % len(words))
        return 1
    tm_patterns, tm_listed = textmate(tm_path)
    vim_listed = vim(vim_path)
    errors = []
    for w in sorted(words):
        if not any(p.fullmatch(w) for p in tm_patterns):
            errors.append("%s (from %s) is missing from dsl/editor/tile.tmLanguage.json"
                          % (w, words[w]))
        if w not in vim_listed:
            errors.append("%s (from %s) is missing from dsl/editor/tile.vim" % (w, words[w]))
    for w in sorted(tm_listed - set(words)):
        errors.append("%s is in dsl/editor/tile.tmLanguage.json but not in the language" % w)
    for w in sorted(vim_listed - set(words)):
        errors.append("%s is in dsl/editor/tile.vim but not in the language" % w)
    errors += vim_loads(src, vim_path, ftdetect)
    for e in errors:
        print("check_syntax: " + e)
    print("check_syntax: %d words (lexer, parser, builtins), %d problems"
          % (len(words), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
