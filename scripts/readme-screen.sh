#!/bin/bash
# The README's first screen as a newcomer sees it: rendered as GitHub renders Markdown
# (python-markdown with tables and fenced code, GitHub's fonts and widths), captured by
# headless Chromium in a 1280x800 window: docs/readme-first-screen.png.
#   scripts/readme-screen.sh            (needs python3-venv and chromium: scripts/test.sh installs it)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${COPPER_TOOLS:-$HOME/.cache/copper-tools}/markdown-venv
[ -x "$venv/bin/python" ] || { python3 -m venv "$venv" && "$venv/bin/pip" -q install 'markdown==3.11.3'; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$venv/bin/python" - README.md "$out/index.html" "$PWD" <<'PY'
import sys, markdown
src, dst, root = sys.argv[1:]
body = markdown.markdown(open(src, encoding="utf-8").read(), extensions=["tables", "fenced_code"])
css = """body{margin:0;background:#fff;font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif;
font-size:16px;line-height:1.5;color:#1f2328}
article{box-sizing:border-box;max-width:1012px;margin:0 auto;padding:32px}
h1{font-size:2em;border-bottom:1px solid #d1d9e0;padding-bottom:.3em;margin:.67em 0 16px}
h2{font-size:1.5em;border-bottom:1px solid #d1d9e0;padding-bottom:.3em;margin:24px 0 16px}
p,pre,ol,ul{margin:0 0 16px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:85%;background:#eff1f3;padding:.2em .4em;border-radius:6px}
pre{background:#f6f8fa;padding:16px;border-radius:6px;overflow:auto}pre code{background:none;padding:0}"""
open(dst, "w", encoding="utf-8").write(
    f'<!doctype html><meta charset="utf-8"><base href="file://{root}/"><style>{css}</style><article>{body}</article>')
PY
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,800 \
  --screenshot="$PWD/docs/readme-first-screen.png" "file://$out/index.html" 2>/dev/null
echo "docs/readme-first-screen.png"
