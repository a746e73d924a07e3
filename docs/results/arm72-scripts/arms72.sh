#!/bin/bash
# Four arms continued from generation 64 of the README's run (data/runs/pocket-copper), 8 generations each,
# then each arm's generation 72 against generation 64 at 100 simulations on two fresh opening sets.
set -euo pipefail
cd /work/main
C=data/exp/copper-arm
BASE=data/runs/pocket-copper
arm() { # name key=value...
  local name=$1; shift
  local dir=data/exp/$name
  if [ ! -d $dir ]; then
    cp -r $BASE $dir.tmp
    python3 - $dir.tmp/config.toml "data/exp/$name" "$@" <<'PY'
import re, sys
path, run_dir, *kvs = sys.argv[1:]
text = open(path).read()
text = re.sub(r'(?m)^run_dir = .*$', f'run_dir = "{run_dir}"', text)
section = None
out = []
changes = dict(kv.split('=', 1) for kv in kvs)
done = set()
for line in text.splitlines():
    m = re.match(r'^\[(\w+)\]', line)
    if m: section = m.group(1)
    m = re.match(r'^(\w+) = ', line)
    if m and section and f'{section}.{m.group(1)}' in changes:
        key = f'{section}.{m.group(1)}'
        line = f'{m.group(1)} = {changes[key]}'
        done.add(key)
    out.append(line)
assert done == set(changes), (done, changes)
open(path, 'w').write('\n'.join(out) + '\n')
PY
    mv $dir.tmp $dir
  fi
  /usr/bin/time -f "$name %e s" $C train --config $dir/config.toml --generations 72 --quiet >> data/exp/$name.log 2>&1
}
arm c64
arm g384 selfplay.games=384
arm fsf50 selfplay.full_search_fraction=0.5
arm u1 training.max_sample_uses=1
M=sims=100,mate=on,mate3=all,qmix=0.5,qscale=1000
for name in c64 g384 fsf50 u1; do
  for seed in 7101 7102; do
    out=data/exp/eval72-$name-$seed
    [ -f $out/done ] && continue
    $C arena -v pocket-copper --mode gauntlet --rounds 64 --random-plies 4 --seed $seed --threads 2 \
      -p checkpoint:data/exp/$name/models/gen-0072,$M,name=$name-g72 \
      -p checkpoint:$BASE/models/gen-0064,$M,name=g64 --out $out > $out.log 2>&1
    touch $out/done
  done
done
