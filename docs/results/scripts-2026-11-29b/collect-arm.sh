#!/bin/bash
# copies an arm's results into docs/results: summary.tsv, reanalysis summaries, trimmed arena dirs
cd /work/main
name=$1
cp data/exp/$name/summary.tsv docs/results/arm8-$name-summary.tsv
cp data/exp/$name.time docs/results/arm8-$name-cpu.txt
if ls data/exp/$name/reanalysed/gen-*.json >/dev/null 2>&1; then
  for f in data/exp/$name/reanalysed/gen-*.json; do python3 -c "import json,sys; print(json.dumps(json.load(open('$f'))))"; done > docs/results/arm8-$name-reanalysed.jsonl
fi
for d in data/exp/eval8-$name-8101 data/exp/eval8-$name-8102 data/exp/ship8-$name-8103; do
  [ -f $d/done ] || continue
  out=docs/results/arena-arm8-$(basename $d)
  mkdir -p $out
  cp $d/pairings.csv $d/ratings.csv $d/summary.json $d/tournament.toml $out/
done
