#!/usr/bin/env bash
# The H200 round of bench/README.md, "WebGPU": build, then run --device wgpu:N and --device cuda:0 side by
# side, compare, and bench_webgpu.py; every output under $OUT. Needs .gl (the Vulkan loader's debs) and .whl
# (wgpu, plotly, nvidia-ml-py, scipy-openblas32 and their needs) beside it, as the device notes say.
set -u
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  && export PYTHONPATH=/tmp/site || exit 1
export XDG_RUNTIME_DIR=/tmp/xdg; mkdir -p "$XDG_RUNTIME_DIR"
ADAPTERS='import wgpu; [print(i, a.info["backend_type"], a.info["device"], a.info["description"]) for i, a in enumerate(wgpu.gpu.enumerate_adapters_sync())]'
python3 -c "$ADAPTERS" > "$OUT/adapters.txt" 2>&1
if ! grep -q "Vulkan.*NVIDIA" "$OUT/adapters.txt"; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  python3 -c "$ADAPTERS" > "$OUT/adapters.txt" 2>&1
fi
cat "$OUT/adapters.txt"
WG=wgpu:$(awk '/Vulkan.*NVIDIA/ {print $1; exit}' "$OUT/adapters.txt")
echo "webgpu device: $WG"
t0=$(date +%s)
timeout -k 10 300 python3 -m pip install --no-build-isolation --no-deps . > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
cd /tmp  # the installed package, not the tree's python/ folder
R="python3 -m apple_roofline"
timeout -k 10 120 $R run --device cuda:0 --suite stream,peak -o "$OUT/cuda" > "$OUT/cuda.log" 2>&1; echo "cuda rc $?"
timeout -k 10 170 $R run --device "$WG" --suite stream,peak,sweep -o "$OUT/wgpu" > "$OUT/wgpu.log" 2>&1; echo "wgpu rc $?"
tail -30 "$OUT/cuda.log"; tail -45 "$OUT/wgpu.log"
timeout -k 10 60 $R compare "$OUT/cuda/run.json" "$OUT/wgpu/run.json" > "$OUT/compare.md" 2>&1; echo "compare rc $?"
cat "$OUT/compare.md"
cd - > /dev/null
timeout -k 10 150 python3 bench/bench_webgpu.py --devices "$WG,cuda:0" --out "$OUT/bench_webgpu.json" > "$OUT/bench.log" 2>&1
echo "bench rc $?"
python3 -c "
import json; d = json.load(open('$OUT/bench_webgpu.json'))
for c in d['checks'] + d.get('stream', []): print({k: c[k] for k in c if k != 'check'})
for c in d['dispatch']: print({k: c[k] for k in c if k != 'samples_us'})
" 2>&1 || tail -20 "$OUT/bench.log"
cd "$OUT" && tar czf runs.tgz cuda wgpu && rm -rf cuda wgpu && ls -la "$OUT"
