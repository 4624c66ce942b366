#!/usr/bin/env bash
# The precision floor on an NVIDIA machine (docs/gpu-evidence.md): honest GPU candidates
# against the floor, and the TF32 paths that must fail. Run from the tree's root with the
# wheels in .whl/ (this tree's, pydantic's, array-api-compat's, mlx's) and MLX's CUDA
# backend unpacked at /tmp/mlxcuda (the mlx-cuda wheel's contents).
set -u
export PYTHONPATH=/tmp/site
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl 2>&1 | tail -1
if [ -d /tmp/mlxcuda/mlx ]; then cp -r /tmp/mlxcuda/* /tmp/site/; fi
if ls .whl/libvulkan1_*.deb >/dev/null 2>&1; then
  dpkg -x .whl/libvulkan1_*.deb /tmp/vk && cp -a /tmp/vk/usr/lib/x86_64-linux-gnu/libvulkan* /usr/lib/x86_64-linux-gnu/ && ldconfig
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, cupy, mlx.core as mx; print('torch', torch.__version__, 'cupy', cupy.__version__, 'mlx', mx.__version__, mx.default_device())"
echo "== honest: TF32 off (torch's default; MLX_ENABLE_TF32=0)"
MLX_ENABLE_TF32=0 python3 tools/floor_table.py torch:cuda cupy mlx:gpu wgpu --no-downgrades
echo "== MLX CUDA with TF32 on (MLX's default)"
MLX_ENABLE_TF32=1 python3 tools/floor_table.py mlx:gpu --no-downgrades
echo "== torch:cuda with torch.backends.cuda.matmul.allow_tf32 = True"
python3 tools/floor_table.py torch:cuda --torch-tf32 --no-downgrades
