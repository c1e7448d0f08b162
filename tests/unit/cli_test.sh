#!/usr/bin/env bash
# cli_test.sh TILEC SRC_DIR: the command line's clang habits and set-up errors,
# checked on the real binary: exit statuses and the words of each message.
set -u
tilec=$1 src=$2
ex=$src/examples/vector_add.tile
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# expect NAME STATUS REGEX -- COMMAND...: COMMAND exits STATUS and its
# stderr (or stdout) matches the extended REGEX.
expect() {
  local name=$1 want=$2 re=$3
  shift 4
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "[FAIL] $name: exit $rc, expected $want"; sed 's/^/    /' "$tmp/err" | head -20
    fails=$((fails + 1))
  elif [ -n "$re" ] && ! grep -Eq -- "$re" "$tmp/err" "$tmp/out"; then
    echo "[FAIL] $name: no match for /$re/ in:"; sed 's/^/    /' "$tmp/err" | head -20
    fails=$((fails + 1))
  else
    echo "[PASS] $name"
  fi
}

# '-' reads standard input; diagnostics name it <stdin>
expect stdin 0 "kernel vector_add" -- sh -c '"$0" - --emit=ast < "$1"' "$tilec" "$ex"
printf 'kernel k() grid(1) threads(32) {\n  let x = y;\n}\n' > "$tmp/bad.tile"
expect stdin_diag 1 "^<stdin>:2:11: error: use of undeclared name 'y'" -- \
  sh -c '"$0" - < "$1"' "$tilec" "$tmp/bad.tile"

# -oFILE and -o FILE
expect o_joined 0 "" -- "$tilec" "$ex" "-o$tmp/a.ptx"
expect o_joined_file 0 "" -- test -s "$tmp/a.ptx"
expect o_separate 0 "" -- "$tilec" "$ex" -o "$tmp/b.ptx"
expect o_same 0 "" -- cmp "$tmp/a.ptx" "$tmp/b.ptx"
expect o_missing 1 "-o needs a file name" -- "$tilec" "$ex" -o

# a write error names the file and the reason
expect write_dir 1 "cannot write '$tmp/no/such/dir.ptx': No such file or directory" -- \
  "$tilec" "$ex" -o "$tmp/no/such/dir.ptx"
if [ -w /dev/full ]; then
  expect write_full 1 "cannot write '/dev/full': No space left on device" -- \
    "$tilec" "$ex" -o /dev/full
  expect write_stdout 1 "cannot write to standard output: No space left on device" -- \
    sh -c '"$0" "$1" > /dev/full' "$tilec" "$ex"
fi

# a binary cubin is not printed on a terminal (checked before ptxas is needed)
if command -v script >/dev/null && script -qec true /dev/null >/dev/null 2>&1; then
  expect cubin_tty 1 "refusing to print it on a terminal" -- \
    script -qec "'$tilec' '$ex' --emit=cubin" /dev/null
fi

# the closing count of errors, as clang prints it
expect count_one 1 "^1 error generated\.$" -- "$tilec" "$tmp/bad.tile"
printf 'kernel k() grid(1) threads(32) {\n  let x = y;\n  let z = w;\n}\n' > "$tmp/bad2.tile"
expect count_two 1 "^2 errors generated\.$" -- "$tilec" "$tmp/bad2.tile"

# -D errors name the option, not a line of the file
expect define_bad 1 "^tilec: error: -D FOO=bar: VALUE must be" -- "$tilec" "$ex" -D FOO=bar
expect define_unused 1 "^tilec: error: -D NOPE=3: the program declares no constant" -- \
  "$tilec" "$ex" -DNOPE=3
long=$(printf 'N%.0s' $(seq 1 128))
expect define_long 1 "^tilec: error: -D $long=1: NAME is longer than 127 characters" -- \
  "$tilec" "$ex" -D "$long=1"
expect module_long 1 "--module-name 'N{32}\.\.\.' is longer than 127 characters" -- \
  "$tilec" "$ex" --emit=meta --module-name="$long"

# a 10M-character name is a located error, not a ptxas crash
awk 'BEGIN { printf "kernel k(o: global f32[4]) grid(1) threads(32) {\n  let "
  for (i = 0; i < 10000000; i++) printf "a"
  printf " = 1.0;\n  o[0] = 0.0;\n}\n" }' > "$tmp/huge.tile"
expect name_huge 1 "huge.tile:2:7: error: identifier 'a{32}\.\.\.' has 10000000 characters" -- \
  "$tilec" "$tmp/huge.tile" --emit=embed -o "$tmp/huge.c"

# long operator chains are a located error in every phase that walks them
awk 'BEGIN { printf "kernel k(o: global f32[4]) grid(1) threads(32) {\n  let x = 1"
  for (i = 0; i < 40000; i++) printf " && 1"
  printf ";\n  o[0] = 0.0;\n}\n" }' > "$tmp/chain.tile"
for e in ast tir ptx; do
  expect "chain_$e" 1 "chain.tile:2:[0-9]+: error: expressions and blocks nest deeper than 300 levels" -- \
    "$tilec" "$tmp/chain.tile" --emit=$e
done

# a missing or failing ptxas is a set-up error (exit 1) that names the ptxas
expect ptxas_missing 1 "cannot find ptxas.*TILEC_PTXAS='/nonexistent' is not an executable file" -- \
  env TILEC_PTXAS=/nonexistent "$tilec" "$ex" --emit=cubin -o "$tmp/x.cubin"
expect ptxas_missing_hint 1 "set TILEC_PTXAS=/path/to/ptxas" -- \
  env TILEC_PTXAS=/nonexistent "$tilec" "$ex" --emit=embed -o "$tmp/x.c"
false_bin=$(type -P false)
expect ptxas_false 1 "ptxas '$false_bin' exited with status 1" -- \
  env TILEC_PTXAS="$false_bin" "$tilec" "$ex" --emit=cubin -o "$tmp/x.cubin"
printf '#!/bin/sh\necho "ptxas fatal   : Value '"'"'sm_90a'"'"' is not defined" >&2\nexit 255\n' \
  > "$tmp/oldptxas"
chmod +x "$tmp/oldptxas"
expect ptxas_output 1 "ptxas fatal   : Value 'sm_90a' is not defined" -- \
  env TILEC_PTXAS="$tmp/oldptxas" "$tilec" "$ex" --emit=cubin -o "$tmp/x.cubin"

echo "cli: $fails failed"
[ "$fails" -eq 0 ]
