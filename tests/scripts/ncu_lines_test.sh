#!/bin/sh
# ncu_lines.py on a two-launch dump and a listing of three lines in two files: the sum over
# both launches, one launch alone, the phases, and the opcode check that catches a dump of
# other code (the second launch's last instruction is not the listing's).
set -eu
script=$1
dir=$(dirname "$0")/ncu_lines
out=$(python3 "$script" "$dir/two_launches.csv" "$dir/listing.txt" --phase 'body=x.tile:1-9')
echo "$out"
echo "$out" | grep -F "10 instructions in 2 launch(es), 100 samples, 1 opcode mismatches" > /dev/null
echo "$out" | grep -E "^ 60.0% x.tile:7 .*\| long_sb 50, wait 10$" > /dev/null
echo "$out" | grep -E "^ 20.0% k.tile:3 " > /dev/null
echo "$out" | grep -E "^  body +60.0% +33.3%$" > /dev/null
one=$(python3 "$script" "$dir/two_launches.csv" "$dir/listing.txt" --launch 0 --top 1)
echo "$one"
echo "$one" | grep -F "5 instructions in 1 launch(es), 50 samples, 0 opcode mismatches" > /dev/null
[ "$(echo "$one" | grep -c "% ")" -eq 1 ]
if python3 "$script" "$dir/two_launches.csv" "$dir/listing.txt" --phase 'bad' 2> /dev/null; then
  echo "a bad --phase was accepted"; exit 1
fi
echo "ncu_lines: ok"
