#!/usr/bin/env bash
# The precision floor on an NVIDIA machine (docs/gpu-evidence.md): honest GPU candidates
# against the floor, and the TF32 paths that must fail. Run from the tree's root with the
# wheels in .whl/ (this tree's, pydantic's, array-api-compat's, ml-dtypes', mlx's, wgpu's with
# cffi, pycparser and rendercanvas), the Vulkan loader and glvnd packages in .gl/ (libvulkan1,
# libegl1, libglvnd0, libopengl0, libgl1, libglx0, libgles2: the loader alone finds no
# NVIDIA adapter, as the device README says) and MLX's CUDA
# backend unpacked at /tmp/mlxcuda (the mlx-cuda wheel's contents). Reports go to $OUT
# (default /tmp/floor-out). MATRICES (default: the default and the GPU matrix) chooses the
# matrices of the tables; HONEST (default: every GPU path) the candidates of the honest
# table, and HONEST_ONLY=1 leaves out the TF32 tables; SKIP_REPORTS=1 skips the gemm reports;
# SWEEP_MATRIX (default matrices/gpu.toml) is the matrix swept last.
set -u
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/floor-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target /tmp/site .whl/*.whl 2>&1 | tail -1
if [ -d /tmp/mlxcuda/mlx ]; then cp -r /tmp/mlxcuda/* /tmp/site/; fi
if ls .gl/*.deb >/dev/null 2>&1; then
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, cupy, mlx.core as mx; print('torch', torch.__version__, 'cupy', cupy.__version__, 'mlx', mx.__version__, mx.default_device())"
for matrix in ${MATRICES:-matrices/default.toml matrices/gpu.toml}; do
  echo "== $matrix: honest, TF32 off (torch's default; MLX_ENABLE_TF32=0)"
  MLX_ENABLE_TF32=0 python3 tools/floor_table.py ${HONEST:-torch:cuda cupy mlx:gpu wgpu:vulkan} --no-downgrades --matrix $matrix
  [ -n "${HONEST_ONLY:-}" ] && continue
  echo "== $matrix: MLX CUDA with TF32 on (MLX's default)"
  MLX_ENABLE_TF32=1 python3 tools/floor_table.py mlx:gpu --no-downgrades --matrix $matrix
  echo "== $matrix: torch:cuda with torch.backends.cuda.matmul.allow_tf32 = True"
  python3 tools/floor_table.py torch:cuda --torch-tf32 --no-downgrades --matrix $matrix
done
if [ -z "${SKIP_REPORTS:-}" ]; then
echo "== reports: one f32 gemm 256x256x256 per path, then replay of each"
gemm() {  # name, backend, then environment assignments
  local name=$1 backend=$2; shift 2
  env "$@" python3 -m diffcheck run --require-backend "$backend" --op gemm --m 256 --n 256 --k 256 \
    --report "$OUT/gemm-$name.json"
  echo "run $name: exit $?"
  python3 -m diffcheck replay "$OUT/gemm-$name.json"
  echo "replay $name: exit $?"
}
gemm mlx-tf32 mlx:gpu MLX_ENABLE_TF32=1
gemm mlx-f32 mlx:gpu MLX_ENABLE_TF32=0
gemm torch-tf32 torch:cuda TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1
gemm torch-f32 torch:cuda TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=0
fi
echo "== the GPU matrix swept with each library's defaults (MLX: TF32 on; torch: TF32 off)"
diffcheck_sweep() {
  python3 -m diffcheck sweep "${SWEEP_MATRIX:-matrices/gpu.toml}" --out "$1" --jobs 8
  echo "sweep: exit $?"
  python3 -m diffcheck replay "$1" | tail -3
  echo "replay: exit ${PIPESTATUS[0]}"
}
diffcheck_sweep /tmp/sweep-gpu && tar czf "$OUT/sweep-gpu.tgz" -C /tmp sweep-gpu
